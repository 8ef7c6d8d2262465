/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "caps.h"

static bool kept(const cap_value_t *keep, size_t n, cap_value_t c) {
        for (size_t i = 0; i < n; i++)
                if (keep[i] == c)
                        return true;
        return false;
}

int caps_restrict(const cap_value_t *keep, size_t n, char **ret_text) {
        cap_t cur = NULL, next = NULL;
        cap_value_t last = cap_max_bits();
        int r = 0;

        cur = cap_get_proc();
        next = cap_init(); /* all clear */
        if (!cur || !next) {
                r = -errno;
                goto out;
        }

        /* The bounding set first, while CAP_SETPCAP may still be effective. Dropping a
         * capability that is not in the set succeeds too: no need to read it first (one
         * system call per capability, not two: this runs on every container start). */
        for (cap_value_t c = 0; c < last; c++) {
                if (kept(keep, n, c))
                        continue;
                if (cap_drop_bound(c) < 0) {
                        if (errno != EPERM) {
                                r = -errno;
                                goto out;
                        }
                        break; /* no CAP_SETPCAP: nothing permitted beyond keep[] below */
                }
        }
        /* One call; libcap's cap_reset_ambient() asks about each capability first. EINVAL:
         * a kernel without ambient capabilities (before 4.3) has none to clear. */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
                r = -errno;
                goto out;
        }

        for (size_t i = 0; i < n; i++) {
                cap_flag_value_t v = CAP_CLEAR;
                if (cap_get_flag(cur, keep[i], CAP_PERMITTED, &v) < 0 || v != CAP_SET)
                        continue;
                if (cap_set_flag(next, CAP_PERMITTED, 1, &keep[i], CAP_SET) < 0 ||
                    cap_set_flag(next, CAP_EFFECTIVE, 1, &keep[i], CAP_SET) < 0) {
                        r = -errno;
                        goto out;
                }
        }
        if (cap_set_proc(next) < 0) {
                r = -errno;
                goto out;
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                r = -errno;
                goto out;
        }
        if (ret_text) {
                char *t = cap_to_text(next, NULL);
                *ret_text = t ? strdup(t) : NULL;
                if (t)
                        cap_free(t);
        }
out:
        if (cur)
                cap_free(cur);
        if (next)
                cap_free(next);
        return r;
}
