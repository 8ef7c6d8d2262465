/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* knfsd's /proc/fs/nfsd/clients/<n>/info: the owner string in it is chosen by any NFS
 * client. The parser, then the collector and the checks over what parsed. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "nfsdinfo-internal.h"
#include "parse-util.h"
#include "nsid/nfsdclients.h"

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_nfsd_clients *c = NULL;
        nfsd_info info;
        char esc[NFSD_OWNER_MAX * 4 + 1];
        int r, n;

        if (size > NSID_NFSD_INFO_MAX)
                return 0;
        r = nfsd_info_parse((const char *) data, size, &info);
        CHECK(r == 0 || r == -EBADMSG);
        if (r == 0) {
                CHECK(info.name_len <= NFSD_OWNER_MAX);
                CHECK(memchr(info.host, 0, sizeof(info.host)));
                escape_bytes(info.name, info.name_len, esc);
                CHECK(strlen(esc) <= info.name_len * 4);
                for (const char *p = esc; *p; p++)
                        CHECK(*p >= 0x20 && *p < 0x7f && *p != '"');
                r = nfsd_owner_has_uniquifier(info.name, info.name_len);
                CHECK(r >= -1 && r <= 1);
        }
        CHECK(nsid_nfsd_clients_new(&c) == 0);
        /* the same record twice (once later) and the checks over both windows */
        r = nsid_nfsd_clients_add_info(c, (const char *) data, size, 1000);
        CHECK(r == 0 || r == -EBADMSG);
        r = nsid_nfsd_clients_add_info(c, (const char *) data, size, 2000);
        CHECK(r == 0 || r == -EBADMSG);
        for (uint64_t w = 0; w <= 1000; w += 1000) {
                n = nsid_nfsd_clients_check(c, w);
                CHECK(n >= 0 && n <= 2);
                for (int i = 0; i < n; i++) {
                        nsid_nfsd_finding_kind k;
                        const char *owner;
                        size_t na;
                        CHECK(nsid_nfsd_clients_get_finding(c, (size_t) i, &k, &owner, &na) == 0);
                        CHECK(nsid_nfsd_finding_kind_to_string(k));
                        CHECK(owner && na <= 1);
                        for (size_t j = 0; j < na; j++)
                                CHECK(nsid_nfsd_clients_get_finding_address(c, (size_t) i, j));
                }
        }
        nsid_nfsd_clients_unref(c);
        return 0;
}
