/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's idmapd.conf as libnfsidmap reads it (nsid/nfsconf.h): every lookup of the
 * daemon, the helper and nsidctl on hostile text. Invariants: a value found is non-empty,
 * has no newline and no NUL, and fits in the text; a lookup ends (a "$name" chain is
 * bounded: -ELOOP); the same text answers the same way twice. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/conffile.h>
#include <nsid/nfsconf.h>

#include "fuzz-check.h"

static void one(const char *text, size_t size, const char *section, const char *tag) {
        char *v = NULL, *w = NULL;
        int r = nsid_nfsconf_get(text, size, section, tag, &v);
        CHECK(r == 0 || r == -ENOENT || r == -ELOOP || r == -ENOMEM);
        if (r == 0) {
                size_t l = strlen(v);
                CHECK(l > 0 && l <= size && !strchr(v, '\n'));
        } else
                CHECK(v == NULL);
        CHECK(nsid_nfsconf_get(text, size, section, tag, &w) == r);
        CHECK(r != 0 || strcmp(v, w) == 0);
        free(v);
        free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;

        if (size > NSID_CONF_FILE_MAX)
                return 0;
        one(text, size, "General", "Domain");
        one(text, size, "Mapping", "Nobody-User");
        one(text, size, "Mapping", "Nobody-Group");
        one(text, size, "Translation", "Method");
        one(text, size, "environment", "x");
        return 0;
}
