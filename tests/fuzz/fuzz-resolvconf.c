/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's /etc/resolv.conf, and idmapd.conf-style INI text (a container's
 * idmapd.conf is read by the requester-context policy). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <nsid/conffile.h>
#include <nsid/resolv.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static nsid_resolvconf rc;
        char csv[256];
        char *v = NULL;

        if (size > 1024 * 1024)
                return 0;
        CHECK(nsid_resolvconf_parse((const char *) data, size, &rc) == 0);
        CHECK(rc.n_servers <= NSID_RESOLV_MAX_SERVERS && rc.n_search <= NSID_RESOLV_MAX_SEARCH);
        for (unsigned i = 0; i < rc.n_servers; i++)
                CHECK(rc.servers[i].family == AF_INET || rc.servers[i].family == AF_INET6);
        for (unsigned i = 0; i < rc.n_search; i++)
                CHECK(nsid_dns_name_valid(rc.search[i], strlen(rc.search[i])));
        CHECK(rc.ndots <= 15 && rc.timeout >= 1 && rc.timeout <= 30 && rc.attempts >= 1 &&
              rc.attempts <= 5);
        int n = nsid_resolvconf_servers_csv(&rc, csv, sizeof(csv));
        CHECK(rc.n_servers == 0 ? n < 0 : (n > 0 && (size_t) n == strlen(csv)));

        if (nsid_conf_get((const char *) data, size, "General", "Domain", &v) == 0) {
                CHECK(!strchr(v, '\n'));
                free(v);
        }
        return 0;
}
