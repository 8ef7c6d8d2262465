/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Identity derivation, machine-id parsing and the host secret (real files in a temp dir). */
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

#include "nsid/identity.h"

static const uint8_t secret0[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

/* Reference values computed independently (Python hmac/hashlib) from the documented message
 * "nsid-id-v1" || u32be(len app) || app || u32be(len key) || key. */
static void test_derive_vectors(void **state) {
        static const uint8_t s2[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                        0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
        char id[NSID_IDENTITY_STRING_SIZE];

        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "abc", id), 0);
        assert_string_equal(id, "b0d67b28f08c4d378e93f16f001c7d78");
        assert_int_equal(nsid_identity_derive(s2, "nfs4", "container-1", id), 0);
        assert_string_equal(id, "c4e5fd2710224a3f951cf681ca4c8d8b");
}

static void test_derive_properties(void **state) {
        char a[NSID_IDENTITY_STRING_SIZE], b[NSID_IDENTITY_STRING_SIZE];
        uint8_t s2[16];

        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "web-1", a), 0);
        assert_int_equal(strlen(a), 32);
        for (size_t i = 0; i < 32; i++)
                assert_non_null(strchr("0123456789abcdef", a[i]));
        assert_int_equal(a[12], '4');                 /* version 4 */
        assert_non_null(strchr("89ab", a[16]));       /* RFC 4122 variant */

        /* same inputs, same identity */
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "web-1", b), 0);
        assert_string_equal(a, b);
        /* different key, app, secret: different */
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "web-2", b), 0);
        assert_string_not_equal(a, b);
        assert_int_equal(nsid_identity_derive(secret0, "smb", "web-1", b), 0);
        assert_string_not_equal(a, b);
        memcpy(s2, secret0, 16);
        s2[15] ^= 1;
        assert_int_equal(nsid_identity_derive(s2, "nfs4", "web-1", b), 0);
        assert_string_not_equal(a, b);
        /* unambiguous: nfs4 + x != nfs + 4x */
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "x", a), 0);
        assert_int_equal(nsid_identity_derive(secret0, "nfs", "4x", b), 0);
        assert_string_not_equal(a, b);
}

static void test_derive_invalid(void **state) {
        char id[NSID_IDENTITY_STRING_SIZE] = "untouched";
        char longkey[NSID_KEY_MAX + 2];

        assert_int_equal(nsid_identity_derive(secret0, "", "k", id), -EINVAL);
        assert_int_equal(nsid_identity_derive(secret0, "NFS4", "k", id), -EINVAL);
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "", id), -EINVAL);
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "a b", id), -EINVAL);
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", "a\nb", id), -EINVAL);
        assert_int_equal(nsid_identity_derive(secret0, NULL, "k", id), -EINVAL);
        assert_int_equal(nsid_identity_derive(NULL, "nfs4", "k", id), -EINVAL);
        memset(longkey, 'k', sizeof(longkey) - 1);
        longkey[sizeof(longkey) - 1] = '\0';
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", longkey, id), -EINVAL);
        longkey[NSID_KEY_MAX] = '\0';
        assert_int_equal(nsid_identity_derive(secret0, "nfs4", longkey, id), 0);
        assert_int_equal(nsid_app_validate("ceph.reclaim-v2_x"), 0);
}

static void test_machine_id_parse(void **state) {
        uint8_t b[16] = { 0xee }, z[16] = { 0xee };
        const char *good = "0123456789ABCDEFfedcba9876543210";

        assert_int_equal(nsid_machine_id_parse(good, 32, b), 0);
        assert_int_equal(b[0], 0x01);
        assert_int_equal(b[7], 0xef);
        assert_int_equal(b[15], 0x10);
        assert_int_equal(nsid_machine_id_parse("0123456789abcdeffedcba9876543210\n", 33, b), 0);

        memcpy(z, b, 16);
        assert_int_equal(nsid_machine_id_parse("", 0, b), -ENOMEDIUM);
        assert_int_equal(nsid_machine_id_parse("\n", 1, b), -ENOMEDIUM);
        assert_int_equal(nsid_machine_id_parse("uninitialized\n", 14, b), -ENOMEDIUM);
        assert_int_equal(nsid_machine_id_parse("uninitialized", 13, b), -ENOMEDIUM);
        assert_int_equal(nsid_machine_id_parse("00000000000000000000000000000000", 32, b),
                         -EINVAL);
        assert_int_equal(nsid_machine_id_parse("0123456789abcdeffedcba987654321", 31, b),
                         -EINVAL);
        assert_int_equal(nsid_machine_id_parse("0123456789abcdeffedcba9876543210\n\n", 34, b),
                         -EINVAL);
        assert_int_equal(nsid_machine_id_parse("0123456789abcdeffedcba9876543210 ", 33, b),
                         -EINVAL);
        assert_int_equal(nsid_machine_id_parse("0123456789abcdeffedcba98765432g0", 32, b),
                         -EINVAL);
        assert_int_equal(nsid_machine_id_parse("01234567-89ab-cdef-fedc-ba9876543210", 36, b),
                         -EINVAL);
        /* NUL inside */
        assert_int_equal(nsid_machine_id_parse("0123456789abcdef\0edcba9876543210", 32, b),
                         -EINVAL);
        assert_memory_equal(b, z, 16); /* untouched on failure */
}

static void write_file(const char *path, const char *data, size_t len, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        assert_int_equal(fchmod(fd, mode), 0);
        close(fd);
}

static void test_host_secret(void **state) {
        char dir[] = "/tmp/nsid-test-identity-XXXXXX", mid[256], sdir[256], sfile[300];
        uint8_t s1[16], s2[16], expect[16];
        nsid_host_secret_source src = _NSID_HOST_SECRET_SOURCE_MAX;
        struct stat st;

        assert_non_null(mkdtemp(dir));
        snprintf(mid, sizeof(mid), "%s/machine-id", dir);
        snprintf(sdir, sizeof(sdir), "%s/state", dir);
        snprintf(sfile, sizeof(sfile), "%s/state/host-secret", dir);

        /* a valid machine-id is the secret */
        write_file(mid, "0123456789abcdeffedcba9876543210\n", 33, 0444);
        assert_int_equal(nsid_machine_id_parse("0123456789abcdeffedcba9876543210", 32, expect), 0);
        assert_int_equal(nsid_host_secret_load(mid, sdir, s1, &src), 0);
        assert_int_equal(src, NSID_HOST_SECRET_MACHINE_ID);
        assert_memory_equal(s1, expect, 16);
        assert_int_equal(stat(sdir, &st), -1); /* no state written when not needed */

        /* "uninitialized": a random secret, persisted 0600, stable */
        write_file(mid, "uninitialized\n", 14, 0444);
        assert_int_equal(nsid_host_secret_load(mid, sdir, s1, &src), 0);
        assert_int_equal(src, NSID_HOST_SECRET_STATE_FILE);
        assert_int_equal(stat(sfile, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(st.st_size, 16);
        assert_int_equal(stat(sdir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(nsid_host_secret_load(mid, sdir, s2, &src), 0);
        assert_memory_equal(s1, s2, 16);
        assert_memory_not_equal(s1, expect, 16);

        /* missing machine-id: the same state file */
        unlink(mid);
        assert_int_equal(nsid_host_secret_load(mid, sdir, s2, &src), 0);
        assert_int_equal(src, NSID_HOST_SECRET_STATE_FILE);
        assert_memory_equal(s1, s2, 16);

        /* a state file readable by others is refused, not used */
        assert_int_equal(chmod(sfile, 0644), 0);
        assert_int_equal(nsid_host_secret_load(mid, sdir, s2, &src), -EPERM);
        /* wrong size: refused, never rewritten */
        write_file(sfile, "short", 5, 0600);
        assert_int_equal(nsid_host_secret_load(mid, sdir, s2, &src), -EBADMSG);
        assert_int_equal(stat(sfile, &st), 0);
        assert_int_equal(st.st_size, 5);
        /* a symlink is not followed */
        unlink(sfile);
        assert_int_equal(symlink("/etc/hostname", sfile), 0);
        assert_int_equal(nsid_host_secret_load(mid, sdir, s2, &src), -ELOOP);

        unlink(sfile);
        rmdir(sdir);
        rmdir(dir);
}

static void test_source_names(void **state) {
        for (int i = 0; i < _NSID_KEY_SOURCE_MAX; i++) {
                const char *n = nsid_key_source_to_string((nsid_key_source) i);
                assert_non_null(n);
                assert_int_equal(nsid_key_source_from_string(n), i);
        }
        assert_string_equal(nsid_key_source_to_string(NSID_KEY_CONTAINER_ID), "container-id");
        assert_null(nsid_key_source_to_string(NSID_KEY_AUTO));
        assert_int_equal(nsid_key_source_from_string("bogus"), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_derive_vectors),   cmocka_unit_test(test_derive_properties),
                cmocka_unit_test(test_derive_invalid),   cmocka_unit_test(test_machine_id_parse),
                cmocka_unit_test(test_host_secret),      cmocka_unit_test(test_source_names),
        };
        return run_test_group(tests, NULL, NULL);
}
