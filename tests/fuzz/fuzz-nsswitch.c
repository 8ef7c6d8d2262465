/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A container's nsswitch.conf and idmapd.conf, as nsid-idmapd's context worker reads them
 * (idmapd/nss-text.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idmapd/nss-text.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nss_sources s;
        char buf[NSS_SOURCES_MAX * NSS_SOURCE_NAME_MAX];

        if (size > 1024 * 1024)
                return 0;
        for (int k = 0; k < 2; k++) {
                int r = nss_sources_parse((const char *) data, size, k ? "group" : "passwd", &s);
                if (r < 0)
                        continue;
                CHECK(s.n >= 1 && s.n <= NSS_SOURCES_MAX);
                for (unsigned i = 0; i < s.n; i++) {
                        size_t n = strlen(s.name[i]);
                        CHECK(n > 0 && n < NSS_SOURCE_NAME_MAX);
                        CHECK(strspn(s.name[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n);
                }
                nss_sources_format(&s, buf, sizeof(buf));
                CHECK(strlen(buf) < sizeof(buf));
                (void) nss_sources_files_only(&s, k == 0);
        }
        (void) nss_idmapd_conf_needs_libnfsidmap((const char *) data, size);
        return 0;
}
