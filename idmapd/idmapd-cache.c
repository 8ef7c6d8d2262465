/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: a namespace's answer cache (expiry, negative entries), laid out for 100,000s
 * of answers across 100s of namespaces:
 *
 *  - entries are 16 bytes in one dense array: a 24-bit hash with the kind, view and negative
 *    bits, the expiry in sixteenths of a second of CLOCK_MONOTONIC (rounded down: an answer
 *    expires up to 62.5 ms early, never late), and the key and the answer (an id, or the
 *    offset of a name in the string pool);
 *  - an open-addressing index of 4-byte slots (linear probing, backward-shift deletion, load
 *    at most 3/4) points into the array; a deletion moves the last entry into the hole;
 *  - names are kept once in a per-cache pool as "local part" NUL and a byte naming the
 *    domain, which is interned per cache (a namespace's names share one or a few domains);
 *    names whose domain cannot be interned are kept whole. The pool is compacted when half of
 *    it is garbage.
 *  - the hash is SipHash-2-4 (libnsid/src/siphash.h, the user database's) keyed with 16
 *    bytes from getrandom() drawn for each cache when it is made: the names are chosen by
 *    remote NFS peers, and with a hash anyone can compute they could pick names that all
 *    land on one probe chain of a namespace's cache (every lookup in it then walks the
 *    chain). A flush keeps the cache's key.
 * Measured with bench-idmapd (100 namespaces, 100,000 answers): see bench/idmapd/.
 * Before: one malloc'd 40-byte node per entry plus a strdup'd name (~80 bytes an entry).
 *
 * Only the daemon's main thread uses the caches (no locking).
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "idmapd.h"
#include "idmapd-cache.h"
#include "siphash.h"

typedef struct centry {
        uint32_t hm;      /* hash << 8 | expiry sixteenths << 4 | kind << 2 | view << 1 | negative */
        uint32_t expires; /* CLOCK_MONOTONIC seconds (and hm's sixteenths) */
        uint32_t key;     /* UID/GID: pool offset of the name; USER/GROUP: the id */
        uint32_t val;     /* UID/GID: the id; USER/GROUP: pool offset of the name */
} centry;

#define HM_NEG 1u
#define HM_FRAC 0xf0u
#define FRAC_US 62500 /* a sixteenth of a second */
#define MAX_DOMAINS 32u
#define NO_DOMAIN 0u /* pool byte after the local part: 0 = kept whole, i = domains[i - 1] */

struct dm_cache {
        centry *e;
        uint32_t n, cap;
        uint32_t *slots; /* entry index + 1, 0 = empty */
        uint32_t mask;   /* slots - 1 (0 when there is no index yet) */
        char *pool;
        uint32_t pool_len, pool_cap;
        uint32_t pool_check; /* compact when pool_len passes this */
        char *domains[MAX_DOMAINS];
        uint8_t domain_len[MAX_DOMAINS];
        uint32_t n_domains;
        uint8_t key[16]; /* SipHash key, random per cache */
};

/* The daemon's memory: with one malloc arena per resolver thread (glibc makes up to 8 per
 * core) 100 namespaces left ~15 arenas of 350-400 KiB each, mostly fragmentation; the
 * resolvers allocate little and rarely at the same time, so one arena is enough. */
__attribute__((constructor)) static void dm_cache_memory_policy(void) {
        (void) mallopt(M_ARENA_MAX, 1);
}

static bool by_name(nsid_idmap_key_kind k) {
        return k == NSID_IDMAP_KEY_UID || k == NSID_IDMAP_KEY_GID;
}

/* 24 bits; a name hashes the same whatever its kind and view, so that the entries of one
 * name share a probe chain (and its string in the pool) */
static uint32_t hash_name(const dm_cache *c, const char *name) {
        return (uint32_t) siphash24(name, strlen(name), c->key) & 0x00ffffffu;
}

static uint32_t hash_query(const dm_cache *c, const dm_query *q) {
        uint32_t h;
        if (by_name(q->kind))
                h = hash_name(c, q->name);
        else {
                uint8_t b[4] = { (uint8_t) q->id, (uint8_t) (q->id >> 8), (uint8_t) (q->id >> 16),
                                 (uint8_t) (q->id >> 24) };
                h = (uint32_t) siphash24(b, sizeof(b), c->key) & 0x00ffffffu;
        }
        return (h << 8) | ((uint32_t) q->kind & 3u) << 2 | ((uint32_t) q->view & 1u) << 1;
}

static uint32_t home(const dm_cache *c, uint32_t hm) {
        return (hm >> 8) & c->mask;
}

/* ---- names in the pool ---- */

/* The domain of a name as this cache stores it: its index + 1, or NO_DOMAIN (kept whole).
 * With add, a new domain is interned if there is room. */
static unsigned domain_of(dm_cache *c, const char *name, size_t *ret_local_len, bool add) {
        const char *at = strrchr(name, '@');
        size_t dl;
        *ret_local_len = strlen(name);
        if (!at || (dl = strlen(at + 1)) == 0 || dl > 255)
                return NO_DOMAIN;
        for (unsigned i = 0; i < c->n_domains; i++)
                if (c->domain_len[i] == dl && memcmp(c->domains[i], at + 1, dl) == 0) {
                        *ret_local_len = (size_t) (at - name);
                        return i + 1;
                }
        if (!add || c->n_domains >= MAX_DOMAINS)
                return NO_DOMAIN;
        char *d = malloc(dl + 1);
        if (!d)
                return NO_DOMAIN;
        memcpy(d, at + 1, dl + 1);
        c->domains[c->n_domains] = d;
        c->domain_len[c->n_domains] = (uint8_t) dl;
        *ret_local_len = (size_t) (at - name);
        return ++c->n_domains;
}

static uint32_t pool_size_of(const dm_cache *c, uint32_t off) {
        return (uint32_t) strlen(c->pool + off) + 2;
}

static bool pool_equal(dm_cache *c, uint32_t off, const char *name);
static bool key_is_name(const centry *e);
static void pool_compact(dm_cache *c);

/* The offset of an equal name already in the pool: the key of an entry on the name's probe
 * chain (uid:NAME and gid:NAME share one; user:ID and group:ID answers find it there too). */
static int64_t pool_find(dm_cache *c, const char *name, uint32_t h) {
        if (!c->mask)
                return -1;
        for (uint32_t i = h & c->mask;; i = (i + 1) & c->mask) {
                uint32_t s = c->slots[i];
                if (!s)
                        return -1;
                const centry *e = &c->e[s - 1];
                if ((e->hm >> 8) == h && key_is_name(e) && pool_equal(c, e->key, name))
                        return e->key;
        }
}

/* 0 and the offset, or -ENOMEM */
static int pool_add(dm_cache *c, const char *name, uint32_t *ret_off) {
        uint32_t h = hash_name(c, name);
        int64_t have = pool_find(c, name, h);
        if (have >= 0) {
                *ret_off = (uint32_t) have;
                return 0;
        }
        if (c->pool_len > c->pool_check)
                pool_compact(c);
        size_t ll;
        unsigned d = domain_of(c, name, &ll, true);
        size_t need = ll + 2;
        if ((size_t) c->pool_len + need > UINT32_MAX / 2)
                return -ENOMEM;
        if (c->pool_len + need > c->pool_cap) {
                size_t nc = c->pool_cap ? c->pool_cap + c->pool_cap / 2 : 256;
                while (nc < c->pool_len + need)
                        nc += nc / 2;
                char *p = realloc(c->pool, nc);
                if (!p)
                        return -ENOMEM;
                c->pool = p;
                c->pool_cap = (uint32_t) nc;
        }
        *ret_off = c->pool_len;
        memcpy(c->pool + c->pool_len, name, ll);
        c->pool[c->pool_len + ll] = '\0';
        c->pool[c->pool_len + ll + 1] = (char) d;
        c->pool_len += (uint32_t) need;
        return 0;
}

static bool pool_equal(dm_cache *c, uint32_t off, const char *name) {
        size_t ll;
        unsigned d = domain_of(c, name, &ll, false);
        const char *s = c->pool + off;
        return strncmp(s, name, ll) == 0 && s[ll] == '\0' && (unsigned char) s[ll + 1] == d;
}

static void pool_get(const dm_cache *c, uint32_t off, char *buf, size_t size) {
        const char *s = c->pool + off;
        size_t ll = strlen(s);
        unsigned d = (unsigned char) s[ll + 1];
        if (d == NO_DOMAIN || d > c->n_domains)
                snprintf(buf, size, "%s", s);
        else
                snprintf(buf, size, "%s@%s", s, c->domains[d - 1]);
}

static bool key_is_name(const centry *e) {
        return by_name((nsid_idmap_key_kind) ((e->hm >> 2) & 3u));
}

static bool val_is_name(const centry *e) {
        return !key_is_name(e) && !(e->hm & HM_NEG);
}

typedef struct ref {
        uint32_t old;
        uint32_t *field;
} ref;

static int ref_cmp(const void *a, const void *b) {
        uint32_t x = ((const ref *) a)->old, y = ((const ref *) b)->old;
        return x < y ? -1 : x > y;
}

/* Rewrite the pool with the live names only (names are shared: each copied once). Deleted
 * entries leave their names behind; this runs when the pool has doubled since the last time,
 * so its cost is spread over the insertions. */
static void pool_compact(dm_cache *c) {
        ref *r = malloc(((size_t) c->n * 1 + 1) * sizeof(ref));
        size_t nr = 0;
        uint32_t len = 0;
        if (!r)
                return;
        for (uint32_t i = 0; i < c->n; i++) {
                if (key_is_name(&c->e[i]))
                        r[nr++] = (ref) { c->e[i].key, &c->e[i].key };
                else if (val_is_name(&c->e[i]))
                        r[nr++] = (ref) { c->e[i].val, &c->e[i].val };
        }
        qsort(r, nr, sizeof(ref), ref_cmp);
        /* in place: the live names move down, in their order */
        for (size_t i = 0; i < nr; i++) {
                if (i > 0 && r[i].old == r[i - 1].old) {
                        *r[i].field = *r[i - 1].field;
                        continue;
                }
                uint32_t sz = pool_size_of(c, r[i].old);
                memmove(c->pool + len, c->pool + r[i].old, sz);
                *r[i].field = len;
                len += sz;
        }
        free(r);
        c->pool_len = len;
        c->pool_check = len * 2 > 4096 ? len * 2 : 4096;
        if (c->pool_cap > 2 * len + 256) {
                char *p = realloc(c->pool, len + len / 2 + 256);
                if (p) {
                        c->pool = p;
                        c->pool_cap = len + len / 2 + 256;
                }
        }
}

/* ---- the table ---- */

dm_cache *dm_cache_new(void) {
        dm_cache *c = calloc(1, sizeof(dm_cache));
        if (c)
                siphash_random_key(c->key);
        return c;
}

static void reset(dm_cache *c) {
        free(c->e);
        free(c->slots);
        free(c->pool);
        for (unsigned i = 0; i < c->n_domains; i++)
                free(c->domains[i]);
        uint8_t key[16];
        memcpy(key, c->key, sizeof(key));
        *c = (dm_cache) {};
        memcpy(c->key, key, sizeof(key));
}

size_t dm_cache_flush(dm_cache *c) {
        size_t n;
        if (!c)
                return 0;
        n = c->n;
        reset(c);
        if (n > 1000)
                (void) malloc_trim(0);
        return n;
}

void dm_cache_free(dm_cache *c) {
        if (!c)
                return;
        reset(c);
        free(c);
}

size_t dm_cache_size(const dm_cache *c) {
        return c ? c->n : 0;
}

static bool entry_matches(dm_cache *c, const centry *e, uint32_t hm, const dm_query *q) {
        if ((e->hm & ~(HM_NEG | HM_FRAC)) != hm)
                return false;
        return by_name(q->kind) ? pool_equal(c, e->key, q->name) : e->key == q->id;
}

/* The slot position of a matching entry, or -1. */
static int64_t find(dm_cache *c, const dm_query *q, uint32_t hm) {
        if (!c->mask)
                return -1;
        for (uint32_t i = home(c, hm);; i = (i + 1) & c->mask) {
                uint32_t s = c->slots[i];
                if (!s)
                        return -1;
                if (entry_matches(c, &c->e[s - 1], hm, q))
                        return i;
        }
}

static uint32_t slot_of_index(const dm_cache *c, uint32_t idx) {
        for (uint32_t i = home(c, c->e[idx].hm);; i = (i + 1) & c->mask)
                if (c->slots[i] == idx + 1)
                        return i;
}

static void slot_remove(dm_cache *c, uint32_t i) {
        uint32_t j = i;
        for (;;) {
                j = (j + 1) & c->mask;
                uint32_t s = c->slots[j];
                if (!s)
                        break;
                uint32_t k = home(c, c->e[s - 1].hm);
                /* an entry whose home lies cyclically in (i, j] stays where it is */
                if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                        continue;
                c->slots[i] = s;
                i = j;
        }
        c->slots[i] = 0;
}

/* Delete the entry the slot at position pos points to. */
static void delete_at(dm_cache *c, uint32_t pos) {
        uint32_t idx = c->slots[pos] - 1, last = c->n - 1;
        slot_remove(c, pos);
        if (idx != last) {
                c->slots[slot_of_index(c, last)] = idx + 1;
                c->e[idx] = c->e[last];
        }
        c->n--;
}

static int rebuild_index(dm_cache *c, uint32_t nslots) {
        uint32_t *s = calloc(nslots, sizeof(uint32_t));
        if (!s)
                return -ENOMEM;
        free(c->slots);
        c->slots = s;
        c->mask = nslots - 1;
        for (uint32_t k = 0; k < c->n; k++) {
                uint32_t i = home(c, c->e[k].hm);
                while (c->slots[i])
                        i = (i + 1) & c->mask;
                c->slots[i] = k + 1;
        }
        return 0;
}

/* Room for one more entry. */
static int reserve(dm_cache *c) {
        if (c->n == c->cap) {
                uint32_t nc = c->cap ? c->cap + c->cap / 2 : 16;
                if (c->cap >= UINT32_MAX / 4)
                        return -ENOMEM;
                centry *e = reallocarray(c->e, nc, sizeof(centry));
                if (!e)
                        return -ENOMEM;
                c->e = e;
                c->cap = nc;
        }
        uint32_t nslots = c->mask ? c->mask + 1 : 0;
        if ((uint64_t) (c->n + 1) * 4 > (uint64_t) nslots * 3) {
                uint32_t ns = nslots ? nslots * 2 : 32;
                if (rebuild_index(c, ns) < 0 && !nslots)
                        return -ENOMEM;
                /* on failure with an index, keep filling it (full only at 100%) */
                if (c->n + 1 >= (c->mask ? c->mask + 1 : 0))
                        return -ENOMEM;
        }
        return 0;
}

/* Expiry to a sixteenth of a second below the exact time: an answer expires up to 62.5 ms
 * early, never late, and the TTL shown right after an answer is still the configured one. */
static void set_expiry(centry *e, int64_t us) {
        uint32_t sec = us <= 0 ? 0 : us / 1000000 > UINT32_MAX ? UINT32_MAX : (uint32_t) (us / 1000000);
        uint32_t frac = us <= 0 || sec == UINT32_MAX ? 0 : (uint32_t) ((us % 1000000) / FRAC_US);
        e->expires = sec;
        e->hm = (e->hm & ~HM_FRAC) | frac << 4;
}

static int64_t expiry_us(const centry *e) {
        return (int64_t) e->expires * 1000000 + (int64_t) ((e->hm & HM_FRAC) >> 4) * FRAC_US;
}

int dm_cache_get(dm_cache *c, const dm_query *q, int64_t now_us, dm_answer *ret,
                 uint32_t *ret_ttl) {
        uint32_t hm = hash_query(c, q);
        int64_t pos = find(c, q, hm);
        if (pos < 0)
                return 0;
        const centry *e = &c->e[c->slots[pos] - 1];
        int64_t exp_us = expiry_us(e);
        if (exp_us <= now_us) {
                delete_at(c, (uint32_t) pos);
                return 0;
        }
        dm_answer a = { .error = (e->hm & HM_NEG) ? -ENOENT : 0 };
        if (!(e->hm & HM_NEG)) {
                if (by_name(q->kind))
                        a.id = e->val;
                else
                        pool_get(c, e->val, a.name, sizeof(a.name));
        }
        *ret = a;
        *ret_ttl = (uint32_t) ((exp_us - now_us + 999999) / 1000000);
        return 1;
}

void dm_cache_put(dm_cache *c, const dm_query *q, const dm_answer *a, int64_t expires_us) {
        uint32_t hm = hash_query(c, q);
        bool neg = a->error == -ENOENT;
        centry e = { .hm = hm | (neg ? HM_NEG : 0) };
        int64_t pos;

        set_expiry(&e, expires_us);
        if (a->error != 0 && !neg)
                return; /* failures are not answers */
        if (!neg && !by_name(q->kind) && !a->name[0])
                return;
        pos = find(c, q, hm);
        if (pos >= 0)
                delete_at(c, (uint32_t) pos);
        if (reserve(c) < 0)
                return;
        if (by_name(q->kind)) {
                if (pool_add(c, q->name, &e.key) < 0)
                        return;
                e.val = neg ? 0 : a->id;
        } else {
                e.key = q->id;
                if (!neg && pool_add(c, a->name, &e.val) < 0)
                        return;
        }
        uint32_t i = home(c, hm);
        while (c->slots[i])
                i = (i + 1) & c->mask;
        c->e[c->n] = e;
        c->slots[i] = ++c->n;
}

size_t dm_cache_expire(dm_cache *c, int64_t now_us) {
        size_t n = 0;
        /* downwards: a deletion moves the last entry (already looked at) into the hole */
        for (uint32_t k = c->n; k-- > 0;)
                if (expiry_us(&c->e[k]) <= now_us) {
                        delete_at(c, slot_of_index(c, k));
                        n++;
                }
        if (c->n == 0 && n > 0) {
                reset(c);
                if (n > 1000)
                        (void) malloc_trim(0);
        } else if (c->cap > 64 && c->n < c->cap / 4) {
                /* shrink what a burst left behind */
                uint32_t nc = c->n * 2 > 16 ? c->n * 2 : 16;
                centry *e = reallocarray(c->e, nc, sizeof(centry));
                if (e) {
                        c->e = e;
                        c->cap = nc;
                }
                uint32_t ns = 32;
                while ((uint64_t) ns * 3 < (uint64_t) c->n * 4 * 2)
                        ns *= 2;
                if (ns < c->mask + 1)
                        (void) rebuild_index(c, ns);
                pool_compact(c);
        }
        return n;
}
