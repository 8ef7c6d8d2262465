/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dns_resolver worker's reply (dns-upcall.c), parsed as untrusted: the worker has read
 * and parsed a container's /etc/hosts and resolv.conf and talked to the DNS servers it
 * names, so the privileged parent trusts nothing it says beyond these bounds. The parser
 * never logs; the caller logs what the result says.
 *
 * The reply is lines "key=value\n", every line ending with \n, no NUL:
 *   files=<hosts errno> <resolv.conf errno>   two errnos 0..4095 (the last line counts)
 *   drop=<errno>                     1..4095: the drop failed, nothing was parsed
 *   src=hosts|dns                    at most once
 *   servers=<text> / err=<text>      any text, kept escaped for the log (log_escape())
 *   ares=<status>                    1..1000, a c-ares failure (ARES_SUCCESS is refused)
 *   ttl=<seconds>                    0..UINT32_MAX, at most once
 *   addr=<address>                   IPv4 or IPv6 (inet_pton); duplicates are dropped, at
 *                                    most DNS_MAX_ADDRS are kept, the rest ignored
 * Any other line is refused. Unless drop= came, src= must have come, and, without ares=,
 * ttl= and at least one addr= too.
 */
#ifndef NSID_IDMAP_DNS_REPLY_H
#define NSID_IDMAP_DNS_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include <nsid/resolv.h>

#define DNS_MAX_ADDRS 64u /* addresses of one answer */

/* A lookup's addresses, without duplicates, in the order found. */
typedef struct dns_lookup {
        bool done;  /* (the c-ares callback's) */
        int status; /* (the c-ares callback's) */
        unsigned n;
        nsid_resolv_addr addrs[DNS_MAX_ADDRS];
        unsigned ttl; /* smallest TTL of the answers */
} dns_lookup;

/* Adds a (family and address; scope_id ignored) unless l holds it already or is full. */
void dns_lookup_add_addr(dns_lookup *l, const nsid_resolv_addr *a);

typedef struct dns_result {
        int hosts_err, resolv_err; /* 0..4095 */
        int drop_err;              /* 0, or 1..4095 */
        int ares;                  /* -1 (none), or 1..1000 */
        bool have_src, from_hosts, have_ttl;
        unsigned ttl;
        char servers[256], err[256]; /* escaped (log_escape()): printable, NUL-terminated */
        dns_lookup l;                /* l.ttl == ttl; l.done and l.status are 0 */
} dns_result;

/* Parses the size bytes of reply (a NUL after them; cut into lines in place). 0 with *ret
 * filled, or -EBADMSG (then *ret is untouched). */
int dns_parse_reply(char *reply, size_t size, dns_result *ret);

#endif
