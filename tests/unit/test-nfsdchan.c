/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/nfsdchan.h: knfsd nfs4.nametoid / nfs4.idtoname channel lines. The request lines are
 * what fs/nfsd/nfs4idmap.c writes (qword_add: '\\', ' ', '\n', '\t' as \ooo). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/nfsdchan.h>

static int req(nsid_nfsd_channel ch, const char *s, nsid_nfsd_request *r) {
        return nsid_nfsd_request_parse(ch, s, strlen(s), r);
}

static void test_escape(void **state) {
        char buf[64];
        assert_int_equal(nsid_qword_escape("a b\\c\n\td", 8, buf, sizeof(buf)), 20);
        assert_string_equal(buf, "a\\040b\\134c\\012\\011d");
        assert_int_equal(nsid_qword_escape("\x01\x7f\xc3\xa9", 4, buf, sizeof(buf)), 10);
        assert_string_equal(buf, "\\001\\177\xc3\xa9"); /* UTF-8 stays raw */
        assert_int_equal(nsid_qword_escape("", 0, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_qword_escape("a b", 3, buf, 6), -ENOBUFS);
        assert_int_equal(nsid_qword_escape("a b", 3, buf, 7), 6);

        assert_int_equal(nsid_qword_unescape("a\\040b\\134c", 11, buf, sizeof(buf)), 5);
        assert_string_equal(buf, "a b\\c");
        assert_int_equal(nsid_qword_unescape("\\377", 4, buf, sizeof(buf)), 1);
        assert_int_equal((unsigned char) buf[0], 0xff);
        /* \000 (NUL), \400 (first digit > 3), short, \x, lone backslash, blank */
        assert_int_equal(nsid_qword_unescape("a\\000", 5, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_qword_unescape("\\400", 4, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_qword_unescape("\\04", 3, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_qword_unescape("\\x41", 4, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_qword_unescape("\\", 1, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_qword_unescape("a b", 3, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_qword_unescape("abc", 3, buf, 3), -ENAMETOOLONG);
        assert_int_equal(nsid_qword_unescape("abc", 3, buf, 4), 3);
}

static void test_request_nametoid(void **state) {
        nsid_nfsd_request r;
        assert_int_equal(req(NSID_NFSD_NAMETOID, "* user alice@example.test\n", &r), 0);
        assert_int_equal(r.channel, NSID_NFSD_NAMETOID);
        assert_string_equal(r.authname, "*");
        assert_false(r.group);
        assert_string_equal(r.name, "alice@example.test");
        assert_int_equal(req(NSID_NFSD_NAMETOID, "unix group Domain\\040Users@ad", &r), 0);
        assert_true(r.group);
        assert_string_equal(r.name, "Domain Users@ad");
        /* a 127-byte name is the longest */
        char line[400], n[200];
        memset(n, 'a', 127);
        n[127] = '\0';
        snprintf(line, sizeof(line), "* user %s\n", n);
        assert_int_equal(req(NSID_NFSD_NAMETOID, line, &r), 0);
        n[127] = 'a', n[128] = '\0';
        snprintf(line, sizeof(line), "* user %s\n", n);
        assert_int_equal(req(NSID_NFSD_NAMETOID, line, &r), -ENAMETOOLONG);
}

static void test_request_idtoname(void **state) {
        nsid_nfsd_request r;
        assert_int_equal(req(NSID_NFSD_IDTONAME, "* group 100\n", &r), 0);
        assert_true(r.group);
        assert_int_equal(r.id, 100);
        assert_int_equal(req(NSID_NFSD_IDTONAME, "* user 4294967295\n", &r), 0);
        assert_int_equal(r.id, UINT32_MAX);
        assert_int_equal(req(NSID_NFSD_IDTONAME, "* user 4294967296\n", &r), -EINVAL);
        assert_int_equal(req(NSID_NFSD_IDTONAME, "* user -1\n", &r), -EINVAL);
        assert_int_equal(req(NSID_NFSD_IDTONAME, "* user 0100\n", &r), -EINVAL);
        assert_int_equal(req(NSID_NFSD_IDTONAME, "* user 1x\n", &r), -EINVAL);
}

static void test_request_malformed(void **state) {
        nsid_nfsd_request r;
        const char *bad[] = {
                "", "\n", "* user\n", "* user a b\n", "*  user a\n", " * user a\n",
                "* users a\n", "* USER a\n", "* user a\n\n", "* user a\nb\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(req(NSID_NFSD_NAMETOID, bad[i], &r), -EINVAL);
        /* embedded NUL */
        assert_int_equal(nsid_nfsd_request_parse(NSID_NFSD_NAMETOID, "* user a\0b\n", 11, &r),
                         -EINVAL);
        assert_int_equal(req(_NSID_NFSD_CHANNEL_MAX, "* user a\n", &r), -EINVAL);
        assert_int_equal(req(NSID_NFSD_NAMETOID, "* user a \n", &r), -EINVAL);
        assert_int_equal(req(NSID_NFSD_IDTONAME, "* user \n", &r), -EINVAL);
        assert_int_equal(req(NSID_NFSD_NAMETOID, "* users \n", &r), -EINVAL);
        assert_int_equal(req(NSID_NFSD_NAMETOID, "* user  \n", &r), -EINVAL);
}

/* knfsd's request for an owner string that starts with a NUL byte: qword_add() of the empty
 * name leaves "<authname> <type> \n". The kernel takes no reply for that key, so it is told
 * apart from a malformed line (-ENODATA): the daemon says what happens instead of "invalid". */
static void test_request_empty_name(void **state) {
        nsid_nfsd_request r;
        assert_int_equal(req(NSID_NFSD_NAMETOID, "* user \n", &r), -ENODATA);
        assert_int_equal(req(NSID_NFSD_NAMETOID, "192.0.2.0/24 group \n", &r), -ENODATA);
        assert_int_equal(req(NSID_NFSD_NAMETOID, "a\\040b user ", &r), -ENODATA);
}

static void test_reply_format(void **state) {
        nsid_nfsd_request r;
        nsid_nfsd_reply p;
        char buf[NSID_NFSD_LINE_MAX];

        assert_int_equal(req(NSID_NFSD_NAMETOID, "* user alice@example.test\n", &r), 0);
        int n = nsid_nfsd_reply_format(&r, 1900000000, false, 4001, NULL, buf, sizeof(buf));
        assert_string_equal(buf, "* user alice@example.test 1900000000 4001\n");
        assert_int_equal(n, (int) strlen(buf));
        /* ids above INT_MAX go as negative numbers (kstrtoint) and read back modulo 2^32 */
        assert_true(nsid_nfsd_reply_format(&r, 1900000000, false, 4294967294u, NULL, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "* user alice@example.test 1900000000 -2\n");
        assert_int_equal(nsid_nfsd_reply_parse(NSID_NFSD_NAMETOID, buf, strlen(buf), &p), 0);
        assert_int_equal(p.id, 4294967294u);
        /* negative: no id */
        assert_true(nsid_nfsd_reply_format(&r, 1900000000, true, 0, NULL, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "* user alice@example.test 1900000000\n");
        assert_int_equal(nsid_nfsd_reply_parse(NSID_NFSD_NAMETOID, buf, strlen(buf), &p), 0);
        assert_true(p.negative);
        assert_int_equal(nsid_nfsd_reply_format(&r, 1, false, UINT32_MAX, NULL, buf, sizeof(buf)),
                         -EINVAL);
        assert_int_equal(nsid_nfsd_reply_format(&r, 0, true, 0, NULL, buf, sizeof(buf)), -EINVAL);

        assert_int_equal(req(NSID_NFSD_IDTONAME, "unix\\040x group 100\n", &r), 0);
        assert_true(nsid_nfsd_reply_format(&r, 1900000000, false, 0, "Domain Users@ad", buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "unix\\040x group 100 1900000000 Domain\\040Users@ad\n");
        assert_int_equal(nsid_nfsd_reply_parse(NSID_NFSD_IDTONAME, buf, strlen(buf), &p), 0);
        assert_string_equal(p.key.authname, "unix x");
        assert_string_equal(p.name, "Domain Users@ad");
        assert_int_equal(p.key.id, 100);
        assert_int_equal(p.expiry, 1900000000);
        assert_true(nsid_nfsd_reply_format(&r, 1900000000, true, 0, NULL, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "unix\\040x group 100 1900000000\n");
        assert_int_equal(nsid_nfsd_reply_format(&r, 5, false, 0, "", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_nfsd_reply_format(&r, 5, false, 0, NULL, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(nsid_nfsd_reply_format(&r, 5, false, 0, "abc", buf, 10), -ENOBUFS);
}

static void test_reply_parse_strict(void **state) {
        nsid_nfsd_reply p;
        const char *bad[] = {
                "* user a 100 5",        /* no newline: the kernel refuses */
                "* user a 0 5\n",         /* expiry 0 */
                "* user a 5 x\n",         /* id not a number */
                "* user a 5 2147483648\n", /* kstrtoint overflow */
                "* user a 5 5 6\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(nsid_nfsd_reply_parse(NSID_NFSD_NAMETOID, bad[i],
                                                       strlen(bad[i]), &p), -EINVAL);
}

static void test_request_format_roundtrip(void **state) {
        nsid_nfsd_request r = { .channel = NSID_NFSD_NAMETOID, .group = false }, back;
        char buf[NSID_NFSD_LINE_MAX];
        strcpy(r.authname, "*");
        strcpy(r.name, "tab\there back\\slash");
        int n = nsid_nfsd_request_format(&r, buf, sizeof(buf));
        assert_string_equal(buf, "* user tab\\011here\\040back\\134slash\n");
        assert_int_equal(nsid_nfsd_request_parse(NSID_NFSD_NAMETOID, buf, (size_t) n, &back), 0);
        assert_memory_equal(&r, &back, sizeof(r));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_request_nametoid),
                cmocka_unit_test(test_request_idtoname),
                cmocka_unit_test(test_request_malformed),
                cmocka_unit_test(test_request_empty_name),
                cmocka_unit_test(test_reply_format),
                cmocka_unit_test(test_reply_parse_strict),
                cmocka_unit_test(test_request_format_roundtrip),
        };
        return run_test_group(tests, NULL, NULL);
}
