/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* knfsd's client-id trace events, as nsidctl watch --server hands them to libnsid: the owner
 * strings and addresses in them are any NFS client's choice, and an info file is read for
 * records not yet known. Input: a sequence of records
 *   kind (1 byte; 7: an info file), client id (1 byte: few ids, so they collide),
 *   name length (1 byte) and name, address family (1 byte) and 28 bytes of sockaddr,
 *   or for an info file: length (1 byte) and text. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "nsid/nfsdtakeover.h"

#include "fuzz-check.h"

static bool printable(const char *s) {
        for (; *s; s++)
                if (*s < 0x20 || *s >= 0x7f)
                        return false;
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_nfsd_takeovers *t = NULL;
        size_t i = 0, events = 0;

        CHECK(nsid_nfsd_takeovers_new(&t) == 0);
        while (i + 2 <= size) {
                uint8_t kind = data[i] % 8, clid = data[i + 1];
                nsid_nfsd_event e = { .kind = (nsid_nfsd_event_kind) kind, .clientid = clid,
                                      .time_ns = i };
                uint8_t sa[28];
                nsid_nfsd_change c;
                size_t n;
                int r;

                i += 2;
                events++;
                if (kind == 7) {
                        n = i < size ? data[i++] : 0;
                        n = n > size - i ? size - i : n;
                        r = nsid_nfsd_takeovers_learn_info(t, (const char *) data + i, n);
                        CHECK(r == 0 || r == -EBADMSG);
                        i += n;
                        continue;
                }
                n = i < size ? data[i++] : 0;
                n = n > size - i ? size - i : n;
                e.name = data + i;
                e.name_len = n;
                i += n;
                memset(sa, 0, sizeof(sa));
                if (i < size) {
                        sa_family_t f = data[i++] % 3 == 0 ? AF_INET : data[i - 1] % 3 == 1
                                                                             ? AF_INET6
                                                                             : AF_UNIX;
                        n = size - i < sizeof(sa) - sizeof(f) ? size - i : sizeof(sa) - sizeof(f);
                        memcpy(sa + sizeof(f), data + i, n);
                        memcpy(sa, &f, sizeof(f));
                        i += n;
                        e.address = (const struct sockaddr *) sa;
                        e.address_len = f == AF_INET ? 16 : sizeof(sa);
                }
                r = nsid_nfsd_takeovers_feed(t, &e, &c);
                CHECK(r == 0 || r == -EINVAL || r == NSID_NFSD_TAKEOVERS_CHANGE ||
                      r == NSID_NFSD_TAKEOVERS_WANT_INFO);
                if (r == NSID_NFSD_TAKEOVERS_CHANGE) {
                        CHECK(nsid_nfsd_change_kind_to_string(c.kind));
                        CHECK(c.clientid == clid && c.time_ns == e.time_ns);
                        CHECK(c.owner_len <= NSID_NFSD_OWNER_MAX);
                        CHECK(strlen(c.owner_escaped) <= c.owner_len * 4);
                        CHECK(printable(c.owner_escaped) && !strchr(c.owner_escaped, '"'));
                        CHECK(strlen(c.from) < NSID_NFSD_ADDRESS_MAX && printable(c.from));
                        CHECK(strlen(c.to) < NSID_NFSD_ADDRESS_MAX && printable(c.to));
                }
        }
        CHECK(nsid_nfsd_takeovers_get_clients(t) <= events);
        nsid_nfsd_takeovers_free(t);
        return 0;
}
