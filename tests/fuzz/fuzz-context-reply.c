/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The canonical reply of nsid-idmapd's context worker, which parsed a container's files
 * (idmapd/idmapd-load.c): what the daemon's root process parses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idmapd/idmapd-load.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dm_context *c;
        if (size > 4 * 1024 * 1024)
                return 0;
        c = calloc(1, sizeof(*c));
        CHECK(c);
        if (dm_context_parse_reply((const char *) data, size, c) == 0) {
                CHECK(strlen(c->domain) > 0 && strlen(c->domain) < sizeof(c->domain));
                CHECK(c->nss == (c->db == NULL));
                if (c->db) {
                        uint32_t id;
                        (void) nsid_userdb_user_by_name(c->db, "root", &id, NULL);
                }
        }
        dm_context_free(c);
        return 0;
}
