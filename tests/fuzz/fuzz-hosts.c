/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's /etc/hosts: the first line's first name (if any) is looked up in the whole
 * text; results are bounded and of the asked family. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <nsid/resolv.h>

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_resolv_addr a[8];
        char name[256] = "localhost";
        const char *s = (const char *) data;

        if (size > 1024 * 1024)
                return 0;
        /* take the name from the second token of the first line */
        const char *nl = memchr(s, '\n', size);
        size_t l = nl ? (size_t) (nl - s) : size;
        const char *sp = memchr(s, ' ', l);
        if (sp) {
                size_t nlen = l - (size_t) (sp + 1 - s);
                if (nlen > 0 && nlen < sizeof(name) && !memchr(sp + 1, '\0', nlen)) {
                        memcpy(name, sp + 1, nlen);
                        name[nlen] = '\0';
                }
        }
        static const int fams[] = { AF_UNSPEC, AF_INET, AF_INET6 };
        for (size_t f = 0; f < 3; f++) {
                int n = nsid_hosts_lookup(s, size, name, fams[f], a, 8);
                CHECK(n >= 0 && n <= 8);
                for (int i = 0; i < n; i++)
                        CHECK(fams[f] == AF_UNSPEC ? (a[i].family == AF_INET || a[i].family == AF_INET6)
                                                   : a[i].family == fams[f]);
        }
        return 0;
}
