/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/ctlproto.h: the nsid-idmapd control socket lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/ctlproto.h>

static int parse(const char *s, nsid_ctl_request *r) {
        return nsid_ctl_request_parse(s, strlen(s), r);
}

static void test_requests(void **state) {
        nsid_ctl_request r;
        assert_int_equal(parse("status\n", &r), 0);
        assert_int_equal(r.command, NSID_CTL_STATUS);
        assert_int_equal(parse("metrics\n", &r), 0);
        assert_int_equal(r.command, NSID_CTL_METRICS);
        assert_int_equal(parse("metrics all\n", &r), -EINVAL);
        assert_int_equal(parse("flush", &r), 0);
        assert_int_equal(r.command, NSID_CTL_FLUSH);
        assert_int_equal(r.target, NSID_CTL_TARGET_ALL);
        assert_int_equal(parse("flush netns:4026531840\n", &r), 0);
        assert_int_equal(r.target, NSID_CTL_TARGET_NETNS);
        assert_int_equal(r.netns_ino, 4026531840u);
        assert_int_equal(parse("flush pid:42\n", &r), 0);
        assert_int_equal(r.pid, 42);
        assert_int_equal(parse("register 1234\n", &r), 0);
        assert_int_equal(r.command, NSID_CTL_REGISTER);
        assert_int_equal(r.pid, 1234);
        assert_int_equal(parse("route pid:88\n", &r), 0);
        assert_int_equal(r.command, NSID_CTL_ROUTE);
        assert_int_equal(r.target, NSID_CTL_TARGET_PID);
        assert_int_equal(r.pid, 88);
        assert_int_equal(parse("route host", &r), 0);
        assert_int_equal(r.target, NSID_CTL_TARGET_HOST);

        assert_int_equal(parse("lookup pid:77 uid alice@example.test\n", &r), 0);
        assert_int_equal(r.command, NSID_CTL_LOOKUP);
        assert_int_equal(r.target, NSID_CTL_TARGET_PID);
        assert_int_equal(r.kind, NSID_IDMAP_KEY_UID);
        assert_string_equal(r.name, "alice@example.test");
        assert_int_equal(r.view, NSID_CTL_VIEW_DEFAULT);
        assert_int_equal(parse("lookup host group 4294967294 ns-ids\n", &r), 0);
        assert_int_equal(r.kind, NSID_IDMAP_KEY_GROUP);
        assert_int_equal(r.id, 4294967294u);
        assert_int_equal(r.view, NSID_CTL_VIEW_NS_IDS);
        assert_int_equal(parse("lookup netns:9 gid Domain\\040Users@ad host-ids", &r), 0);
        assert_string_equal(r.name, "Domain Users@ad");
        assert_int_equal(r.view, NSID_CTL_VIEW_HOST_IDS);
}

static void test_bad_requests(void **state) {
        nsid_ctl_request r;
        const char *bad[] = {
                "", "\n", "status x", "status  ", " status", "flush everything",
                "flush pid:0", "flush pid:-1", "flush pid:4194305", "flush netns:0",
                "register", "register 0", "register 01", "register x",
                "route", "route all", "route pid:0", "route host host", "route 12",
                "lookup all uid a", "lookup host uid", "lookup host uid a b c",
                "lookup host uidx a", "lookup host user 4294967295", "lookup host user -1",
                "lookup host uid a:b", "lookup host uid a@@b", "lookup host uid @a",
                "lookup host uid a\\000", "lookup host uid a sideways",
                "status\nstatus",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int rr = parse(bad[i], &r);
                if (rr != -EINVAL)
                        fail_msg("\"%s\" gave %d", bad[i], rr);
        }
        assert_int_equal(parse("reboot\n", &r), -EOPNOTSUPP);
        char line[400] = "lookup host uid ";
        memset(line + strlen(line), 'a', 128);
        assert_int_equal(parse(line, &r), -ENAMETOOLONG);
}

static void test_format_roundtrip(void **state) {
        nsid_ctl_request r = { .command = NSID_CTL_LOOKUP, .target = NSID_CTL_TARGET_PID,
                               .pid = 5, .kind = NSID_IDMAP_KEY_GID,
                               .view = NSID_CTL_VIEW_HOST_IDS }, back;
        char buf[NSID_CTL_LINE_MAX];
        strcpy(r.name, "x y\\z@d");
        int n = nsid_ctl_request_format(&r, buf, sizeof(buf));
        assert_string_equal(buf, "lookup pid:5 gid x\\040y\\134z@d host-ids\n");
        assert_int_equal(nsid_ctl_request_parse(buf, (size_t) n, &back), 0);
        assert_memory_equal(&r, &back, sizeof(r));

        nsid_ctl_request f = { .command = NSID_CTL_FLUSH, .target = NSID_CTL_TARGET_ALL };
        assert_int_equal(nsid_ctl_request_format(&f, buf, sizeof(buf)), 10);
        assert_string_equal(buf, "flush all\n");
        assert_int_equal(nsid_ctl_request_format(&f, buf, 5), -ENOBUFS);
        r.target = NSID_CTL_TARGET_ALL;
        assert_int_equal(nsid_ctl_request_format(&r, buf, sizeof(buf)), -EINVAL);

        nsid_ctl_request rt = { .command = NSID_CTL_ROUTE, .target = NSID_CTL_TARGET_PID,
                                .pid = 4194304 };
        n = nsid_ctl_request_format(&rt, buf, sizeof(buf));
        assert_string_equal(buf, "route pid:4194304\n");
        assert_int_equal(nsid_ctl_request_parse(buf, (size_t) n, &back), 0);
        assert_memory_equal(&rt, &back, sizeof(rt));
        rt.target = NSID_CTL_TARGET_ALL;
        assert_int_equal(nsid_ctl_request_format(&rt, buf, sizeof(buf)), -EINVAL);

        nsid_ctl_request m = { .command = NSID_CTL_METRICS };
        assert_int_equal(nsid_ctl_request_format(&m, buf, sizeof(buf)), 8);
        assert_string_equal(buf, "metrics\n");
}

static void test_replies(void **state) {
        nsid_ctl_reply p;
        char v[NSID_CTL_VALUE_MAX];
        uint32_t ttl;
        bool cached;
        const char *ok = "ok bob\\040x@d 600 cache\n";
        assert_int_equal(nsid_ctl_reply_parse(ok, strlen(ok), &p), 0);
        assert_int_equal(p.kind, NSID_CTL_REPLY_OK);
        assert_int_equal(nsid_ctl_lookup_reply_parse(&p, v, &ttl, &cached), 0);
        assert_string_equal(v, "bob x@d");
        assert_int_equal(ttl, 600);
        assert_true(cached);
        const char *neg = "negative 60\n";
        assert_int_equal(nsid_ctl_reply_parse(neg, strlen(neg), &p), 0);
        assert_int_equal(p.kind, NSID_CTL_REPLY_NEGATIVE);
        assert_int_equal(p.ttl, 60);
        const char *err = "error 13 permission\\040denied\n";
        assert_int_equal(nsid_ctl_reply_parse(err, strlen(err), &p), 0);
        assert_int_equal(p.kind, NSID_CTL_REPLY_ERROR);
        assert_int_equal(p.error, 13);
        assert_string_equal(p.message, "permission denied");
        assert_int_equal(nsid_ctl_lookup_reply_parse(&p, v, &ttl, &cached), -EINVAL);
        const char *bad[] = { "", "okay", "negative", "negative x", "error 0 x", "error x",
                              "error 5000 x", "ok a 1 maybe" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (nsid_ctl_reply_parse(bad[i], strlen(bad[i]), &p) == 0)
                        assert_int_not_equal(nsid_ctl_lookup_reply_parse(&p, v, &ttl, &cached), 0);
        }
        const char *st = "ok {\"namespaces\":[]}\n";
        assert_int_equal(nsid_ctl_reply_parse(st, strlen(st), &p), 0);
        assert_int_equal(p.rest_len, strlen("{\"namespaces\":[]}"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_requests),
                cmocka_unit_test(test_bad_requests),
                cmocka_unit_test(test_format_roundtrip),
                cmocka_unit_test(test_replies),
        };
        return run_test_group(tests, NULL, NULL);
}
