/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parse-util.h"

static void test_u32(void **state) {
        uint32_t v = 7;
        assert_int_equal(parse_u32("0", &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(parse_u32("4294967295", &v), 0);
        assert_int_equal(v, UINT32_MAX);
        v = 7;
        assert_int_equal(parse_u32("4294967296", &v), -ERANGE);
        assert_int_equal(parse_u32("99999999999999999999999", &v), -ERANGE);
        assert_int_equal(parse_u32("", &v), -EINVAL);
        assert_int_equal(parse_u32("-1", &v), -EINVAL);
        assert_int_equal(parse_u32("+1", &v), -EINVAL);
        assert_int_equal(parse_u32(" 1", &v), -EINVAL);
        assert_int_equal(parse_u32("1 ", &v), -EINVAL);
        assert_int_equal(parse_u32("0x10", &v), -EINVAL);
        assert_int_equal(parse_u32(NULL, &v), -EINVAL);
        assert_int_equal(v, 7); /* untouched on failure */
}

static void test_u64_n(void **state) {
        uint64_t v;
        assert_int_equal(parse_u64_n("12345", 3, UINT64_MAX, &v), 0);
        assert_int_equal(v, 123);
        assert_int_equal(parse_u64_n("18446744073709551615", 20, UINT64_MAX, &v), 0);
        assert_true(v == UINT64_MAX);
        assert_int_equal(parse_u64_n("18446744073709551616", 20, UINT64_MAX, &v), -ERANGE);
        assert_int_equal(parse_u64_n("12", 0, UINT64_MAX, &v), -EINVAL);

        /* A field of 21+ digits that is not NUL-terminated: exact-size heap buffer, so ASan
         * catches any read past len. */
        char *f = malloc(25);
        assert_non_null(f);
        memset(f, '9', 25);
        assert_int_equal(parse_u64_n(f, 25, UINT64_MAX, &v), -ERANGE);
        f[24] = 'x';
        assert_int_equal(parse_u64_n(f, 25, UINT64_MAX, &v), -EINVAL);
        free(f);
}

static void test_pid(void **state) {
        int p;
        assert_int_equal(parse_pid("1", &p), 0);
        assert_int_equal(p, 1);
        assert_int_equal(parse_pid("0", &p), -ERANGE);
        assert_int_equal(parse_pid("4194304", &p), 0);
        assert_int_equal(parse_pid("4194305", &p), -ERANGE);
        assert_int_equal(parse_pid("-1", &p), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_u32),
                cmocka_unit_test(test_u64_n),
                cmocka_unit_test(test_pid),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
