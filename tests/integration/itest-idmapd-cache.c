/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd's answer cache (idmapd/idmapd-cache.c, compiled into this test): answers,
 * negative entries, expiry to a sixteenth of a second, replacement, flush; a long random run against a
 * plain reference model (insertions, replacements, expiries, the pool compaction and the
 * index's backward-shift deletion all exercised); names without a domain and more domains
 * than the cache interns; and the heap cost per cached answer with 100 namespaces x 1,000
 * answers (glibc's mallinfo2), which must stay far below the old ~80 bytes.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "../../idmapd/idmapd-cache.c"

#define S 1000000ll

static dm_query qname(nsid_idmap_key_kind k, const char *name) {
        dm_query q = { .kind = k, .view = DM_VIEW_HOST };
        snprintf(q.name, sizeof(q.name), "%s", name);
        return q;
}

static dm_query qid(nsid_idmap_key_kind k, uint32_t id) {
        return (dm_query) { .kind = k, .view = DM_VIEW_HOST, .id = id };
}

static void test_basic(void **state) {
        (void) state;
        dm_cache *c = dm_cache_new();
        dm_answer a;
        uint32_t ttl;
        int64_t now = 12345 * S + 678901;
        dm_query q1 = qname(NSID_IDMAP_KEY_UID, "alice@c1.test");
        dm_query q2 = qid(NSID_IDMAP_KEY_USER, 4001);
        dm_query q3 = qname(NSID_IDMAP_KEY_GID, "nosuch@c1.test");

        assert_non_null(c);
        assert_int_equal(dm_cache_get(c, &q1, now, &a, &ttl), 0);
        dm_cache_put(c, &q1, &(dm_answer) { .id = 4001 }, now + 600 * S);
        dm_answer named = { .id = 0 };
        strcpy(named.name, "alice@c1.test");
        dm_cache_put(c, &q2, &named, now + 600 * S);
        dm_cache_put(c, &q3, &(dm_answer) { .error = -ENOENT }, now + 30 * S);
        dm_cache_put(c, &q3, &(dm_answer) { .error = -ETIMEDOUT }, now + 30 * S); /* not cached */
        assert_int_equal(dm_cache_size(c), 3);

        assert_int_equal(dm_cache_get(c, &q1, now + 1000, &a, &ttl), 1);
        assert_int_equal(a.error, 0);
        assert_int_equal(a.id, 4001);
        assert_int_equal(ttl, 600); /* what the control socket shows right after */
        assert_int_equal(dm_cache_get(c, &q2, now + 2 * S, &a, &ttl), 1);
        assert_string_equal(a.name, "alice@c1.test");
        assert_int_equal(ttl, 598);
        assert_int_equal(dm_cache_get(c, &q3, now, &a, &ttl), 1);
        assert_int_equal(a.error, -ENOENT);

        /* same name, other kind or view: other entries */
        dm_query g = qname(NSID_IDMAP_KEY_GID, "alice@c1.test");
        assert_int_equal(dm_cache_get(c, &g, now, &a, &ttl), 0);
        dm_query v = q1;
        v.view = DM_VIEW_NS;
        assert_int_equal(dm_cache_get(c, &v, now, &a, &ttl), 0);
        dm_query other = qname(NSID_IDMAP_KEY_UID, "alice@c2.test");
        assert_int_equal(dm_cache_get(c, &other, now, &a, &ttl), 0);
        dm_query prefix = qname(NSID_IDMAP_KEY_UID, "alic@c1.test");
        assert_int_equal(dm_cache_get(c, &prefix, now, &a, &ttl), 0);

        /* replaced, not duplicated */
        dm_cache_put(c, &q1, &(dm_answer) { .id = 4011 }, now + 600 * S);
        assert_int_equal(dm_cache_size(c), 3);
        assert_int_equal(dm_cache_get(c, &q1, now, &a, &ttl), 1);
        assert_int_equal(a.id, 4011);

        /* a second later the TTL shown is one less; expiry never late, at most 62.5 ms early */
        assert_int_equal(dm_cache_get(c, &q1, now + S, &a, &ttl), 1);
        assert_int_equal(ttl, 599);
        assert_int_equal(dm_cache_get(c, &q3, now + 30 * S - 62500, &a, &ttl), 1);
        assert_int_equal(dm_cache_get(c, &q3, now + 30 * S, &a, &ttl), 0);
        assert_int_equal(dm_cache_size(c), 2);
        assert_int_equal(dm_cache_expire(c, now + 600 * S - 62500), 0);
        assert_int_equal(dm_cache_expire(c, now + 600 * S), 2);
        assert_int_equal(dm_cache_size(c), 0);
        assert_int_equal(dm_cache_get(c, &q1, now, &a, &ttl), 0);

        dm_cache_put(c, &q1, &(dm_answer) { .id = 1 }, now + 600 * S);
        assert_int_equal(dm_cache_flush(c), 1);
        assert_int_equal(dm_cache_get(c, &q1, now, &a, &ttl), 0);
        dm_cache_put(c, &q1, &(dm_answer) { .id = 2 }, now + 600 * S);
        assert_int_equal(dm_cache_get(c, &q1, now, &a, &ttl), 1);
        assert_int_equal(a.id, 2);
        dm_cache_free(c);
        dm_cache_free(NULL);
        assert_int_equal(dm_cache_flush(NULL), 0);
}

static void test_names(void **state) {
        (void) state;
        dm_cache *c = dm_cache_new();
        const char *odd[] = { "nodomain", "trailing@", "@leading", "a@b@c.test", "x@", "" };
        dm_answer a;
        uint32_t ttl;
        char name[DM_NAME_MAX];
        /* 40 domains: the first 32 are interned, the rest kept whole */
        for (int d = 0; d < 40; d++)
                for (int u = 0; u < 5; u++) {
                        snprintf(name, sizeof(name), "u%d@dom%d.test", u, d);
                        dm_query q = qname(NSID_IDMAP_KEY_UID, name);
                        dm_cache_put(c, &q, &(dm_answer) { .id = (uint32_t) (d * 100 + u) }, 100 * S);
                        dm_query r = qid(NSID_IDMAP_KEY_USER, (uint32_t) (d * 100 + u));
                        dm_answer n = {};
                        snprintf(n.name, sizeof(n.name), "%s", name);
                        dm_cache_put(c, &r, &n, 100 * S);
                }
        for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
                dm_query q = qname(NSID_IDMAP_KEY_GID, odd[i]);
                dm_cache_put(c, &q, &(dm_answer) { .id = (uint32_t) (9000 + i) }, 100 * S);
                dm_query r = qid(NSID_IDMAP_KEY_GROUP, (uint32_t) (9000 + i));
                dm_answer n = {};
                snprintf(n.name, sizeof(n.name), "%s", odd[i]);
                dm_cache_put(c, &r, &n, 100 * S);
        }
        /* a 127-character name */
        char lname[DM_NAME_MAX];
        memset(lname, 'n', DM_NAME_MAX - 1);
        lname[DM_NAME_MAX - 1] = '\0';
        lname[60] = '@';
        dm_query lq = qname(NSID_IDMAP_KEY_UID, lname);
        dm_cache_put(c, &lq, &(dm_answer) { .id = 777 }, 100 * S);
        dm_query lr = qid(NSID_IDMAP_KEY_USER, 777);
        dm_answer ln = {};
        memcpy(ln.name, lname, sizeof(lname));
        dm_cache_put(c, &lr, &ln, 100 * S);

        for (int d = 0; d < 40; d++)
                for (int u = 0; u < 5; u++) {
                        snprintf(name, sizeof(name), "u%d@dom%d.test", u, d);
                        dm_query q = qname(NSID_IDMAP_KEY_UID, name);
                        assert_int_equal(dm_cache_get(c, &q, 0, &a, &ttl), 1);
                        assert_int_equal(a.id, (uint32_t) (d * 100 + u));
                        dm_query r = qid(NSID_IDMAP_KEY_USER, (uint32_t) (d * 100 + u));
                        assert_int_equal(dm_cache_get(c, &r, 0, &a, &ttl), 1);
                        assert_string_equal(a.name, name);
                        /* same local part, a domain not interned / another interned one */
                        snprintf(name, sizeof(name), "u%d@dom%d.test", u, d + 100);
                        q = qname(NSID_IDMAP_KEY_UID, name);
                        assert_int_equal(dm_cache_get(c, &q, 0, &a, &ttl), 0);
                }
        for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
                dm_query q = qname(NSID_IDMAP_KEY_GID, odd[i]);
                assert_int_equal(dm_cache_get(c, &q, 0, &a, &ttl), 1);
                assert_int_equal(a.id, 9000 + i);
                dm_query r = qid(NSID_IDMAP_KEY_GROUP, (uint32_t) (9000 + i));
                assert_int_equal(dm_cache_get(c, &r, 0, &a, &ttl), odd[i][0] ? 1 : 0);
                if (odd[i][0])
                        assert_string_equal(a.name, odd[i]);
        }
        assert_int_equal(dm_cache_get(c, &lq, 0, &a, &ttl), 1);
        assert_int_equal(a.id, 777);
        assert_int_equal(dm_cache_get(c, &lr, 0, &a, &ttl), 1);
        assert_string_equal(a.name, lname);
        dm_cache_free(c);
}

/* ---- random run against a reference model ---- */

typedef struct model {
        bool live;
        bool negative;
        uint32_t answer;
        int64_t expires_us;
} model;

#define KEYS 3000

static dm_query model_query(unsigned k) {
        char name[64];
        switch (k % 4) {
        case 0:
                snprintf(name, sizeof(name), "user%u@dom%u.test", k / 4, k % 3);
                return qname(NSID_IDMAP_KEY_UID, name);
        case 1:
                snprintf(name, sizeof(name), "group%u", k / 4);
                return qname(NSID_IDMAP_KEY_GID, name);
        case 2:
                return qid(NSID_IDMAP_KEY_USER, k / 4);
        default: {
                dm_query q = qid(NSID_IDMAP_KEY_GROUP, k / 4);
                q.view = DM_VIEW_NS;
                return q;
        }
        }
}

static void test_random(void **state) {
        (void) state;
        static model m[KEYS];
        dm_cache *c = dm_cache_new();
        unsigned seed = 12345;
        int64_t now = 1000 * S;

        memset(m, 0, sizeof(m));
        for (int step = 0; step < 400000; step++) {
                seed = seed * 1103515245u + 12345u;
                unsigned r = seed >> 8;
                unsigned k = r % KEYS;
                dm_query q = model_query(k);
                dm_answer a;
                uint32_t ttl;
                switch ((r >> 16) % 10) {
                case 0: case 1: case 2: case 3: { /* put */
                        bool neg = (r & 7) == 0;
                        uint32_t v = r & 0xffff;
                        dm_answer na = { .error = neg ? -ENOENT : 0, .id = v };
                        snprintf(na.name, sizeof(na.name), "name%u@x%u.test", v, v % 5);
                        int64_t exp = now + (int64_t) ((r >> 4) % 50 + 1) * S;
                        dm_cache_put(c, &q, &na, exp);
                        m[k] = (model) { .live = true, .negative = neg, .answer = v,
                                         .expires_us = exp - exp % 62500 };
                        break;
                }
                case 4: /* time passes */
                        now += (r % 3) * S + (r & 0xfffff);
                        break;
                case 5: /* the periodic expiry */
                        if ((r & 15) == 0) {
                                dm_cache_expire(c, now);
                                for (unsigned i = 0; i < KEYS; i++)
                                        if (m[i].live && m[i].expires_us <= now)
                                                m[i].live = false;
                        }
                        break;
                default: { /* get */
                        int got = dm_cache_get(c, &q, now, &a, &ttl);
                        bool want = m[k].live && m[k].expires_us > now;
                        assert_int_equal(got, want);
                        if (m[k].live && !want)
                                m[k].live = false;
                        if (!want)
                                break;
                        assert_int_equal(a.error, m[k].negative ? -ENOENT : 0);
                        assert_true(ttl >= 1 && ttl <= 50);
                        if (m[k].negative)
                                break;
                        if (q.kind == NSID_IDMAP_KEY_UID || q.kind == NSID_IDMAP_KEY_GID)
                                assert_int_equal(a.id, m[k].answer);
                        else {
                                char want_name[DM_NAME_MAX];
                                snprintf(want_name, sizeof(want_name), "name%u@x%u.test",
                                         m[k].answer, m[k].answer % 5);
                                assert_string_equal(a.name, want_name);
                        }
                }
                }
        }
        /* everything the model still holds is there, nothing else */
        size_t n = 0;
        for (unsigned k = 0; k < KEYS; k++) {
                dm_query q = model_query(k);
                dm_answer a;
                uint32_t ttl;
                bool want = m[k].live && m[k].expires_us > now;
                assert_int_equal(dm_cache_get(c, &q, now, &a, &ttl), want);
                n += want;
        }
        dm_cache_expire(c, now);
        assert_int_equal(dm_cache_size(c), n);
        dm_cache_expire(c, now + 100 * S);
        assert_int_equal(dm_cache_size(c), 0);
        dm_cache_free(c);
}

/* ---- memory: 100 namespaces x 1,000 answers ---- */

static void test_memory(void **state) {
        (void) state;
        enum { NS = 100, PER = 1000 };
        dm_cache *c[NS];
        struct mallinfo2 before = mallinfo2();
        for (int i = 0; i < NS; i++) {
                c[i] = dm_cache_new();
                assert_non_null(c[i]);
                for (int u = 0; u < PER / 4; u++) {
                        char name[64];
                        uint32_t id = (uint32_t) (100000 + i * 1000 + u);
                        dm_answer n = { .id = id };
                        snprintf(name, sizeof(name), "user%d@c%d.bench.test", u, i);
                        snprintf(n.name, sizeof(n.name), "%s", name);
                        dm_query q = qname(NSID_IDMAP_KEY_UID, name);
                        dm_cache_put(c[i], &q, &n, 600 * S);
                        q = qname(NSID_IDMAP_KEY_GID, name);
                        dm_cache_put(c[i], &q, &n, 600 * S);
                        q = qid(NSID_IDMAP_KEY_USER, id);
                        dm_cache_put(c[i], &q, &n, 600 * S);
                        q = qid(NSID_IDMAP_KEY_GROUP, id);
                        dm_cache_put(c[i], &q, &n, 600 * S);
                }
                assert_int_equal(dm_cache_size(c[i]), PER);
        }
        struct mallinfo2 after = mallinfo2();
        size_t used = after.uordblks - before.uordblks;
        for (int i = 0; i < NS; i++)
                dm_cache_free(c[i]);
        struct mallinfo2 freed = mallinfo2();
        printf("# heap in use for %d answers in %d caches: %zu bytes, %.1f bytes an answer "
               "(the former layout: ~80)\n", NS * PER, NS, used, (double) used / (NS * PER));
        assert_true(used / (NS * PER) < 40);
        if (freed.uordblks > before.uordblks)
                printf("# %zu bytes left after freeing the caches\n", freed.uordblks - before.uordblks);
        /* (freed chunks parked in glibc's per-thread tcache still count as in use: up to 7
         * per size class; leaks are the sanitizer builds' to find) */
        assert_true(freed.uordblks <= before.uordblks + 65536);
}

/* ---- the hash is keyed (issue 20, item 9): names come from remote peers ---- */

/* The unkeyed hash the cache used before (32-bit FNV-1a, then a mixer, 24 bits): anyone
 * could compute it, so an NFS server could choose owner names that all land on one probe
 * chain of a namespace's cache. Here it finds such names. */
static uint32_t old_hash_name(const char *name) {
        uint32_t h = 2166136261u;
        for (const unsigned char *p = (const unsigned char *) name; *p; p++)
                h = (h ^ *p) * 16777619u;
        h ^= h >> 15;
        h *= 0x2c1b3c6du;
        h ^= h >> 12;
        return h & 0x00ffffffu;
}

/* The 24-bit hash a cache stored for a name it holds. */
static uint32_t stored_hash(dm_cache *c, const char *name) {
        dm_query q = qname(NSID_IDMAP_KEY_UID, name);
        int64_t pos = find(c, &q, hash_query(c, &q));
        assert_true(pos >= 0);
        return c->e[c->slots[pos] - 1].hm >> 8;
}

/* The longest distance of an entry from its home slot (linear probing). */
static uint32_t max_probe(const dm_cache *c) {
        uint32_t worst = 0;
        for (uint32_t i = 0; i <= c->mask; i++) {
                uint32_t s = c->slots[i];
                if (!s)
                        continue;
                uint32_t d = (i - home(c, c->e[s - 1].hm)) & c->mask;
                if (d > worst)
                        worst = d;
        }
        return worst;
}

static void test_keyed_hash(void **state) {
        (void) state;
        dm_cache *c1 = dm_cache_new(), *c2 = dm_cache_new();
        dm_answer a;
        uint32_t ttl;
        int64_t now = 1000 * S;
        char name[64];

        /* 1. the same name hashes differently in two caches (each has its own random key:
         * a 2^-24 chance per name of being equal, so 8 names never all agree), and lookups
         * work in both */
        int same = 0;
        for (int i = 0; i < 8; i++) {
                snprintf(name, sizeof(name), "user%d@example.test", i);
                dm_query q = qname(NSID_IDMAP_KEY_UID, name);
                dm_cache_put(c1, &q, &(dm_answer) { .id = 1000u + (uint32_t) i }, now + 60 * S);
                dm_cache_put(c2, &q, &(dm_answer) { .id = 2000u + (uint32_t) i }, now + 60 * S);
                same += stored_hash(c1, name) == stored_hash(c2, name);
                assert_int_equal(dm_cache_get(c1, &q, now, &a, &ttl), 1);
                assert_int_equal(a.id, 1000u + (uint32_t) i);
                assert_int_equal(dm_cache_get(c2, &q, now, &a, &ttl), 1);
                assert_int_equal(a.id, 2000u + (uint32_t) i);
        }
        printf("keyed hash: %d of 8 names hash the same in two caches\n", same);
        assert_true(same < 8);
        /* the key survives a flush (the cache is emptied, not re-keyed into a known state) */
        snprintf(name, sizeof(name), "user0@example.test");
        uint32_t before = stored_hash(c1, name);
        dm_cache_flush(c1);
        dm_query q0 = qname(NSID_IDMAP_KEY_UID, name);
        dm_cache_put(c1, &q0, &(dm_answer) { .id = 7 }, now + 60 * S);
        assert_int_equal(stored_hash(c1, name), before);
        dm_cache_free(c1);
        dm_cache_free(c2);

        /* 2. names chosen to collide under the old hash: a full 24-bit collision (birthday
         * search), and 256 names on one home slot of a 4,096-slot table */
        char pa[64] = "", pb[64] = "";
        {
                enum { N = 1u << 14 };
                uint32_t *seen = calloc(1u << 24 >> 5, sizeof(uint32_t));
                uint32_t *who = calloc(N, sizeof(uint32_t));
                assert_non_null(seen);
                assert_non_null(who);
                for (uint32_t i = 0; i < 4 * N && !pa[0]; i++) {
                        snprintf(name, sizeof(name), "o%u@evil.test", i);
                        uint32_t h = old_hash_name(name);
                        if (seen[h >> 5] & (1u << (h & 31))) {
                                for (uint32_t j = 0; j < i; j++) {
                                        char other[64];
                                        snprintf(other, sizeof(other), "o%u@evil.test", j);
                                        if (old_hash_name(other) == h) {
                                                snprintf(pa, sizeof(pa), "%s", other);
                                                snprintf(pb, sizeof(pb), "%s", name);
                                                break;
                                        }
                                }
                        }
                        seen[h >> 5] |= 1u << (h & 31);
                }
                free(seen);
                free(who);
        }
        assert_true(pa[0] && old_hash_name(pa) == old_hash_name(pb));
        dm_cache *c = dm_cache_new();
        dm_query qa = qname(NSID_IDMAP_KEY_UID, pa), qb = qname(NSID_IDMAP_KEY_UID, pb);
        dm_cache_put(c, &qa, &(dm_answer) { .id = 1 }, now + 60 * S);
        dm_cache_put(c, &qb, &(dm_answer) { .id = 2 }, now + 60 * S);
        printf("old-hash collision \"%s\" / \"%s\": %s\n", pa, pb,
               stored_hash(c, pa) == stored_hash(c, pb) ? "still collides" : "no longer collides");
        assert_int_not_equal(stored_hash(c, pa), stored_hash(c, pb));
        assert_int_equal(dm_cache_get(c, &qa, now, &a, &ttl), 1);
        assert_int_equal(a.id, 1);
        assert_int_equal(dm_cache_get(c, &qb, now, &a, &ttl), 1);
        assert_int_equal(a.id, 2);
        dm_cache_flush(c);

        /* 256 names whose old hash has the same low 12 bits: one home slot while the index
         * has 4,096 slots (1,537 to 3,072 entries; filled with other answers first) */
        for (uint32_t i = 0; i < 2500; i++) {
                dm_query q = qid(NSID_IDMAP_KEY_USER, 100000 + i);
                dm_answer n = {};
                snprintf(n.name, sizeof(n.name), "u%u@example.test", i);
                dm_cache_put(c, &q, &n, now + 60 * S);
        }
        char (*evil)[32] = calloc(256, 32);
        assert_non_null(evil);
        uint32_t found = 0;
        for (uint32_t i = 0; found < 256; i++) {
                snprintf(evil[found], 32, "e%u@evil.test", i);
                if ((old_hash_name(evil[found]) & 0xfff) == 0x5a5)
                        found++;
        }
        for (uint32_t i = 0; i < 256; i++) {
                dm_query q = qname(NSID_IDMAP_KEY_UID, evil[i]);
                dm_cache_put(c, &q, &(dm_answer) { .id = 5000 + i }, now + 60 * S);
        }
        assert_int_equal(c->mask + 1, 4096);
        /* their home slots now: about 248 distinct expected (256 balls in 4,096 bins) */
        uint8_t *used = calloc(4096, 1);
        assert_non_null(used);
        uint32_t distinct = 0;
        for (uint32_t i = 0; i < 256; i++) {
                dm_query q = qname(NSID_IDMAP_KEY_UID, evil[i]);
                uint32_t slot = home(c, hash_query(c, &q));
                distinct += !used[slot];
                used[slot] = 1;
        }
        free(used);
        uint32_t worst = max_probe(c);
        printf("256 names on one old-hash home slot of 4096: %u distinct home slots, longest "
               "probe %u slots\n", distinct, worst);
        assert_true(distinct >= 200);
        for (uint32_t i = 0; i < 256; i++) {
                dm_query q = qname(NSID_IDMAP_KEY_UID, evil[i]);
                assert_int_equal(dm_cache_get(c, &q, now, &a, &ttl), 1);
                assert_int_equal(a.id, 5000 + i);
        }
        free(evil);
        dm_cache_free(c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_basic),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_random),
                cmocka_unit_test(test_memory),
                cmocka_unit_test(test_keyed_hash),
        };
        return run_test_group(tests, NULL, NULL);
}
