/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one capability dropper of nsid's programs: system calls only (the request-key helper
 * links no libcap), and cheap to call again (the helper drops in steps, per upcall). */
#ifndef NSID_SHARED_CAPS_H
#define NSID_SHARED_CAPS_H

#include <stdint.h>

#define CAPBIT(c) (UINT64_C(1) << (c))

enum {
        /* shrink the bounding set to keep too (where CAP_SETPCAP allows; without it there is
         * nothing beyond keep to lose): for a program that could exec */
        CAPS_BOUNDING = 1 << 0,
        /* securebits NOROOT and NO_SETUID_FIXUP, locked: uid 0 gains nothing by exec() */
        CAPS_SECUREBITS = 1 << 1,
};

/* Keep only the capabilities in keep (CAPBIT() of each; those the process does not have are
 * not gained): effective = permitted = keep & permitted, inheritable and ambient emptied,
 * no_new_privs set. The first call reads the sets; later ones know them, as long as only
 * this function changes them (a program that neither execs nor joins a user namespace): at
 * most one capset() each. Returns 0 or -errno; *ret_missing (may be NULL) gets the
 * capabilities of keep the process does not have. */
int caps_keep(uint64_t keep, unsigned flags, uint64_t *ret_missing);

#endif
