/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The NFS ID key cache file (nsid_kernel_nfs_idkeys_tagged_cached()): root's file, but read
 * by every upcall, so a damaged one must only ever be refused. Invariant of accepted input:
 * it is the one spelling the writer produces, byte for byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "kernel-keys-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char out[IDKEYS_CACHE_MAX];
        idkeys_cache c;
        int n;

        if (size > IDKEYS_CACHE_MAX) /* the reader never passes more */
                return 0;
        if (idkeys_cache_parse((const char *) data, size, &c) < 0)
                return 0;
        CHECK(c.tagged == 0 || c.tagged == 1);
        CHECK(strlen(c.boot_id) == 36);
        CHECK(strlen(c.srcversion) <= IDKEYS_SRCVERSION_MAX);
        n = idkeys_cache_format(&c, out, sizeof(out));
        CHECK(n > 0 && (size_t) n == size && memcmp(out, data, size) == 0);
        return 0;
}
