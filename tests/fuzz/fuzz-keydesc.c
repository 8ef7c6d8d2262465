/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Key descriptions and callout info a requester controls: id_resolver descriptions,
 * KEYCTL_DESCRIBE text and dns_resolver requests. Invariants of accepted input: names pass
 * the name check and round-trip, ids are below (u32)-1, DNS names are valid. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/keyring.h>
#include <nsid/resolv.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static nsid_idmap_keydesc kd;
        const char *s = (const char *) data;
        nsid_key_describe d;
        nsid_dns_request req;

        if (size > 8192)
                return 0;
        if (nsid_idmap_keydesc_parse(s, size, &kd) == 0) {
                if (nsid_idmap_key_kind_answers_name(kd.kind))
                        CHECK(kd.id != UINT32_MAX);
                else {
                        size_t l = strlen(kd.name);
                        CHECK(l > 0 && l <= NSID_IDMAP_KEYDESC_NAME_MAX);
                        CHECK(nsid_idmap_name_check(kd.name, l) == 0);
                        CHECK(!strchr(kd.name, ':') && !strstr(kd.name, "@@"));
                }
        }
        if (nsid_key_describe_parse(s, size, &d) == 0) {
                CHECK(d.type >= s && d.type + d.type_len <= s + size);
                CHECK(d.description >= s && d.description + d.description_len <= s + size);
        }
        /* split the input: description | callout */
        const char *bar = memchr(s, '|', size);
        size_t dl = bar ? (size_t) (bar - s) : size;
        if (nsid_dns_request_parse(s, dl, bar ? bar + 1 : "", bar ? size - dl - 1 : 0, &req) == 0) {
                CHECK(nsid_dns_name_valid(req.name, strlen(req.name)));
                CHECK(req.want_ipv4 || req.want_ipv6);
        }
        return 0;
}
