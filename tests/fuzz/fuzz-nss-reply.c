/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What nsid-nss-query prints from inside a container (idmapd/nss-text.c). */
#include <stdint.h>
#include <string.h>

#include "idmapd/nss-text.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nss_reply r;
        if (size > 4096)
                return 0;
        for (int want_id = 0; want_id < 2; want_id++) {
                if (nss_reply_parse((const char *) data, size, want_id, &r) < 0)
                        continue;
                switch (r.kind) {
                case NSS_REPLY_ID:
                        CHECK(want_id && r.id != UINT32_MAX);
                        break;
                case NSS_REPLY_NAME: {
                        size_t n = strlen(r.name);
                        CHECK(!want_id && n > 0 && n < sizeof(r.name) && strchr(r.name, '@'));
                        for (size_t i = 0; i < n; i++)
                                CHECK((unsigned char) r.name[i] > 0x20 && r.name[i] != 0x7f);
                        break;
                }
                case NSS_REPLY_ERR:
                        CHECK(r.err > 0 && r.err < 4096);
                        break;
                case NSS_REPLY_NONE:
                        break;
                }
        }
        return 0;
}
