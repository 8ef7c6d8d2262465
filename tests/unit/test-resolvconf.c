/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/resolv.h (resolv.conf, hosts) and nsid/conffile.h (INI lookups). */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/conffile.h>
#include <nsid/resolv.h>

static void test_resolvconf(void **state) {
        nsid_resolvconf rc;
        char csv[256];
        const char *t = "# comment\n"
                        "nameserver 127.0.0.1\n"
                        "nameserver ::1\n"
                        "nameserver fe80::1%2\n"
                        "nameserver 10.0.0.4\n" /* fourth: ignored */
                        "nameserver 300.1.1.1\n"
                        "nameserver\n"
                        "domain old.example\n"
                        "search a.example b.example. bad..example\n"
                        "options ndots:3 timeout:99 attempts:0 rotate edns0\n"
                        "bogus line\n";
        assert_int_equal(nsid_resolvconf_parse(t, strlen(t), &rc), 0);
        assert_int_equal(rc.n_servers, 3);
        assert_int_equal(rc.servers[0].family, AF_INET);
        assert_int_equal(rc.servers[1].family, AF_INET6);
        assert_int_equal(rc.servers[2].scope_id, 2);
        assert_int_equal(rc.n_search, 2); /* search (last line) wins over domain */
        assert_string_equal(rc.search[0], "a.example");
        assert_string_equal(rc.search[1], "b.example");
        assert_int_equal(rc.ndots, 3);
        assert_int_equal(rc.timeout, 30);
        assert_int_equal(rc.attempts, 1);
        assert_true(rc.rotate);
        assert_int_equal(rc.skipped, 3);
        assert_true(nsid_resolvconf_servers_csv(&rc, csv, sizeof(csv)) > 0);
        assert_string_equal(csv, "127.0.0.1,[::1]:53,[fe80::1]:53");
        assert_int_equal(nsid_resolvconf_servers_csv(&rc, csv, 10), -ENOBUFS);

        assert_int_equal(nsid_resolvconf_parse("", 0, &rc), 0);
        assert_int_equal(rc.n_servers, 0);
        assert_int_equal(rc.ndots, 1);
        assert_int_equal(nsid_resolvconf_servers_csv(&rc, csv, sizeof(csv)), -ENOENT);
        /* NUL bytes and overlong lines are skipped, not truncated into something else */
        assert_int_equal(nsid_resolvconf_parse("nameserver 1.2.3.4\0junk\nnameserver 5.6.7.8", 42, &rc), 0);
        assert_int_equal(rc.n_servers, 1);
        char *big = malloc(10000);
        memset(big, ' ', 10000);
        memcpy(big, "nameserver 9.9.9.9", 18);
        assert_int_equal(nsid_resolvconf_parse(big, 10000, &rc), 0);
        assert_int_equal(rc.n_servers, 0);
        free(big);
}

static void test_names(void **state) {
        assert_true(nsid_dns_name_valid("svc.example.test", 16));
        assert_true(nsid_dns_name_valid("svc.example.test.", 17));
        assert_true(nsid_dns_name_valid("_srv.x", 6));
        assert_false(nsid_dns_name_valid("", 0));
        assert_false(nsid_dns_name_valid(".", 1));
        assert_false(nsid_dns_name_valid("a..b", 4));
        assert_false(nsid_dns_name_valid("-a.b", 4));
        assert_false(nsid_dns_name_valid("a b", 3));
        char l[70];
        memset(l, 'a', 64);
        assert_false(nsid_dns_name_valid(l, 64));
        assert_true(nsid_dns_name_valid(l, 63));
}

static void test_hosts(void **state) {
        nsid_resolv_addr a[4];
        const char *t = "127.0.0.1 localhost\n"
                        "192.0.2.1 Host.Example alias # comment\n"
                        "# 192.0.2.9 host.example\n"
                        "2001:db8::1 host.example\n"
                        "192.0.2.1 host.example\n" /* duplicate */
                        "192.0.2.2 host.example\n"
                        "bad-address host.example\n";
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "host.example", AF_UNSPEC, a, 4), 3);
        char s[64];
        inet_ntop(a[0].family, a[0].addr, s, sizeof(s));
        assert_string_equal(s, "192.0.2.1");
        inet_ntop(a[1].family, a[1].addr, s, sizeof(s));
        assert_string_equal(s, "2001:db8::1");
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "HOST.example.", AF_INET, a, 4), 2);
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "host.example", AF_INET6, a, 4), 1);
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "alias", AF_UNSPEC, a, 4), 1);
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "host.example", AF_UNSPEC, a, 1), 1);
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "nothere", AF_UNSPEC, a, 4), 0);
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "bad name", AF_UNSPEC, a, 4), 0);
        assert_int_equal(nsid_hosts_lookup(t, strlen(t), "x", AF_PACKET, a, 4), -EINVAL);
}

static void test_conffile(void **state) {
        char *v = NULL;
        const char *t = "[General]\n"
                        "  Domain = example.test  \n"
                        "# Domain = commented\n"
                        "[idmap]\n"
                        "requester-context=yes\n"
                        "requester-context = no\n" /* last wins */
                        "[ Mapping ]\n"
                        "Nobody-User = nobody\n"
                        "[broken\n"
                        "Nobody-User = wrong\n";
        assert_int_equal(nsid_conf_get(t, strlen(t), "general", "DOMAIN", &v), 0);
        assert_string_equal(v, "example.test");
        free(v);
        assert_int_equal(nsid_conf_get(t, strlen(t), "idmap", "requester-context", &v), 0);
        assert_string_equal(v, "no");
        free(v);
        assert_int_equal(nsid_conf_get(t, strlen(t), "Mapping", "Nobody-User", &v), 0);
        assert_string_equal(v, "nobody");
        free(v);
        assert_int_equal(nsid_conf_get(t, strlen(t), "General", "Nope", &v), -ENOENT);
        assert_int_equal(nsid_conf_get(t, strlen(t), "Nope", "Domain", &v), -ENOENT);
        assert_int_equal(nsid_conf_parse_bool("Yes"), 1);
        assert_int_equal(nsid_conf_parse_bool("off"), 0);
        assert_int_equal(nsid_conf_parse_bool("maybe"), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_resolvconf), cmocka_unit_test(test_names),
                cmocka_unit_test(test_hosts), cmocka_unit_test(test_conffile),
        };
        return run_test_group(tests, NULL, NULL);
}
