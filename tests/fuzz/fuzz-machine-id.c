/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's /etc/machine-id (container-controlled), parsed by nsid_machine_id_parse(), and
 * the mountinfo scan for nfs mounts (mount points are container-controlled). */
#include <stdint.h>
#include <string.h>

#include "nsid/identity.h"
#include "nsid/netns.h"

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t id[16], zero[16] = {};
        char ident[NSID_IDENTITY_STRING_SIZE];
        int r;

        if (size > 65536)
                return 0;
        r = nsid_machine_id_parse((const char *) data, size, id);
        if (r == 0) {
                if (size != 32 && size != 33)
                        __builtin_trap();
                if (memcmp(id, zero, 16) == 0)
                        __builtin_trap();
                if (nsid_identity_derive(id, "nfs4", "k", ident) != 0 || strlen(ident) != 32)
                        __builtin_trap();
        }
        r = nsid_mountinfo_has_nfs((const char *) data, size);
        if (r != 0 && r != 1)
                __builtin_trap();
        return 0;
}
