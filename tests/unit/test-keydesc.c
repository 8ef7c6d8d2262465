/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/keyring.h: id_resolver descriptions, KEYCTL_DESCRIBE text, dns_resolver requests,
 * /proc/keys lines and the .request_key_auth description. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/keyring.h>

static int parse(const char *s, nsid_idmap_keydesc *kd) {
        return nsid_idmap_keydesc_parse(s, strlen(s), kd);
}

static void test_keydesc_valid(void **state) {
        nsid_idmap_keydesc *kd = malloc(sizeof(*kd));
        assert_non_null(kd);
        assert_int_equal(parse("uid:alice@example.test", kd), 0);
        assert_int_equal(kd->kind, NSID_IDMAP_KEY_UID);
        assert_string_equal(kd->name, "alice@example.test");
        assert_int_equal(parse("gid:staff@example.test", kd), 0);
        assert_int_equal(kd->kind, NSID_IDMAP_KEY_GID);
        assert_int_equal(parse("user:0", kd), 0);
        assert_int_equal(kd->kind, NSID_IDMAP_KEY_USER);
        assert_int_equal(kd->id, 0);
        assert_int_equal(parse("group:4294967294", kd), 0);
        assert_int_equal(kd->kind, NSID_IDMAP_KEY_GROUP);
        assert_int_equal(kd->id, 4294967294u);
        assert_int_equal(parse("uid:Domain Users@ad.example", kd), 0); /* blanks are legal */
        assert_int_equal(parse("uid:nfs/host.example@REALM", kd), 0);
        char name[4 + 1024 + 1];
        memcpy(name, "uid:", 4);
        memset(name + 4, 'a', 1024);
        name[4 + 1024] = '\0';
        assert_int_equal(parse(name, kd), 0);
        assert_int_equal(strlen(kd->name), 1024);
        /* not NUL-terminated input: exactly len bytes */
        assert_int_equal(nsid_idmap_keydesc_parse("user:12XYZ", 7, kd), 0);
        assert_int_equal(kd->id, 12);
        assert_string_equal(nsid_idmap_key_kind_name(NSID_IDMAP_KEY_GROUP), "group");
        assert_null(nsid_idmap_key_kind_name(_NSID_IDMAP_KEY_KIND_MAX));
        assert_int_equal(nsid_idmap_key_kind_answers_name(NSID_IDMAP_KEY_USER), 1);
        assert_int_equal(nsid_idmap_key_kind_answers_name(NSID_IDMAP_KEY_UID), 0);
        free(kd);
}

static void test_keydesc_invalid(void **state) {
        nsid_idmap_keydesc *kd = malloc(sizeof(*kd));
        static const char *const bad[] = {
                "", ":", "uid", "uid:", "gid:", "user:", "group:", "garbage", "UID:a@b",
                "uidd:a@b", "uid:a:b@c", "uid:a@@b", "uid:@b", "uid:a@", "uid:a\tb@c",
                "uid:a\x7f@c", "user:-1", "user:+1", "user: 1", "user:1 ", "user:01",
                "user:0x10", "user:1a", "group:", " uid:a@b",
        };
        assert_non_null(kd);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(parse(bad[i], kd), -EINVAL);
        assert_int_equal(parse("user:4294967295", kd), -ERANGE);
        assert_int_equal(parse("group:4294967296", kd), -ERANGE);
        assert_int_equal(parse("user:99999999999999999999999", kd), -ERANGE);
        char name[4 + 1025 + 1];
        memcpy(name, "uid:", 4);
        memset(name + 4, 'a', 1025);
        name[4 + 1025] = '\0';
        assert_int_equal(parse(name, kd), -ENAMETOOLONG);
        /* an embedded NUL */
        assert_int_equal(nsid_idmap_keydesc_parse("uid:a\0b@c", 9, kd), -EINVAL);
        assert_int_equal(nsid_idmap_keydesc_parse(NULL, 0, kd), -EINVAL);
        free(kd);
}

static void test_describe(void **state) {
        nsid_key_describe d;
        const char *s = "id_resolver;0;0;3f010000;uid:alice@example.test";
        assert_int_equal(nsid_key_describe_parse(s, strlen(s), &d), 0);
        assert_int_equal(d.type_len, 11);
        assert_memory_equal(d.type, "id_resolver", 11);
        assert_int_equal(d.perm, 0x3f010000);
        assert_int_equal(d.description_len, strlen("uid:alice@example.test"));
        /* the description keeps its own ';' */
        s = "user;1000;1000;3f010000;a;b;c";
        assert_int_equal(nsid_key_describe_parse(s, strlen(s), &d), 0);
        assert_int_equal(d.uid, 1000);
        assert_memory_equal(d.description, "a;b;c", 5);
        /* with the kernel's NUL */
        assert_int_equal(nsid_key_describe_parse("user;0;0;0;x", 13, &d), 0);
        assert_int_equal(d.description_len, 1);
        assert_int_equal(nsid_key_describe_parse("user;0;0;x", 10, &d), -EINVAL);
        assert_int_equal(nsid_key_describe_parse("user;-1;0;0;x", 13, &d), -EINVAL);
        assert_int_equal(nsid_key_describe_parse(";0;0;0;x", 8, &d), -EINVAL);
        assert_int_equal(nsid_key_describe_parse("user;0;0;3G;x", 13, &d), -EINVAL);
        assert_int_equal(nsid_key_describe_parse("user;4294967296;0;0;x", 21, &d), -EINVAL);
}

static void test_dns_request(void **state) {
        nsid_dns_request r;
        assert_int_equal(nsid_dns_request_parse("svc.example.test", 16, "", 0, &r), 0);
        assert_string_equal(r.name, "svc.example.test");
        assert_true(r.want_ipv4);
        assert_false(r.want_ipv6);
        assert_false(r.list);
        assert_int_equal(nsid_dns_request_parse("svc.example.test", 16, "list", 4, &r), 0);
        assert_true(r.want_ipv4 && r.want_ipv6 && r.list);
        assert_int_equal(nsid_dns_request_parse("svc.example.test", 16, "ipv6 x=1", 8, &r), 0);
        assert_true(!r.want_ipv4 && r.want_ipv6 && !r.list);
        assert_int_equal(nsid_dns_request_parse("a:svc.example.test", 18, "ipv4\0", 5, &r), 0);
        assert_string_equal(r.name, "svc.example.test");
        assert_int_equal(nsid_dns_request_parse("afsdb:cell.example", 18, "", 0, &r), -EOPNOTSUPP);
        assert_int_equal(nsid_dns_request_parse("bad..name", 9, "", 0, &r), -EINVAL);
        assert_int_equal(nsid_dns_request_parse("-bad.name", 9, "", 0, &r), -EINVAL);
        assert_int_equal(nsid_dns_request_parse("svc.example.test", 16, "ipv4,list", 9, &r), -EINVAL);
        assert_int_equal(nsid_dns_request_parse("svc\0x", 5, "", 0, &r), -EINVAL);
}

static void test_proc_keys(void **state) {
        nsid_proc_keys_entry e;
        const char *l = "0f1c782a IR----i     1 expd 1b010000     0     0 .request_ key:387113a9 pid:2568 ci:0\n";
        assert_int_equal(nsid_proc_keys_parse_line(l, strlen(l), &e), 0);
        assert_int_equal(e.serial, 0x0f1c782a);
        assert_string_equal(e.flags, "IR----i");
        assert_string_equal(e.expiry, "expd");
        assert_string_equal(e.type, ".request_");
        assert_int_equal(e.description_len, strlen("key:387113a9 pid:2568 ci:0"));

        int32_t target;
        pid_t pid;
        size_t ci;
        assert_int_equal(nsid_reqkey_auth_parse(e.description, e.description_len, &target, &pid, &ci), 0);
        assert_int_equal(target, 0x387113a9);
        assert_int_equal(pid, 2568);
        assert_int_equal(ci, 0);

        l = "387113a9 I--Q---     1  30s 3f010000     0     0 user      nsidtest:uid:bin@example.test: 2";
        assert_int_equal(nsid_proc_keys_parse_line(l, strlen(l), &e), 0);
        assert_string_equal(e.type, "user");
        assert_string_equal(e.expiry, "30s");
        assert_memory_equal(e.description, "nsidtest:uid:bin@example.test: 2", e.description_len);
        /* a description starting with blanks is kept */
        l = "00000001 I------     1 perm 1f030000     0     0 keyring     x";
        assert_int_equal(nsid_proc_keys_parse_line(l, strlen(l), &e), 0);
        assert_memory_equal(e.description, "  x", 3);
        /* 9-character type fills its column */
        l = "27ba7276 I------     1 perm 1f030000     0     0 dns_resol svc.example.test: 9";
        assert_int_equal(nsid_proc_keys_parse_line(l, strlen(l), &e), 0);
        assert_string_equal(e.type, "dns_resol");

        static const char *const bad[] = {
                "",
                "0f1c782a IR----i     1 expd 1b010000     0     0 .request_",
                "0f1c782g IR----i     1 expd 1b010000     0     0 user      x",
                "f1c782a IR----i     1 expd 1b010000     0     0 user      x",
                " 0f1c782a IR----i     1 expd 1b010000     0     0 user      x",
                "0f1c782a IR---i     1 expd 1b010000     0     0 user      x",
                "0f1c782a IR----i     1 soon 1b010000     0     0 user      x",
                "0f1c782a IR----i     1 expd 1b0100     0     0 user      x",
                "0f1c782a IR----i     1 expd 1b010000    -1     0 user      x",
                "0f1c782a IR----i     1 expd 1b010000     0     0 user     x",
                "80000000 IR----i     1 expd 1b010000     0     0 user      x",
                "00000000 IR----i     1 expd 1b010000     0     0 user      x",
                "0f1c782a IR----i     1 expd 1b010000     0     0 user      x\ny",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(nsid_proc_keys_parse_line(bad[i], strlen(bad[i]), &e), -EINVAL);

        static const char *const badauth[] = {
                "key:0387113a9 pid:1 ci:0", "key:387113A9 pid:1 ci:0", "key: pid:1 ci:0",
                "key:1 pid:0 ci:0", "key:1 pid:01 ci:0", "key:1 pid:1 ci:", "key:1 pid:1 ci:0 ",
                "key:1  pid:1 ci:0", "key:1 pid:1", "key:80000000 pid:1 ci:0", "key:0 pid:1 ci:0",
                "key:1 pid:4194305 ci:0", "xkey:1 pid:1 ci:0",
        };
        for (size_t i = 0; i < sizeof(badauth) / sizeof(badauth[0]); i++)
                assert_int_equal(nsid_reqkey_auth_parse(badauth[i], strlen(badauth[i]), &target, &pid, &ci), -EINVAL);

        const char *text = "0000000a I------     1 perm 1f030000     0     0 keyring   a: empty\n"
                           "garbage line\n"
                           "0000000b I------     1 perm 1f030000     0     0 user      b\n";
        assert_int_equal(nsid_proc_keys_find(text, strlen(text), 0xb, &e), 0);
        assert_memory_equal(e.description, "b", 1);
        assert_int_equal(nsid_proc_keys_find(text, strlen(text), 0xc, &e), -ENOENT);
        /* a forged line (a description with a newline) duplicating a serial */
        const char *forged = "0000000a I------     1 perm 1f030000     0     0 .request_ key:1 pid:1 ci:0\n"
                             "0000000b I------     1 perm 3f010000  1000  1000 user      x\n"
                             "0000000a I------     1 perm 1f030000     0     0 .request_ key:1 pid:666 ci:0\n";
        assert_int_equal(nsid_proc_keys_find(forged, strlen(forged), 0xa, &e), -ENOTUNIQ);
}

/* nsid_proc_keys_find_brief(): the same type and description as nsid_proc_keys_find()
 * wherever both succeed; a second line starting with the serial, even a malformed one, is
 * -ENOTUNIQ. */
static void test_proc_keys_brief(void **state) {
        char type[10];
        const char *d;
        size_t dl;
        const char *text = "0000000a I------     1 perm 1f030000     0     0 keyring   a: empty\n"
                           "garbage line\n"
                           "0f1c782a IR----i     1 expd 1b010000     0     0 .request_ key:387113a9 pid:2568 ci:0\n"
                           "27ba7276 I------     1 perm 1f030000 65534 65534 dns_resol svc.example.test: 9\n"
                           "00000001 I------     1 perm 1f030000     0     0 keyring     x";
        assert_int_equal(nsid_proc_keys_find_brief(text, strlen(text), 0x0f1c782a, type, &d, &dl), 0);
        assert_string_equal(type, ".request_");
        assert_int_equal(dl, strlen("key:387113a9 pid:2568 ci:0"));
        assert_memory_equal(d, "key:387113a9 pid:2568 ci:0", dl);
        assert_int_equal(nsid_proc_keys_find_brief(text, strlen(text), 0x27ba7276, type, &d, &dl), 0);
        assert_string_equal(type, "dns_resol");
        assert_memory_equal(d, "svc.example.test: 9", dl);
        /* the last line, without its newline; blanks starting a description are kept */
        assert_int_equal(nsid_proc_keys_find_brief(text, strlen(text), 1, type, &d, &dl), 0);
        assert_string_equal(type, "keyring");
        assert_int_equal(dl, 3);
        assert_memory_equal(d, "  x", 3);
        nsid_proc_keys_entry e;
        assert_int_equal(nsid_proc_keys_find(text, strlen(text), 1, &e), 0);
        assert_ptr_equal(e.description, d);
        assert_int_equal(nsid_proc_keys_find_brief(text, strlen(text), 0xc, type, &d, &dl), -ENOENT);
        /* a prefix of a serial is not the serial */
        assert_int_equal(nsid_proc_keys_find_brief(text, strlen(text), 0xa, type, &d, &dl), 0);
        assert_int_equal(nsid_proc_keys_find_brief("0000000a", 8, 0xa, type, &d, &dl), -ENOENT);

        /* a forged line duplicating the serial, well-formed or not */
        const char *forged = "0000000a I------     1 perm 1f030000     0     0 .request_ key:1 pid:1 ci:0\n"
                             "0000000b I------     1 perm 3f010000  1000  1000 user      x\n"
                             "0000000a I------     1 perm 1f030000     0     0 .request_ key:1 pid:666 ci:0\n";
        assert_int_equal(nsid_proc_keys_find_brief(forged, strlen(forged), 0xa, type, &d, &dl), -ENOTUNIQ);
        const char *forged2 = "0000000a I------     1 perm 1f030000     0     0 .request_ key:1 pid:1 ci:0\n"
                              "0000000a garbage\n";
        assert_int_equal(nsid_proc_keys_find_brief(forged2, strlen(forged2), 0xa, type, &d, &dl), -ENOTUNIQ);

        static const char *const bad[] = {
                "0f1c782a IR----i     1 expd 1b010000     0     0 .request_",
                "0f1c782a  IR----i     1 expd 1b010000     0     0 user      x",
                "0f1c782a IR---i     1 expd 1b010000     0     0 user      x",
                "0f1c782a IR-----i     1 expd 1b010000     0     0 user      x",
                "0f1c782a IR----i     1 expd 1b010000     0 user      x",
                "0f1c782a IR----i     1 expd 1b010000     0     0 user     x",
                "0f1c782a IR----i     1 expd 1b010000     0     0  user     x",
                "0f1c782a IR----i     1 expd 1b010000     0     0           x",
                "0f1c782a IR----i     1 expd 1b010000     0     0 us er     x",
                "0f1c782a IR----i",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                size_t l = strlen(bad[i]);
                assert_int_equal(nsid_proc_keys_find_brief(bad[i], l, 0x0f1c782a, type, &d, &dl),
                                 -EINVAL);
                assert_int_not_equal(nsid_proc_keys_find(bad[i], l, 0x0f1c782a, &e), 0);
        }
        /* a NUL in the line */
        static const char nul[] = "0f1c782a IR----i     1 expd 1b010000     0     0 user\0     x";
        assert_int_equal(nsid_proc_keys_find_brief(nul, sizeof(nul) - 1, 0x0f1c782a, type, &d, &dl),
                         -EINVAL);
        assert_int_equal(nsid_proc_keys_find_brief(text, strlen(text), 0, type, &d, &dl), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_keydesc_valid),   cmocka_unit_test(test_keydesc_invalid),
                cmocka_unit_test(test_describe),        cmocka_unit_test(test_dns_request),
                cmocka_unit_test(test_proc_keys),       cmocka_unit_test(test_proc_keys_brief),
        };
        return run_test_group(tests, NULL, NULL);
}
