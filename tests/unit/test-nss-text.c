/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd's name-service texts (idmapd/nss-text.c) and the context worker's reply
 * (idmapd/idmapd-load.c, dm_context_parse_reply()). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "idmapd/idmapd-load.h"
#include "idmapd/nss-text.h"

static void sources(const char *text, const char *db, int want_r, const char *want) {
        nss_sources s;
        char buf[256];
        int r = nss_sources_parse(text, text ? strlen(text) : 0, db, &s);
        assert_int_equal(r, want_r);
        if (r == 0) {
                nss_sources_format(&s, buf, sizeof(buf));
                assert_string_equal(buf, want);
        }
}

static void test_nsswitch(void **state) {
        (void) state;
        sources("passwd: files systemd\ngroup: files\n", "passwd", 0, "files systemd");
        sources("passwd: files systemd\ngroup: files\n", "group", 0, "files");
        /* actions skipped, comments, tabs, CRLF, no final newline */
        sources("# x\npasswd:\tfiles [NOTFOUND=return] sss # ldap\r\n", "passwd", 0, "files sss");
        sources("group: files [SUCCESS=merge] systemd", "group", 0, "files systemd");
        /* the first line for a database counts, as glibc does */
        sources("passwd: sss\npasswd: files\n", "passwd", 0, "sss");
        /* no line: glibc's default */
        sources("hosts: files dns\n", "passwd", 0, "files");
        sources("", "passwd", 0, "files");
        /* a longer database name is another database */
        sources("passwdx: sss\n", "passwd", 0, "files");
        /* unclear: empty, bad names, an unterminated action, too many */
        sources("passwd:\n", "passwd", -EINVAL, NULL);
        sources("passwd: files sy$temd\n", "passwd", -EINVAL, NULL);
        sources("passwd: files [NOTFOUND=return\n", "passwd", -EINVAL, NULL);
        sources("passwd: a b c d e f g h i\n", "passwd", -E2BIG, NULL);
        const char nul[] = "passwd: files\0sss\n";
        nss_sources s;
        assert_int_equal(nss_sources_parse(nul, sizeof(nul) - 1, "passwd", &s), -EINVAL);
}

static void test_files_only(void **state) {
        nss_sources s;
        (void) state;
        assert_int_equal(nss_sources_parse("passwd: files\n", 14, "passwd", &s), 0);
        assert_true(nss_sources_files_only(&s, false));
        const char *t = "passwd: files systemd\n";
        assert_int_equal(nss_sources_parse(t, strlen(t), "passwd", &s), 0);
        assert_false(nss_sources_files_only(&s, false));
        assert_true(nss_sources_files_only(&s, true));
        t = "passwd: files sss\n";
        assert_int_equal(nss_sources_parse(t, strlen(t), "passwd", &s), 0);
        assert_false(nss_sources_files_only(&s, true));
}

static bool needs(const char *t) {
        return nss_idmapd_conf_needs_libnfsidmap(t, strlen(t));
}

static void test_idmapd_conf(void **state) {
        (void) state;
        assert_false(needs(""));
        assert_false(needs("[General]\nDomain = example.org # ours\n"));
        assert_false(needs("[Translation]\nMethod = nsswitch\n"));
        assert_false(needs("[translation]\n  method=NSSWITCH ; c\n"));
        assert_false(needs("[Mapping]\nNobody-User = nobody\n"));
        assert_true(needs("[Translation]\nMethod = static,nsswitch\n"));
        assert_true(needs("[Translation]\nMethod = nsswitch, umich_ldap\n"));
        assert_true(needs("[Translation]\nGSS-Methods = sss\n"));
        assert_true(needs("[Static]\n"));
        assert_true(needs("[REGEX]\nUser-Regex = x\n"));
        assert_true(needs("[UMICH_SCHEMA]\n"));
        assert_true(needs("[General]\nLocal-Realms = A.ORG\n"));
        assert_true(needs("[General]\nNo-Strip = both\n"));
        assert_true(needs("[General]\nReformat-Group = true\n"));
        /* a Method in another section is not libnfsidmap's */
        assert_false(needs("[General]\nMethod = static\n"));
        /* unclear: an unterminated section header */
        assert_true(needs("[Translation\nMethod = nsswitch\n"));
}

static int reply(const char *t, bool want_id, nss_reply *r) {
        return nss_reply_parse(t, strlen(t), want_id, r);
}

static void test_nss_reply(void **state) {
        nss_reply r;
        (void) state;
        assert_int_equal(reply("via libnfsidmap\nid 4011\n", true, &r), 0);
        assert_int_equal(r.kind, NSS_REPLY_ID);
        assert_int_equal(r.id, 4011);
        assert_true(r.via_libnfsidmap);
        assert_int_equal(reply("via nss\nname alice@example.org\n", false, &r), 0);
        assert_string_equal(r.name, "alice@example.org");
        assert_false(r.via_libnfsidmap);
        assert_int_equal(reply("via nss\nnone\n", true, &r), 0);
        assert_int_equal(r.kind, NSS_REPLY_NONE);
        assert_int_equal(reply("via nss\nerr 110\n", false, &r), 0);
        assert_int_equal(r.err, 110);
        /* refused */
        const char *bad[] = {
                "via nss\nid 4294967295\n", /* -1 is no id */
                "via nss\nid 4294967296\n",
                "via nss\nid 042\n",
                "via nss\nid -1\n",
                "via nss\nid 1\nid 2\n",      /* two answers */
                "via nss\nid 1",              /* unterminated */
                "via nss\nname a@b\n",        /* a name for a name->id lookup */
                "via nss\nerr 0\n",
                "via nss\nerr 4096\n",
                "via ldap\nid 1\n",
                "id 1\n",
                "",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(reply(bad[i], true, &r), -EBADMSG);
        const char *badname[] = {
                "via nss\nname alice\n",      /* no domain */
                "via nss\nname @example.org\n",
                "via nss\nname alice@\n",
                "via nss\nname ali ce@x\n",
                "via nss\nname \033[31m@x\n",
                "via nss\nname a\177@x\n",
                "via nss\nid 5\n",            /* an id for an id->name lookup */
        };
        for (size_t i = 0; i < sizeof(badname) / sizeof(badname[0]); i++)
                assert_int_equal(reply(badname[i], false, &r), -EBADMSG);
        char longname[200];
        memset(longname, 'a', sizeof(longname));
        memcpy(longname, "via nss\nname ", 13);
        memcpy(longname + 150, "@x\n", 4);
        assert_int_equal(reply(longname, false, &r), -EBADMSG); /* 137 bytes: too long */
        const char nul[] = "via nss\nid 1\0\n";
        assert_int_equal(nss_reply_parse(nul, sizeof(nul) - 1, true, &r), -EBADMSG);
}

static int ctx_parse(const char *t, dm_context *c) {
        memset(c, 0, sizeof(*c));
        return dm_context_parse_reply(t, strlen(t), c);
}

static void test_context_reply(void **state) {
        dm_context c;
        uint32_t id;
        const char *n;
        (void) state;
        assert_int_equal(ctx_parse("domain example.org\npasswd files\ngroup files\n"
                                   "libnfsidmap 0\nsystemd-empty 1\nu 0 root\nu 4001 alice\n"
                                   "g 4101 staff\nend 2 1\n", &c), 0);
        assert_false(c.nss);
        assert_non_null(c.db);
        assert_int_equal(nsid_userdb_user_by_name(c.db, "alice", &id, NULL), 0);
        assert_int_equal(id, 4001);
        assert_int_equal(nsid_userdb_group_by_gid(c.db, 4101, &n), 0);
        assert_string_equal(n, "staff");
        assert_string_equal(c.domain, "example.org");
        nsid_userdb_unref(c.db);

        /* files systemd: the fast path only where systemd adds nothing */
        assert_int_equal(ctx_parse("domain a.test\npasswd files systemd\ngroup files systemd\n"
                                   "libnfsidmap 0\nsystemd-empty 0\nend 0 0\n", &c), 0);
        assert_true(c.nss);
        assert_null(c.db);
        assert_int_equal(ctx_parse("domain a.test\npasswd files systemd\ngroup files\n"
                                   "libnfsidmap 0\nsystemd-empty 1\nend 0 0\n", &c), 0);
        assert_false(c.nss);
        nsid_userdb_unref(c.db);
        /* idmapd.conf methods: the name service */
        assert_int_equal(ctx_parse("baddomain host.test\npasswd files\ngroup files\n"
                                   "libnfsidmap 1\nsystemd-empty 1\nend 0 0\n", &c), 0);
        assert_true(c.nss && c.baddomain && c.conf_libnfsidmap);

        const char *bad[] = {
                /* a count that does not match */
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nu 0 root\nend 2 0\n",
                /* users after groups */
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\ng 0 root\nu 0 root\nend 1 1\n",
                /* a name with ':' or a blank or a control byte; an id of -1 */
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nu 0 ro:ot\nend 1 0\n",
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nu 0 ro\033t\nend 1 0\n",
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nu 4294967295 x\nend 1 0\n",
                /* a database with a name-service context */
                "domain a.test\npasswd sss\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nu 0 root\nend 1 0\n",
                /* missing lines, twice a line, after the end, unterminated, unknown key */
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nend 0 0\n",
                "domain a.test\ndomain b.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nend 0 0\n",
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nend 0 0\nu 0 root\n",
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nend 0 0",
                "domain a.test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nx 1\nend 0 0\n",
                /* an invalid domain */
                "domain a..test\npasswd files\ngroup files\nlibnfsidmap 0\nsystemd-empty 1\nend 0 0\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                memset(&c, 0, sizeof(c));
                assert_int_equal(dm_context_parse_reply(bad[i], strlen(bad[i]), &c), -EBADMSG);
                assert_null(c.db);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nsswitch),
                cmocka_unit_test(test_files_only),
                cmocka_unit_test(test_idmapd_conf),
                cmocka_unit_test(test_nss_reply),
                cmocka_unit_test(test_context_reply),
        };
        return run_test_group(tests, NULL, NULL);
}
