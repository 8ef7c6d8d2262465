/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shared/caps.c: the programs' capability dropper, run in forked children (it remembers the
 * sets it made) of a root test process; what the kernel then reports in /proc/self/status is
 * what is checked. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "shared/caps.h"

/* the hex mask of a "Name:\t..." line of /proc/self/status */
static uint64_t status_mask(const char *name) {
        char line[256];
        uint64_t v = UINT64_MAX;
        size_t l = strlen(name);
        FILE *f = fopen("/proc/self/status", "re");
        if (!f)
                return v;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, name, l) == 0 && line[l] == ':')
                        v = strtoull(line + l + 1, NULL, 16);
        fclose(f);
        return v;
}

/* exit status of the child: 0 when every expectation held, else the failed step's number */
static int in_child(int (*fn)(void)) {
        int st;
        pid_t pid = fork();
        if (pid == 0)
                _exit(fn());
        assert_true(pid > 0);
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        return WEXITSTATUS(st);
}

#define KEEP (CAPBIT(CAP_SYS_ADMIN) | CAPBIT(CAP_SYS_PTRACE))

static int keep_two(void) {
        uint64_t missing = 1;
        if (caps_keep(KEEP, 0, &missing) < 0)
                return 1;
        if (missing != 0)
                return 2;
        if (status_mask("CapEff") != KEEP || status_mask("CapPrm") != KEEP)
                return 3;
        if (status_mask("CapInh") != 0 || status_mask("CapAmb") != 0)
                return 4;
        if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
                return 5;
        /* without CAPS_BOUNDING the bounding set stays whole */
        if ((status_mask("CapBnd") & CAPBIT(CAP_SETPCAP)) == 0)
                return 6;
        /* again, fewer: only what is asked, never more than before */
        if (caps_keep(CAPBIT(CAP_SYS_PTRACE) | CAPBIT(CAP_SETUID), 0, &missing) < 0)
                return 7;
        if (status_mask("CapEff") != CAPBIT(CAP_SYS_PTRACE))
                return 8;
        if (missing != CAPBIT(CAP_SETUID))
                return 9;
        if (caps_keep(0, 0, NULL) < 0 || status_mask("CapEff") != 0 || status_mask("CapPrm") != 0)
                return 10;
        return 0;
}

static int keep_bounding(void) {
        if (caps_keep(KEEP, CAPS_BOUNDING | CAPS_SECUREBITS, NULL) < 0)
                return 1;
        if (status_mask("CapBnd") != KEEP)
                return 2;
        if (status_mask("CapEff") != KEEP)
                return 3;
        if ((prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) & (1 << 0 /* SECURE_NOROOT */)) == 0)
                return 4;
        return 0;
}

/* a process without CAP_SETPCAP cannot shrink its bounding set: that is no error (nothing
 * beyond what it keeps is permitted to it anyway) */
static int bounding_without_setpcap(void) {
        if (caps_keep(KEEP, 0, NULL) < 0)
                return 1;
        if (caps_keep(KEEP, CAPS_BOUNDING, NULL) < 0)
                return 2;
        if ((status_mask("CapBnd") & CAPBIT(CAP_SETPCAP)) == 0)
                return 3; /* unchanged */
        return 0;
}

static void test_keep(void **state) {
        (void) state;
        if (geteuid() != 0 || status_mask("CapEff") == 0) {
                test_skip("not root with capabilities");
                return;
        }
        assert_int_equal(in_child(keep_two), 0);
        assert_int_equal(in_child(keep_bounding), 0);
        assert_int_equal(in_child(bounding_without_setpcap), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_keep),
        };
        return run_test_group(tests, NULL, NULL);
}
