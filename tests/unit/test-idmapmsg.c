/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/idmapmsg.h: struct idmap_msg upcalls and downcalls, checked against the rules of
 * fs/nfs/nfs4idmap.c (idmap_pipe_downcall, nfs_idmap_read_and_verify_message). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/idmapmsg.h>

/* The kernel's struct, spelled out as in include/uapi/linux/nfs_idmap.h. */
struct kernel_idmap_msg {
        uint8_t im_type;
        uint8_t im_conv;
        char im_name[128];
        uint32_t im_id;
        uint8_t im_status;
};

static struct kernel_idmap_msg upcall_name(uint8_t type, const char *name) {
        struct kernel_idmap_msg m;
        memset(&m, 0, sizeof(m));
        m.im_type = type;
        m.im_conv = NSID_IDMAP_CONV_NAMETOID;
        strcpy(m.im_name, name);
        return m;
}

static struct kernel_idmap_msg upcall_id(uint8_t type, uint32_t id) {
        struct kernel_idmap_msg m;
        memset(&m, 0, sizeof(m));
        m.im_type = type;
        m.im_conv = NSID_IDMAP_CONV_IDTONAME;
        m.im_id = id;
        return m;
}

static void test_layout(void **state) {
        assert_int_equal(sizeof(struct kernel_idmap_msg), 140);
        assert_int_equal(sizeof(nsid_idmap_msg), NSID_IDMAP_MSG_SIZE);
        assert_int_equal(offsetof(nsid_idmap_msg, im_id), offsetof(struct kernel_idmap_msg, im_id));
        assert_int_equal(offsetof(nsid_idmap_msg, im_status),
                         offsetof(struct kernel_idmap_msg, im_status));
}

static void test_parse_valid(void **state) {
        nsid_idmap_request rq;
        struct kernel_idmap_msg m = upcall_name(NSID_IDMAP_TYPE_USER, "alice@example.test");
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(rq.type, NSID_IDMAP_TYPE_USER);
        assert_int_equal(rq.conv, NSID_IDMAP_CONV_NAMETOID);
        assert_string_equal(rq.name, "alice@example.test");

        m = upcall_name(NSID_IDMAP_TYPE_GROUP, "Domain Users@ad.example");
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(rq.type, NSID_IDMAP_TYPE_GROUP);

        /* 126-byte name: the longest accepted (127 may be the kernel's silent cut) */
        char n126[127];
        memset(n126, 'a', 126);
        n126[126] = '\0';
        m = upcall_name(NSID_IDMAP_TYPE_USER, n126);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(strlen(rq.name), 126);
        /* UTF-8 names */
        m = upcall_name(NSID_IDMAP_TYPE_USER, "j\xc3\xbcrgen@example.test");
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_string_equal(rq.name, "j\xc3\xbcrgen@example.test");

        m = upcall_id(NSID_IDMAP_TYPE_USER, 0);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(rq.conv, NSID_IDMAP_CONV_IDTONAME);
        assert_int_equal(rq.id, 0);
        assert_string_equal(rq.name, "");
        m = upcall_id(NSID_IDMAP_TYPE_GROUP, 4294967294u);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(rq.id, 4294967294u);
}

static void test_parse_invalid(void **state) {
        nsid_idmap_request rq;
        memset(&rq, 0x5a, sizeof(rq));
        nsid_idmap_request before = rq;
        struct kernel_idmap_msg m = upcall_name(NSID_IDMAP_TYPE_USER, "alice@example.test");
        uint8_t big[141] = {};

        /* sizes */
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, 139, &rq), -EBADMSG);
        memcpy(big, &m, sizeof(m));
        assert_int_equal(nsid_idmap_msg_parse_upcall(big, 141, &rq), -EBADMSG);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, 0, &rq), -EBADMSG);
        /* type, conv, status */
        m.im_type = 2;
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        m = upcall_name(NSID_IDMAP_TYPE_USER, "alice");
        m.im_conv = 2;
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        m = upcall_name(NSID_IDMAP_TYPE_USER, "alice");
        m.im_status = NSID_IDMAP_STATUS_SUCCESS;
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        /* names: empty, unterminated, control bytes, ':', "@@", edge '@' */
        m = upcall_name(NSID_IDMAP_TYPE_USER, "");
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        memset(m.im_name, 'a', sizeof(m.im_name));
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        /* 127 bytes: what the kernel makes of any longer owner (match_strlcpy), refused */
        char n127[128];
        memset(n127, 'a', 127);
        n127[127] = '\0';
        m = upcall_name(NSID_IDMAP_TYPE_USER, n127);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        const char *bad[] = { "a\nb", "a:b", "a@@b", "@a", "a@", "\x7f", "tab\there",
                              /* invalid UTF-8: continuation byte alone, overlong '/',
                               * surrogate, cut sequence, 0xff, above U+10FFFF */
                              "al\x80ice", "a\xc0\xaf" "b", "a\xed\xa0\x80" "b", "a\xe2\x82",
                              "\xff", "\xf4\x90\x80\x80" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                m = upcall_name(NSID_IDMAP_TYPE_GROUP, bad[i]);
                assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        }
        /* the invalid id */
        m = upcall_id(NSID_IDMAP_TYPE_USER, UINT32_MAX);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        /* untouched on failure */
        assert_memory_equal(&rq, &before, sizeof(rq));
        assert_int_equal(nsid_idmap_msg_parse_upcall(NULL, 140, &rq), -EINVAL);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, 140, NULL), -EINVAL);
}

static void test_reply_nametoid(void **state) {
        nsid_idmap_request rq;
        nsid_idmap_msg out;
        struct kernel_idmap_msg m = upcall_name(NSID_IDMAP_TYPE_USER, "alice@example.test");
        uint32_t id = 0;

        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 4001, NULL, &out), 0);
        /* byte-exact: what the kernel reads */
        struct kernel_idmap_msg want;
        memset(&want, 0, sizeof(want));
        want.im_type = NSID_IDMAP_TYPE_USER;
        want.im_conv = NSID_IDMAP_CONV_NAMETOID;
        strcpy(want.im_name, "alice@example.test");
        want.im_id = 4001;
        want.im_status = NSID_IDMAP_STATUS_SUCCESS;
        assert_memory_equal(&out, &want, 140);
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &out, sizeof(out), &id, NULL), 1);
        assert_int_equal(id, 4001);
        /* the invalid id is never sent as a success */
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, UINT32_MAX, NULL, &out), -EINVAL);
        /* failure: matching, no SUCCESS bit, kernel negates */
        assert_int_equal(nsid_idmap_msg_build_failure(&rq, NSID_IDMAP_STATUS_LOOKUPFAIL, &out), 0);
        assert_int_equal(out.im_status, NSID_IDMAP_STATUS_LOOKUPFAIL);
        assert_string_equal(out.im_name, "alice@example.test");
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &out, sizeof(out), NULL, NULL), 0);
        assert_int_equal(nsid_idmap_msg_build_failure(&rq, NSID_IDMAP_STATUS_SUCCESS, &out),
                         -EINVAL);
}

static void test_reply_idtoname(void **state) {
        nsid_idmap_request rq;
        nsid_idmap_msg out;
        char name[128];
        struct kernel_idmap_msg m = upcall_id(NSID_IDMAP_TYPE_GROUP, 100);

        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 0, "staff@example.test", &out), 0);
        assert_int_equal(out.im_type, NSID_IDMAP_TYPE_GROUP);
        assert_int_equal(out.im_conv, NSID_IDMAP_CONV_IDTONAME);
        assert_int_equal(out.im_id, 100);
        assert_int_equal(out.im_status, NSID_IDMAP_STATUS_SUCCESS);
        /* every byte after the name is zero (no stack garbage to the kernel) */
        for (size_t i = strlen("staff@example.test"); i < 128; i++)
                assert_int_equal(out.im_name[i], 0);
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &out, sizeof(out), NULL, name), 1);
        assert_string_equal(name, "staff@example.test");
        /* bad answers: NULL, empty, 128 bytes, invalid characters */
        char n128[129];
        memset(n128, 'b', 128);
        n128[128] = '\0';
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 0, NULL, &out), -EINVAL);
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 0, "", &out), -EINVAL);
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 0, n128, &out), -EINVAL);
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 0, "a:b", &out), -EINVAL);
        n128[127] = '\0';
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 0, n128, &out), 0);
}

/* An upcall the parser refuses is still answered: a failure echoing what it can. */
static void test_failure_raw(void **state) {
        nsid_idmap_msg out;
        struct kernel_idmap_msg m = upcall_name(NSID_IDMAP_TYPE_GROUP, "a:b@example.test");
        nsid_idmap_request rq;

        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), -EINVAL);
        assert_int_equal(nsid_idmap_msg_build_failure_raw(&m, sizeof(m), 0, &out), 0);
        assert_int_equal(out.im_type, NSID_IDMAP_TYPE_GROUP);
        assert_int_equal(out.im_conv, NSID_IDMAP_CONV_NAMETOID);
        assert_memory_equal(out.im_name, m.im_name, 128);
        assert_int_equal(out.im_status, NSID_IDMAP_STATUS_LOOKUPFAIL);
        /* what the kernel does with it: a failure (no SUCCESS bit), whatever it echoes */
        m = upcall_name(NSID_IDMAP_TYPE_GROUP, "ok@example.test");
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &out, sizeof(out), NULL, NULL), 0);

        /* wrong type and conv, an unterminated name, the id: echoed as they are */
        memset(&m, 0, sizeof(m));
        m.im_type = 0xfe;
        m.im_conv = 0x7;
        memset(m.im_name, 'x', sizeof(m.im_name));
        m.im_id = 0xdeadbeef;
        m.im_status = 0x55;
        assert_int_equal(nsid_idmap_msg_build_failure_raw(&m, sizeof(m),
                                                          NSID_IDMAP_STATUS_INVALIDMSG, &out), 0);
        assert_int_equal(out.im_type, 0xfe);
        assert_int_equal(out.im_conv, 0x7);
        assert_memory_equal(out.im_name, m.im_name, 128);
        assert_int_equal(out.im_id, 0xdeadbeef);
        assert_int_equal(out.im_status, NSID_IDMAP_STATUS_INVALIDMSG);
        assert_int_equal(((const uint8_t *) &out)[137] | ((const uint8_t *) &out)[138] |
                                 ((const uint8_t *) &out)[139], 0); /* padding */

        /* short and long messages: what is there, zeros after it */
        uint8_t big[300];
        memset(big, 0xab, sizeof(big));
        big[0] = NSID_IDMAP_TYPE_USER;
        big[1] = NSID_IDMAP_CONV_IDTONAME;
        assert_int_equal(nsid_idmap_msg_build_failure_raw(big, 3, 0, &out), 0);
        assert_int_equal(out.im_type, NSID_IDMAP_TYPE_USER);
        assert_int_equal(out.im_conv, NSID_IDMAP_CONV_IDTONAME);
        assert_int_equal((uint8_t) out.im_name[0], 0xab);
        assert_int_equal(out.im_name[1], 0);
        assert_int_equal(out.im_id, 0);
        assert_int_equal(nsid_idmap_msg_build_failure_raw(big, sizeof(big), 0, &out), 0);
        assert_int_equal(out.im_id, 0xababababu);
        assert_int_equal(out.im_status, NSID_IDMAP_STATUS_LOOKUPFAIL);
        assert_int_equal(nsid_idmap_msg_build_failure_raw(NULL, 0, 0, &out), 0);
        assert_int_equal(out.im_type, 0);
        assert_int_equal(out.im_status, NSID_IDMAP_STATUS_LOOKUPFAIL);
        /* never a success */
        assert_int_equal(nsid_idmap_msg_build_failure_raw(big, 140, NSID_IDMAP_STATUS_SUCCESS,
                                                          &out), -EINVAL);
        assert_int_equal(nsid_idmap_msg_build_failure_raw(NULL, 1, 0, &out), -EINVAL);
}

static void test_check_reply_mismatch(void **state) {
        nsid_idmap_request rq;
        nsid_idmap_msg out;
        struct kernel_idmap_msg m = upcall_name(NSID_IDMAP_TYPE_USER, "alice@example.test");

        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 5, NULL, &out), 0);
        nsid_idmap_msg bad = out;
        bad.im_type = NSID_IDMAP_TYPE_GROUP;
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &bad, 140, NULL, NULL), -ENOKEY);
        bad = out;
        bad.im_conv = NSID_IDMAP_CONV_IDTONAME;
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &bad, 140, NULL, NULL), -ENOKEY);
        bad = out;
        bad.im_name[0] = 'A';
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &bad, 140, NULL, NULL), -ESTALE);
        bad = out;
        memset(bad.im_name, 'x', 128);
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &bad, 140, NULL, NULL), -EINVAL);
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &out, 139, NULL, NULL), -EBADMSG);

        m = upcall_id(NSID_IDMAP_TYPE_USER, 7);
        assert_int_equal(nsid_idmap_msg_parse_upcall(&m, sizeof(m), &rq), 0);
        assert_int_equal(nsid_idmap_msg_build_reply(&rq, 0, "bob@x", &out), 0);
        out.im_id = 8;
        assert_int_equal(nsid_idmap_msg_check_reply(&rq, &out, 140, NULL, NULL), -ESTALE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_layout),
                cmocka_unit_test(test_parse_valid),
                cmocka_unit_test(test_parse_invalid),
                cmocka_unit_test(test_reply_nametoid),
                cmocka_unit_test(test_reply_idtoname),
                cmocka_unit_test(test_failure_raw),
                cmocka_unit_test(test_check_reply_mismatch),
        };
        return run_test_group(tests, NULL, NULL);
}
