/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid_keyring_invalidate_keys(), what nsid-idmapd calls to drop a namespace-specific
 * answer from the kernel's global .id_resolver cache, on REAL keyrings of this kernel.
 *
 * The NFS key types (id_legacy, id_resolver) do not exist on the test host, and the name
 * ".id_resolver" is the kernel's (descriptions starting with '.' are refused to userspace):
 * the test seam is the function's parameters, a keyring of this test's own name and the
 * `user` key type, which the kernel describes in /proc/keys exactly as it describes
 * id_legacy keys (user_describe()).
 *
 * The attacks: /proc/keys prints descriptions raw, and a user key's description may hold a
 * newline, so any user can print a line that looks like a key of any type and description
 * with any serial. Those forged lines must never choose what gets invalidated:
 *  - a user key whose description forges the line of a "matching" key with the serial of a
 *    victim key (another description, outside the keyring);
 *  - a forged "keyring" line that gives a decoy keyring the cache's name (the decoy holds a
 *    key of the very type and description wanted);
 *  - a real keyring of the same name owned by another uid, holding such a key too;
 *  - near misses inside the keyring (a longer description, another type).
 * Only the matching key linked in the right keyring goes.
 *
 * /proc/keys lists keys by serial, and serials are random: a reader that took the first
 * "keyring" line naming the cache unchecked would still pick the real one whenever its serial
 * came first (one run in three). So the forged keyring line and the foreign keyring are made
 * again until their serials are below the real keyring's: both come before it in /proc/keys,
 * at every run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/keyctl.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/kernel.h>
#include <nsid/log.h>
#include <syslog.h>

#define TYPE "user"
/* <keyutils.h>'s permission bits */
#define KEY_POS_SEARCH 0x08000000
#define KEY_USR_SEARCH 0x00080000
#define DESC "uid:alice@example.test"

static int32_t add_key(const char *type, const char *desc, const char *payload, int32_t ring) {
        long r = syscall(SYS_add_key, type, desc, payload, payload ? strlen(payload) : 0,
                         (long) ring);
        return (int32_t) r;
}

static long kctl(int cmd, long a2, long a3, long a4, long a5) {
        return syscall(SYS_keyctl, cmd, a2, a3, a4, a5);
}

/* 1 while the key is alive (DESCRIBE works), 0 once invalidated. */
static int alive(int32_t k) {
        char buf[512];
        return kctl(KEYCTL_DESCRIBE, k, (long) buf, sizeof(buf), 0) >= 0;
}

/* A description that ends the user key's own line and prints a forged one after it; the
 * kernel appends ": <payload length>" to it (user_describe()), which completes the forged
 * line as it completes a real one. */
static void forge(char *buf, size_t size, int32_t serial, const char *type, const char *desc) {
        snprintf(buf, size, "x\n%08x I------     1 perm 3f010000     0     0 %-9.9s %s",
                 (unsigned) serial, type, desc);
}

/* A forged "keyring" line naming the cache `name` with the serial of `decoy`, printed below
 * the cache in /proc/keys (the line is where the forging key's serial puts it): made again,
 * a new description each time (a user key of the same one would only be updated), until its
 * key's serial is below the cache's. That key, or -1 after `tries`; the others made on the way
 * stay (after the cache, they change nothing). */
static int32_t forge_before(int32_t cache, int32_t decoy, const char *name, int tries) {
        char forged[512], d[600];
        forge(forged, sizeof(forged), decoy, "keyring", name);
        for (int i = 0; i < tries; i++) {
                snprintf(d, sizeof(d), "%d%s", i, forged); /* "<i>" ends the key's own line */
                int32_t k = add_key(TYPE, d, "f", KEY_SPEC_SESSION_KEYRING);
                assert_true(k > 0);
                if (k < cache)
                        return k;
        }
        return -1;
}

/* A real keyring called `name` like the cache, before it in /proc/keys: made again (in a
 * holder of its own each time: in the session it would replace the link to the cache; a
 * holder dropped takes its keyring with it) until its serial is below the cache's. That
 * keyring and its holder, or -1 after `tries`. */
static int32_t namesake_before(int32_t cache, const char *name, int tries, int32_t *ret_holder) {
        for (int i = 0; i < tries; i++) {
                int32_t holder = add_key("keyring", "nsid-itest-holder", NULL,
                                         KEY_SPEC_SESSION_KEYRING);
                assert_true(holder > 0);
                int32_t k = add_key("keyring", name, NULL, holder);
                assert_true(k > 0 && k != cache);
                if (k < cache) {
                        *ret_holder = holder;
                        return k;
                }
                assert_int_equal(kctl(KEYCTL_UNLINK, holder, KEY_SPEC_SESSION_KEYRING, 0, 0), 0);
        }
        return -1;
}

static void test_forged_lines(void **state) {
        char ring_name[64], forged[512];
        unsigned failed = 99;

        /* a session keyring of our own: everything below dies with it */
        assert_true(kctl(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) > 0);

        /* 2. a decoy keyring, given the cache's name by a forged keyring line (below); it
         * holds a key of the type and description wanted */
        int32_t decoy = add_key("keyring", "nsid-itest-decoy", NULL, KEY_SPEC_SESSION_KEYRING);
        assert_true(decoy > 0);
        int32_t in_decoy = add_key(TYPE, DESC, "6", decoy);
        assert_true(in_decoy > 0);

        /* The cache, and before it in /proc/keys: the forged line (2.) and (3.) a real keyring
         * of the same name owned by another uid. A cache whose serial is so low that 32 tries
         * give neither is dropped, and another made, under a name of its own: serials being
         * uniform, an attempt fails about once in 4, and 64 of them once in 2^128 runs. */
        int32_t ring = -1, forger = -1, holder = -1, foreign = -1;
        for (int attempt = 0; attempt < 64 && foreign < 0; attempt++) {
                if (ring > 0)
                        assert_int_equal(kctl(KEYCTL_UNLINK, ring, KEY_SPEC_SESSION_KEYRING, 0, 0), 0);
                snprintf(ring_name, sizeof(ring_name), "nsid-itest-cache-%d-%d", (int) getpid(),
                         attempt);
                ring = add_key("keyring", ring_name, NULL, KEY_SPEC_SESSION_KEYRING);
                assert_true(ring > 0);
                forger = forge_before(ring, decoy, ring_name, 32);
                if (forger > 0)
                        foreign = namesake_before(ring, ring_name, 32, &holder);
        }
        assert_true(forger > 0 && forger < ring);
        assert_true(foreign > 0 && foreign < ring);
        printf("/proc/keys: the forged keyring line (key %d) and the foreign keyring %d come "
               "before the cache %d\n", forger, foreign, ring);
        int32_t in_foreign = add_key(TYPE, DESC, "7", foreign);
        assert_true(in_foreign > 0);
        assert_int_equal(kctl(KEYCTL_CHOWN, foreign, 65534, -1, 0), 0);

        int32_t target = add_key(TYPE, DESC, "4001", ring);
        assert_true(target > 0);
        /* near misses in the keyring */
        int32_t longer = add_key(TYPE, DESC "x", "1", ring);
        int32_t other_type = add_key("keyring", DESC, NULL, ring);
        assert_true(longer > 0 && other_type > 0);

        /* 1. a victim outside the keyring, named by a forged line that matches */
        int32_t victim = add_key(TYPE, "victim", "secret", KEY_SPEC_SESSION_KEYRING);
        assert_true(victim > 0);
        forge(forged, sizeof(forged), victim, TYPE, DESC);
        assert_true(add_key(TYPE, forged, "f", KEY_SPEC_SESSION_KEYRING) > 0);

        /* the keyring found is the real one, whatever the forged lines say */
        assert_int_equal(nsid_keyring_find(ring_name, (uint32_t) getuid()), ring);
        assert_int_equal(nsid_keyring_find("nsid-itest-decoy", 65534), -ENOENT);
        int n = nsid_keyring_invalidate_keys(ring_name, (uint32_t) getuid(), TYPE, DESC, &failed);
        printf("%d invalidated (target %s); forged /proc/keys lines: victim %s, decoy's key %s, "
               "foreign keyring's key %s\n", n, alive(target) ? "kept" : "invalidated",
               alive(victim) ? "kept" : "INVALIDATED",
               alive(in_decoy) ? "kept" : "INVALIDATED",
               alive(in_foreign) ? "kept" : "INVALIDATED");
        assert_true(alive(victim));
        assert_true(alive(in_decoy));
        assert_true(alive(in_foreign));
        assert_true(alive(longer));
        assert_true(alive(other_type));
        assert_false(alive(target));
        assert_int_equal(n, 1);
        assert_int_equal(failed, 0);

        /* once gone, nothing more matches; an unknown keyring is -ENOENT */
        assert_int_equal(nsid_keyring_invalidate_keys(ring_name, (uint32_t) getuid(), TYPE, DESC,
                                                      NULL),
                         0);
        assert_int_equal(nsid_keyring_invalidate_keys("nsid-itest-no-such-ring", 0, TYPE, DESC,
                                                      NULL),
                         -ENOENT);
}

/* The library's debug line about an invalidated key: a description a container chose (a name
 * with a newline that forges a second log line, an ESC sequence) is shown escaped, never raw. */
static char logged[8192];

static void capture(int priority, const char *message, void *userdata) {
        (void) priority;
        (void) userdata;
        strncat(logged, message, sizeof(logged) - strlen(logged) - 2);
        strcat(logged, "\n");
}

static void test_log_escapes_description(void **state) {
        static const char hostile[] = "uid:eve\nnsid-idmapd[1]: forged line\x1b[31m@example.test";
        char ring_name[64];

        (void) state;
        assert_true(kctl(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) > 0);
        snprintf(ring_name, sizeof(ring_name), "nsid-itest-esc-%d", (int) getpid());
        int32_t ring = add_key("keyring", ring_name, NULL, KEY_SPEC_SESSION_KEYRING);
        assert_true(ring > 0);
        assert_true(add_key(TYPE, hostile, "4001", ring) > 0);
        logged[0] = '\0';
        nsid_log_set_handler(capture, NULL);
        nsid_log_set_max_priority(LOG_DEBUG);
        assert_int_equal(nsid_keyring_invalidate_keys_in(ring, TYPE, hostile, NULL), 1);
        nsid_log_set_handler(NULL, NULL);
        nsid_log_set_max_priority(LOG_WARNING);
        printf("logged: %s", logged);
        assert_non_null(strstr(logged, "uid:eve\\x0ansid-idmapd[1]: forged line\\x1b[31m@example.test"));
        assert_null(strchr(logged, '\x1b'));
        /* one message, one line: the newline inside the name did not start another */
        assert_int_equal(strchr(logged, '\n') - logged, (long) strlen(logged) - 1);
}

/* The index nsid-idmapd keeps: each refresh describes only keys it has not seen, so a
 * key's description is learnt once (shown here by a key that may no longer be described
 * after the first refresh, and is still found); keys linked later are found, keys gone are
 * dropped, near misses kept. Prints what one invalidation costs among 2,000 keys with and
 * without it (a figure, not a bound). */
static void test_index(void **state) {
        char ring_name[64], d[64];
        nsid_keyring_index *idx = NULL;
        unsigned failed = 9;

        (void) state;
        assert_true(kctl(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) > 0);
        snprintf(ring_name, sizeof(ring_name), "nsid-itest-index-%d", (int) getpid());
        int32_t ring = add_key("keyring", ring_name, NULL, KEY_SPEC_SESSION_KEYRING);
        assert_true(ring > 0);
        for (int i = 0; i < 2000; i++) {
                snprintf(d, sizeof(d), "uid:filler%d@example.test", i);
                assert_true(add_key(TYPE, d, "1", ring) > 0);
        }
        int32_t early = add_key(TYPE, DESC, "4001", ring);
        int32_t near = add_key(TYPE, DESC "x", "4002", ring);
        assert_true(early > 0 && near > 0);
        assert_int_equal(nsid_keyring_index_new(ring, &idx), 0);
        assert_int_equal(nsid_keyring_index_ring(idx), ring);
        assert_int_equal(nsid_keyring_index_refresh(idx), 2002);
        /* no longer viewable, only searchable: a describe now fails; the index knows it */
        assert_int_equal(kctl(KEYCTL_SETPERM, early, KEY_POS_SEARCH | KEY_USR_SEARCH, 0, 0), 0);
        char buf[256];
        assert_true(kctl(KEYCTL_DESCRIBE, early, (long) buf, sizeof(buf), 0) < 0);
        assert_int_equal(nsid_keyring_index_invalidate(idx, TYPE, DESC, &failed), 1);
        assert_int_equal(failed, 0);
        /* invalidated: not even found for invalidating again */
        assert_true(kctl(KEYCTL_INVALIDATE, early, 0, 0, 0) < 0 && errno == ENOKEY);
        assert_true(alive(near));
        /* a key linked later is found; one unlinked is dropped from the index */
        int32_t late = add_key(TYPE, DESC, "4003", ring);
        assert_true(late > 0);
        assert_int_equal(kctl(KEYCTL_UNLINK, near, ring, 0, 0), 0);
        assert_int_equal(nsid_keyring_index_invalidate(idx, TYPE, DESC, NULL), 1);
        assert_false(alive(late));
        /* the fillers, and the two invalidated ones until the kernel collects them */
        int left = nsid_keyring_index_refresh(idx);
        assert_in_range(left, 2000, 2001);

        /* what a pipe answer's invalidation costs among 2,000 keys, with and without */
        struct timespec t0, t1, t2;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < 20; i++)
                assert_int_equal(nsid_keyring_index_invalidate(idx, TYPE, DESC, NULL), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        for (int i = 0; i < 20; i++)
                assert_int_equal(nsid_keyring_invalidate_keys_in(ring, TYPE, DESC, NULL), 0);
        clock_gettime(CLOCK_MONOTONIC, &t2);
        double a = ((double) (t1.tv_sec - t0.tv_sec) * 1e9 + (double) (t1.tv_nsec - t0.tv_nsec)) / 20e3;
        double b = ((double) (t2.tv_sec - t1.tv_sec) * 1e9 + (double) (t2.tv_nsec - t1.tv_nsec)) / 20e3;
        printf("one invalidation among 2,000 keys: %.0f us with the index, %.0f us describing "
               "every key\n", a, b);
        nsid_keyring_index_free(idx);
        assert_int_equal(kctl(KEYCTL_CLEAR, ring, 0, 0, 0), 0);
}

int main(void) {
        if (getuid() != 0)
                skip_all("not root: the test chowns keys to another user (KEYCTL_CHOWN; run "
                         "as root)");
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_forged_lines),
                cmocka_unit_test(test_log_escapes_description),
                cmocka_unit_test(test_index),
        };
        return run_test_group(tests, NULL, NULL);
}
