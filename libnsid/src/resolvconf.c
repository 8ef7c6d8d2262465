/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* resolv.conf and hosts parsing (nsid/resolv.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <nsid/resolv.h>

#include "macro.h"
#include "parse-util.h"

#define BLANKS " \t\r\v\f"

_public_ int nsid_dns_name_valid(const char *name, size_t len) {
        size_t label = 0;

        if (!name)
                return 0;
        if (len > 0 && name[len - 1] == '.')
                len--;
        if (len == 0 || len > NSID_RESOLV_NAME_MAX)
                return 0;
        for (size_t i = 0; i < len; i++) {
                char c = name[i];
                if (c == '.') {
                        if (label == 0)
                                return 0;
                        label = 0;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_'))
                        return 0;
                if (label == 0 && c == '-')
                        return 0;
                if (++label > 63)
                        return 0;
        }
        return 1;
}

_public_ int nsid_resolv_addr_parse(const char *tok, nsid_resolv_addr *ret) {
        char buf[INET6_ADDRSTRLEN + 16];
        nsid_resolv_addr a = {};
        size_t len;
        char *pct;

        assert_return(tok, -EINVAL);
        assert_return(ret, -EINVAL);
        len = strlen(tok);

        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, tok, len + 1);
        if (inet_pton(AF_INET, buf, a.addr) == 1) {
                a.family = AF_INET;
                *ret = a;
                return 0;
        }
        pct = strchr(buf, '%');
        if (pct) {
                uint64_t v;
                *pct = '\0';
                if (parse_u64_max(pct + 1, UINT32_MAX, &v) < 0)
                        return -EINVAL;
                a.scope_id = (uint32_t) v;
        }
        if (inet_pton(AF_INET6, buf, a.addr) != 1)
                return -EINVAL;
        a.family = AF_INET6;
        *ret = a;
        return 0;
}

/* Split a line (NUL-terminated copy) into blank-separated tokens, stopping at a comment. */
static unsigned tokenize(char *line, char **tok, unsigned max, bool semicolon_comments) {
        unsigned n = 0;
        char *p = line;

        for (;;) {
                p += strspn(p, BLANKS);
                if (*p == '\0' || *p == '#' || (semicolon_comments && *p == ';'))
                        break;
                if (n == max)
                        break;
                tok[n++] = p;
                p += strcspn(p, BLANKS);
                if (*p == '\0')
                        break;
                *p++ = '\0';
        }
        return n;
}

static void parse_option(nsid_resolvconf *rc, const char *opt) {
        uint64_t v;
        if (strncmp(opt, "ndots:", 6) == 0 && parse_u64_max(opt + 6, 1000, &v) >= 0)
                rc->ndots = v > 15 ? 15 : (unsigned) v;
        else if (strncmp(opt, "timeout:", 8) == 0 && parse_u64_max(opt + 8, 1000, &v) >= 0)
                rc->timeout = v > 30 ? 30 : v < 1 ? 1 : (unsigned) v;
        else if (strncmp(opt, "attempts:", 9) == 0 && parse_u64_max(opt + 9, 1000, &v) >= 0)
                rc->attempts = v > 5 ? 5 : v < 1 ? 1 : (unsigned) v;
        else if (strcmp(opt, "rotate") == 0)
                rc->rotate = true;
}

_public_ int nsid_resolvconf_parse(const char *text, size_t size, nsid_resolvconf *ret) {
        nsid_resolvconf rc = { .ndots = 1, .timeout = 5, .attempts = 2 };
        const char *p = text, *end = text + size;
        char line[NSID_RESOLV_LINE_MAX + 1];

        assert_return(text || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t l = nl ? (size_t) (nl - p) : (size_t) (end - p);
                char *tok[1 + NSID_RESOLV_MAX_SEARCH + 1];
                unsigned n;

                if (l > NSID_RESOLV_LINE_MAX || memchr(p, '\0', l)) {
                        rc.skipped++;
                        goto next;
                }
                memcpy(line, p, l);
                line[l] = '\0';
                n = tokenize(line, tok, ELEMENTSOF(tok), true);
                if (n == 0)
                        goto next;
                if (strcmp(tok[0], "nameserver") == 0) {
                        nsid_resolv_addr a;
                        if (n != 2 || nsid_resolv_addr_parse(tok[1], &a) < 0) {
                                rc.skipped++;
                                goto next;
                        }
                        if (rc.n_servers < NSID_RESOLV_MAX_SERVERS)
                                rc.servers[rc.n_servers++] = a;
                } else if (strcmp(tok[0], "search") == 0 || strcmp(tok[0], "domain") == 0) {
                        unsigned k = 0;
                        bool is_domain = tok[0][0] == 'd';
                        /* The last search/domain line wins. */
                        for (unsigned i = 1; i < n && k < NSID_RESOLV_MAX_SEARCH; i++) {
                                size_t tl = strlen(tok[i]);
                                if (is_domain && i > 1)
                                        break;
                                if (!nsid_dns_name_valid(tok[i], tl))
                                        continue;
                                if (tok[i][tl - 1] == '.')
                                        tok[i][--tl] = '\0';
                                memcpy(rc.search[k++], tok[i], tl + 1);
                        }
                        rc.n_search = k;
                } else if (strcmp(tok[0], "options") == 0) {
                        for (unsigned i = 1; i < n; i++)
                                parse_option(&rc, tok[i]);
                } else if (strcmp(tok[0], "sortlist") == 0 || strcmp(tok[0], "lookup") == 0 ||
                           strcmp(tok[0], "family") == 0) {
                        /* known, not used */
                } else
                        rc.skipped++;
        next:
                p += l + (nl ? 1 : 0);
        }
        *ret = rc;
        return 0;
}

_public_ int nsid_resolvconf_servers_csv(const nsid_resolvconf *rc, char *buf, size_t size) {
        size_t off = 0;

        assert_return(rc, -EINVAL);
        assert_return(buf || size == 0, -EINVAL);
        if (rc->n_servers == 0)
                return -ENOENT;
        for (unsigned i = 0; i < rc->n_servers && i < NSID_RESOLV_MAX_SERVERS; i++) {
                const nsid_resolv_addr *a = &rc->servers[i];
                char s[INET6_ADDRSTRLEN];
                int n;

                if (!inet_ntop(a->family, a->addr, s, sizeof(s)))
                        return -EINVAL;
                if (a->family == AF_INET6)
                        n = snprintf(buf + off, size - off, "%s[%s]:53", off ? "," : "", s);
                else
                        n = snprintf(buf + off, size - off, "%s%s", off ? "," : "", s);
                if (n < 0 || (size_t) n >= size - off)
                        return -ENOBUFS;
                off += (size_t) n;
        }
        return (int) off;
}

static bool name_eq(const char *a, size_t alen, const char *b, size_t blen) {
        if (alen > 0 && a[alen - 1] == '.')
                alen--;
        if (blen > 0 && b[blen - 1] == '.')
                blen--;
        return alen == blen && strncasecmp(a, b, alen) == 0;
}

_public_ int nsid_hosts_lookup(const char *text, size_t size, const char *name, int family,
                               nsid_resolv_addr *ret, size_t max) {
        const char *p = text, *end = text + size;
        char line[NSID_HOSTS_LINE_MAX + 1];
        size_t found = 0, nlen;

        assert_return(text || size == 0, -EINVAL);
        assert_return(name, -EINVAL);
        assert_return(family == AF_UNSPEC || family == AF_INET || family == AF_INET6, -EINVAL);
        assert_return(ret || max == 0, -EINVAL);

        nlen = strlen(name);
        if (!nsid_dns_name_valid(name, nlen))
                return 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t l = nl ? (size_t) (nl - p) : (size_t) (end - p);
                char *tok[64];
                unsigned n;
                nsid_resolv_addr a;

                p += l + (nl ? 1 : 0);
                if (l > NSID_HOSTS_LINE_MAX || memchr(p - l - (nl ? 1 : 0), '\0', l))
                        continue;
                memcpy(line, p - l - (nl ? 1 : 0), l);
                line[l] = '\0';
                n = tokenize(line, tok, ELEMENTSOF(tok), false);
                if (n < 2 || nsid_resolv_addr_parse(tok[0], &a) < 0)
                        continue;
                if (family != AF_UNSPEC && a.family != family)
                        continue;
                bool match = false;
                for (unsigned i = 1; i < n && !match; i++)
                        match = name_eq(tok[i], strlen(tok[i]), name, nlen);
                if (!match)
                        continue;
                bool dup = false;
                for (size_t i = 0; i < found && i < max && !dup; i++)
                        dup = ret[i].family == a.family &&
                              memcmp(ret[i].addr, a.addr, sizeof(a.addr)) == 0;
                if (dup)
                        continue;
                if (found < max)
                        ret[found] = a;
                found++;
        }
        return (int) (found > max ? max : found);
}
