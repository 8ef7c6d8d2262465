/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid-idmap's lookup frames (nsid/ctlframe.h): requests as nsid-idmapd receives them from a
 * client, replies as nsid-idmap receives them. Invariants: an accepted request rebuilds into
 * the same bytes; an accepted reply carries a NUL-terminated value, and one with an answer
 * rebuilds into the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/ctlframe.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_ctl_request rq;
        nsid_ctl_frame_request fq;
        nsid_ctl_frame_reply fr, back;

        if (size > 4096)
                return 0;
        if (nsid_ctl_frame_request_parse(data, size, &rq) == 0) {
                bool named = rq.kind == NSID_IDMAP_KEY_UID || rq.kind == NSID_IDMAP_KEY_GID;
                CHECK(nsid_ctl_frame_request_init(&fq, rq.kind, rq.id, rq.name,
                                                  named ? strlen(rq.name) : 0) == 0);
                CHECK(memcmp(&fq, data, sizeof(fq)) == 0);
        }
        for (int k = NSID_IDMAP_KEY_UID; k <= NSID_IDMAP_KEY_GROUP; k++) {
                if (nsid_ctl_frame_reply_check(data, size, (nsid_idmap_key_kind) k) < 0)
                        continue;
                memcpy(&fr, data, sizeof(fr));
                CHECK(strnlen(fr.value, sizeof(fr.value)) < sizeof(fr.value));
                if (fr.status != 0)
                        continue;
                CHECK(nsid_ctl_frame_reply_init(&back, (nsid_idmap_key_kind) k, 0, fr.id, fr.value,
                                                fr.ttl, fr.flags & NSID_CTL_FRAME_CACHED) == 0);
                CHECK(memcmp(&back, &fr, sizeof(fr)) == 0);
        }
        return 0;
}
