/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* knfsd channel lines (nsid/nfsdchan.h). First byte selects the channel (bit 0) and the
 * mode (bit 1). Line mode: an accepted request round-trips through the kernel's formatting,
 * and the reply we format for it parses back (as the kernel would read it) to the same key
 * and answer. Kernel mode: the rest is "authname NUL name" as knfsd holds them (1..127
 * bytes, no NUL): the line knfsd writes for them (qword_add: only '\\', ' ', '\n', '\t'
 * escaped) parses to exactly that key, and the line for an empty name (an owner string
 * starting with NUL) is told apart (-ENODATA): no other line knfsd writes is refused. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
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

        if (data[0] & 2) {
                const char *nul = memchr(line, '\0', len);
                size_t al = nul ? (size_t) (nul - line) : len;
                const char *nm = nul ? nul + 1 : line + len;
                size_t nl = nul ? len - al - 1 : 0;
                if (al == 0 || al >= NSID_NFSD_NAMESZ || nl >= NSID_NFSD_NAMESZ ||
                    memchr(nm, '\0', nl))
                        return 0;
                nsid_nfsd_request k = { .channel = ch, .group = (data[0] & 4) != 0 };
                memcpy(k.authname, line, al);
                if (ch == NSID_NFSD_IDTONAME) {
                        for (size_t i = 0; i < nl && i < 4; i++)
                                k.id = (k.id << 8) | (uint8_t) nm[i];
                } else if (nl > 0)
                        memcpy(k.name, nm, nl);
                if (ch == NSID_NFSD_NAMETOID && nl == 0) {
                        /* knfsd's line for an empty name: "<authname> <type> \n" */
                        char esc[NSID_NFSD_NAMESZ * 4 + 1];
                        n = nsid_qword_escape(k.authname, al, esc, sizeof(esc));
                        CHECK(n > 0);
                        n = snprintf(buf, sizeof(buf), "%s %s \n", esc, k.group ? "group" : "user");
                        CHECK(n > 0 && (size_t) n < sizeof(buf));
                        CHECK(nsid_nfsd_request_parse(ch, buf, (size_t) n, &rq) == -ENODATA);
                        return 0;
                }
                n = nsid_nfsd_request_format(&k, buf, sizeof(buf));
                CHECK(n > 0);
                CHECK(nsid_nfsd_request_parse(ch, buf, (size_t) n, &rq) == 0);
                CHECK(rq.channel == k.channel && rq.group == k.group && rq.id == k.id &&
                      strcmp(rq.authname, k.authname) == 0 && strcmp(rq.name, k.name) == 0);
                return 0;
        }

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
