/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: a namespace's answer cache (hash table with expiry, negative entries). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmapd.h"

typedef struct entry {
        struct entry *next;
        int64_t expires_us;
        uint32_t hash;
        uint8_t kind, view;
        int8_t negative;
        uint32_t key_id;    /* USER/GROUP queries */
        uint32_t answer_id; /* UID/GID answers */
        char *answer_name;  /* USER/GROUP answers */
        char key_name[];    /* UID/GID queries */
} entry;

struct dm_cache {
        entry **buckets;
        size_t n_buckets, n;
};

static bool by_name(nsid_idmap_key_kind k) {
        return k == NSID_IDMAP_KEY_UID || k == NSID_IDMAP_KEY_GID;
}

static uint32_t hash_query(const dm_query *q) {
        uint32_t h = 2166136261u;
        h = (h ^ (uint32_t) q->kind) * 16777619u;
        h = (h ^ (uint32_t) q->view) * 16777619u;
        if (by_name(q->kind))
                for (const unsigned char *p = (const unsigned char *) q->name; *p; p++)
                        h = (h ^ *p) * 16777619u;
        else
                for (int i = 0; i < 4; i++)
                        h = (h ^ ((q->id >> (8 * i)) & 0xff)) * 16777619u;
        return h;
}

static bool match(const entry *e, const dm_query *q, uint32_t h) {
        if (e->hash != h || e->kind != q->kind || e->view != q->view)
                return false;
        return by_name(q->kind) ? strcmp(e->key_name, q->name) == 0 : e->key_id == q->id;
}

dm_cache *dm_cache_new(void) {
        dm_cache *c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        c->n_buckets = 64;
        c->buckets = calloc(c->n_buckets, sizeof(entry *));
        if (!c->buckets) {
                free(c);
                return NULL;
        }
        return c;
}

static void entry_free(entry *e) {
        free(e->answer_name);
        free(e);
}

size_t dm_cache_flush(dm_cache *c) {
        size_t n = 0;
        if (!c)
                return 0;
        for (size_t i = 0; i < c->n_buckets; i++) {
                entry *e = c->buckets[i];
                while (e) {
                        entry *nx = e->next;
                        entry_free(e);
                        e = nx;
                        n++;
                }
                c->buckets[i] = NULL;
        }
        c->n = 0;
        return n;
}

void dm_cache_free(dm_cache *c) {
        if (!c)
                return;
        dm_cache_flush(c);
        free(c->buckets);
        free(c);
}

size_t dm_cache_size(const dm_cache *c) {
        return c ? c->n : 0;
}

int dm_cache_get(dm_cache *c, const dm_query *q, int64_t now_us, dm_answer *ret,
                 uint32_t *ret_ttl) {
        uint32_t h = hash_query(q);
        entry **pp = &c->buckets[h & (c->n_buckets - 1)];

        for (entry *e = *pp; e; pp = &e->next, e = e->next) {
                if (!match(e, q, h))
                        continue;
                if (e->expires_us <= now_us) {
                        *pp = e->next;
                        entry_free(e);
                        c->n--;
                        return 0;
                }
                dm_answer a = { .error = e->negative ? -ENOENT : 0 };
                if (!e->negative) {
                        if (by_name(q->kind))
                                a.id = e->answer_id;
                        else
                                memcpy(a.name, e->answer_name, strlen(e->answer_name) + 1);
                }
                *ret = a;
                *ret_ttl = (uint32_t) ((e->expires_us - now_us + 999999) / 1000000);
                return 1;
        }
        return 0;
}

static void grow(dm_cache *c) {
        size_t nb = c->n_buckets * 2;
        entry **b = calloc(nb, sizeof(entry *));
        if (!b)
                return; /* keep chaining longer: still correct */
        for (size_t i = 0; i < c->n_buckets; i++) {
                entry *e = c->buckets[i];
                while (e) {
                        entry *nx = e->next;
                        e->next = b[e->hash & (nb - 1)];
                        b[e->hash & (nb - 1)] = e;
                        e = nx;
                }
        }
        free(c->buckets);
        c->buckets = b;
        c->n_buckets = nb;
}

void dm_cache_put(dm_cache *c, const dm_query *q, const dm_answer *a, int64_t expires_us) {
        uint32_t h = hash_query(q);
        entry **pp = &c->buckets[h & (c->n_buckets - 1)];
        size_t kl = by_name(q->kind) ? strlen(q->name) + 1 : 0;

        if (a->error != 0 && a->error != -ENOENT)
                return; /* failures are not answers */
        for (entry *e = *pp; e; pp = &e->next, e = e->next)
                if (match(e, q, h)) {
                        *pp = e->next;
                        entry_free(e);
                        c->n--;
                        break;
                }
        entry *e = calloc(1, sizeof(*e) + kl);
        if (!e)
                return;
        e->hash = h;
        e->kind = (uint8_t) q->kind;
        e->view = (uint8_t) q->view;
        e->expires_us = expires_us;
        e->negative = a->error == -ENOENT;
        if (kl)
                memcpy(e->key_name, q->name, kl);
        else
                e->key_id = q->id;
        if (!e->negative) {
                if (kl)
                        e->answer_id = a->id;
                else if (!(e->answer_name = strdup(a->name))) {
                        free(e);
                        return;
                }
        }
        pp = &c->buckets[h & (c->n_buckets - 1)];
        e->next = *pp;
        *pp = e;
        if (++c->n > c->n_buckets * 2)
                grow(c);
}

size_t dm_cache_expire(dm_cache *c, int64_t now_us) {
        size_t n = 0;
        for (size_t i = 0; i < c->n_buckets; i++) {
                entry **pp = &c->buckets[i];
                while (*pp) {
                        entry *e = *pp;
                        if (e->expires_us <= now_us) {
                                *pp = e->next;
                                entry_free(e);
                                c->n--;
                                n++;
                        } else
                                pp = &e->next;
                }
        }
        return n;
}
