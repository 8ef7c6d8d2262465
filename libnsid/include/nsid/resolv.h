/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_RESOLV_H
#define NSID_RESOLV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A container's resolver configuration, parsed from the text of its /etc/resolv.conf and
 * /etc/hosts (read with nsid/file.h). Pure parsers of hostile text; nothing is looked up.
 *
 * resolv.conf (resolv.conf(5), the subset a stub resolver needs):
 *  - "nameserver ADDR": IPv4 dotted quad or IPv6 (with an optional "%scope" that is parsed
 *    as a number only). The first NSID_RESOLV_MAX_SERVERS valid ones are kept, in order.
 *  - "search D1 D2 ..." / "domain D": the last such line wins, like glibc; at most
 *    NSID_RESOLV_MAX_SEARCH domains, each a valid DNS name of at most 253 bytes.
 *  - "options ndots:N timeout:N attempts:N rotate": values clamped like glibc (ndots <= 15,
 *    timeout <= 30, attempts <= 5); unknown options are ignored.
 *  - '#' and ';' start comments; lines over NSID_RESOLV_LINE_MAX bytes, lines with a NUL
 *    byte and unknown keywords are skipped (and counted in `skipped`).
 */
#define NSID_RESOLV_MAX_SERVERS 3u
#define NSID_RESOLV_MAX_SEARCH 6u
#define NSID_RESOLV_NAME_MAX 253u
#define NSID_RESOLV_LINE_MAX 4096u

typedef struct nsid_resolv_addr {
        int family; /* AF_INET or AF_INET6 */
        uint8_t addr[16];
        uint32_t scope_id;
} nsid_resolv_addr;

typedef struct nsid_resolvconf {
        unsigned n_servers;
        nsid_resolv_addr servers[NSID_RESOLV_MAX_SERVERS];
        unsigned n_search;
        char search[NSID_RESOLV_MAX_SEARCH][NSID_RESOLV_NAME_MAX + 1];
        unsigned ndots;    /* default 1 */
        unsigned timeout;  /* seconds, default 5 */
        unsigned attempts; /* default 2 */
        bool rotate;
        unsigned skipped;
} nsid_resolvconf;

/* An address as written in resolv.conf or hosts: IPv4 dotted quad, or IPv6 with an optional
 * numeric "%scope". -EINVAL otherwise. */
int nsid_resolv_addr_parse(const char *s, nsid_resolv_addr *ret);

/* Parse size bytes (no NUL needed). Always succeeds on any text (-EINVAL only for NULL
 * arguments); an empty configuration has no servers. */
int nsid_resolvconf_parse(const char *text, size_t size, nsid_resolvconf *ret);

/* Format the servers for c-ares' ares_set_servers_csv(): "1.2.3.4,[::1]:53"... Returns
 * the length or -ENOBUFS; -ENOENT when there is no server. */
int nsid_resolvconf_servers_csv(const nsid_resolvconf *rc, char *buf, size_t size);

/* 1 when name is a valid DNS host name for lookups (1..253 bytes, labels 1..63 of
 * [A-Za-z0-9_-], not starting with '-', an optional single trailing dot), else 0. */
int nsid_dns_name_valid(const char *name, size_t len);

/*
 * hosts(5): "ADDR NAME [ALIAS...]", '#' comments. Lookups compare names case-insensitively
 * (a trailing dot on the queried name is ignored), and return every address of matching
 * lines in file order, IPv4 and/or IPv6 as asked, without duplicates.
 */
#define NSID_HOSTS_LINE_MAX 4096u

/* family: AF_UNSPEC, AF_INET or AF_INET6. Fills up to max addresses; returns the number
 * found (0: no such name), or -EINVAL for bad arguments. */
int nsid_hosts_lookup(const char *text, size_t size, const char *name, int family,
                      nsid_resolv_addr *ret, size_t max);

#ifdef __cplusplus
}
#endif
#endif
