/* SPDX-License-Identifier: GPL-2.0-or-later */
/* idmap/dns-reply.c: the dns_resolver worker's reply, as nsid-idmap's privileged parent
 * parses it. The accepted replies are the ones dns_worker() writes (idmap/dns-upcall.c);
 * the refused ones are what a worker subverted by a container's data could write instead. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "idmap/dns-reply.h"

static int parse(const char *text, dns_result *ret) {
        char buf[16384];
        size_t len = strlen(text);
        assert_true(len < sizeof(buf));
        memcpy(buf, text, len + 1);
        return dns_parse_reply(buf, len, ret);
}

static void refused(const char *text) {
        dns_result d;
        memset(&d, 0x5a, sizeof(d));
        assert_int_equal(parse(text, &d), -EBADMSG);
        assert_int_equal(d.hosts_err, 0x5a5a5a5a); /* untouched */
}

static void test_answer_from_dns(void **state) {
        dns_result d;
        char t[INET6_ADDRSTRLEN];

        assert_int_equal(parse("files=2 0\nsrc=dns\nservers=10.0.0.53:53\nttl=300\n"
                               "addr=192.0.2.7\naddr=2001:db8::7\naddr=192.0.2.7\n", &d), 0);
        assert_int_equal(d.hosts_err, ENOENT);
        assert_int_equal(d.resolv_err, 0);
        assert_int_equal(d.drop_err, 0);
        assert_int_equal(d.ares, -1);
        assert_true(d.have_src && !d.from_hosts && d.have_ttl);
        assert_int_equal(d.ttl, 300);
        assert_int_equal(d.l.ttl, 300);
        assert_string_equal(d.servers, "10.0.0.53:53");
        assert_string_equal(d.err, "");
        assert_int_equal(d.l.n, 2); /* the repeated address once */
        assert_int_equal(d.l.addrs[0].family, AF_INET);
        assert_string_equal(inet_ntop(AF_INET, d.l.addrs[0].addr, t, sizeof(t)), "192.0.2.7");
        assert_int_equal(d.l.addrs[1].family, AF_INET6);
        assert_string_equal(inet_ntop(AF_INET6, d.l.addrs[1].addr, t, sizeof(t)),
                            "2001:db8::7");
}

static void test_failures_and_hosts(void **state) {
        dns_result d;

        assert_int_equal(parse("files=0 0\nsrc=hosts\nttl=600\naddr=::1\n", &d), 0);
        assert_true(d.from_hosts);
        assert_int_equal(d.l.n, 1);
        /* a failed lookup needs no address; its texts are escaped for the log */
        assert_int_equal(parse("files=0 0\nsrc=dns\nservers=\"x\\\x01\nares=11\n"
                               "err=no answer within 5000ms\n", &d), 0);
        assert_int_equal(d.ares, 11);
        assert_int_equal(d.l.n, 0);
        assert_string_equal(d.servers, "\\x22x\\x5c\\x01");
        assert_string_equal(d.err, "no answer within 5000ms");
        /* a failed drop needs nothing else */
        assert_int_equal(parse("files=0 13\ndrop=1\n", &d), 0);
        assert_int_equal(d.drop_err, EPERM);
        assert_int_equal(d.resolv_err, EACCES);
        assert_false(d.have_src);
        /* more addresses than an answer holds: the first DNS_MAX_ADDRS */
        char many[8192] = "files=0 0\nsrc=dns\nttl=1\n";
        for (unsigned i = 0; i < DNS_MAX_ADDRS + 10; i++)
                snprintf(many + strlen(many), sizeof(many) - strlen(many), "addr=10.0.%u.%u\n",
                         i / 256, i % 256);
        assert_int_equal(parse(many, &d), 0);
        assert_int_equal(d.l.n, DNS_MAX_ADDRS);
        /* the bounds themselves */
        assert_int_equal(parse("files=4095 4095\nsrc=dns\nares=1000\nttl=4294967295\n", &d), 0);
        assert_int_equal(d.ttl, UINT32_MAX);
}

static void test_refused(void **state) {
        refused("");                                        /* says nothing */
        refused("files=0 0\n");                             /* no src */
        refused("files=0 0\nsrc=dns\nttl=5\n");             /* no address */
        refused("files=0 0\nsrc=dns\naddr=192.0.2.1\n");    /* no ttl */
        refused("files=0 0\nsrc=hosts\nttl=5\naddr=192.0.2.1"); /* last line unended */
        refused("src=dns\nsrc=dns\nttl=5\naddr=192.0.2.1\n"); /* src twice */
        refused("src=dns\nttl=5\nttl=6\naddr=192.0.2.1\n"); /* ttl twice */
        refused("src=named\nttl=5\naddr=192.0.2.1\n");      /* unknown source */
        refused("src=dns\nares=0\n");                       /* ARES_SUCCESS is no failure */
        refused("src=dns\nares=1001\n");
        refused("src=dns\nares=011\n");                     /* not canonical */
        refused("drop=0\n");
        refused("drop=4096\n");
        refused("files=0\nsrc=dns\nares=1\n");              /* one errno */
        refused("files=-1 0\nsrc=dns\nares=1\n");
        refused("src=dns\nttl=4294967296\naddr=192.0.2.1\n");
        refused("src=dns\nttl=5\naddr=192.0.2.256\n");
        refused("src=dns\nttl=5\naddr=fe80::1%1\n");        /* no scope in a reply */
        refused("src=dns\nttl=5\naddr=192.0.2.1\nbogus=1\n");
        refused("src=dns\nttl=5\naddr=192.0.2.1\nnoequals\n");
        /* a NUL inside */
        dns_result d;
        char nul[] = "src=dns\nares=1\n\0src=dns\n";
        assert_int_equal(dns_parse_reply(nul, sizeof(nul) - 1, &d), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_answer_from_dns),
                cmocka_unit_test(test_failures_and_hosts),
                cmocka_unit_test(test_refused),
        };
        return run_test_group(tests, NULL, NULL);
}
