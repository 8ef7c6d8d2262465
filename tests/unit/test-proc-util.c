/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

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

/* /proc/PID/stat: field 22 counted from the last ')' (the command name may hold blanks and
 * parentheses). */
static void test_stat_starttime(void **state) {
        uint64_t v = 0;
        const char *fields = " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21 22\n";
        char line[512];

        snprintf(line, sizeof(line), "123 (sleep)%s", fields);
        assert_int_equal(proc_stat_parse_starttime(line, strlen(line), &v), 0);
        assert_int_equal(v, 424242);
        /* a name that imitates the fields after it */
        snprintf(line, sizeof(line), "123 (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 1 x)%s",
                 fields);
        assert_int_equal(proc_stat_parse_starttime(line, strlen(line), &v), 0);
        assert_int_equal(v, 424242);
        /* field 22 last, without a newline */
        snprintf(line, sizeof(line), "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 77");
        assert_int_equal(proc_stat_parse_starttime(line, strlen(line), &v), 0);
        assert_int_equal(v, 77);
        const char *bad[] = { "", "123 sleep S 1", "1 (x) S 1 2 3", "1 (x)S 1 2 3 4 5 6 7 8 9 10 "
                              "11 12 13 14 15 16 17 18 77", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 "
                              "13 14 15 16 17 18 -77", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 "
                              "14 15 16 17 18  77" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(proc_stat_parse_starttime(bad[i], strlen(bad[i]), &v), -EINVAL);
}

static void test_status_tgid(void **state) {
        pid_t t = 0;
        const char *ok = "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
                         "Ngid:\t0\nPid:\t4250\n";
        assert_int_equal(proc_status_parse_tgid(ok, strlen(ok), &t), 0);
        assert_int_equal(t, 4242);
        const char *bad[] = { "Name:\tx\n", "Tgid:\t\n", "Tgid:\t0\n", "Tgid:\t-1\n",
                              "Tgid:\t4194305\n", "Tgid:\t12x\n", "Tgid:\t012\n" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(proc_status_parse_tgid(bad[i], strlen(bad[i]), &t), -EINVAL);
        /* the real thing */
        char buf[4096];
        FILE *f = fopen("/proc/self/status", "r");
        assert_non_null(f);
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        assert_int_equal(proc_status_parse_tgid(buf, n, &t), 0);
        assert_int_equal(t, getpid());
        uint64_t st;
        f = fopen("/proc/self/stat", "r");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        assert_int_equal(proc_stat_parse_starttime(buf, n, &st), 0);
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
                cmocka_unit_test(test_stat_starttime),
                cmocka_unit_test(test_status_tgid),
                cmocka_unit_test(test_caps),
        };
        return run_test_group(tests, NULL, NULL);
}
