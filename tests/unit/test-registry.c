/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The identity registry on a real SQLite file in a temp dir. Liveness of recorded namespaces is
 * decided by a test callback here (the real one is exercised by the integration tests). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/registry.h"

static char dir[] = "/tmp/nsid-test-registry-XXXXXX";
static char dbpath[300];

static int setup(void **state) {
        static int n;
        if (n++ == 0 && !mkdtemp(dir))
                return -1;
        snprintf(dbpath, sizeof(dbpath), "%s/db%d/registry.db", dir, n);
        return 0;
}

static int live_value;
static int live_calls;
static int fake_live(const nsid_registry_entry *e, void *userdata) {
        live_calls++;
        return live_value;
}

static nsid_registry_entry mk(const char *identity, const char *key, uint64_t ino,
                              uint64_t cookie) {
        return (nsid_registry_entry) {
                .app = (char *) "nfs4",
                .identity = (char *) identity,
                .key = (char *) key,
                .source = NSID_KEY_CONTAINER_ID,
                .netns = { .dev = 4, .ino = ino },
                .boot_id = (char *) "11111111-2222-3333-4444-555555555555",
                .netns_cookie = cookie,
                .pid = 42,
                .name = (char *) "c1",
        };
}

static const char *const ID_A = "aaaaaaaaaaaa4aaa8aaaaaaaaaaaaaaa";
static const char *const ID_B = "bbbbbbbbbbbb4bbb8bbbbbbbbbbbbbbb";

static void test_open_creates(void **state) {
        nsid_registry *r = NULL;
        sqlite3 *db;
        sqlite3_stmt *st;
        struct stat s;

        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        assert_string_equal(nsid_registry_get_path(r), dbpath);
        assert_int_equal(stat(dbpath, &s), 0);
        assert_int_equal(s.st_mode & 0777, 0600);
        assert_int_equal(nsid_registry_check_integrity(r), 0);
        r = nsid_registry_unref(r);
        assert_null(r);

        /* WAL, schema version 1: checked with sqlite itself */
        assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *) sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), NSID_REGISTRY_SCHEMA_VERSION);
        sqlite3_finalize(st);
        sqlite3_close(db);

        /* reopen works, read-only too */
        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        r = nsid_registry_unref(r);
        assert_int_equal(nsid_registry_open(dbpath, NSID_REGISTRY_READONLY, &r), 0);
        r = nsid_registry_unref(r);
}

/* Rows of a table, counted with SQLite itself. */
static int table_rows(const char *table) {
        char q[64];
        sqlite3 *db;
        sqlite3_stmt *st;
        int n;

        snprintf(q, sizeof(q), "SELECT count(*) FROM %s", table);
        assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return n;
}

static void test_bind_lookup(void **state) {
        nsid_registry *r = NULL;
        nsid_registry_entry e = mk(ID_A, "web", 100, 7), got = {}, conflict = {};
        nsid_registry_entry *v = NULL;
        size_t n = 0;

        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        assert_int_equal(nsid_registry_bind(r, &e, 0, fake_live, NULL, NULL), 1);
        /* the same again: refreshed, not inserted */
        assert_int_equal(nsid_registry_bind(r, &e, 0, fake_live, NULL, NULL), 0);

        assert_int_equal(nsid_registry_lookup_netns(r, "nfs4", &e.netns, e.boot_id, 7, &got), 0);
        assert_string_equal(got.identity, ID_A);
        assert_string_equal(got.key, "web");
        assert_int_equal(got.source, NSID_KEY_CONTAINER_ID);
        assert_int_equal(got.pid, 42);
        assert_string_equal(got.name, "c1");
        assert_true(got.first_seen > 0 && got.last_seen >= got.first_seen);
        nsid_registry_entry_done(&got);
        /* another app, another cookie (reused inode), another boot: not found */
        assert_int_equal(nsid_registry_lookup_netns(r, "smb", &e.netns, e.boot_id, 7, &got),
                         -ENOENT);
        assert_int_equal(nsid_registry_lookup_netns(r, "nfs4", &e.netns, e.boot_id, 8, &got),
                         -ENOENT);
        assert_int_equal(nsid_registry_lookup_netns(r, "nfs4", &e.netns,
                                                    "99999999-2222-3333-4444-555555555555", 7,
                                                    &got),
                         -ENOENT);

        /* the same netns with a different identity: refused unless REPLACE */
        e = mk(ID_B, "web2", 100, 7);
        assert_int_equal(nsid_registry_bind(r, &e, 0, fake_live, NULL, &conflict), -EEXIST);
        assert_string_equal(conflict.identity, ID_A);
        nsid_registry_entry_done(&conflict);
        assert_int_equal(nsid_registry_bind(r, &e, NSID_REGISTRY_BIND_REPLACE, fake_live, NULL,
                                             NULL),
                         1);
        assert_int_equal(nsid_registry_list(r, &v, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(v[0].identity, ID_B);
        nsid_registry_entries_free(v, n);

        /* unbind only with the right identity */
        assert_int_equal(nsid_registry_unbind(r, "nfs4", &e.netns, ID_A), -ENOENT);
        assert_int_equal(nsid_registry_unbind(r, "nfs4", &e.netns, ID_B), 0);
        assert_int_equal(nsid_registry_list(r, &v, &n), 0);
        assert_int_equal(n, 0);
        nsid_registry_entries_free(v, n);
        nsid_registry_unref(r);
}

static void test_identity_conflict(void **state) {
        nsid_registry *r = NULL;
        nsid_registry_entry a = mk(ID_A, "web", 100, 7), b = mk(ID_A, "web", 200, 9),
                            conflict = {};
        nsid_registry_entry *v = NULL;
        size_t n = 0;

        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        assert_int_equal(nsid_registry_bind(r, &a, 0, fake_live, NULL, NULL), 1);

        /* another live netns wants the same identity: refused, nothing changes */
        live_value = 1;
        live_calls = 0;
        assert_int_equal(nsid_registry_bind(r, &b, NSID_REGISTRY_BIND_REPLACE, fake_live, NULL,
                                             &conflict),
                         -EADDRINUSE);
        assert_int_equal(live_calls, 1);
        assert_int_equal(conflict.netns.ino, 100);
        nsid_registry_entry_done(&conflict);
        assert_non_null(strstr(nsid_registry_last_error(r), "another live"));
        /* liveness unknown (error) counts as alive */
        live_value = -EIO;
        assert_int_equal(nsid_registry_bind(r, &b, 0, fake_live, NULL, NULL), -EADDRINUSE);

        /* the holder is gone: the identity moves */
        live_value = 0;
        assert_int_equal(nsid_registry_bind(r, &b, 0, fake_live, NULL, NULL), 1);
        assert_int_equal(nsid_registry_list(r, &v, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].netns.ino, 200);
        nsid_registry_entries_free(v, n);

        /* a reused inode (same dev/ino, new cookie) replaces the dead binding */
        a = mk(ID_B, "other", 200, 10);
        assert_int_equal(nsid_registry_bind(r, &a, 0, fake_live, NULL, NULL), 1);
        assert_int_equal(nsid_registry_list(r, &v, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(v[0].identity, ID_B);
        assert_int_equal(v[0].netns_cookie, 10);
        nsid_registry_entries_free(v, n);

        /* prune drops what the callback says is gone */
        live_value = 1;
        assert_int_equal(nsid_registry_prune(r, fake_live, NULL), 0);
        assert_true(table_rows("keys") >= 1); /* the keys of the bindings made above */
        live_value = 0;
        assert_int_equal(nsid_registry_prune(r, fake_live, NULL), 1);
        /* ... and the keys rows no binding uses any more go with it */
        assert_int_equal(table_rows("bindings"), 0);
        assert_int_equal(table_rows("keys"), 0);
        nsid_registry_unref(r);
}

static void test_bad_args(void **state) {
        nsid_registry *r = NULL;
        nsid_registry_entry e = mk(ID_A, "web", 1, 1);

        assert_int_equal(nsid_registry_open(dbpath, 0x80, &r), -EINVAL);
        assert_int_equal(nsid_registry_open(dbpath, 0, NULL), -EINVAL);
        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        e.source = NSID_KEY_AUTO;
        assert_int_equal(nsid_registry_bind(r, &e, 0, fake_live, NULL, NULL), -EINVAL);
        e = mk(ID_A, NULL, 1, 1);
        assert_int_equal(nsid_registry_bind(r, &e, 0, fake_live, NULL, NULL), -EINVAL);
        r = nsid_registry_unref(r);
        /* read-only never creates */
        assert_true(nsid_registry_open("/tmp/nsid-no-such-dir/x.db", NSID_REGISTRY_READONLY, &r) <
                    0);
        assert_null(r);
}

static void test_corrupt(void **state) {
        nsid_registry *r = NULL;
        char buf[4096];
        struct stat s;
        int fd;

        /* not a database at all: reported, never replaced */
        fd = open(dbpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) {
                char d[310];
                snprintf(d, sizeof(d), "%s", dbpath);
                *strrchr(d, '/') = '\0';
                assert_int_equal(mkdir(d, 0700), 0);
                fd = open(dbpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        }
        assert_true(fd >= 0);
        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t) sizeof(buf));
        close(fd);
        assert_int_equal(nsid_registry_open(dbpath, 0, &r), -EBADMSG);
        assert_null(r);
        assert_int_equal(stat(dbpath, &s), 0);
        assert_int_equal(s.st_size, 4096); /* untouched */

        /* a schema newer than ours */
        unlink(dbpath);
        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        nsid_registry_unref(r);
        {
                sqlite3 *db;
                assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
                assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL),
                                 SQLITE_OK);
                sqlite3_close(db);
        }
        assert_int_equal(nsid_registry_open(dbpath, 0, &r), -EPROTO);
}

static void test_corrupt_pages(void **state) {
        nsid_registry *r = NULL;
        nsid_registry_entry *v = NULL;
        size_t n = 0;
        char id[33], key[32];
        int fd, e;

        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        for (int i = 0; i < 300; i++) {
                snprintf(id, sizeof(id), "%032x", i);
                snprintf(key, sizeof(key), "key-%d", i);
                nsid_registry_entry x = mk(id, key, 1000 + i, i);
                assert_int_equal(nsid_registry_bind(r, &x, 0, fake_live, NULL, NULL), 1);
        }
        nsid_registry_unref(r);
        {
                sqlite3 *db;
                assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
                assert_int_equal(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
                                              NULL),
                                 SQLITE_OK);
                sqlite3_close(db);
        }
        /* smash pages 2..6 (keep the header page) */
        fd = open(dbpath, O_WRONLY);
        assert_true(fd >= 0);
        {
                char junk[4096 * 5];
                memset(junk, 0xA5, sizeof(junk));
                assert_int_equal(pwrite(fd, junk, sizeof(junk), 4096), (ssize_t) sizeof(junk));
        }
        close(fd);
        e = nsid_registry_open(dbpath, 0, &r);
        if (e == 0) {
                e = nsid_registry_list(r, &v, &n);
                if (e == 0) {
                        nsid_registry_entries_free(v, n);
                        e = nsid_registry_check_integrity(r);
                }
                assert_int_equal(e, -EBADMSG);
                assert_true(strlen(nsid_registry_last_error(r)) > 0);
                nsid_registry_unref(r);
        } else
                assert_int_equal(e, -EBADMSG);
}

/* Run sql on the database at dbpath with SQLite itself (what a hand edit does). */
static void sql(const char *q) {
        sqlite3 *db;
        char *err = NULL;

        assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
        if (sqlite3_exec(db, q, NULL, NULL, &err) != SQLITE_OK)
                fail_msg("%s: %s", q, err ? err : "?");
        sqlite3_close(db);
}

static size_t count_kind(const nsid_registry_problem *v, size_t n, nsid_registry_problem_kind k) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
                c += v[i].kind == k;
        return c;
}

static const uint8_t SECRET[NSID_ID128_SIZE] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                                 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
static const uint8_t OTHER[NSID_ID128_SIZE] = { 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88,
                                                0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01 };

/* Two bindings (and their keys rows) whose identities SECRET derives from their keys. */
static void bind_two(nsid_registry *r) {
        char id1[NSID_IDENTITY_STRING_SIZE], id2[NSID_IDENTITY_STRING_SIZE];

        assert_int_equal(nsid_identity_derive(SECRET, "nfs4", "web", id1), 0);
        assert_int_equal(nsid_identity_derive(SECRET, "nfs4", "db", id2), 0);
        nsid_registry_entry a = mk(id1, "web", 100, 7), b = mk(id2, "db", 200, 9);
        assert_int_equal(nsid_registry_bind(r, &a, 0, fake_live, NULL, NULL), 1);
        assert_int_equal(nsid_registry_bind(r, &b, 0, fake_live, NULL, NULL), 1);
}

static void test_verify(void **state) {
        nsid_registry *r = NULL;
        nsid_registry_problem *v = NULL;
        size_t n = 99;

        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        /* empty: nothing to say */
        assert_int_equal(nsid_registry_verify(r, SECRET, &v, &n), 0);
        assert_null(v);
        assert_int_equal(n, 0);
        bind_two(r);
        /* 2 bindings + 2 keys rows, every identity derived from its key */
        assert_int_equal(nsid_registry_verify(r, SECRET, &v, &n), 4);
        assert_int_equal(n, 0);
        /* another host secret (a new machine-id, a registry from another machine): all */
        assert_int_equal(nsid_registry_verify(r, OTHER, &v, &n), 4);
        assert_int_equal(n, 4);
        assert_int_equal(count_kind(v, n, NSID_REGISTRY_PROBLEM_NOT_DERIVED), 4);
        nsid_registry_problems_free(v, n);
        /* without a secret the derivation is not checked */
        assert_int_equal(nsid_registry_verify(r, NULL, &v, &n), 4);
        assert_int_equal(n, 0);
        nsid_registry_unref(r);

        /* one binding's identity replaced by hand with another well-formed one: only it */
        sql("UPDATE bindings SET identity = 'aaaaaaaaaaaa4aaa8aaaaaaaaaaaaaaa' WHERE key = 'web'");
        assert_int_equal(nsid_registry_open(dbpath, NSID_REGISTRY_READONLY, &r), 0);
        assert_int_equal(nsid_registry_verify(r, SECRET, &v, &n), 4);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].kind, NSID_REGISTRY_PROBLEM_NOT_DERIVED);
        assert_string_equal(v[0].table, "bindings");
        assert_string_equal(v[0].key, "web");
        assert_string_equal(v[0].identity, "aaaaaaaaaaaa4aaa8aaaaaaaaaaaaaaa");
        assert_int_equal(v[0].netns_ino, 100);
        assert_true(v[0].rowid > 0);
        nsid_registry_problems_free(v, n);
        nsid_registry_unref(r);
}

static void test_verify_malformed(void **state) {
        nsid_registry *r = NULL;
        nsid_registry_problem *v = NULL;
        size_t n = 0;

        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        bind_two(r);
        nsid_registry_unref(r);
        /* rows no nsid program writes: each is named, with what is wrong */
        sql("INSERT INTO bindings VALUES"
            " ('nfs4', 'XYZ', 'k1', 'explicit', 4, 300, 'b', 1, 0, NULL, 1, 1),"
            " ('nfs4', 'cccccccccccc4ccc8ccccccccccccccc', 'has space', 'explicit', 4, 301, 'b',"
            "  1, 0, NULL, 1, 1);"
            "INSERT INTO keys VALUES"
            " ('nfs4', 'k3', 'bogus', 'dddddddddddd4ddd8ddddddddddddddd', NULL, 1, 1),"
            " ('NFS 4', 'k4', 'explicit', 'eeeeeeeeeeee4eee8eeeeeeeeeeeeeee', NULL, 1, 1),"
            " ('nfs4', 'k5', 'explicit', 42, NULL, 1, 1);");
        assert_int_equal(nsid_registry_open(dbpath, NSID_REGISTRY_READONLY, &r), 0);
        assert_int_equal(nsid_registry_verify(r, NULL, &v, &n), 9);
        assert_int_equal(n, 5);
        assert_int_equal(count_kind(v, n, NSID_REGISTRY_PROBLEM_MALFORMED), 5);
        assert_non_null(strstr(v[0].what, "identity"));
        assert_int_equal(v[0].netns_ino, 300);
        assert_non_null(strstr(v[1].what, "key is not"));
        assert_string_equal(v[1].key, "has space");
        assert_non_null(strstr(v[2].what, "source"));
        assert_string_equal(v[2].table, "keys");
        assert_int_equal(v[2].netns_ino, 0);
        assert_non_null(strstr(v[3].what, "app"));
        assert_non_null(strstr(v[4].what, "identity")); /* an integer, not text */
        assert_string_equal(v[4].identity, "42");
        nsid_registry_problems_free(v, n);
        /* with the secret, the malformed rows are not also "not derived" */
        assert_int_equal(nsid_registry_verify(r, SECRET, &v, &n), 9);
        assert_int_equal(n, 5);
        assert_int_equal(count_kind(v, n, NSID_REGISTRY_PROBLEM_NOT_DERIVED), 0);
        nsid_registry_problems_free(v, n);
        nsid_registry_unref(r);
}

static void test_verify_schema(void **state) {
        char id[NSID_IDENTITY_STRING_SIZE], q[2048], d[310];
        nsid_registry *r = NULL;
        nsid_registry_problem *v = NULL;
        size_t n = 0;

        /* version 1 by its user_version, but bindings without UNIQUE (app, identity) and keys
         * without its primary key: the same identity can then be bound twice */
        snprintf(d, sizeof(d), "%s", dbpath);
        *strrchr(d, '/') = '\0';
        assert_int_equal(mkdir(d, 0700), 0);
        assert_int_equal(nsid_identity_derive(SECRET, "nfs4", "web", id), 0);
        snprintf(q, sizeof(q),
                 "CREATE TABLE bindings (app TEXT NOT NULL, identity TEXT NOT NULL, key TEXT NOT "
                 "NULL, source TEXT NOT NULL, netns_dev INTEGER NOT NULL, netns_ino INTEGER NOT "
                 "NULL, boot_id TEXT NOT NULL, netns_cookie INTEGER NOT NULL, pid INTEGER NOT "
                 "NULL DEFAULT 0, name TEXT, first_seen INTEGER NOT NULL, last_seen INTEGER NOT "
                 "NULL, PRIMARY KEY (app, netns_dev, netns_ino));"
                 "CREATE TABLE keys (app TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL, "
                 "identity TEXT NOT NULL, name TEXT, first_seen INTEGER NOT NULL, last_seen "
                 "INTEGER NOT NULL);"
                 "PRAGMA user_version = 1;"
                 "INSERT INTO bindings VALUES ('nfs4', '%s', 'web', 'explicit', 4, 100, 'b', 1, "
                 "0, NULL, 1, 1);"
                 "INSERT INTO bindings VALUES ('nfs4', '%s', 'web', 'explicit', 4, 200, 'b', 2, "
                 "0, NULL, 1, 1);",
                 id, id);
        sql(q);
        assert_int_equal(nsid_registry_open(dbpath, NSID_REGISTRY_READONLY, &r), 0);
        assert_int_equal(nsid_registry_verify(r, SECRET, &v, &n), 2);
        assert_int_equal(n, 3);
        assert_int_equal(count_kind(v, n, NSID_REGISTRY_PROBLEM_SCHEMA), 2);
        assert_non_null(strstr(v[0].what, "UNIQUE (app, identity)"));
        assert_string_equal(v[1].table, "keys");
        assert_int_equal(v[2].kind, NSID_REGISTRY_PROBLEM_DUPLICATE);
        assert_string_equal(v[2].identity, id);
        assert_non_null(strstr(v[2].what, "2 network namespaces"));
        nsid_registry_problems_free(v, n);
        nsid_registry_unref(r);
}

/* Outcome counts: no table reads as none; counts add up per word across apps; a bad word
 * adds nothing; the schema version stays 1 (older programs open the registry). */
static void test_outcomes(void **state) {
        nsid_registry_outcome in[2] = { { "set", 2 }, { "too-late", 1 } }, bad = { "Set", 1 };
        nsid_registry_outcome *v = NULL;
        nsid_registry *r = NULL;
        size_t n = 99;

        (void) state;
        assert_int_equal(nsid_registry_open(dbpath, 0, &r), 0);
        assert_int_equal(nsid_registry_get_outcomes(r, &v, &n), 0);
        assert_int_equal(n, 0);
        assert_null(v);
        assert_int_equal(nsid_registry_count_outcomes(r, "nfs4", in, 2), 0);
        assert_int_equal(nsid_registry_count_outcomes(r, "smb", in, 1), 0);
        assert_int_equal(nsid_registry_count_outcomes(r, "nfs4", &bad, 1), -EINVAL);
        assert_int_equal(nsid_registry_count_outcomes(r, "no/app", in, 1), -EINVAL);
        r = nsid_registry_unref(r);
        assert_int_equal(nsid_registry_open(dbpath, NSID_REGISTRY_READONLY, &r), 0);
        assert_int_equal(nsid_registry_get_outcomes(r, &v, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(v[0].outcome, "set");
        assert_int_equal(v[0].n, 4);
        assert_string_equal(v[1].outcome, "too-late");
        assert_int_equal(v[1].n, 1);
        free(v);
        assert_int_equal(table_rows("outcomes"), 3);
        r = nsid_registry_unref(r);
        {
                sqlite3 *db;
                sqlite3_stmt *st;
                assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
                assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
                assert_int_equal(sqlite3_step(st), SQLITE_ROW);
                assert_int_equal(sqlite3_column_int(st, 0), 1);
                sqlite3_finalize(st);
                sqlite3_close(db);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_open_creates, setup),
                cmocka_unit_test_setup(test_bind_lookup, setup),
                cmocka_unit_test_setup(test_identity_conflict, setup),
                cmocka_unit_test_setup(test_bad_args, setup),
                cmocka_unit_test_setup(test_corrupt, setup),
                cmocka_unit_test_setup(test_corrupt_pages, setup),
                cmocka_unit_test_setup(test_verify, setup),
                cmocka_unit_test_setup(test_verify_malformed, setup),
                cmocka_unit_test_setup(test_verify_schema, setup),
                cmocka_unit_test_setup(test_outcomes, setup),
        };
        int r = run_test_group(tests, NULL, NULL);
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
        if (system(cmd) != 0)
                r = r == 0 || r == EXIT_SKIP ? 1 : r;
        return r;
}
