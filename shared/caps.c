/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>

#include "caps.h"

/* Every capability not in keep out of the bounding set. Dropping one that is not in the set
 * succeeds too (one system call per capability, not two); EINVAL: past the kernel's last
 * capability; EPERM: no CAP_SETPCAP, so nothing beyond keep is permitted anyway. */
static int drop_bounding(uint64_t keep) {
        for (unsigned long c = 0; c < 64; c++) {
                if (keep & CAPBIT(c))
                        continue;
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
                        if (errno == EINVAL || errno == EPERM)
                                return 0;
                        return -errno;
                }
        }
        return 0;
}

int caps_keep(uint64_t keep, unsigned flags, uint64_t *ret_missing) {
        static bool known, once;
        static uint64_t perm_now; /* permitted = effective after the last call */
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        uint64_t perm, k;
        bool change;
        int r;

        if (!known) {
                if (syscall(SYS_capget, &h, d) < 0)
                        return -errno;
                perm = ((uint64_t) d[1].permitted << 32) | d[0].permitted;
                uint64_t eff = ((uint64_t) d[1].effective << 32) | d[0].effective;
                k = keep & perm;
                change = k != perm || k != eff || d[0].inheritable != 0 || d[1].inheritable != 0;
        } else {
                perm = perm_now;
                k = keep & perm_now;
                change = k != perm_now;
        }
        if (ret_missing)
                *ret_missing = keep & ~perm;
        /* what needs CAP_SETPCAP first, while it may still be effective */
        if (flags & CAPS_BOUNDING) {
                r = drop_bounding(keep);
                if (r < 0)
                        return r;
        }
        if (flags & CAPS_SECUREBITS)
                (void) prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
                             SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED, 0, 0, 0);
        /* EINVAL: a kernel without ambient capabilities (before 4.3) has none to clear */
        if (!once && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
            errno != EINVAL)
                return -errno;
        if (change) {
                memset(d, 0, sizeof(d));
                d[0].permitted = d[0].effective = (uint32_t) k;
                d[1].permitted = d[1].effective = (uint32_t) (k >> 32);
                if (syscall(SYS_capset, &h, d) < 0)
                        return -errno;
        }
        known = true;
        perm_now = k;
        if (!once) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        return -errno;
                once = true;
        }
        return 0;
}
