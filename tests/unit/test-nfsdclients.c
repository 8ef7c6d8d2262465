/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/nfsdclients.h: knfsd's client info files (the format of client_info_show() on 6.1 and
 * 6.12) and the checks for owner strings that collide. The directory tests build a real
 * directory in the server's layout (<n>/info), with a symlink and a FIFO planted in it. */
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

#include "test-skip.h" /* after cmocka.h */

#include "nfsdinfo-internal.h"
#include "parse-util.h"
#include <nsid/nfsdclients.h>

#define INFO_612(addr, status, name, minor)                                                    \
        "clientid: 0x6d7e2b6a00000001\n"                                                       \
        "address: \"" addr "\"\n"                                                              \
        "status: " status "\n"                                                                 \
        "seconds from last renew: 2\n"                                                         \
        "name: \"" name "\"\n"                                                                 \
        "minor version: " minor "\n"                                                           \
        "Implementation domain: \"kernel.org\"\n"                                              \
        "Implementation name: \"Linux 6.12.0 x86_64\"\n"                                       \
        "Implementation time: [0, 0]\n"                                                        \
        "callback state: UP\n"                                                                 \
        "callback address: \"" addr "\"\n"                                                     \
        "admin-revoked states: 0\n"

static int add(nsid_nfsd_clients *c, const char *s, uint64_t t) {
        return nsid_nfsd_clients_add_info(c, s, strlen(s), t);
}

static void test_parse(void **state) {
        nfsd_info i;
        const char *s = INFO_612("192.0.2.11:763", "confirmed", "Linux NFSv4.2 abc/web", "2");

        assert_int_equal(nfsd_info_parse(s, strlen(s), &i), 0);
        assert_string_equal(i.host, "192.0.2.11");
        assert_int_equal(i.status, NFSD_STATUS_CONFIRMED);
        assert_int_equal(i.minor, 2);
        assert_true(i.have_clientid);
        assert_true(i.clientid == 0x6d7e2b6a00000001ULL);
        assert_int_equal(i.name_len, strlen("Linux NFSv4.2 abc/web"));
        assert_memory_equal(i.name, "Linux NFSv4.2 abc/web", i.name_len);

        s = "address: \"[2001:DB8:0::5]:1023\"\nstatus: courtesy\nname: \"x\"\n";
        assert_int_equal(nfsd_info_parse(s, strlen(s), &i), 0);
        assert_string_equal(i.host, "2001:db8::5"); /* normalized */
        assert_int_equal(i.status, NFSD_STATUS_COURTESY);
        assert_int_equal(i.minor, -1);
}

static void test_parse_escapes(void **state) {
        /* what seq_escape_mem(ESCAPE_HEX | ESCAPE_NAP | ESCAPE_APPEND, "\"\\") prints */
        const char *s = "address: \"1.2.3.4:5\"\nname: \"a\\x00b\\x22c\\x5c\\xff\\x0a\"\n";
        char esc[64];
        nfsd_info i;

        assert_int_equal(nfsd_info_parse(s, strlen(s), &i), 0);
        assert_int_equal(i.name_len, 8);
        assert_memory_equal(i.name, "a\0b\"c\\\xff\n", 8);
        escape_bytes(i.name, i.name_len, esc);
        assert_string_equal(esc, "a\\x00b\\x22c\\x5c\\xff\\x0a");
        /* older kernels' seq_escape_mem_ascii() wrote \\ for a backslash */
        s = "address: \"1.2.3.4:5\"\nname: \"a\\\\b\"\n";
        assert_int_equal(nfsd_info_parse(s, strlen(s), &i), 0);
        assert_memory_equal(i.name, "a\\b", 3);
}

static void test_parse_malformed(void **state) {
        static const char *const bad[] = {
                "",
                "name: \"x\"\n",                                   /* no address */
                "address: \"1.2.3.4:5\"\n",                        /* no name */
                "address: \"1.2.3.4:5\"\nname: x\n",               /* unquoted */
                "address: \"1.2.3.4:5\"\nname: \"x\n",             /* unterminated */
                "address: \"1.2.3.4:5\"\nname: \"a\"b\"\n",        /* raw quote inside */
                "address: \"1.2.3.4:5\"\nname: \"\\x4\"\n",        /* short escape */
                "address: \"1.2.3.4:5\"\nname: \"\\n\"\n",         /* unknown escape */
                "address: \"1.2.3.4:5\"\nname: \"\\\"\n",          /* escape eats the quote */
                "address: \"1.2.3.4:5\"\nname: \"a\"\nname: \"a\"\n",
                "address: \"1.2.3.4:5\"\naddress: \"1.2.3.4:5\"\nname: \"a\"\n",
                "address: \"1.2.3.400:5\"\nname: \"a\"\n",
                "address: \"1.2.3.4:70000\"\nname: \"a\"\n",
                "address: \"[::1\"\nname: \"a\"\n",
                "address: \"1.2.3.4:5\"\nname: \"a\"\nminor version: -1\n",
                "address: \"1.2.3.4:5\"\nname: \"a\"\nclientid: 12\n",
                "address: \"1.2.3.4:5\"\nname: \"a\"\ngarbage line\n",
        };
        nfsd_info i;

        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
                if (nfsd_info_parse(bad[k], strlen(bad[k]), &i) != -EBADMSG)
                        fail_msg("accepted: %s", bad[k]);
        }
        /* a NUL byte in the file */
        static const char nul[] = "address: \"1.2.3.4:5\"\nname: \"a\"\n\0x";
        assert_int_equal(nfsd_info_parse(nul, sizeof(nul) - 1, &i), -EBADMSG);
        assert_int_equal(nfsd_info_parse(nul, sizeof(nul) - 3, &i), 0);
}

static void test_parse_owner_max(void **state) {
        char *s = malloc(64 + 4 * 1025);
        nfsd_info i;
        size_t n;

        assert_non_null(s);
        n = (size_t) sprintf(s, "address: \"1.2.3.4:5\"\nname: \"");
        for (int k = 0; k < 1024; k++)
                n += (size_t) sprintf(s + n, "\\xff");
        strcpy(s + n, "\"\n");
        assert_int_equal(nfsd_info_parse(s, strlen(s), &i), 0);
        assert_int_equal(i.name_len, 1024);
        strcpy(s + n, "A\"\n"); /* 1025 bytes: more than any client may send */
        assert_int_equal(nfsd_info_parse(s, strlen(s), &i), -EBADMSG);
        free(s);
}

static void test_uniquifier(void **state) {
#define U(s) nfsd_owner_has_uniquifier((const uint8_t *) (s), strlen(s))
        assert_int_equal(U("Linux NFSv4.2 web"), 0);
        assert_int_equal(U("Linux NFSv4.1 0123abcd/web"), 1);
        assert_int_equal(U("Linux NFSv4.0 web/192.0.2.1"), 0);
        assert_int_equal(U("Linux NFSv4.0 web/0123abcd/192.0.2.1"), 1);
        assert_int_equal(U("FreeBSD"), -1);
        assert_int_equal(U("Linux NFSv4."), -1);
        assert_int_equal(U("Linux NFSv4.x web"), -1);
#undef U
}

static void test_check_flapping(void **state) {
        nsid_nfsd_clients *c = NULL;
        nsid_nfsd_finding_kind k;
        const char *owner;
        size_t na;

        assert_int_equal(nsid_nfsd_clients_new(&c), 0);
        /* two cloned hosts: one owner string, confirmed from .11 then from .12 */
        assert_int_equal(add(c, INFO_612("192.0.2.11:700", "confirmed", "Linux NFSv4.2 5a1f/web", "2"), 1000), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.50:700", "confirmed", "Linux NFSv4.2 other/db", "2"), 1000), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.12:701", "confirmed", "Linux NFSv4.2 5a1f/web", "2"), 1600), 0);
        /* the same again: no new memory, last_seen moves */
        assert_int_equal(add(c, INFO_612("192.0.2.12:702", "confirmed", "Linux NFSv4.2 5a1f/web", "2"), 1800), 0);
        assert_int_equal(nsid_nfsd_clients_get_records(c), 4);

        assert_int_equal(nsid_nfsd_clients_check(c, 5000), 1);
        assert_int_equal(nsid_nfsd_clients_get_owners(c), 2);
        assert_int_equal(nsid_nfsd_clients_get_finding(c, 0, &k, &owner, &na), 0);
        assert_int_equal(k, NSID_NFSD_OWNER_MULTIPLE_ADDRESSES);
        assert_string_equal(owner, "Linux NFSv4.2 5a1f/web");
        assert_int_equal(na, 2);
        assert_string_equal(nsid_nfsd_clients_get_finding_address(c, 0, 0), "192.0.2.11");
        assert_string_equal(nsid_nfsd_clients_get_finding_address(c, 0, 1), "192.0.2.12");
        assert_null(nsid_nfsd_clients_get_finding_address(c, 0, 2));
        assert_int_equal(nsid_nfsd_clients_get_finding(c, 1, &k, &owner, &na), -ERANGE);
        assert_string_equal(nsid_nfsd_finding_kind_to_string(k), "owner-multiple-addresses");
        assert_non_null(strstr(nsid_nfsd_finding_kind_fix(k), "nsidctl host-secret new"));

        /* outside the window (only the newest 500 ms): .11 is too old, no finding */
        assert_int_equal(nsid_nfsd_clients_check(c, 500), 0);
        nsid_nfsd_clients_unref(c);
}

static void test_check_unconfirmed_not_flapping(void **state) {
        nsid_nfsd_clients *c = NULL;

        assert_int_equal(nsid_nfsd_clients_new(&c), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.11:700", "confirmed", "Linux NFSv4.2 u/web", "2"), 1), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.12:700", "unconfirmed", "Linux NFSv4.2 u/web", "2"), 1), 0);
        assert_int_equal(nsid_nfsd_clients_check(c, 0), 0);
        nsid_nfsd_clients_unref(c);
}

static void test_check_no_uniquifier_and_v40(void **state) {
        nsid_nfsd_clients *c = NULL;
        nsid_nfsd_finding_kind k;
        const char *owner;
        const uint8_t *raw;
        size_t na, rl;
        int n, seen_v40 = 0, seen_nouniq = 0, seen_hostile = 0;

        assert_int_equal(nsid_nfsd_clients_new(&c), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.21:700", "confirmed", "Linux NFSv4.0 web/192.0.2.1", "0"), 1), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.22:700", "unconfirmed", "Linux NFSv4.0 web/192.0.2.1", "0"), 1), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.23:700", "confirmed", "Linux NFSv4.2 \\x1b[31mred", "2"), 1), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.24:700", "confirmed", "FreeBSD 14 host", "1"), 1), 0);
        assert_int_equal(add(c, INFO_612("192.0.2.25:700", "confirmed", "Linux NFSv4.2 u/ok", "2"), 1), 0);
        n = nsid_nfsd_clients_check(c, 0);
        assert_int_equal(n, 3);
        for (int i = 0; i < n; i++) {
                assert_int_equal(nsid_nfsd_clients_get_finding(c, (size_t) i, &k, &owner, &na), 0);
                if (k == NSID_NFSD_V40_COLLISION) {
                        seen_v40++;
                        assert_string_equal(owner, "Linux NFSv4.0 web/192.0.2.1");
                        assert_int_equal(na, 2);
                } else if (k == NSID_NFSD_OWNER_NO_UNIQUIFIER &&
                           strcmp(owner, "Linux NFSv4.0 web/192.0.2.1") == 0) {
                        seen_nouniq++;
                } else if (k == NSID_NFSD_OWNER_NO_UNIQUIFIER) {
                        /* the escape sequence comes back escaped, never raw */
                        assert_string_equal(owner, "Linux NFSv4.2 \\x1b[31mred");
                        assert_int_equal(nsid_nfsd_clients_get_finding_owner_raw(c, (size_t) i, &raw, &rl), 0);
                        assert_int_equal(rl, strlen("Linux NFSv4.2 \x1b[31mred"));
                        assert_memory_equal(raw, "Linux NFSv4.2 \x1b[31mred", rl);
                        seen_hostile++;
                }
        }
        assert_int_equal(seen_v40 + seen_nouniq + seen_hostile, 3);
        assert_int_equal(seen_v40, 1);
        nsid_nfsd_clients_unref(c);
}

static char tmpl[] = "/tmp/nsid-nfsdclients-XXXXXX";

static void put(const char *dir, const char *sub, const char *text) {
        char p[256];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", dir, sub);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/%s/info", dir, sub);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void test_scan_dir(void **state) {
        nsid_nfsd_clients *c = NULL;
        char *d = mkdtemp(tmpl), p[256], q[256];

        assert_non_null(d);
        put(d, "1", INFO_612("192.0.2.11:700", "confirmed", "Linux NFSv4.2 web", "2"));
        put(d, "2", INFO_612("192.0.2.12:700", "confirmed", "Linux NFSv4.2 web", "2"));
        put(d, "3", "not an info file\n");
        /* a symlinked client dir and a symlinked info are never followed */
        snprintf(p, sizeof(p), "%s/1", d);
        snprintf(q, sizeof(q), "%s/4", d);
        assert_int_equal(symlink(p, q), 0);
        snprintf(q, sizeof(q), "%s/5", d);
        assert_int_equal(mkdir(q, 0755), 0);
        snprintf(q, sizeof(q), "%s/5/info", d);
        snprintf(p, sizeof(p), "%s/1/info", d);
        assert_int_equal(symlink(p, q), 0);
        /* a FIFO named info: not opened for a blocking read, skipped */
        snprintf(q, sizeof(q), "%s/6", d);
        assert_int_equal(mkdir(q, 0755), 0);
        snprintf(q, sizeof(q), "%s/6/info", d);
        assert_int_equal(mkfifo(q, 0600), 0);

        assert_int_equal(nsid_nfsd_clients_new(&c), 0);
        assert_int_equal(nsid_nfsd_clients_scan(c, d, 1), 2);
        assert_int_equal(nsid_nfsd_clients_get_skipped(c), 3);
        /* one owner from two addresses, and no uniquifier */
        assert_int_equal(nsid_nfsd_clients_check(c, 0), 2);
        assert_int_equal(nsid_nfsd_clients_scan(c, "/nonexistent-nsid", 2), -ENOENT);
        nsid_nfsd_clients_unref(c);

        /* a client that left between readdir and open (its info gone) is skipped, and the
         * scan still succeeds even when it is the last (or only) entry: seen in the lab */
        snprintf(p, sizeof(p), "rm -rf '%s'/*", d);
        assert_int_equal(system(p), 0);
        snprintf(q, sizeof(q), "%s/7", d);
        assert_int_equal(mkdir(q, 0755), 0);
        assert_int_equal(nsid_nfsd_clients_new(&c), 0);
        assert_int_equal(nsid_nfsd_clients_scan(c, d, 3), 0);
        assert_int_equal(nsid_nfsd_clients_get_skipped(c), 1);
        nsid_nfsd_clients_unref(c);

        snprintf(p, sizeof(p), "rm -rf '%s'", d);
        assert_int_equal(system(p), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_parse_escapes),
                cmocka_unit_test(test_parse_malformed),
                cmocka_unit_test(test_parse_owner_max),
                cmocka_unit_test(test_uniquifier),
                cmocka_unit_test(test_check_flapping),
                cmocka_unit_test(test_check_unconfirmed_not_flapping),
                cmocka_unit_test(test_check_no_uniquifier_and_v40),
                cmocka_unit_test(test_scan_dir),
        };
        return run_test_group(tests, NULL, NULL);
}
