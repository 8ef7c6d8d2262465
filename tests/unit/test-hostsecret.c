/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/hostsecret.h: the generated host secret that tells clones apart, on real files in a
 * temp dir. The platform's product UUID is a file of the test's (the real one is root-only
 * and one per machine: two "hosts" here are two state dirs and two UUID files). */
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

#include <nsid/hostsecret.h>
#include <nsid/identity.h>
#include <nsid/registry.h>

#define MID "0123456789abcdeffedcba9876543210\n"
#define UUID_A "4c4c4544-0042-3510-8051-b2c04f4e3232\n"
#define UUID_B "4C4C4544-0042-3510-8051-B2C04F4E3233\n"

static char dir[] = "/tmp/nsid-test-hostsecret-XXXXXX";

static void put(const char *name, const char *text) {
        char p[300];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", dir, name);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static const char *path(const char *name) {
        static char p[4][300];
        static int k;
        k = (k + 1) % 4;
        snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
        return p[k];
}

static int setup(void **state) {
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf %s/*", dir);
        (void) system(cmd);
        put("machine-id", MID);
        put("uuid-a", UUID_A);
        put("uuid-b", UUID_B);
        return 0;
}

static void identity(const char *state_dir, const char *key, char out[33],
                     nsid_host_secret_source *src) {
        uint8_t s[16];
        assert_int_equal(nsid_host_secret_load(path("machine-id"), state_dir, s, src), 0);
        assert_int_equal(nsid_identity_derive(s, "nfs4", key, out), 0);
}

/* The upgrade: a host whose registry was written with the machine-id as its secret keeps
 * every identity with this nsid; nothing generates a secret behind its back. */
static void test_upgrade_keeps_identities(void **state) {
        nsid_registry *reg = NULL;
        nsid_registry_problem *v = NULL;
        nsid_host_secret_status st;
        nsid_host_secret_source src;
        char before[33], after[33], db[300];
        uint8_t s[16];
        size_t n = 99;
        struct stat sb;

        /* what the previous nsid did: the machine-id as secret, the binding recorded */
        identity(path("state"), "web", before, &src);
        assert_int_equal(src, NSID_HOST_SECRET_MACHINE_ID);
        assert_int_equal(mkdir(path("state"), 0700), 0);
        snprintf(db, sizeof(db), "%s", path("state/registry.db"));
        assert_int_equal(nsid_registry_open(db, 0, &reg), 0);
        nsid_registry_entry e = {
                .app = (char *) "nfs4", .identity = before, .key = (char *) "web",
                .source = NSID_KEY_CONTAINER_ID, .netns = { .dev = 4, .ino = 4026532000 },
                .boot_id = (char *) "11111111-2222-3333-4444-555555555555",
                .netns_cookie = 7, .pid = 42, .name = (char *) "web",
        };
        assert_int_equal(nsid_registry_bind(reg, &e, 0, NULL, NULL, NULL), 1);
        reg = nsid_registry_unref(reg);

        /* this nsid: same source, same identity, every recorded identity still derives */
        assert_int_equal(nsid_host_secret_inspect(path("machine-id"), path("state"),
                                                  path("uuid-a"), &st), 0);
        assert_int_equal(st.source, NSID_HOST_SECRET_MACHINE_ID);
        assert_true(st.have_platform_id);
        identity(path("state"), "web", after, &src);
        assert_int_equal(src, NSID_HOST_SECRET_MACHINE_ID);
        assert_string_equal(before, after);
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("state"), s, &src), 0);
        assert_int_equal(nsid_registry_open(db, NSID_REGISTRY_READONLY, &reg), 0);
        assert_true(nsid_registry_verify(reg, s, &v, &n) >= 1);
        assert_int_equal(n, 0);
        reg = nsid_registry_unref(reg);
        /* neither load nor inspect wrote a secret or a fingerprint */
        assert_int_equal(stat(path("state/host-secret"), &sb), -1);
        assert_int_equal(stat(path("state/" NSID_HOST_SECRET_FINGERPRINT_FILE), &sb), -1);

        /* the explicit step changes them, visibly: logged, and the registry's rows no longer
         * derive (doctor says so) */
        assert_int_equal(nsid_host_secret_new(path("machine-id"), path("state"), path("uuid-a"),
                                              "test", &src), 0);
        assert_int_equal(src, NSID_HOST_SECRET_MACHINE_ID);
        identity(path("state"), "web", after, &src);
        assert_int_equal(src, NSID_HOST_SECRET_GENERATED);
        assert_string_not_equal(before, after);
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("state"), s, &src), 0);
        assert_int_equal(nsid_registry_open(db, NSID_REGISTRY_READONLY, &reg), 0);
        assert_true(nsid_registry_verify(reg, s, &v, &n) >= 1);
        assert_true(n >= 1); /* the binding, and its key row */
        for (size_t i = 0; i < n; i++)
                assert_int_equal(v[i].kind, NSID_REGISTRY_PROBLEM_NOT_DERIVED);
        nsid_registry_problems_free(v, n);
        reg = nsid_registry_unref(reg);
        {
                char line[512] = "";
                FILE *f = fopen(path("state/" NSID_HOST_SECRET_LOG_FILE), "r");
                assert_non_null(f);
                assert_non_null(fgets(line, sizeof(line), f));
                fclose(f);
                assert_non_null(strstr(line, " new replaced machine-id secret"));
                assert_non_null(strstr(line, "; reason: test"));
        }
}

/* Two clones: one image, one machine-id. With the machine-id they collide; each with its
 * own generated secret they do not. */
static void test_clones_differ(void **state) {
        nsid_host_secret_source src;
        char a[33], b[33];
        struct stat sb;

        identity(path("host-a"), "web", a, &src);
        identity(path("host-b"), "web", b, &src);
        assert_string_equal(a, b);
        assert_int_equal(nsid_host_secret_new(path("machine-id"), path("host-a"), path("uuid-a"),
                                              NULL, NULL), 0);
        assert_int_equal(nsid_host_secret_new(path("machine-id"), path("host-b"), path("uuid-a"),
                                              NULL, NULL), 0);
        identity(path("host-a"), "web", a, &src);
        identity(path("host-b"), "web", b, &src);
        assert_int_equal(src, NSID_HOST_SECRET_GENERATED);
        assert_string_not_equal(a, b);
        assert_int_equal(stat(path("host-a/host-secret"), &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0600);
        assert_int_equal(stat(path("host-a/" NSID_HOST_SECRET_FINGERPRINT_FILE), &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0600);
        /* the fingerprint names neither the machine-id nor the UUID */
        {
                char buf[512] = "";
                FILE *f = fopen(path("host-a/" NSID_HOST_SECRET_FINGERPRINT_FILE), "r");
                size_t n;
                assert_non_null(f);
                n = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                buf[n] = 0;
                assert_null(strstr(buf, "0123456789abcdef"));
                assert_null(strstr(buf, "4c4c4544"));
                assert_non_null(strstr(buf, "platform-id "));
        }
}

/* A clone made after the secret (the state dir copied with the image): the platform tells. */
static void test_clone_detected(void **state) {
        nsid_host_secret_status st;
        nsid_host_secret_source src;
        char a[33], b[33], cmd[700];
        uint8_t s1[16], s2[16];

        assert_int_equal(nsid_host_secret_new(path("machine-id"), path("img"), path("uuid-a"),
                                              NULL, NULL), 0);
        snprintf(cmd, sizeof(cmd), "cp -a %s %s", path("img"), path("clone"));
        assert_int_equal(system(cmd), 0);
        identity(path("img"), "web", a, &src);
        identity(path("clone"), "web", b, &src);
        assert_string_equal(a, b); /* the copy: same secret */

        assert_int_equal(nsid_host_secret_inspect(path("machine-id"), path("img"), path("uuid-a"),
                                                  &st), 0);
        assert_int_equal(st.source, NSID_HOST_SECRET_GENERATED);
        assert_true(st.platform_id_recorded && st.machine_id_recorded);
        assert_false(st.platform_id_changed || st.machine_id_changed);
        /* the clone runs on another VM: another product UUID (case does not matter) */
        assert_int_equal(nsid_host_secret_inspect(path("machine-id"), path("clone"),
                                                  path("uuid-b"), &st), 0);
        assert_true(st.platform_id_changed);
        assert_false(st.machine_id_changed);
        /* ... or its machine-id was reset */
        put("machine-id2", "ffeeddccbbaa99887766554433221100\n");
        assert_int_equal(nsid_host_secret_inspect(path("machine-id2"), path("clone"),
                                                  path("uuid-a"), &st), 0);
        assert_false(st.platform_id_changed);
        assert_true(st.machine_id_changed);
        /* UUID unreadable now (no DMI): cannot tell, said so */
        assert_int_equal(nsid_host_secret_inspect(path("machine-id"), path("clone"),
                                                  path("none"), &st), 0);
        assert_false(st.have_platform_id);
        /* a placeholder UUID counts as none */
        put("uuid-zero", "00000000-0000-0000-0000-000000000000\n");
        assert_int_equal(nsid_host_secret_inspect(path("machine-id"), path("clone"),
                                                  path("uuid-zero"), &st), 0);
        assert_false(st.have_platform_id);

        /* the same host moved: accept keeps the secret, the warning goes */
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("clone"), s1, &src), 0);
        assert_int_equal(nsid_host_secret_accept(path("machine-id"), path("clone"),
                                                 path("uuid-b"), "migrated"), 0);
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("clone"), s2, &src), 0);
        assert_memory_equal(s1, s2, 16);
        assert_int_equal(nsid_host_secret_inspect(path("machine-id"), path("clone"),
                                                  path("uuid-b"), &st), 0);
        assert_false(st.platform_id_changed || st.machine_id_changed);
        /* a clone: new, the previous secret kept aside */
        assert_int_equal(nsid_host_secret_new(path("machine-id"), path("clone"), path("uuid-b"),
                                              "clone", &src), 0);
        assert_int_equal(src, NSID_HOST_SECRET_GENERATED);
        identity(path("clone"), "web", b, &src);
        assert_string_not_equal(a, b);
        snprintf(cmd, sizeof(cmd), "ls %s | grep -q '^host-secret\\.old\\.[0-9]*$'", path("clone"));
        assert_int_equal(system(cmd), 0);
}

/* Once generated, losing the secret is an error: never a silent return to the machine-id. */
static void test_generated_lost(void **state) {
        nsid_host_secret_source src;
        nsid_host_secret_status st;
        uint8_t s[16];

        assert_int_equal(nsid_host_secret_accept(path("machine-id"), path("g"), path("uuid-a"),
                                                 NULL), -ENOENT);
        assert_int_equal(nsid_host_secret_new(path("machine-id"), path("g"), path("uuid-a"), NULL,
                                              NULL), 0);
        assert_int_equal(unlink(path("g/host-secret")), 0);
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("g"), s, &src), -ENOKEY);
        assert_int_equal(nsid_host_secret_inspect(path("machine-id"), path("g"), path("uuid-a"),
                                                  &st), -ENOKEY);
        /* a fingerprint that is a symlink is refused */
        assert_int_equal(unlink(path("g/" NSID_HOST_SECRET_FINGERPRINT_FILE)), 0);
        assert_int_equal(symlink("/etc/hostname", path("g/" NSID_HOST_SECRET_FINGERPRINT_FILE)), 0);
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("g"), s, &src), -EPERM);
        /* a damaged one is replaced by new */
        assert_int_equal(unlink(path("g/" NSID_HOST_SECRET_FINGERPRINT_FILE)), 0);
        put("g/" NSID_HOST_SECRET_FINGERPRINT_FILE, "garbage\n");
        assert_int_equal(chmod(path("g/" NSID_HOST_SECRET_FINGERPRINT_FILE), 0600), 0);
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("g"), s, &src), -EBADMSG);
        assert_int_equal(nsid_host_secret_new(path("machine-id"), path("g"), path("uuid-a"), NULL,
                                              NULL), 0);
        assert_int_equal(nsid_host_secret_load(path("machine-id"), path("g"), s, &src), 0);
        assert_int_equal(src, NSID_HOST_SECRET_GENERATED);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_upgrade_keeps_identities, setup),
                cmocka_unit_test_setup(test_clones_differ, setup),
                cmocka_unit_test_setup(test_clone_detected, setup),
                cmocka_unit_test_setup(test_generated_lost, setup),
        };
        int r;

        if (!mkdtemp(dir))
                return 1;
        r = run_test_group(tests, NULL, NULL);
        {
                char cmd[400];
                snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
                (void) system(cmd);
        }
        return r;
}
