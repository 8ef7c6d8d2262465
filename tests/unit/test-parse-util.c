/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

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

static void test_u64_n_canonical(void **state) {
        uint64_t v = 7;

        assert_int_equal(parse_u64_n_canonical("0", 1, UINT64_MAX, &v), 0);
        assert_true(v == 0);
        assert_int_equal(parse_u64_n_canonical("10", 2, UINT64_MAX, &v), 0);
        assert_true(v == 10);
        assert_int_equal(parse_u64_n_canonical("4294967294x", 10, UINT32_MAX - 1, &v), 0);
        assert_true(v == UINT32_MAX - 1);
        assert_int_equal(parse_u64_n_canonical("18446744073709551615", 20, UINT64_MAX, &v), 0);
        assert_true(v == UINT64_MAX);
        v = 7;
        /* one spelling per value: no leading zero, however long, and no sign */
        assert_int_equal(parse_u64_n_canonical("00", 2, UINT64_MAX, &v), -EINVAL);
        assert_int_equal(parse_u64_n_canonical("01", 2, UINT64_MAX, &v), -EINVAL);
        assert_int_equal(parse_u64_n_canonical("0000000000000000000000001", 25, UINT64_MAX, &v),
                         -EINVAL);
        assert_int_equal(parse_u64_n_canonical("+1", 2, UINT64_MAX, &v), -EINVAL);
        assert_int_equal(parse_u64_n_canonical("-0", 2, UINT64_MAX, &v), -EINVAL);
        assert_int_equal(parse_u64_n_canonical(" 1", 2, UINT64_MAX, &v), -EINVAL);
        assert_int_equal(parse_u64_n_canonical("1 ", 2, UINT64_MAX, &v), -EINVAL);
        assert_int_equal(parse_u64_n_canonical("", 0, UINT64_MAX, &v), -EINVAL);
        assert_int_equal(parse_u64_n_canonical(NULL, 0, UINT64_MAX, &v), -EINVAL);
        /* overflow and the bound */
        assert_int_equal(parse_u64_n_canonical("18446744073709551616", 20, UINT64_MAX, &v),
                         -ERANGE);
        assert_int_equal(parse_u64_n_canonical("4294967295", 10, UINT32_MAX - 1, &v), -ERANGE);
        assert_int_equal(parse_u64_n_canonical("4194305", 7, 4194304, &v), -ERANGE);
        assert_int_equal(v, 7); /* untouched on failure */

        /* 25 digits, not NUL-terminated (exact-size heap buffer: ASan sees any read past len):
         * out of range, but a leading zero is a syntax error first. */
        char *f = malloc(25);
        assert_non_null(f);
        memset(f, '9', 25);
        assert_int_equal(parse_u64_n_canonical(f, 25, UINT64_MAX, &v), -ERANGE);
        f[0] = '0';
        assert_int_equal(parse_u64_n_canonical(f, 25, UINT64_MAX, &v), -EINVAL);
        free(f);
}

/* split_fields() of a NUL-terminated test string; checks that each field is the expected one. */
static int split_str(const char *line, size_t max, const char **f, size_t *fl) {
        return split_fields(line, strlen(line), f, fl, max);
}

static void assert_field(const char *f, size_t fl, const char *want) {
        assert_int_equal(fl, strlen(want));
        assert_memory_equal(f, want, fl);
}

static void test_split_fields(void **state) {
        const char *f[4];
        size_t fl[4];

        assert_int_equal(split_str("a", 4, f, fl), 1);
        assert_field(f[0], fl[0], "a");
        assert_int_equal(split_str("user 1000 x\n", 4, f, fl), 3);
        assert_field(f[0], fl[0], "user");
        assert_field(f[1], fl[1], "1000");
        assert_field(f[2], fl[2], "x");
        /* exactly max fields, and one more */
        assert_int_equal(split_str("a b c d", 4, f, fl), 4);
        assert_field(f[3], fl[3], "d");
        assert_int_equal(split_str("a b c d\n", 4, f, fl), 4);
        assert_field(f[3], fl[3], "d");
        assert_int_equal(split_str("a b c d e", 4, f, fl), -EINVAL);
        assert_int_equal(split_str("a b", 1, f, fl), -EINVAL);
        /* empty line, empty fields, blanks at either end or doubled */
        assert_int_equal(split_str("", 4, f, fl), -EINVAL);
        assert_int_equal(split_str("\n", 4, f, fl), -EINVAL);
        assert_int_equal(split_str(" ", 4, f, fl), -EINVAL);
        assert_int_equal(split_str(" a", 4, f, fl), -EINVAL);
        assert_int_equal(split_str("a ", 4, f, fl), -EINVAL);
        assert_int_equal(split_str("a \n", 4, f, fl), -EINVAL);
        assert_int_equal(split_str("a  b", 4, f, fl), -EINVAL);
        assert_int_equal(split_str("a\tb", 4, f, fl), 1); /* only ' ' separates */
        /* only one trailing newline is dropped; none inside; no NUL inside */
        assert_int_equal(split_str("a\n\n", 4, f, fl), -EINVAL);
        assert_int_equal(split_str("a\nb", 4, f, fl), -EINVAL);
        assert_int_equal(split_fields("a\0b", 3, f, fl, 4), -EINVAL);
        assert_int_equal(split_fields("a b\0", 4, f, fl, 4), -EINVAL);
        /* len bounds the line: the rest of the buffer is not looked at */
        assert_int_equal(split_fields("ab cd", 2, f, fl, 4), 1);
        assert_field(f[0], fl[0], "ab");
        assert_int_equal(split_fields("ab cd", 0, f, fl, 4), -EINVAL);

        /* Fields point into the line, which need not be NUL-terminated: exact-size heap copy. */
        char *line = malloc(7);
        assert_non_null(line);
        memcpy(line, "xy z w\n", 7);
        assert_int_equal(split_fields(line, 7, f, fl, 3), 3);
        assert_ptr_equal(f[0], line);
        assert_ptr_equal(f[1], line + 3);
        assert_ptr_equal(f[2], line + 5);
        assert_int_equal(fl[0], 2);
        assert_int_equal(fl[1], 1);
        assert_int_equal(fl[2], 1);
        free(line);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_u32),
                cmocka_unit_test(test_u64_n),
                cmocka_unit_test(test_pid),
                cmocka_unit_test(test_u64_n_canonical),
                cmocka_unit_test(test_split_fields),
        };
        return run_test_group(tests, NULL, NULL);
}
