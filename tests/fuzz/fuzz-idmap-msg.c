/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* struct idmap_msg upcalls (a pipe's bytes: 140 for the upcall, then 140 as a candidate
 * downcall). Invariants: an accepted upcall always gets a reply the kernel's checks accept,
 * and a failure reply that the kernel reads as a failure; a refused one gets a failure
 * (nsid_idmap_msg_build_failure_raw) echoing its type and conv. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/idmapmsg.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_idmap_request rq;
        nsid_idmap_msg out;
        char name[NSID_IDMAP_NAMESZ];
        uint32_t id;

        if (size > 1024)
                return 0;
        size_t up = size < NSID_IDMAP_MSG_SIZE ? size : NSID_IDMAP_MSG_SIZE;
        if (nsid_idmap_msg_parse_upcall(data, size == 280 ? 140 : size, &rq) < 0) {
                /* refused, and answered all the same: a failure the kernel completes the
                 * upcall with (no SUCCESS bit), echoing type and conv */
                CHECK(nsid_idmap_msg_build_failure_raw(data, size, 0, &out) == 0);
                CHECK(!(out.im_status & NSID_IDMAP_STATUS_SUCCESS) && out.im_status != 0);
                CHECK(size < 1 || out.im_type == data[0]);
                CHECK(size < 2 || out.im_conv == data[1]);
                return 0;
        }
        CHECK(strlen(rq.name) < NSID_IDMAP_NAMESZ - 1); /* 127 bytes may be a cut name */
        CHECK(rq.type <= 1 && rq.conv <= 1);
        if (rq.conv == NSID_IDMAP_CONV_NAMETOID) {
                CHECK(strlen(rq.name) > 0 && strlen(rq.name) < NSID_IDMAP_NAMESZ);
                CHECK(nsid_idmap_msg_build_reply(&rq, 1000, NULL, &out) == 0);
                CHECK(nsid_idmap_msg_check_reply(&rq, &out, sizeof(out), &id, NULL) == 1);
                CHECK(id == 1000);
        } else {
                CHECK(rq.id != UINT32_MAX);
                CHECK(nsid_idmap_msg_build_reply(&rq, 0, "someone@example.test", &out) == 0);
                CHECK(nsid_idmap_msg_check_reply(&rq, &out, sizeof(out), NULL, name) == 1);
                CHECK(strcmp(name, "someone@example.test") == 0);
        }
        CHECK(nsid_idmap_msg_build_failure(&rq, NSID_IDMAP_STATUS_LOOKUPFAIL, &out) == 0);
        CHECK(nsid_idmap_msg_check_reply(&rq, &out, sizeof(out), NULL, NULL) == 0);
        /* the rest of the input as a hostile downcall: never crashes, never "accepted" with a
         * mismatching name or id */
        if (size == 280) {
                int r = nsid_idmap_msg_check_reply(&rq, data + 140, 140, &id, name);
                CHECK(r >= -200 && r <= 1);
        }
        (void) up;
        return 0;
}
