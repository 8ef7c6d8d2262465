/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Skips that are counted and said, for the cmocka programs (unit and C integration tests).
 * Include after <cmocka.h>.
 *
 * cmocka's own skip() marks a test skipped, but says nothing about why, and
 * cmocka_run_group_tests() returns 0 when every test was skipped: such a program is a PASS
 * for ctest without having tested anything. So:
 *  - a test that cannot run calls test_skip("what is missing (how to get it)"), which prints
 *    "SKIP: ..." and counts it; cmocka's bare skip() is not available (it would not count);
 *  - main() returns run_test_group(tests, setup, teardown), which prints
 *    "N passed, M failed, K skipped" and returns 0, 1 on a failure, or 77 (ctest's
 *    SKIP_RETURN_CODE, set for every unit and integration test) when every test was skipped;
 *  - a whole program that cannot run (not root, say) calls skip_all("...") from main() or
 *    from its group setup: "SKIP: ...", exit 77. */
#ifndef NSID_TEST_SKIP_H
#define NSID_TEST_SKIP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define EXIT_SKIP 77

static unsigned tests_skipped;

#define test_skip(...)                                  \
        do {                                            \
                print_message("SKIP: " __VA_ARGS__);    \
                print_message("\n");                    \
                tests_skipped++;                        \
                _skip(__FILE__, __LINE__);              \
        } while (0)

#undef skip
#define skip() _Static_assert(0, "use test_skip(\"reason\"): it counts the skip and says why")

#define skip_all(...)                                   \
        do {                                            \
                fflush(stdout);                         \
                fprintf(stderr, "SKIP: " __VA_ARGS__);  \
                fputc('\n', stderr);                    \
                exit(EXIT_SKIP);                        \
        } while (0)

/* failed: what cmocka_run_group_tests() returned, the failed tests plus the errors (a group
 * setup or teardown that failed counts once, with no test run). */
static inline int tests_result(int failed, size_t n) {
        size_t skipped = tests_skipped;

        if (failed != 0) {
                printf("%s: %d failed or in error of %zu, %zu skipped\n",
                       program_invocation_short_name, failed, n, skipped);
                return 1; /* never 77: a failure is not a skip, however many there are */
        }
        printf("%s: %zu passed, 0 failed, %zu skipped\n", program_invocation_short_name,
               n > skipped ? n - skipped : 0, skipped);
        if (skipped > 0 && skipped >= n) {
                printf("%s: SKIP: every test was skipped\n", program_invocation_short_name);
                return EXIT_SKIP;
        }
        return 0;
}

/* (not run_tests(): cmocka.h has a deprecated macro of that name) */
#define run_test_group(tests, group_setup, group_teardown)                              \
        tests_result(cmocka_run_group_tests(tests, group_setup, group_teardown),        \
                     sizeof(tests) / sizeof((tests)[0]))

#endif
