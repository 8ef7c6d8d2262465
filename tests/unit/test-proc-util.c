/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc-util.h"

/* Feed len bytes through a real pipe and read them back with a cap. */
static int read_through_pipe(size_t len, size_t max, char **ret, size_t *ret_size) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        char *src = malloc(len + 1);
        assert_non_null(src);
        memset(src, 'x', len);
        if (fork() == 0) {
                close(p[0]);
                size_t off = 0;
                while (off < len) {
                        ssize_t n = write(p[1], src + off, len - off);
                        if (n <= 0)
                                break;
                        off += (size_t) n;
                }
                _exit(0);
        }
        close(p[1]);
        int r = read_fd_capped(p[0], max, ret, ret_size);
        close(p[0]);
        free(src);
        return r;
}

static void test_caps(void **state) {
        char *d = NULL;
        size_t n = 99;

        assert_int_equal(read_through_pipe(0, 10, &d, &n), 0);
        assert_int_equal(n, 0);
        assert_string_equal(d, "");
        free(d);

        assert_int_equal(read_through_pipe(10, 10, &d, &n), 0);
        assert_int_equal(n, 10);
        assert_int_equal(strlen(d), 10);
        free(d);

        d = NULL;
        assert_int_equal(read_through_pipe(11, 10, &d, &n), -EFBIG);
        assert_null(d);

        assert_int_equal(read_through_pipe(100000, 100000, &d, &n), 0);
        assert_int_equal(n, 100000);
        free(d);

        d = NULL;
        assert_int_equal(read_through_pipe(200000, 100000, &d, &n), -EFBIG);
        assert_null(d);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_caps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
