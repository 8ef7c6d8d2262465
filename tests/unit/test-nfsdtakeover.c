/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/nfsdtakeover.h: knfsd's client-id events as the lab kernels emit them (the order of
 * nfsd4_exchange_id(), nfsd4_create_session() and nfsd4_setclientid_confirm() in 6.1 and
 * 6.12), turned into takeovers. The lab scenario server-watch runs the real tracepoints. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <nsid/nfsdtakeover.h>

#define OWNER "Linux NFSv4.2 web"

static struct sockaddr_in sin4(const char *ip, unsigned port) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
        return a;
}

static void info(nsid_nfsd_takeovers *t, uint64_t clid, const char *addr, const char *name) {
        char buf[2048];
        int n = snprintf(buf, sizeof(buf),
                         "clientid: 0x%llx\naddress: \"%s\"\nstatus: confirmed\n"
                         "seconds from last renew: 1\nname: \"%s\"\nminor version: 2\n",
                         (unsigned long long) clid, addr, name);
        assert_int_equal(nsid_nfsd_takeovers_learn_info(t, buf, (size_t) n), 0);
}

static int feed(nsid_nfsd_takeovers *t, nsid_nfsd_event_kind k, uint64_t clid,
                const struct sockaddr_in *a, nsid_nfsd_change *c) {
        nsid_nfsd_event e = { .kind = k, .clientid = clid, .time_ns = 42,
                              .address = (const struct sockaddr *) a,
                              .address_len = a ? sizeof(*a) : 0 };
        return nsid_nfsd_takeovers_feed(t, &e, c);
}

/* v4.1, as nfsd4_exchange_id() case 5 then nfsd4_create_session() trace it: verf_mismatch
 * and replaced of the holder, then confirmed of the new record. */
static void steal(nsid_nfsd_takeovers *t, uint64_t holder, uint64_t next, const char *ip,
                  unsigned port, nsid_nfsd_change *c) {
        struct sockaddr_in to = sin4(ip, port);
        char addr[64];

        assert_int_equal(feed(t, NSID_NFSD_EVENT_VERF_MISMATCH, holder, &to, c), 0);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_REPLACED, holder, NULL, c),
                         NSID_NFSD_TAKEOVERS_CHANGE);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_CONFIRMED, next, NULL, &(nsid_nfsd_change) {}),
                         NSID_NFSD_TAKEOVERS_WANT_INFO);
        snprintf(addr, sizeof(addr), "%s:%u", ip, port);
        info(t, next, addr, OWNER);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_CONFIRMED, next, NULL, &(nsid_nfsd_change) {}),
                         0);
}

static void test_two_clients_take_turns(void **state) {
        nsid_nfsd_takeovers *t = NULL;
        nsid_nfsd_change c;

        (void) state;
        assert_int_equal(nsid_nfsd_takeovers_new(&t), 0);
        info(t, 0x100, "192.0.2.10:803", OWNER);
        steal(t, 0x100, 0x101, "192.0.2.11", 716, &c);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_TAKEOVER);
        assert_string_equal(c.owner_escaped, OWNER);
        assert_int_equal(c.owner_len, strlen(OWNER));
        assert_memory_equal(c.owner, OWNER, strlen(OWNER));
        assert_string_equal(c.from, "192.0.2.10:803");
        assert_string_equal(c.to, "192.0.2.11:716");
        assert_int_equal(c.clientid, 0x100);
        assert_int_equal(c.time_ns, 42);
        steal(t, 0x101, 0x102, "192.0.2.10", 803, &c);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_TAKEOVER);
        assert_string_equal(c.from, "192.0.2.11:716");
        assert_string_equal(c.to, "192.0.2.10:803");
        assert_int_equal(nsid_nfsd_takeovers_get_clients(t), 1);
        nsid_nfsd_takeovers_free(t);
}

/* One IP address (containers behind one NAT): the first replacement reads as a restart; the
 * first one coming back for it is a takeover. A client that only restarts stays a restart. */
static void test_same_address_restart_and_flapping(void **state) {
        nsid_nfsd_takeovers *t = NULL;
        nsid_nfsd_change c;

        (void) state;
        assert_int_equal(nsid_nfsd_takeovers_new(&t), 0);
        info(t, 0x200, "198.51.100.7:900", OWNER);
        steal(t, 0x200, 0x201, "198.51.100.7", 901, &c);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_RESTART);
        steal(t, 0x201, 0x202, "198.51.100.7", 900, &c);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_TAKEOVER);
        assert_string_equal(c.from, "198.51.100.7:901");
        /* a real restart: a new port, never the previous holder's */
        steal(t, 0x202, 0x203, "198.51.100.7", 950, &c);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_RESTART);
        nsid_nfsd_takeovers_free(t);
}

/* A holder the watcher never saw (gone before its info file was read): the change is
 * recorded, owner unknown, not called a takeover. */
static void test_unknown_holder(void **state) {
        nsid_nfsd_takeovers *t = NULL;
        struct sockaddr_in to = sin4("192.0.2.30", 700);
        nsid_nfsd_change c;

        (void) state;
        assert_int_equal(nsid_nfsd_takeovers_new(&t), 0);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_VERF_MISMATCH, 0x300, &to, &c), 0);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_REPLACED, 0x300, NULL, &c),
                         NSID_NFSD_TAKEOVERS_CHANGE);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_REPLACED);
        assert_string_equal(c.owner_escaped, "");
        assert_int_equal(c.owner_len, 0);
        assert_string_equal(c.from, "");
        assert_string_equal(c.to, "192.0.2.30:700");
        /* replaced with no traced requester (nfsd4_create_session()'s own replacement) */
        info(t, 0x301, "192.0.2.31:701", OWNER);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_REPLACED, 0x301, NULL, &c),
                         NSID_NFSD_TAKEOVERS_CHANGE);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_REPLACED);
        assert_string_equal(c.owner_escaped, OWNER);
        assert_string_equal(c.to, "");
        assert_int_equal(nsid_nfsd_takeovers_get_clients(t), 0);
        nsid_nfsd_takeovers_free(t);
}

static void test_refused_and_gone(void **state) {
        nsid_nfsd_takeovers *t = NULL;
        struct sockaddr_in to = sin4("192.0.2.40", 800);
        nsid_nfsd_change c;

        (void) state;
        assert_int_equal(nsid_nfsd_takeovers_new(&t), 0);
        info(t, 0x400, "192.0.2.41:2049", OWNER);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_CRED_MISMATCH, 0x400, &to, &c),
                         NSID_NFSD_TAKEOVERS_CHANGE);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_REFUSED);
        assert_string_equal(c.from, "192.0.2.41:2049");
        assert_string_equal(c.to, "192.0.2.40:800");
        assert_int_equal(nsid_nfsd_takeovers_get_clients(t), 1);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_GONE, 0x400, NULL, &c), 0);
        assert_int_equal(nsid_nfsd_takeovers_get_clients(t), 0);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_CONFIRMED, 0x400, NULL, &c),
                         NSID_NFSD_TAKEOVERS_WANT_INFO);
        nsid_nfsd_takeovers_free(t);
}

/* An owner string is the client's choice: any bytes, NUL and newlines included; handed
 * back raw and escaped, never as the raw bytes in the text. */
static void test_hostile_owner_from_trace(void **state) {
        static const uint8_t name[] = "web\n 1.2.3.4:5 nfsd_clid_fresh: \"\\\x00\x7f\xff";
        nsid_nfsd_takeovers *t = NULL;
        struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(1023) };
        struct sockaddr_in to = sin4("192.0.2.50", 600);
        nsid_nfsd_event e = { .kind = NSID_NFSD_EVENT_FRESH, .clientid = 0x500, .name = name,
                              .name_len = sizeof(name) - 1,
                              .address = (const struct sockaddr *) &a6,
                              .address_len = sizeof(a6) };
        nsid_nfsd_change c;

        (void) state;
        assert_int_equal(inet_pton(AF_INET6, "fd00::1", &a6.sin6_addr), 1);
        assert_int_equal(nsid_nfsd_takeovers_new(&t), 0);
        assert_int_equal(nsid_nfsd_takeovers_feed(t, &e, &c), 0);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_VERF_MISMATCH, 0x500, &to, &c), 0);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_REPLACED, 0x500, NULL, &c),
                         NSID_NFSD_TAKEOVERS_CHANGE);
        assert_int_equal(c.kind, NSID_NFSD_CHANGE_TAKEOVER);
        assert_string_equal(c.from, "[fd00::1]:1023");
        assert_int_equal(c.owner_len, sizeof(name) - 1);
        assert_memory_equal(c.owner, name, sizeof(name) - 1);
        assert_string_equal(c.owner_escaped,
                            "web\\x0a 1.2.3.4:5 nfsd_clid_fresh: \\x22\\x5c\\x00\\x7f\\xff");
        for (const char *p = c.owner_escaped; *p; p++)
                assert_true(*p >= 0x20 && *p < 0x7f && *p != '"');
        nsid_nfsd_takeovers_free(t);
}

static void test_malformed_events(void **state) {
        nsid_nfsd_takeovers *t = NULL;
        struct sockaddr_in to = sin4("192.0.2.60", 600);
        struct sockaddr un = { .sa_family = AF_UNIX };
        static uint8_t big[NSID_NFSD_OWNER_MAX + 1];
        nsid_nfsd_event e = { .kind = NSID_NFSD_EVENT_FRESH, .name = big,
                              .name_len = sizeof(big), .address = (struct sockaddr *) &to,
                              .address_len = sizeof(to) };
        nsid_nfsd_change c;

        (void) state;
        assert_int_equal(nsid_nfsd_takeovers_new(&t), 0);
        assert_int_equal(nsid_nfsd_takeovers_feed(t, &e, &c), -EINVAL);  /* name too long */
        e.name_len = 3;
        e.address_len = 4;                                                /* short sockaddr */
        assert_int_equal(nsid_nfsd_takeovers_feed(t, &e, &c), -EINVAL);
        e.address = &un;
        e.address_len = sizeof(un);                                       /* not IP */
        assert_int_equal(nsid_nfsd_takeovers_feed(t, &e, &c), -EINVAL);
        assert_int_equal(feed(t, NSID_NFSD_EVENT_VERF_MISMATCH, 1, NULL, &c), -EINVAL);
        e.kind = _NSID_NFSD_EVENT_KIND_MAX;
        assert_int_equal(nsid_nfsd_takeovers_feed(t, &e, &c), -EINVAL);
        assert_int_equal(nsid_nfsd_takeovers_learn_info(t, "clientid: zz\n", 13), -EBADMSG);
        /* an info file without a clientid line cannot be followed */
        assert_int_equal(nsid_nfsd_takeovers_learn_info(
                                 t, "address: \"1.2.3.4:5\"\nname: \"x\"\n", 30), -EBADMSG);
        assert_int_equal(nsid_nfsd_takeovers_get_clients(t), 0);
        assert_null(nsid_nfsd_change_kind_to_string(_NSID_NFSD_CHANGE_KIND_MAX));
        assert_string_equal(nsid_nfsd_change_kind_to_string(NSID_NFSD_CHANGE_REFUSED), "refused");
        nsid_nfsd_takeovers_free(t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_two_clients_take_turns),
                cmocka_unit_test(test_same_address_restart_and_flapping),
                cmocka_unit_test(test_unknown_holder),
                cmocka_unit_test(test_refused_and_gone),
                cmocka_unit_test(test_hostile_owner_from_trace),
                cmocka_unit_test(test_malformed_events),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
