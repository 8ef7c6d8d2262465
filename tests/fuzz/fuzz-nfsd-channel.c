/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* knfsd channel lines (nsid/nfsdchan.h). First byte selects the channel. Invariants: an
 * accepted request round-trips through the kernel's formatting, and the reply we format for
 * it parses back (as the kernel would read it) to the same key and answer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/nfsdchan.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_nfsd_request rq, back;
        nsid_nfsd_reply rp;
        char buf[NSID_NFSD_LINE_MAX];
        int n;

        if (size < 1 || size > 4096)
                return 0;
        nsid_nfsd_channel ch = (data[0] & 1) ? NSID_NFSD_IDTONAME : NSID_NFSD_NAMETOID;
        const char *line = (const char *) data + 1;
        size_t len = size - 1;

        if (nsid_nfsd_reply_parse(ch, line, len, &rp) == 0)
                CHECK(rp.expiry > 0);
        if (nsid_nfsd_request_parse(ch, line, len, &rq) < 0)
                return 0;
        CHECK(strlen(rq.authname) > 0 && strlen(rq.authname) < NSID_NFSD_NAMESZ);
        n = nsid_nfsd_request_format(&rq, buf, sizeof(buf));
        CHECK(n > 0);
        CHECK(nsid_nfsd_request_parse(ch, buf, (size_t) n, &back) == 0);
        CHECK(memcmp(&rq, &back, sizeof(rq)) == 0);

        n = nsid_nfsd_reply_format(&rq, 1900000000, false, 4294967294u, "x y@d", buf, sizeof(buf));
        CHECK(n > 0 && buf[n - 1] == '\n');
        CHECK(nsid_nfsd_reply_parse(ch, buf, (size_t) n, &rp) == 0);
        CHECK(!rp.negative && rp.expiry == 1900000000);
        CHECK(strcmp(rp.key.authname, rq.authname) == 0 && rp.key.group == rq.group);
        if (ch == NSID_NFSD_NAMETOID)
                CHECK(rp.id == 4294967294u && strcmp(rp.key.name, rq.name) == 0);
        else
                CHECK(rp.key.id == rq.id && strcmp(rp.name, "x y@d") == 0);
        n = nsid_nfsd_reply_format(&rq, 5, true, 0, NULL, buf, sizeof(buf));
        CHECK(n > 0);
        CHECK(nsid_nfsd_reply_parse(ch, buf, (size_t) n, &rp) == 0 && rp.negative);
        return 0;
}
