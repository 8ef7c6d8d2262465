/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid-idmapd control socket lines (nsid/ctlproto.h): requests from a client, replies from
 * the daemon. Invariant: an accepted request formats back to a line that parses equal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/ctlproto.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_ctl_request rq, back;
        nsid_ctl_reply rp;
        char buf[NSID_CTL_LINE_MAX], v[NSID_CTL_VALUE_MAX];
        uint32_t ttl;
        bool cached;

        if (size > 8192)
                return 0;
        const char *s = (const char *) data;
        if (nsid_ctl_reply_parse(s, size, &rp) == 0) {
                if (rp.kind == NSID_CTL_REPLY_OK)
                        CHECK(rp.rest >= s && rp.rest + rp.rest_len <= s + size);
                if (nsid_ctl_lookup_reply_parse(&rp, v, &ttl, &cached) == 0)
                        CHECK(strlen(v) < NSID_CTL_VALUE_MAX);
        }
        if (nsid_ctl_request_parse(s, size, &rq) < 0)
                return 0;
        int n = nsid_ctl_request_format(&rq, buf, sizeof(buf));
        CHECK(n > 0);
        CHECK(nsid_ctl_request_parse(buf, (size_t) n, &back) == 0);
        CHECK(memcmp(&rq, &back, sizeof(rq)) == 0);
        return 0;
}
