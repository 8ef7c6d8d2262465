/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* passwd/group parsing, lookups and stat-based refresh (libnsid/src/userdb.c). Refresh is
 * tested on real files in a temporary directory read through nsid/file.h. */
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
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/log.h"
#include "nsid/userdb.h"
#include "userdb-internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
/* Whether the times printed mean anything: optimised, unsanitised builds. */
#if defined(__OPTIMIZE__) && !SANITIZED
#define CHECK_SPEED 1
#else
#define CHECK_SPEED 0
#endif

/* Log capture: every message of priority <= LOG_WARNING. */
static char log_buf[8192];
static unsigned n_warnings;

static void capture(int priority, const char *message, void *userdata) {
        if (priority > LOG_WARNING)
                return;
        n_warnings++;
        size_t l = strlen(log_buf);
        snprintf(log_buf + l, sizeof(log_buf) - l, "%s\n", message);
}

static void log_reset(void) {
        log_buf[0] = '\0';
        n_warnings = 0;
}

static nsid_userdb *parse2(const char *pw, const char *gr) {
        nsid_userdb *db = NULL;
        assert_int_equal(nsid_userdb_parse(pw, strlen(pw), gr, gr ? strlen(gr) : 0, &db), 0);
        assert_non_null(db);
        return db;
}

static void counts(const nsid_userdb *db, nsid_userdb_file f, uint64_t entries,
                   uint64_t invalid, uint64_t dups) {
        nsid_userdb_counts c;
        assert_int_equal(nsid_userdb_get_counts(db, f, &c), 0);
        if (c.entries != entries || c.invalid != invalid || c.duplicates != dups)
                fail_msg("%s: entries %llu invalid %llu duplicates %llu, expected %llu %llu %llu",
                         f == NSID_USERDB_PASSWD ? "passwd" : "group",
                         (unsigned long long) c.entries, (unsigned long long) c.invalid,
                         (unsigned long long) c.duplicates, (unsigned long long) entries,
                         (unsigned long long) invalid, (unsigned long long) dups);
}

static void expect_user(const nsid_userdb *db, const char *name, uint32_t uid, uint32_t gid) {
        uint32_t u = 1, g = 1;
        const char *n = NULL;
        if (nsid_userdb_user_by_name(db, name, &u, &g) != 0)
                fail_msg("user \"%s\" not found", name);
        assert_int_equal(u, uid);
        assert_int_equal(g, gid);
        assert_int_equal(nsid_userdb_user_by_name(db, name, &u, NULL), 0);
        assert_int_equal(nsid_userdb_user_by_uid(db, uid, &n, &g), 0);
        assert_string_equal(n, name);
        assert_int_equal(g, gid);
}

static void expect_no_user(const nsid_userdb *db, const char *name) {
        uint32_t u = 7;
        if (nsid_userdb_user_by_name(db, name, &u, NULL) != -ENOENT)
                fail_msg("user \"%s\" should not exist", name);
        assert_int_equal(u, 7);
}

static void expect_group(const nsid_userdb *db, const char *name, uint32_t gid) {
        uint32_t g = 1;
        const char *n = NULL;
        if (nsid_userdb_group_by_name(db, name, &g) != 0)
                fail_msg("group \"%s\" not found", name);
        assert_int_equal(g, gid);
        assert_int_equal(nsid_userdb_group_by_gid(db, gid, &n), 0);
        assert_string_equal(n, name);
}

static void test_basic(void **state) {
        nsid_userdb *db = parse2("root:x:0:0:root:/root:/bin/bash\n"
                                 "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                                 "alice:x:1000:100:Alice,,,:/home/alice:/bin/bash\n"
                                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
                                 "root:x:0:\n"
                                 "users:x:100:alice,bob\n"
                                 "nogroup:x:65534:\n");
        expect_user(db, "root", 0, 0);
        expect_user(db, "daemon", 1, 1);
        expect_user(db, "alice", 1000, 100);
        expect_user(db, "nobody", 65534, 65534); /* last line without '\n' */
        expect_group(db, "root", 0);
        expect_group(db, "users", 100);
        expect_group(db, "nogroup", 65534);
        expect_no_user(db, "bob");
        expect_no_user(db, "");
        expect_no_user(db, "alic");
        expect_no_user(db, "alicee");
        const char *n;
        uint32_t g;
        assert_int_equal(nsid_userdb_user_by_uid(db, 2, &n, NULL), -ENOENT);
        assert_int_equal(nsid_userdb_group_by_gid(db, 1000, &n), -ENOENT);
        assert_int_equal(nsid_userdb_group_by_name(db, "alice", &g), -ENOENT);
        assert_int_equal(nsid_userdb_has_groups(db), 1);
        counts(db, NSID_USERDB_PASSWD, 4, 0, 0);
        counts(db, NSID_USERDB_GROUP, 3, 0, 0);
        nsid_file_stat st;
        assert_int_equal(nsid_userdb_get_file_stat(db, NSID_USERDB_PASSWD, &st), -ENODATA);
        assert_int_equal(nsid_userdb_refresh(db, &(nsid_userdb *) { NULL }), -EINVAL);
        assert_ptr_equal(nsid_userdb_ref(db), db);
        assert_null(nsid_userdb_unref(db));
        assert_null(nsid_userdb_unref(db));
        assert_null(nsid_userdb_unref(NULL));
}

static void test_comments_blank(void **state) {
        log_reset();
        nsid_userdb *db = parse2("# comment\n"
                                 "\n"
                                 "   \t\n"
                                 "  # indented comment\n"
                                 "\r\n"
                                 "  alice:x:1000:1000::/home/alice:/bin/sh\n"   /* glibc skips */
                                 "\tbob:x:1001:1001::/:/bin/sh\r\n"             /* CRLF */
                                 "#carol:x:1002:1002::/:/bin/sh\n",
                                 "\n#x\n\n");
        expect_user(db, "alice", 1000, 1000);
        expect_user(db, "bob", 1001, 1001);
        expect_no_user(db, "#carol");
        expect_no_user(db, "carol");
        counts(db, NSID_USERDB_PASSWD, 2, 0, 0);
        counts(db, NSID_USERDB_GROUP, 0, 0, 0);
        assert_int_equal(n_warnings, 0); /* comments and blank lines are not warnings */
        nsid_userdb_unref(db);
}

static void test_invalid_lines(void **state) {
        static const char *const bad[] = {
                "a:x:1:1::/",           /* 6 fields */
                "a:x:1:1::/:/bin/sh:x", /* 8 fields */
                "a",
                "a:x",
                ":x:1:1::/:/bin/sh",    /* empty name */
                "a:x::1::/:/bin/sh",    /* empty uid */
                "a:x:1:::/:/bin/sh",    /* empty gid */
                "a:x:-1:1::/:/bin/sh",
                "a:x:+1:1::/:/bin/sh",
                "a:x: 1:1::/:/bin/sh",
                "a:x:1 :1::/:/bin/sh",
                "a:x:0x10:1::/:/bin/sh",
                "a:x:1e3:1::/:/bin/sh",
                "a:x:4294967295:1::/:/bin/sh",   /* (u32)-1 */
                "a:x:4294967296:1::/:/bin/sh",   /* above 2^32-1 */
                "a:x:1:4294967295::/:/bin/sh",
                "a:x:99999999999999999999999:1::/:/bin/sh",
                "a@example.org:x:1:1::/:/bin/sh", /* '@' */
                "a,b:x:1:1::/:/bin/sh",
                "a/b:x:1:1::/:/bin/sh",
                "a b:x:1:1::/:/bin/sh",
                "a\tb:x:1:1::/:/bin/sh",
                "a\x01:x:1:1::/:/bin/sh",
                "a\x7f:x:1:1::/:/bin/sh",
                "+:x:1:1::/:/bin/sh",             /* NIS compat */
                "+alice:x:1:1::/:/bin/sh",
                "-alice:x:1:1::/:/bin/sh",
                "+@netgroup:::::::",
                ".:x:1:1::/:/bin/sh",
                "..:x:1:1::/:/bin/sh",
                "1000:x:1:1::/:/bin/sh",          /* all digits */
                "\x80:x:1:1::/:/bin/sh",           /* lone continuation byte */
                "a\xc3:x:1:1::/:/bin/sh",          /* truncated sequence */
                "\xc0\xae:x:1:1::/:/bin/sh",       /* overlong '.' */
                "\xe0\x80\xae:x:1:1::/:/bin/sh",   /* overlong 3 bytes */
                "\xed\xa0\x80:x:1:1::/:/bin/sh",   /* UTF-16 surrogate */
                "\xf4\x90\x80\x80:x:1:1::/:/bin/sh", /* above U+10FFFF */
                "\xf5\x80\x80\x80:x:1:1::/:/bin/sh",
                "\xff:x:1:1::/:/bin/sh",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char text[512];
                snprintf(text, sizeof(text), "root:x:0:0::/:/bin/sh\n%s\nz:x:9:9::/:/bin/sh\n",
                         bad[i]);
                nsid_userdb *db = parse2(text, NULL);
                nsid_userdb_counts c;
                assert_int_equal(nsid_userdb_get_counts(db, NSID_USERDB_PASSWD, &c), 0);
                if (c.invalid != 1 || c.entries != 2)
                        fail_msg("line \"%s\": entries %llu invalid %llu", bad[i],
                                 (unsigned long long) c.entries, (unsigned long long) c.invalid);
                expect_user(db, "root", 0, 0);
                expect_user(db, "z", 9, 9);
                const char *n;
                assert_int_equal(nsid_userdb_user_by_uid(db, 1, &n, NULL), -ENOENT);
                nsid_userdb_unref(db);
        }
}

static void test_valid_edge_names(void **state) {
        char name127[128], name128[129], text[1024];
        memset(name127, 'n', 127);
        name127[127] = '\0';
        memset(name128, 'm', 128);
        name128[128] = '\0';
        snprintf(text, sizeof(text),
                 "%s:x:1:1::/:/bin/sh\n"
                 "%s:x:2:2::/:/bin/sh\n"
                 "jos\xc3\xa9:x:3:3::/:/bin/sh\n"              /* josé */
                 "\xe7\x94\xa8\xe6\x88\xb7:x:4:4::/:/bin/sh\n" /* 用户 */
                 "\xf0\x9f\x90\xa7:x:5:5::/:/bin/sh\n"         /* U+1F427 */
                 "a-b_c.d$:x:6:6::/:/bin/sh\n"
                 "1a:x:7:7::/:/bin/sh\n"
                 "max:x:4294967294:4294967294::/:/bin/sh\n"
                 "zero:x:0000:00::/:/bin/sh\n",
                 name127, name128);
        log_reset();
        nsid_userdb *db = parse2(text, NULL);
        expect_user(db, name127, 1, 1);
        expect_no_user(db, name128);
        expect_user(db, "jos\xc3\xa9", 3, 3);
        expect_user(db, "\xe7\x94\xa8\xe6\x88\xb7", 4, 4);
        expect_user(db, "\xf0\x9f\x90\xa7", 5, 5);
        expect_user(db, "a-b_c.d$", 6, 6);
        expect_user(db, "1a", 7, 7);
        expect_user(db, "max", 4294967294u, 4294967294u);
        expect_user(db, "zero", 0, 0);
        counts(db, NSID_USERDB_PASSWD, 8, 1, 0);
        /* One summary warning naming the file and the counts. */
        assert_int_equal(n_warnings, 1);
        assert_non_null(strstr(log_buf, "passwd"));
        assert_non_null(strstr(log_buf, "1 invalid"));
        nsid_userdb_unref(db);

        /* The validator itself, directly, agrees on the same names. */
        assert_true(userdb_name_valid(name127, 127));
        assert_false(userdb_name_valid(name128, 128));
        assert_true(userdb_name_valid("jos\xc3\xa9", 5));
        assert_false(userdb_name_valid("jos\xc3", 4));
        assert_false(userdb_name_valid("", 0));
}

static void test_long_lines(void **state) {
        const size_t mib = 1024 * 1024;
        /* A 1 MiB line, then a line of exactly NSID_USERDB_LINE_MAX bytes (kept), then one
         * byte more (skipped). */
        size_t cap = mib + 3 * NSID_USERDB_LINE_MAX + 256, off = 0;
        char *text = malloc(cap);
        assert_non_null(text);
        off += (size_t) sprintf(text + off, "root:x:0:0::/:/bin/sh\n");
        off += (size_t) sprintf(text + off, "huge:x:1:1:");
        memset(text + off, 'g', mib);
        off += mib;
        off += (size_t) sprintf(text + off, ":/:/bin/sh\n");

        const char *head = "edge:x:2:2:", *tail = ":/:/bin/sh";
        size_t fill = NSID_USERDB_LINE_MAX - strlen(head) - strlen(tail);
        off += (size_t) sprintf(text + off, "%s", head);
        memset(text + off, 'e', fill);
        off += fill;
        off += (size_t) sprintf(text + off, "%s\n", tail);

        head = "over:x:3:3:";
        off += (size_t) sprintf(text + off, "%s", head);
        memset(text + off, 'o', fill + 1);
        off += fill + 1;
        off += (size_t) sprintf(text + off, "%s\n", tail);
        off += (size_t) sprintf(text + off, "after:x:4:4::/:/bin/sh\n");
        assert_true(off < cap);

        log_reset();
        nsid_userdb *db = NULL;
        assert_int_equal(nsid_userdb_parse(text, off, NULL, 0, &db), 0);
        expect_user(db, "root", 0, 0);
        expect_no_user(db, "huge");
        expect_user(db, "edge", 2, 2);
        expect_no_user(db, "over");
        expect_user(db, "after", 4, 4);
        counts(db, NSID_USERDB_PASSWD, 3, 2, 0);
        assert_int_equal(n_warnings, 1);
        assert_int_equal(nsid_userdb_has_groups(db), 0);
        nsid_userdb_unref(db);

        /* The whole file is one unterminated 1 MiB line. */
        memset(text, 'x', mib);
        assert_int_equal(nsid_userdb_parse(text, mib, text, mib, &db), 0);
        counts(db, NSID_USERDB_PASSWD, 0, 1, 0);
        counts(db, NSID_USERDB_GROUP, 0, 1, 0);
        nsid_userdb_unref(db);
        free(text);
}

static void test_nul_bytes(void **state) {
        static const char pw[] = "root:x:0:0::/:/bin/sh\n"
                                 "ev\0il:x:1:1::/:/bin/sh\n"    /* NUL in the name */
                                 "bad:x:2:2:\0::/:/bin/sh\n"    /* NUL in gecos */
                                 "\0\0\0\0\n"
                                 "ok:x:3:3::/:/bin/sh\n";
        static const char gr[] = "g\0:x:5:\nh:x:6:a\0b\ni:x:7:\n";
        nsid_userdb *db = NULL;
        log_reset();
        assert_int_equal(nsid_userdb_parse(pw, sizeof(pw) - 1, gr, sizeof(gr) - 1, &db), 0);
        expect_user(db, "root", 0, 0);
        expect_user(db, "ok", 3, 3);
        expect_no_user(db, "ev");
        expect_no_user(db, "bad");
        const char *n;
        assert_int_equal(nsid_userdb_user_by_uid(db, 1, &n, NULL), -ENOENT);
        counts(db, NSID_USERDB_PASSWD, 2, 3, 0);
        counts(db, NSID_USERDB_GROUP, 1, 2, 0);
        expect_group(db, "i", 7);
        /* one warning per file */
        assert_int_equal(n_warnings, 2);
        assert_non_null(strstr(log_buf, "passwd"));
        assert_non_null(strstr(log_buf, "group"));
        nsid_userdb_unref(db);
}

/* Ids of more than 20 digits at the end of a text that is not NUL-terminated (the same
 * parse_u64_n() overread that fuzz-idmap found); exact-size buffers for AddressSanitizer. */
static void test_long_id_unterminated(void **state) {
        static const char *const texts[] = {
                "a:x:1:1::/:/bin/sh\ng:x:123456789012345678901234567890",
                "a:x:1:1::/:/bin/sh\nb:x:1:123456789012345678901234567890::/:x",
        };
        for (size_t i = 0; i < 2; i++) {
                size_t n = strlen(texts[i]);
                char *buf = malloc(n);
                assert_non_null(buf);
                memcpy(buf, texts[i], n);
                nsid_userdb *db = NULL;
                if (i == 0)
                        assert_int_equal(nsid_userdb_parse(buf, 19, buf + 19, n - 19, &db), 0);
                else
                        assert_int_equal(nsid_userdb_parse(buf, n, NULL, 0, &db), 0);
                nsid_userdb_counts c;
                assert_int_equal(nsid_userdb_get_counts(db, i == 0 ? NSID_USERDB_GROUP
                                                                   : NSID_USERDB_PASSWD, &c), 0);
                assert_int_equal(c.invalid, 1);
                nsid_userdb_unref(db);
                free(buf);
        }
}

static void test_duplicates(void **state) {
        log_reset();
        nsid_userdb *db = parse2("alice:x:1000:1000::/:/bin/sh\n"
                                 "bob:x:1001:1001::/:/bin/sh\n"
                                 "alice:x:2000:2000::/:/bin/sh\n" /* different id: ignored */
                                 "alice:x:1000:1000::/:/bin/sh\n" /* same again: ignored */
                                 "toor:x:0:0::/:/bin/sh\n"
                                 "root:x:0:0::/:/bin/sh\n"        /* shares uid 0 */
                                 "bob:x:1:1::/:/bin/sh\n",
                                 "staff:x:50:\nstaff:x:51:\nwheel:x:50:\n");
        expect_user(db, "alice", 1000, 1000);
        expect_user(db, "bob", 1001, 1001);
        const char *n;
        uint32_t u, g;
        assert_int_equal(nsid_userdb_user_by_uid(db, 2000, &n, NULL), -ENOENT);
        assert_int_equal(nsid_userdb_user_by_uid(db, 1, &n, NULL), -ENOENT);
        /* uid 0 has two names: the first line wins for id -> name, both resolve by name. */
        assert_int_equal(nsid_userdb_user_by_uid(db, 0, &n, &g), 0);
        assert_string_equal(n, "toor");
        assert_int_equal(nsid_userdb_user_by_name(db, "root", &u, &g), 0);
        assert_int_equal(u, 0);
        counts(db, NSID_USERDB_PASSWD, 4, 0, 3);
        assert_int_equal(nsid_userdb_group_by_name(db, "staff", &g), 0);
        assert_int_equal(g, 50);
        assert_int_equal(nsid_userdb_group_by_gid(db, 51, &n), -ENOENT);
        assert_int_equal(nsid_userdb_group_by_gid(db, 50, &n), 0);
        assert_string_equal(n, "staff");
        assert_int_equal(nsid_userdb_group_by_name(db, "wheel", &g), 0);
        assert_int_equal(g, 50);
        counts(db, NSID_USERDB_GROUP, 2, 0, 1);
        assert_int_equal(n_warnings, 2);
        assert_non_null(strstr(log_buf, "3 duplicate"));
        assert_non_null(strstr(log_buf, "1 duplicate"));
        nsid_userdb_unref(db);
}

static void test_group_format(void **state) {
        nsid_userdb *db = parse2("u:x:1:1::/:/bin/sh\n",
                                 "g1:x:10:\n"
                                 "g2:*:11:a,b,c\n"
                                 "g3::12:\n"
                                 "g4:x:13\n"         /* 3 fields */
                                 "g5:x:14::\n"       /* 5 fields */
                                 "g6:x:-1:\n"
                                 "g7:x:4294967295:\n"
                                 "g@8:x:15:\n");
        expect_group(db, "g1", 10);
        expect_group(db, "g2", 11);
        expect_group(db, "g3", 12);
        counts(db, NSID_USERDB_GROUP, 3, 5, 0);
        nsid_userdb_unref(db);
}

static void test_no_group_file(void **state) {
        nsid_userdb *db = parse2("alice:x:1000:1000::/:/bin/sh\n", NULL);
        expect_user(db, "alice", 1000, 1000);
        uint32_t g;
        const char *n;
        assert_int_equal(nsid_userdb_has_groups(db), 0);
        assert_int_equal(nsid_userdb_group_by_name(db, "alice", &g), -ENOENT);
        assert_int_equal(nsid_userdb_group_by_gid(db, 1000, &n), -ENOENT);
        counts(db, NSID_USERDB_GROUP, 0, 0, 0);
        nsid_userdb_unref(db);
        /* An empty passwd is a valid (empty) database. */
        assert_int_equal(nsid_userdb_parse("", 0, "", 0, &db), 0);
        expect_no_user(db, "root");
        assert_int_equal(nsid_userdb_has_groups(db), 1);
        nsid_userdb_unref(db);
        assert_int_equal(nsid_userdb_parse(NULL, 0, NULL, 0, &db), 0);
        nsid_userdb_unref(db);
}

static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void test_100k(void **state) {
        const unsigned N = 100000;
        size_t cap = (size_t) N * 96, off = 0, goff = 0;
        char *pw = malloc(cap), *gr = malloc(cap);
        assert_non_null(pw);
        assert_non_null(gr);
        /* Realistic lines, names in an order unrelated to ids. */
        for (unsigned i = 0; i < N; i++) {
                unsigned k = (i * 7919u) % N;
                off += (size_t) snprintf(pw + off, cap - off,
                                         "user%u:x:%u:%u:User %u,,,:/home/user%u:/bin/bash\n", k,
                                         100000 + k, 200000 + k % 1000, k, k);
                goff += (size_t) snprintf(gr + goff, cap - goff, "group%u:x:%u:user%u\n", k,
                                          300000 + k, k);
        }
        nsid_userdb *db = NULL;
        /* Printed only: the requirement (100,000 passwd entries well under 100 ms) is
         * bench-userdb's (make bench); a timed assertion here failed correct builds on a
         * loaded machine. */
        double best = 1e9, best_both = 1e9;
        for (int round = 0; round < 5; round++) {
                double t0 = now_ms();
                assert_int_equal(nsid_userdb_parse(pw, off, NULL, 0, &db), 0);
                double dt = now_ms() - t0;
                if (dt < best)
                        best = dt;
                db = nsid_userdb_unref(db);
                t0 = now_ms();
                assert_int_equal(nsid_userdb_parse(pw, off, gr, goff, &db), 0);
                dt = now_ms() - t0;
                if (dt < best_both)
                        best_both = dt;
                if (round < 4)
                        db = nsid_userdb_unref(db);
        }
        print_message("parsing %u passwd entries (%.1f MiB): %.1f ms; with %u group entries "
                      "(%.1f MiB more): %.1f ms (best of 5)%s\n",
                      N, (double) off / (1024.0 * 1024.0), best, N,
                      (double) goff / (1024.0 * 1024.0), best_both,
                      CHECK_SPEED ? "" : " [unoptimised or sanitizer build]");

        counts(db, NSID_USERDB_PASSWD, N, 0, 0);
        counts(db, NSID_USERDB_GROUP, N, 0, 0);
        double t0 = now_ms();
        for (unsigned k = 0; k < N; k++) {
                char name[32];
                uint32_t u, g;
                const char *n;
                snprintf(name, sizeof(name), "user%u", k);
                assert_int_equal(nsid_userdb_user_by_name(db, name, &u, &g), 0);
                assert_int_equal(u, 100000 + k);
                assert_int_equal(g, 200000 + k % 1000);
                assert_int_equal(nsid_userdb_user_by_uid(db, 100000 + k, &n, NULL), 0);
                assert_string_equal(n, name);
                snprintf(name, sizeof(name), "group%u", k);
                assert_int_equal(nsid_userdb_group_by_name(db, name, &g), 0);
                assert_int_equal(g, 300000 + k);
                assert_int_equal(nsid_userdb_group_by_gid(db, 300000 + k, &n), 0);
                assert_string_equal(n, name);
        }
        print_message("%u x 4 lookups: %.1f ms\n", N, now_ms() - t0);
        const char *n;
        assert_int_equal(nsid_userdb_user_by_uid(db, 99999, &n, NULL), -ENOENT);
        assert_int_equal(nsid_userdb_user_by_uid(db, 200000, &n, NULL), -ENOENT);
        expect_no_user(db, "user100000");
        nsid_userdb_unref(db);
        free(pw);
        free(gr);
}

/* Real files in a temporary root directory. */
static char tmp_root[64];
static int rootfd = -1;

static void write_file(const char *rel, const char *content) {
        char path[256], tmp[300];
        snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "we");
        assert_non_null(f);
        assert_int_equal(fputs(content, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, path), 0);
}

/* Rewrite in place (same inode). */
static void overwrite_file(const char *rel, const char *content) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
        FILE *f = fopen(path, "r+e");
        assert_non_null(f);
        assert_int_equal(fputs(content, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static void set_mtime(const char *rel, time_t sec, long nsec) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
        struct timespec ts[2] = { { sec, nsec }, { sec, nsec } };
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static int setup_root(void **state) {
        strcpy(tmp_root, "/tmp/nsid-test-userdb.XXXXXX");
        if (!mkdtemp(tmp_root))
                return -1;
        char path[256];
        snprintf(path, sizeof(path), "%s/etc", tmp_root);
        if (mkdir(path, 0755) < 0)
                return -1;
        rootfd = open(tmp_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return rootfd < 0 ? -1 : 0;
}

static int teardown_root(void **state) {
        char cmd[128];
        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
        return system(cmd) == 0 ? 0 : -1;
}

/* refresh(), expecting r; returns the database to keep using (old one released). */
static nsid_userdb *refresh_expect(nsid_userdb *db, int expect) {
        nsid_userdb *n = NULL;
        int r = nsid_userdb_refresh(db, &n);
        if (r != expect)
                fail_msg("refresh returned %d, expected %d", r, expect);
        if (r < 0)
                return db;
        if (r == 0)
                assert_ptr_equal(n, db);
        else
                assert_ptr_not_equal(n, db);
        nsid_userdb_unref(db);
        return n;
}

static void test_refresh(void **state) {
        nsid_userdb *db = NULL;
        char path[256];

        snprintf(path, sizeof(path), "%s/etc/group", tmp_root);
        unlink(path);
        snprintf(path, sizeof(path), "%s/etc/passwd", tmp_root);
        unlink(path);
        /* Missing passwd: a clear -ENOENT. */
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), -ENOENT);
        assert_null(db);

        write_file("etc/passwd", "alice:x:1000:1000::/:/bin/sh\n");
        set_mtime("etc/passwd", 1700000000, 0);
        /* No group file: users work, groups do not. */
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), 0);
        expect_user(db, "alice", 1000, 1000);
        assert_int_equal(nsid_userdb_has_groups(db), 0);
        nsid_file_stat st;
        struct stat real;
        assert_int_equal(nsid_userdb_get_file_stat(db, NSID_USERDB_GROUP, &st), -ENOENT);
        assert_int_equal(nsid_userdb_get_file_stat(db, NSID_USERDB_PASSWD, &st), 0);
        assert_int_equal(stat(path, &real), 0);
        assert_true(st.ino == (uint64_t) real.st_ino && st.dev == (uint64_t) real.st_dev);
        assert_true(st.size == 29 && st.mtime_nsec == (int64_t) 1700000000 * 1000000000);

        /* Untouched: no reload, the same object. */
        db = refresh_expect(db, 0);
        db = refresh_expect(db, 0);

        /* Group file appears. */
        write_file("etc/group", "staff:x:50:alice\n");
        db = refresh_expect(db, 1);
        expect_group(db, "staff", 50);
        db = refresh_expect(db, 0);

        /* Appending changes size and mtime. */
        write_file("etc/passwd", "alice:x:1000:1000::/:/bin/sh\nbob:x:1001:1001::/:/bin/sh\n");
        db = refresh_expect(db, 1);
        expect_user(db, "bob", 1001, 1001);
        expect_group(db, "staff", 50);
        db = refresh_expect(db, 0);

        /* Same size, same inode, only mtime differs: reloaded. */
        set_mtime("etc/passwd", 1700000000, 0);
        db = refresh_expect(db, 1);
        overwrite_file("etc/passwd", "carol:x:1002:1002::/:/bin/sh\nbob:x:1001:1001::/:/bin/sh\n");
        set_mtime("etc/passwd", 1700000000, 5);
        db = refresh_expect(db, 1);
        expect_user(db, "carol", 1002, 1002);
        expect_no_user(db, "alice");
        db = refresh_expect(db, 0);

        /* Same content and mtime but a new inode (atomic replace): reloaded. */
        nsid_userdb *old = nsid_userdb_ref(db);
        write_file("etc/passwd", "carol:x:1002:1002::/:/bin/sh\nbob:x:1001:1001::/:/bin/sh\n");
        set_mtime("etc/passwd", 1700000000, 5);
        db = refresh_expect(db, 1);
        /* The old snapshot is still usable and unchanged. */
        expect_user(old, "carol", 1002, 1002);
        nsid_userdb_unref(old);

        /* Only the group file changes. */
        write_file("etc/group", "staff:x:50:alice\nwheel:x:10:\n");
        db = refresh_expect(db, 1);
        expect_group(db, "wheel", 10);

        /* Group file removed: reload, no groups. */
        snprintf(path, sizeof(path), "%s/etc/group", tmp_root);
        assert_int_equal(unlink(path), 0);
        db = refresh_expect(db, 1);
        assert_int_equal(nsid_userdb_has_groups(db), 0);
        db = refresh_expect(db, 0);

        /* Group file replaced by a FIFO: a clear refusal, never a hang. */
        assert_int_equal(mkfifo(path, 0644), 0);
        nsid_userdb *n = NULL;
        assert_int_equal(nsid_userdb_refresh(db, &n), -ENXIO);
        assert_null(n);
        assert_int_equal(unlink(path), 0);

        /* passwd removed: -ENOENT, the caller keeps its old database. */
        snprintf(path, sizeof(path), "%s/etc/passwd", tmp_root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(nsid_userdb_refresh(db, &n), -ENOENT);
        expect_user(db, "bob", 1001, 1001);
        nsid_userdb_unref(db);
}

/* A container's passwd that points elsewhere: resolution stays inside the root (nsid/file.h),
 * and every refusal is a clear error, never the host's file and never a hang. */
static void test_hostile_root(void **state) {
        nsid_userdb *db = NULL;
        char path[256];
        snprintf(path, sizeof(path), "%s/etc/group", tmp_root);
        unlink(path);
        snprintf(path, sizeof(path), "%s/etc/passwd", tmp_root);
        unlink(path);
        write_file("etc/shadow", "fromshadow:x:5:5::/:/bin/sh\n");

        /* Absolute symlink: the container's /etc/shadow, not the host's. */
        assert_int_equal(symlink("/etc/shadow", path), 0);
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), 0);
        expect_user(db, "fromshadow", 5, 5);
        expect_no_user(db, "root");
        db = nsid_userdb_unref(db);
        assert_int_equal(unlink(path), 0);

        /* Relative symlink climbing out: clamped at the root, it names itself. */
        assert_int_equal(symlink("../../../../../../../etc/passwd", path), 0);
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), -ELOOP);
        assert_null(db);
        assert_int_equal(unlink(path), 0);

        /* A magic link. */
        assert_int_equal(symlink("/proc/self/root/etc/passwd", path), 0);
        assert_true(nsid_userdb_load_root(rootfd, &db) < 0);
        assert_null(db);
        assert_int_equal(unlink(path), 0);

        /* FIFO, directory, oversized sparse file. */
        assert_int_equal(mkfifo(path, 0644), 0);
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), -ENXIO);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), -EISDIR);
        assert_int_equal(rmdir(path), 0);
        int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t) NSID_USERDB_FILE_MAX + 1), 0);
        close(fd);
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), -EFBIG);
        assert_null(db);
        assert_int_equal(unlink(path), 0);

        /* Exactly at the cap is read (and is one overlong line of NULs: skipped). */
        fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t) NSID_USERDB_FILE_MAX), 0);
        close(fd);
        assert_int_equal(nsid_userdb_load_root(rootfd, &db), 0);
        counts(db, NSID_USERDB_PASSWD, 0, 1, 0);
        db = nsid_userdb_unref(db);
        assert_int_equal(unlink(path), 0);
        snprintf(path, sizeof(path), "%s/etc/shadow", tmp_root);
        assert_int_equal(unlink(path), 0);
}

static void test_load_proc_self(void **state) {
        /* This process's root is the host's /: its real /etc/passwd has root as uid 0. */
        nsid_proc *p = NULL;
        nsid_userdb *db = NULL, *db2 = NULL;
        assert_int_equal(nsid_proc_open_self(&p), 0);
        assert_int_equal(nsid_userdb_load_proc(p, &db), 0);
        nsid_proc_unref(p);
        uint32_t u = 1, g = 1;
        assert_int_equal(nsid_userdb_user_by_name(db, "root", &u, &g), 0);
        assert_int_equal(u, 0);
        assert_int_equal(g, 0);
        assert_int_equal(nsid_userdb_group_by_name(db, "root", &g), 0);
        assert_int_equal(nsid_userdb_refresh(db, &db2), 0);
        assert_ptr_equal(db, db2);
        nsid_userdb_unref(db2);
        nsid_userdb_unref(db);
}

static void test_bad_args(void **state) {
        nsid_userdb *db = NULL;
        uint32_t u;
        const char *n;
        nsid_userdb_counts c;
        nsid_file_stat st;
        assert_int_equal(nsid_userdb_parse(NULL, 1, NULL, 0, &db), -EINVAL);
        assert_int_equal(nsid_userdb_parse("", 0, NULL, 1, &db), -EINVAL);
        assert_int_equal(nsid_userdb_parse("", 0, NULL, 0, NULL), -EINVAL);
        assert_int_equal(nsid_userdb_load_root(-1, &db), -EBADF);
        assert_int_equal(nsid_userdb_load_proc(NULL, &db), -EINVAL);
        assert_int_equal(nsid_userdb_refresh(NULL, &db), -EINVAL);
        assert_int_equal(nsid_userdb_user_by_name(NULL, "a", &u, NULL), -EINVAL);
        assert_int_equal(nsid_userdb_user_by_uid(NULL, 0, &n, NULL), -EINVAL);
        assert_int_equal(nsid_userdb_group_by_name(NULL, "a", &u), -EINVAL);
        assert_int_equal(nsid_userdb_group_by_gid(NULL, 0, &n), -EINVAL);
        assert_int_equal(nsid_userdb_has_groups(NULL), -EINVAL);
        assert_null(db);
        db = parse2("a:x:1:1::/:/bin/sh\n", NULL);
        assert_int_equal(nsid_userdb_user_by_name(db, NULL, &u, NULL), -EINVAL);
        assert_int_equal(nsid_userdb_user_by_name(db, "a", NULL, NULL), -EINVAL);
        assert_int_equal(nsid_userdb_user_by_uid(db, 1, NULL, NULL), -EINVAL);
        assert_int_equal(nsid_userdb_get_counts(db, _NSID_USERDB_FILE_MAX, &c), -EINVAL);
        assert_int_equal(nsid_userdb_get_counts(db, NSID_USERDB_PASSWD, NULL), -EINVAL);
        assert_int_equal(nsid_userdb_get_file_stat(db, (nsid_userdb_file) -1, &st), -EINVAL);
        nsid_userdb_unref(db);
}

int main(void) {
        nsid_log_set_handler(capture, NULL);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_basic),
                cmocka_unit_test(test_comments_blank),
                cmocka_unit_test(test_invalid_lines),
                cmocka_unit_test(test_valid_edge_names),
                cmocka_unit_test(test_long_lines),
                cmocka_unit_test(test_nul_bytes),
                cmocka_unit_test(test_duplicates),
                cmocka_unit_test(test_long_id_unterminated),
                cmocka_unit_test(test_group_format),
                cmocka_unit_test(test_no_group_file),
                cmocka_unit_test(test_100k),
                cmocka_unit_test_setup_teardown(test_refresh, setup_root, teardown_root),
                cmocka_unit_test_setup_teardown(test_hostile_root, setup_root, teardown_root),
                cmocka_unit_test(test_load_proc_self),
                cmocka_unit_test(test_bad_args),
        };
        return run_test_group(tests, NULL, NULL);
}
