/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/ctlframe.h: nsid-idmap's lookup frames on nsid-idmapd's control socket. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <nsid/ctlframe.h>

static void test_request_roundtrip(void **state) {
        nsid_ctl_frame_request f;
        nsid_ctl_request r;
        (void) state;

        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_UID, 0, "alice@x.test", 12), 0);
        assert_int_equal(sizeof(f), 16 + NSID_CTL_VALUE_MAX);
        assert_int_equal(((const char *) &f)[0], '\0'); /* never the start of a line */
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), 0);
        assert_int_equal(r.command, NSID_CTL_LOOKUP);
        assert_int_equal(r.target, NSID_CTL_TARGET_HOST);
        assert_int_equal(r.view, NSID_CTL_VIEW_HOST_IDS);
        assert_int_equal(r.kind, NSID_IDMAP_KEY_UID);
        assert_string_equal(r.name, "alice@x.test");

        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_GROUP, 4294967294u, NULL, 0), 0);
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), 0);
        assert_int_equal(r.kind, NSID_IDMAP_KEY_GROUP);
        assert_int_equal(r.id, 4294967294u);
        assert_string_equal(r.name, "");

        /* the name is taken by its length, not up to a NUL */
        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_GID, 0, "staffXX", 5), 0);
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), 0);
        assert_string_equal(r.name, "staff");
}

static void test_request_init_refuses(void **state) {
        nsid_ctl_frame_request f;
        char longname[NSID_CTL_VALUE_MAX + 1];
        (void) state;

        memset(longname, 'a', sizeof(longname));
        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_UID, 0, longname,
                                                     NSID_CTL_VALUE_MAX), -ENAMETOOLONG);
        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_UID, 0, longname,
                                                     NSID_CTL_VALUE_MAX - 1), 0);
        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_UID, 0, "", 0), -EINVAL);
        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_UID, 0, "a:b", 3), -EINVAL);
        assert_int_equal(nsid_ctl_frame_request_init(&f, NSID_IDMAP_KEY_USER, UINT32_MAX, NULL, 0), -EINVAL);
        assert_int_equal(nsid_ctl_frame_request_init(&f, (nsid_idmap_key_kind) 9, 1, NULL, 0), -EINVAL);
}

/* Every way a hostile client can bend a valid frame is refused. */
static void test_request_parse_refuses(void **state) {
        nsid_ctl_frame_request good, f;
        nsid_ctl_request r;
        (void) state;

        assert_int_equal(nsid_ctl_frame_request_init(&good, NSID_IDMAP_KEY_UID, 0, "bob", 3), 0);
        assert_int_equal(nsid_ctl_frame_request_parse(&good, sizeof(good) - 1, &r), -EBADMSG);
        assert_int_equal(nsid_ctl_frame_request_parse(&good, 0, &r), -EBADMSG);
        f = good, f.magic[3] = '2';
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EBADMSG);
        f = good, f.flags = 1;
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, f.kind = 4;
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, f.id = 7; /* an id beside a name */
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, memset(f.name, 'a', sizeof(f.name)); /* no NUL */
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, f.name[10] = 'x'; /* not NUL-padded */
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, f.name[1] = ':';
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, f.name[1] = '\n';
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, memset(f.name, 0, sizeof(f.name)); /* an empty name */
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);

        assert_int_equal(nsid_ctl_frame_request_init(&good, NSID_IDMAP_KEY_USER, 5, NULL, 0), 0);
        f = good, f.id = UINT32_MAX;
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        f = good, f.name[0] = 'a'; /* a name beside an id */
        assert_int_equal(nsid_ctl_frame_request_parse(&f, sizeof(f), &r), -EINVAL);
        assert_int_equal(nsid_ctl_frame_request_parse(&good, sizeof(good), &r), 0);
}

static void test_replies(void **state) {
        nsid_ctl_frame_reply f;
        (void) state;

        assert_int_equal(nsid_ctl_frame_reply_init(&f, NSID_IDMAP_KEY_UID, 0, 1000, NULL, 600, true), 0);
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_UID), 0);
        assert_int_equal(f.id, 1000);
        assert_int_equal(f.ttl, 600);
        assert_int_equal(f.flags, NSID_CTL_FRAME_CACHED);
        /* an id answer is no answer to a name question */
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);

        assert_int_equal(nsid_ctl_frame_reply_init(&f, NSID_IDMAP_KEY_USER, 0, 0, "alice@x.test", 60, false), 0);
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), 0);
        assert_string_equal(f.value, "alice@x.test");
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_GID), -EBADMSG);

        assert_int_equal(nsid_ctl_frame_reply_init(&f, NSID_IDMAP_KEY_GROUP, ENOENT, 0, NULL, 30, false), 0);
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_GROUP), 0);
        assert_int_equal(f.status, ENOENT);

        /* answers that must not go out */
        assert_int_equal(nsid_ctl_frame_reply_init(&f, NSID_IDMAP_KEY_UID, 0, UINT32_MAX, NULL, 1, false), -EINVAL);
        assert_int_equal(nsid_ctl_frame_reply_init(&f, NSID_IDMAP_KEY_USER, 0, 0, "a:b", 1, false), -EINVAL);
        assert_int_equal(nsid_ctl_frame_reply_init(&f, NSID_IDMAP_KEY_USER, 0, 0, "", 1, false), -EINVAL);
        assert_int_equal(nsid_ctl_frame_reply_init(&f, NSID_IDMAP_KEY_USER, 5000, 0, NULL, 1, false), -EINVAL);
}

/* A daemon's reply bent in every field is refused by the helper. */
static void test_reply_check_refuses(void **state) {
        nsid_ctl_frame_reply good, f;
        (void) state;

        assert_int_equal(nsid_ctl_frame_reply_init(&good, NSID_IDMAP_KEY_USER, 0, 0, "bob@x", 60, false), 0);
        assert_int_equal(nsid_ctl_frame_reply_check(&good, sizeof(good) + 1, NSID_IDMAP_KEY_USER), -EBADMSG);
        assert_int_equal(nsid_ctl_frame_reply_check("error 13 x\n", 11, NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, f.magic[0] = 'e';
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, f.flags = 2;
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, f.status = 4096;
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, f.id = 3;
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, f.value[3] = ':';
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, f.value[100] = 'z';
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, memset(f.value, '@', sizeof(f.value));
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);
        f = good, f.status = ENOENT; /* a negative reply with a name in it */
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_USER), -EBADMSG);

        assert_int_equal(nsid_ctl_frame_reply_init(&good, NSID_IDMAP_KEY_UID, 0, 7, NULL, 60, false), 0);
        f = good, f.id = UINT32_MAX;
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_UID), -EBADMSG);
        f = good, f.status = EIO; /* an error with an id in it */
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_UID), -EBADMSG);
        f = good, f.value[0] = '1';
        assert_int_equal(nsid_ctl_frame_reply_check(&f, sizeof(f), NSID_IDMAP_KEY_UID), -EBADMSG);
        assert_int_equal(nsid_ctl_frame_reply_check(&good, sizeof(good), (nsid_idmap_key_kind) 4), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_request_roundtrip),
                cmocka_unit_test(test_request_init_refuses),
                cmocka_unit_test(test_request_parse_refuses),
                cmocka_unit_test(test_replies),
                cmocka_unit_test(test_reply_check_refuses),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
