/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dns_resolver worker's reply, parsed as untrusted (dns-reply.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <ares.h>

#include "dns-reply.h"
#include "text-util.h"

void dns_lookup_add_addr(dns_lookup *l, const nsid_resolv_addr *a) {
        for (unsigned i = 0; i < l->n; i++)
                if (l->addrs[i].family == a->family &&
                    memcmp(l->addrs[i].addr, a->addr, sizeof(a->addr)) == 0)
                        return;
        if (l->n < DNS_MAX_ADDRS)
                l->addrs[l->n++] = *a;
}

int dns_parse_reply(char *reply, size_t size, dns_result *ret) {
        dns_result d = { .ares = -1 };
        uint64_t n;

        if (strlen(reply) != size)
                return -EBADMSG;
        for (char *line = reply, *next; *line; line = next) {
                next = strchr(line, '\n');
                if (!next)
                        return -EBADMSG;
                *next++ = '\0';
                char *v = strchr(line, '=');
                if (!v)
                        return -EBADMSG;
                *v++ = '\0';
                if (strcmp(line, "files") == 0) {
                        char *sp = strchr(v, ' ');
                        uint64_t a, b;
                        if (!sp)
                                return -EBADMSG;
                        *sp = '\0';
                        if (parse_uint_strict(v, 4095, &a) < 0 ||
                            parse_uint_strict(sp + 1, 4095, &b) < 0)
                                return -EBADMSG;
                        d.hosts_err = (int) a;
                        d.resolv_err = (int) b;
                } else if (strcmp(line, "drop") == 0) {
                        if (parse_uint_strict(v, 4095, &n) < 0 || n == 0)
                                return -EBADMSG;
                        d.drop_err = (int) n;
                } else if (strcmp(line, "src") == 0 && !d.have_src &&
                           (strcmp(v, "hosts") == 0 || strcmp(v, "dns") == 0)) {
                        d.have_src = true;
                        d.from_hosts = strcmp(v, "hosts") == 0;
                } else if (strcmp(line, "servers") == 0)
                        (void) log_escape(v, strlen(v), d.servers, sizeof(d.servers));
                else if (strcmp(line, "err") == 0)
                        (void) log_escape(v, strlen(v), d.err, sizeof(d.err));
                else if (strcmp(line, "ares") == 0) {
                        if (parse_uint_strict(v, 1000, &n) < 0 || n == ARES_SUCCESS)
                                return -EBADMSG;
                        d.ares = (int) n;
                } else if (strcmp(line, "ttl") == 0 && !d.have_ttl) {
                        if (parse_uint_strict(v, UINT32_MAX, &n) < 0)
                                return -EBADMSG;
                        d.ttl = (unsigned) n;
                        d.have_ttl = true;
                } else if (strcmp(line, "addr") == 0) {
                        nsid_resolv_addr a = { .family = AF_INET };
                        if (inet_pton(AF_INET, v, a.addr) != 1) {
                                a.family = AF_INET6;
                                if (inet_pton(AF_INET6, v, a.addr) != 1)
                                        return -EBADMSG;
                        }
                        dns_lookup_add_addr(&d.l, &a);
                } else
                        return -EBADMSG;
        }
        if (d.drop_err == 0 && !d.have_src)
                return -EBADMSG;
        if (d.drop_err == 0 && d.ares < 0 && (!d.have_ttl || d.l.n == 0))
                return -EBADMSG;
        d.l.ttl = d.ttl;
        *ret = d;
        return 0;
}
