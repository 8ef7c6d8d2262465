/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* knfsd's client-id events turned into takeovers of owner strings (nsid/nfsdtakeover.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/nfsdtakeover.h>

#include "macro.h"
#include "nfsdinfo-internal.h"
#include "parse-util.h"

#define BUCKETS 16384
/* Records replaced whose successor is not yet known, newest last (v4.1: replaced at
 * EXCHANGE_ID, confirmed at CREATE_SESSION; v4.0: at SETCLIENTID_CONFIRM). */
#define PENDING 256

typedef struct entry {
        struct entry *next;
        uint64_t clientid;
        uint8_t *name; /* NULL: not known */
        size_t name_len;
        char host[NFSD_HOST_MAX];           /* "" not known */
        char addr[NSID_NFSD_ADDRESS_MAX];   /* "ip:port", or the host alone */
        char prev[NSID_NFSD_ADDRESS_MAX];   /* the holder it took the record from, "" none */
        char to[NSID_NFSD_ADDRESS_MAX];     /* a requester with another verifier, "" none */
        char to_host[NFSD_HOST_MAX];
} entry;

typedef struct pending {
        bool used;
        char to[NSID_NFSD_ADDRESS_MAX];
        char to_host[NFSD_HOST_MAX];
        char prev[NSID_NFSD_ADDRESS_MAX];
} pending;

struct nsid_nfsd_takeovers {
        entry *buckets[BUCKETS];
        size_t n;
        uint64_t untracked;
        pending pend[PENDING];
        size_t pend_next;
        /* the last change's owner string, raw and escaped */
        uint8_t owner[NSID_NFSD_OWNER_MAX];
        char owner_escaped[NSID_NFSD_OWNER_ESCAPED_MAX];
        char from[NSID_NFSD_ADDRESS_MAX], to[NSID_NFSD_ADDRESS_MAX];
};

static size_t bucket_of(uint64_t clientid) {
        return (size_t) ((clientid * UINT64_C(0x9E3779B97F4A7C15)) >> 48) % BUCKETS;
}

_public_ int nsid_nfsd_takeovers_new(nsid_nfsd_takeovers **ret) {
        nsid_nfsd_takeovers *t;

        if (!ret)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

static void entry_free(entry *e) {
        if (e) {
                free(e->name);
                free(e);
        }
}

_public_ nsid_nfsd_takeovers *nsid_nfsd_takeovers_free(nsid_nfsd_takeovers *t) {
        if (!t)
                return NULL;
        for (size_t b = 0; b < BUCKETS; b++)
                while (t->buckets[b]) {
                        entry *e = t->buckets[b];
                        t->buckets[b] = e->next;
                        entry_free(e);
                }
        free(t);
        return NULL;
}

static entry *find(const nsid_nfsd_takeovers *t, uint64_t clientid) {
        for (entry *e = t->buckets[bucket_of(clientid)]; e; e = e->next)
                if (e->clientid == clientid)
                        return e;
        return NULL;
}

/* The entry of clientid, made (empty) when new. -E2BIG over the bound, -ENOMEM. */
static int get(nsid_nfsd_takeovers *t, uint64_t clientid, entry **ret) {
        entry *e = find(t, clientid);
        size_t b;

        if (!e) {
                if (t->n >= NSID_NFSD_TAKEOVERS_MAX_CLIENTS) {
                        t->untracked++;
                        return -E2BIG;
                }
                e = calloc(1, sizeof(*e));
                if (!e)
                        return -ENOMEM;
                e->clientid = clientid;
                b = bucket_of(clientid);
                e->next = t->buckets[b];
                t->buckets[b] = e;
                t->n++;
        }
        *ret = e;
        return 0;
}

static void drop(nsid_nfsd_takeovers *t, uint64_t clientid) {
        for (entry **p = &t->buckets[bucket_of(clientid)]; *p; p = &(*p)->next)
                if ((*p)->clientid == clientid) {
                        entry *e = *p;
                        *p = e->next;
                        entry_free(e);
                        t->n--;
                        return;
                }
}

static int set_name(entry *e, const uint8_t *name, size_t len) {
        uint8_t *n;

        if (len > NSID_NFSD_OWNER_MAX)
                return -EINVAL;
        n = malloc(len ? len : 1);
        if (!n)
                return -ENOMEM;
        memcpy(n, name, len);
        free(e->name);
        e->name = n;
        e->name_len = len;
        return 0;
}

_public_ int nsid_nfsd_format_address(const struct sockaddr *sa, size_t len, char *buf, size_t size) {
        char host[INET6_ADDRSTRLEN];
        struct sockaddr_storage ss;
        const void *addr;
        unsigned port;
        bool v6;
        int k;

        if (!sa || !buf || len < sizeof(sa_family_t))
                return -EINVAL;
        if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
                return -EAFNOSUPPORT;
        v6 = sa->sa_family == AF_INET6;
        if (len < (v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)))
                return -EINVAL;
        /* (copied: the trace's bytes need not be aligned) */
        memcpy(&ss, sa, v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
        addr = v6 ? (const void *) &((struct sockaddr_in6 *) &ss)->sin6_addr
                  : (const void *) &((struct sockaddr_in *) &ss)->sin_addr;
        port = ntohs(v6 ? ((struct sockaddr_in6 *) &ss)->sin6_port
                        : ((struct sockaddr_in *) &ss)->sin_port);
        if (!inet_ntop(sa->sa_family, addr, host, sizeof(host)))
                return -EINVAL;
        k = snprintf(buf, size, v6 ? "[%s]:%u" : "%s:%u", host, port);
        return k < 0 || (size_t) k >= size ? -ENOBUFS : 0;
}

/* The host part of a formatted address ("ip:port", "[ip6]:port", or a bare host). */
static void host_of(const char *addr, char host[NFSD_HOST_MAX]) {
        const char *end;
        size_t n;

        if (addr[0] == '[') {
                addr++;
                end = strchr(addr, ']');
        } else
                end = strrchr(addr, ':');
        n = end ? (size_t) (end - addr) : strlen(addr);
        if (n >= NFSD_HOST_MAX)
                n = NFSD_HOST_MAX - 1;
        memcpy(host, addr, n);
        host[n] = 0;
}

static int event_address(const nsid_nfsd_event *e, char addr[NSID_NFSD_ADDRESS_MAX],
                         char host[NFSD_HOST_MAX]) {
        int r;

        if (!e->address)
                return -EINVAL;
        r = nsid_nfsd_format_address(e->address, e->address_len, addr, NSID_NFSD_ADDRESS_MAX);
        if (r < 0)
                return -EINVAL;
        host_of(addr, host);
        return 0;
}

/* Does a replaced record's successor (learnt now, at addr/host) follow a pending one? Then it
 * knows which holder it took the record from. */
static void adopt_pending(nsid_nfsd_takeovers *t, entry *e) {
        for (size_t k = 0; k < PENDING; k++) {
                /* newest first */
                pending *p = &t->pend[(t->pend_next + PENDING - 1 - k) % PENDING];
                if (!p->used)
                        continue;
                if (strcmp(p->to, e->addr) == 0 ||
                    (strchr(e->addr, ':') == NULL && strcmp(p->to_host, e->host) == 0)) {
                        snprintf(e->prev, sizeof(e->prev), "%s", p->prev);
                        p->used = false;
                        return;
                }
        }
}

_public_ int nsid_nfsd_takeovers_learn_info(nsid_nfsd_takeovers *t, const char *data, size_t size) {
        nfsd_info *info;
        entry *e;
        int r;

        if (!t || (!data && size))
                return -EINVAL;
        info = malloc(sizeof(*info));
        if (!info)
                return -ENOMEM;
        r = nfsd_info_parse(data, size, info);
        if (r >= 0 && !info->have_clientid)
                r = -EBADMSG;
        if (r >= 0)
                r = get(t, info->clientid, &e);
        if (r >= 0)
                r = set_name(e, info->name, info->name_len);
        if (r >= 0) {
                snprintf(e->host, sizeof(e->host), "%s", info->host);
                if (info->port < 0)
                        snprintf(e->addr, sizeof(e->addr), "%s", info->host);
                else if (strchr(info->host, ':'))
                        snprintf(e->addr, sizeof(e->addr), "[%s]:%d", info->host, info->port);
                else
                        snprintf(e->addr, sizeof(e->addr), "%s:%d", info->host, info->port);
                if (!e->prev[0])
                        adopt_pending(t, e);
        }
        free(info);
        return r;
}

static int change(nsid_nfsd_takeovers *t, nsid_nfsd_change_kind kind, const nsid_nfsd_event *ev,
                  const entry *e, const char *from, const char *to, nsid_nfsd_change *ret) {
        size_t len = e && e->name ? e->name_len : 0;

        if (len)
                memcpy(t->owner, e->name, len);
        if (e && e->name)
                escape_bytes(t->owner, len, t->owner_escaped);
        else
                t->owner_escaped[0] = 0;
        snprintf(t->from, sizeof(t->from), "%s", from);
        snprintf(t->to, sizeof(t->to), "%s", to);
        *ret = (nsid_nfsd_change) {
                .kind = kind,
                .time_ns = ev->time_ns,
                .clientid = ev->clientid,
                .owner = t->owner,
                .owner_len = len,
                .owner_escaped = t->owner_escaped,
                .from = t->from,
                .to = t->to,
        };
        return NSID_NFSD_TAKEOVERS_CHANGE;
}

static int replaced(nsid_nfsd_takeovers *t, const nsid_nfsd_event *ev, nsid_nfsd_change *ret) {
        entry *e = find(t, ev->clientid);
        nsid_nfsd_change_kind kind;
        pending *p;

        if (!e) {
                t->owner_escaped[0] = 0;
                return change(t, NSID_NFSD_CHANGE_REPLACED, ev, NULL, "", "", ret);
        }
        if (!e->to[0] || !e->name || !e->host[0])
                kind = NSID_NFSD_CHANGE_REPLACED;
        else if (strcmp(e->host, e->to_host) != 0)
                kind = NSID_NFSD_CHANGE_TAKEOVER;
        else if (e->prev[0] && strcmp(e->prev, e->to) == 0 && strcmp(e->addr, e->to) != 0)
                kind = NSID_NFSD_CHANGE_TAKEOVER; /* the one it took the record from, back */
        else
                kind = NSID_NFSD_CHANGE_RESTART;
        if (e->to[0]) {
                p = &t->pend[t->pend_next];
                t->pend_next = (t->pend_next + 1) % PENDING;
                *p = (pending) { .used = true };
                snprintf(p->to, sizeof(p->to), "%s", e->to);
                snprintf(p->to_host, sizeof(p->to_host), "%s", e->to_host);
                snprintf(p->prev, sizeof(p->prev), "%s", e->addr);
        }
        (void) change(t, kind, ev, e, e->addr, e->to, ret);
        drop(t, ev->clientid);
        return NSID_NFSD_TAKEOVERS_CHANGE;
}

_public_ int nsid_nfsd_takeovers_feed(nsid_nfsd_takeovers *t, const nsid_nfsd_event *ev,
                             nsid_nfsd_change *ret) {
        char addr[NSID_NFSD_ADDRESS_MAX], host[NFSD_HOST_MAX];
        entry *e;
        int r;

        if (!t || !ev || !ret || (unsigned) ev->kind >= _NSID_NFSD_EVENT_KIND_MAX)
                return -EINVAL;
        switch (ev->kind) {
        case NSID_NFSD_EVENT_FRESH:
        case NSID_NFSD_EVENT_CONFIRMED_R:
                if ((!ev->name && ev->name_len) || ev->name_len > NSID_NFSD_OWNER_MAX)
                        return -EINVAL;
                if (event_address(ev, addr, host) < 0)
                        return -EINVAL;
                r = get(t, ev->clientid, &e);
                if (r == -E2BIG)
                        return 0;
                if (r < 0)
                        return r;
                r = set_name(e, ev->name, ev->name_len);
                if (r < 0)
                        return r;
                snprintf(e->addr, sizeof(e->addr), "%s", addr);
                snprintf(e->host, sizeof(e->host), "%s", host);
                return 0;
        case NSID_NFSD_EVENT_CONFIRMED:
                return find(t, ev->clientid) ? 0 : NSID_NFSD_TAKEOVERS_WANT_INFO;
        case NSID_NFSD_EVENT_VERF_MISMATCH:
                if (event_address(ev, addr, host) < 0)
                        return -EINVAL;
                r = get(t, ev->clientid, &e);
                if (r == -E2BIG)
                        return 0;
                if (r < 0)
                        return r;
                snprintf(e->to, sizeof(e->to), "%s", addr);
                snprintf(e->to_host, sizeof(e->to_host), "%s", host);
                return 0;
        case NSID_NFSD_EVENT_CRED_MISMATCH:
                if (event_address(ev, addr, host) < 0)
                        return -EINVAL;
                e = find(t, ev->clientid);
                return change(t, NSID_NFSD_CHANGE_REFUSED, ev, e, e ? e->addr : "", addr, ret);
        case NSID_NFSD_EVENT_REPLACED:
                return replaced(t, ev, ret);
        case NSID_NFSD_EVENT_GONE:
                drop(t, ev->clientid);
                return 0;
        default:
                return -EINVAL;
        }
}

_public_ size_t nsid_nfsd_takeovers_get_clients(const nsid_nfsd_takeovers *t) {
        return t ? t->n : 0;
}

_public_ uint64_t nsid_nfsd_takeovers_get_untracked(const nsid_nfsd_takeovers *t) {
        return t ? t->untracked : 0;
}

_public_ const char *nsid_nfsd_change_kind_to_string(nsid_nfsd_change_kind k) {
        static const char *const names[_NSID_NFSD_CHANGE_KIND_MAX] = {
                [NSID_NFSD_CHANGE_TAKEOVER] = "takeover",
                [NSID_NFSD_CHANGE_RESTART] = "restart",
                [NSID_NFSD_CHANGE_REPLACED] = "replaced",
                [NSID_NFSD_CHANGE_REFUSED] = "refused",
        };
        return (unsigned) k < _NSID_NFSD_CHANGE_KIND_MAX ? names[k] : NULL;
}
