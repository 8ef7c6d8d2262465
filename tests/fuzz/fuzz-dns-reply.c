/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmap's dns_resolver worker reply (idmap/dns-reply.c): the worker ran next to a
 * container's /etc/hosts, resolv.conf and DNS servers, so its reply is hostile input to the
 * privileged helper. Invariants of an accepted reply: every field within the bounds
 * dns-reply.h gives (errnos, c-ares status, at most DNS_MAX_ADDRS distinct IPv4/IPv6
 * addresses, printable escaped texts), the completeness rules (src=; ttl= and an address
 * unless ares= or drop=), and the result written back as a reply parses to the same. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "idmap/dns-reply.h"
#include "idmap/text-util.h"

#include "fuzz-check.h"

#define INPUT_MAX 16384 /* twice the worker's reply bound (DNS_REPLY_MAX, 8 KiB) */

static void check_text(const char *s, size_t size) {
        size_t len = strnlen(s, size);
        CHECK(len < size);
        for (size_t i = 0; i < len; i++)
                CHECK(s[i] >= 0x20 && s[i] <= 0x7e && s[i] != '"');
}

static void check_result(const dns_result *d) {
        CHECK(d->hosts_err >= 0 && d->hosts_err <= 4095);
        CHECK(d->resolv_err >= 0 && d->resolv_err <= 4095);
        CHECK(d->drop_err >= 0 && d->drop_err <= 4095);
        CHECK(d->ares == -1 || (d->ares >= 1 && d->ares <= 1000));
        CHECK(d->have_src || !d->from_hosts);
        CHECK(d->have_ttl || d->ttl == 0);
        CHECK(d->drop_err > 0 || d->have_src);
        CHECK(d->drop_err > 0 || d->ares > 0 || (d->have_ttl && d->l.n > 0));
        check_text(d->servers, sizeof(d->servers));
        check_text(d->err, sizeof(d->err));
        CHECK(!d->l.done && d->l.status == 0 && d->l.ttl == d->ttl);
        CHECK(d->l.n <= DNS_MAX_ADDRS);
        for (unsigned i = 0; i < d->l.n; i++) {
                const nsid_resolv_addr *a = &d->l.addrs[i];
                CHECK(a->family == AF_INET || a->family == AF_INET6);
                CHECK(a->scope_id == 0);
                if (a->family == AF_INET)
                        for (size_t k = 4; k < sizeof(a->addr); k++)
                                CHECK(a->addr[k] == 0);
                for (unsigned j = 0; j < i; j++)
                        CHECK(d->l.addrs[j].family != a->family ||
                              memcmp(d->l.addrs[j].addr, a->addr, sizeof(a->addr)) != 0);
        }
}

/* The result as the worker would write it; the texts are written escaped, so they come
 * back escaped twice. */
static size_t serialise(const dns_result *d, char *buf, size_t size) {
        size_t o = 0;
#define OUT(...) o += (size_t) snprintf(buf + o, size - o, __VA_ARGS__)
        OUT("files=%d %d\n", d->hosts_err, d->resolv_err);
        if (d->drop_err)
                OUT("drop=%d\n", d->drop_err);
        if (d->have_src)
                OUT("src=%s\n", d->from_hosts ? "hosts" : "dns");
        OUT("servers=%s\nerr=%s\n", d->servers, d->err);
        if (d->ares > 0)
                OUT("ares=%d\n", d->ares);
        if (d->have_ttl)
                OUT("ttl=%u\n", d->ttl);
        for (unsigned i = 0; i < d->l.n; i++) {
                char t[INET6_ADDRSTRLEN];
                CHECK(inet_ntop(d->l.addrs[i].family, d->l.addrs[i].addr, t, sizeof(t)));
                OUT("addr=%s\n", t);
        }
#undef OUT
        CHECK(o < size);
        return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char buf[INPUT_MAX + 1], out[32768];
        static dns_result d, d2;
        char esc[256];

        if (size > INPUT_MAX)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (dns_parse_reply(buf, size, &d) < 0)
                return 0;
        check_result(&d);

        size_t n = serialise(&d, out, sizeof(out));
        CHECK(dns_parse_reply(out, n, &d2) == 0);
        CHECK(d2.hosts_err == d.hosts_err && d2.resolv_err == d.resolv_err &&
              d2.drop_err == d.drop_err && d2.ares == d.ares && d2.have_src == d.have_src &&
              d2.from_hosts == d.from_hosts && d2.have_ttl == d.have_ttl && d2.ttl == d.ttl);
        CHECK(strcmp(d2.servers, log_escape(d.servers, strlen(d.servers), esc, sizeof(esc))) == 0);
        CHECK(strcmp(d2.err, log_escape(d.err, strlen(d.err), esc, sizeof(esc))) == 0);
        CHECK(d2.l.n == d.l.n && d2.l.ttl == d.l.ttl);
        for (unsigned i = 0; i < d.l.n; i++)
                CHECK(d2.l.addrs[i].family == d.l.addrs[i].family &&
                      memcmp(d2.l.addrs[i].addr, d.l.addrs[i].addr, 16) == 0);
        return 0;
}
