/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl's engine detection: a cgroup path (below its own cgroup a container names its
 * cgroups as it likes) conmon's and systemd-nspawn's command lines. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nsidctl/engine.h"

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s, name[ENGINE_NAME_MAX + 1];
        engine_ref r;
        int rc;

        if (size > 65536)
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        rc = engine_from_cgroup(s, &r);
        if (rc == 0) {
                CHECK(r.engine && strlen(r.id) <= ENGINE_ID_MAX &&
                      strlen(r.name) <= ENGINE_NAME_MAX);
                CHECK(r.id[0] || r.name[0]);
                for (const char *p = r.name; *p; p++)
                        CHECK((unsigned char) *p >= 0x21 && (unsigned char) *p <= 0x7e);
        } else
                CHECK(rc == -ENOENT || rc == -EINVAL);
        rc = engine_conmon_name((const char *) data, size, name, sizeof(name));
        CHECK(rc != 0 || (name[0] && strlen(name) <= ENGINE_NAME_MAX));
        rc = engine_nspawn_name((const char *) data, size, name, sizeof(name));
        CHECK(rc == -ENOENT || rc == -ENAMETOOLONG ||
              (rc == 0 && name[0] && strlen(name) <= ENGINE_NAME_MAX));
        free(s);
        return 0;
}
