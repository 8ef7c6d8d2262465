/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fmt-util: the printf-free formatting of the helper's fast path must print exactly what
 * printf prints, and never write past the buffer it is given. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "fmt-util.h"

static void test_u64(void **state) {
        (void) state;
        const uint64_t v[] = { 0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, UINT64_MAX,
                               UINT64_MAX - 1, 1000000000000000000u };
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                char a[32], b[32];
                memset(a, 'x', sizeof(a));
                size_t n = fmt_u64(a, v[i]);
                snprintf(b, sizeof(b), "%" PRIu64, v[i]);
                assert_string_equal(a, b);
                assert_int_equal(n, strlen(b));
                assert_int_equal(a[n + 1], 'x'); /* nothing past the NUL */
        }
        char c[21];
        assert_int_equal(fmt_u64(c, UINT64_MAX), 20); /* 21 bytes are enough */
        assert_string_equal(c, "18446744073709551615");
}

static void test_hex(void **state) {
        (void) state;
        char a[17], b[32];
        for (uint64_t v = 0; v < 70000; v += 37) {
                for (unsigned w = 0; w <= 8; w += 8) {
                        fmt_hex(a, v, w);
                        snprintf(b, sizeof(b), "%0*" PRIx64, (int) w, v);
                        assert_string_equal(a, b);
                }
        }
        assert_int_equal(fmt_hex(a, 0x3a5b, 8), 8);
        assert_string_equal(a, "00003a5b");
        assert_int_equal(fmt_hex(a, 0x7fffffff, 8), 8);
        assert_string_equal(a, "7fffffff");
        assert_int_equal(fmt_hex(a, UINT64_MAX, 99), 16); /* width capped at 16 */
        assert_string_equal(a, "ffffffffffffffff");
        assert_int_equal(fmt_hex(a, 0, 0), 1);
        assert_string_equal(a, "0");
}

static void test_join(void **state) {
        (void) state;
        char buf[16];
        /* 17 bytes do not fit in 16 */
        assert_int_equal(fmt_join(buf, sizeof(buf), "/proc/", "1234", "/ns/", "net", NULL),
                         -ENOBUFS);
        assert_string_equal(buf, "");
        assert_int_equal(fmt_join(buf, sizeof(buf), "/proc/", "1", "/comm", NULL), 12);
        assert_string_equal(buf, "/proc/1/comm");
        assert_int_equal(fmt_join(buf, sizeof(buf), NULL), 0);
        assert_string_equal(buf, "");
        /* exactly full (15 bytes and the NUL) fits, one more does not */
        assert_int_equal(fmt_join(buf, sizeof(buf), "0123456789", "abcde", NULL), 15);
        assert_string_equal(buf, "0123456789abcde");
        memset(buf, 'x', sizeof(buf));
        assert_int_equal(fmt_join(buf, 10, "0123456789", NULL), -ENOBUFS);
        assert_string_equal(buf, "");
        assert_int_equal(buf[10], 'x'); /* never past size */
        assert_int_equal(fmt_join(buf, 0, "a", NULL), -ENOBUFS);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_u64),
                cmocka_unit_test(test_hex),
                cmocka_unit_test(test_join),
        };
        return run_test_group(tests, NULL, NULL);
}
