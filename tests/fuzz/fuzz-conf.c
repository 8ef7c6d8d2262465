/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid.conf and idmapd.conf-style INI text through libinih (nsid/conffile.h): the strict
 * parser with its diagnostics, and the plain lookup used on a container's idmapd.conf. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <nsid/conffile.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;
        const nsid_conf_key *keys;
        nsid_conf *c = NULL;
        nsid_conf_diagnostic d;
        nsid_conf_entry e;
        unsigned lines = 1, prev = 0, errors = 0;
        size_t n_keys = 0;

        if (size > NSID_CONF_FILE_MAX)
                return 0;
        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n';

        CHECK(nsid_conf_parse(text, size, "fuzz.conf", &c) == 0);

        /* diagnostics: in line order, within the text, errors counted */
        for (size_t i = 0; nsid_conf_get_diagnostic(c, i, &d) == 0; i++) {
                CHECK(d.line >= prev && d.line <= lines);
                CHECK(d.priority == LOG_WARNING || d.priority == LOG_ERR);
                CHECK(strncmp(d.message, "fuzz.conf:", 10) == 0);
                errors += d.priority == LOG_ERR;
                prev = d.line;
        }
        CHECK(errors == nsid_conf_get_n_errors(c));

        /* every value in effect is valid for its key, and comes from the file or defaults */
        keys = nsid_conf_keys(&n_keys);
        for (size_t k = 0; k < n_keys; k++) {
                const char *v = nsid_conf_get_value(c, keys[k].section, keys[k].name);
                const char *last = NULL;
                unsigned line = 0;
                char *raw = NULL;
                int o, r;

                CHECK(v && nsid_conf_key_validate(&keys[k], v) == 0);
                o = nsid_conf_get_origin(c, keys[k].section, keys[k].name, &line);
                CHECK(o == 0 || o == 1);
                if (o == 0)
                        CHECK(strcmp(v, keys[k].default_value) == 0);
                else
                        CHECK(line >= 1 && line <= lines);

                /* the plain lookup sees the last assignment, valid or not */
                for (size_t i = 0; nsid_conf_get_entry(c, i, &e) == 0; i++)
                        if (e.key == &keys[k])
                                last = e.value;
                r = nsid_conf_get(text, size, keys[k].section, keys[k].name, &raw);
                CHECK(r == 0 || r == -ENOENT);
                CHECK((r == 0) == (last != NULL));
                if (r == 0) {
                        CHECK(strcmp(raw, last) == 0);
                        free(raw);
                }
        }

        for (size_t i = 0; nsid_conf_get_entry(c, i, &e) == 0; i++) {
                CHECK(e.line >= 1 && e.line <= lines);
                CHECK(!strchr(e.value, '\n') && !strchr(e.name, '\n') && !strchr(e.section, '\n'));
                CHECK(strlen(e.value) <= NSID_CONF_LINE_MAX);
        }
        nsid_conf_unref(c);
        return 0;
}
