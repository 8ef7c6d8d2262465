/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsid/kernel.h on this kernel (needs root: the probe unshares a network namespace).
 *
 * Known answers of the host kernel (6.18): "dns_resolver" is built in and KEY_TYPE_NET_DOMAIN
 * (tagged; it iterates on search, so a search from another namespace still finds its keys),
 * "user" is not tagged, and there is no NFS client, so "id_resolver" and "id_legacy" are not
 * registered. A host where /sys/module/nfsv4 exists may have either answer for the NFS
 * types: there only the agreement of the two is checked (the qemu lab runs both kernels).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel-keys-internal.h"
#include "nsid/kernel.h"

#include "itest-util.h"

static ino_t netns_ino(void) {
        struct stat st;
        assert_int_equal(stat("/proc/self/ns/net", &st), 0);
        return st.st_ino;
}

static int32_t session_keyring(void) {
        return (int32_t) syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0L,
                                 0L, 0L);
}

/* Keys named "nsid-probe:*" that /proc/keys still shows; waits up to 3 s for the garbage
 * collector to take invalidated ones. */
static int probe_keys_left(void) {
        for (int i = 0;; i++) {
                FILE *f = fopen("/proc/keys", "re");
                char line[512];
                int n = 0;
                assert_non_null(f);
                while (fgets(line, sizeof(line), f))
                        if (strstr(line, " nsid-probe:"))
                                n++;
                fclose(f);
                if (n == 0 || i == 300)
                        return n;
                usleep(10000);
        }
}

/* ---- the probe ---- */

static void test_dns_resolver(void **state) {
        unsigned flags = 99;
        (void) state;

        assert_int_equal(nsid_key_type_netns_tagged("dns_resolver"), 1);
        assert_int_equal(nsid_key_type_netns_probe("dns_resolver", &flags), 0);
        /* Tagged, yet found from another namespace: dns_resolver_match_preparse() makes
         * searches iterate, and keyring_search_iterator() compares no domain tag. If this
         * changes, the kernel changed: nsid/kernel.h says what the flags mean. */
        assert_int_equal(flags, NSID_KEY_NETNS_TAGGED);
}

static void test_user(void **state) {
        unsigned flags = 99;
        (void) state;

        assert_int_equal(nsid_key_type_netns_tagged("user"), 0);
        assert_int_equal(nsid_key_type_netns_probe("user", &flags), 0);
        assert_int_equal(flags, 0);
        /* "logon" has an update operation too, and no tag */
        assert_int_equal(nsid_key_type_netns_tagged("logon"), 0);
}

static void test_nfs_types(void **state) {
        int a, b, pair;
        (void) state;

        a = nsid_key_type_netns_tagged("id_resolver");
        b = nsid_key_type_netns_tagged("id_legacy");
        pair = nsid_kernel_nfs_idkeys_tagged();
        if (access("/sys/module/nfsv4", F_OK) == 0) {
                /* An NFS client on this host: the answer is the module's, either is right,
                 * but both types come from the same file of the same module. */
                print_message("NOTE: /sys/module/nfsv4 exists: id_resolver %d, id_legacy %d, "
                              "pair %d; not asserting -ENODEV\n", a, b, pair);
                assert_true(a == 0 || a == 1);
                assert_int_equal(a, b);
                assert_true(pair == 0 || pair == 1);
                return;
        }
        assert_int_equal(a, -ENODEV);
        assert_int_equal(b, -ENODEV);
        assert_int_equal(pair, -ENODEV);
}

static void test_bad_types(void **state) {
        unsigned flags = 99;
        char longname[40];
        (void) state;

        assert_int_equal(nsid_key_type_netns_tagged("nsid-no-such-type"), -ENODEV);
        assert_int_equal(nsid_key_type_netns_probe("nsid-no-such-type", &flags), -ENODEV);
        assert_int_equal(flags, 99);
        assert_int_equal(nsid_key_type_netns_tagged(""), -EINVAL);
        assert_int_equal(nsid_key_type_netns_tagged(NULL), -EINVAL);
        /* the kernel answers EPERM for these: it must not read as "not privileged" */
        assert_int_equal(nsid_key_type_netns_tagged(".request_key_auth"), -EINVAL);
        memset(longname, 'a', 32);
        longname[32] = '\0';
        assert_int_equal(nsid_key_type_netns_tagged(longname), -EINVAL);
        longname[31] = '\0'; /* 31 characters: a name the kernel looks up */
        assert_int_equal(nsid_key_type_netns_tagged(longname), -ENODEV);
        assert_int_equal(nsid_key_type_netns_probe("user", NULL), -EINVAL);
        /* a payload the type refuses: the kernel's errno, not a guess */
        assert_int_equal(key_type_probe("keyring", "x", 1, 2000, &flags), -EINVAL);
        assert_int_equal(flags, 99);
}

/* What the probe must leave as it was: the caller's network namespace, session keyring and
 * fds; no child, no key. */
static void test_side_effects(void **state) {
        ino_t net = netns_ino();
        int32_t ring = session_keyring();
        int fds = count_fds();
        (void) state;

        assert_true(ring > 0);
        for (int i = 0; i < 5; i++) {
                assert_int_equal(nsid_key_type_netns_tagged("user"), 0);
                assert_int_equal(nsid_key_type_netns_tagged("dns_resolver"), 1);
        }
        assert_int_equal(netns_ino(), net);
        assert_int_equal(session_keyring(), ring);
        assert_int_equal(count_fds(), fds);
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
        assert_int_equal(probe_keys_left(), 0);
}

static void test_unprivileged(void **state) {
        pid_t pid;
        int st;
        (void) state;

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* nobody: may add keys (its own quota), may not create a network namespace */
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                _exit(nsid_key_type_netns_tagged("user") == -EPERM ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* Probes from several threads at once while another thread keeps malloc busy: the child of
 * a multithreaded caller must not need a lock another thread held at fork(). */
static volatile bool stop_alloc;

typedef struct thread_arg {
        const char *type;
        int want;
        int failures;
} thread_arg;

static void *probe_thread(void *userdata) {
        thread_arg *a = userdata;
        for (int i = 0; i < 10; i++)
                if (nsid_key_type_netns_tagged(a->type) != a->want)
                        a->failures++;
        return NULL;
}

static void test_threads(void **state) {
        thread_arg args[4] = {
                { "dns_resolver", 1, 0 },
                { "user", 0, 0 },
                { "dns_resolver", 1, 0 },
                { "nsid-no-such-type", -ENODEV, 0 },
        };
        pthread_t t[4], at;
        int fds = count_fds();
        (void) state;

        stop_alloc = false;
        assert_int_equal(pthread_create(&at, NULL, alloc_churn_thread, (void *) &stop_alloc), 0);
        for (int i = 0; i < 4; i++)
                assert_int_equal(pthread_create(&t[i], NULL, probe_thread, &args[i]), 0);
        for (int i = 0; i < 4; i++) {
                assert_int_equal(pthread_join(t[i], NULL), 0);
                assert_int_equal(args[i].failures, 0);
        }
        stop_alloc = true;
        assert_int_equal(pthread_join(at, NULL), 0);
        assert_int_equal(count_fds(), fds);
        assert_int_equal(probe_keys_left(), 0);
}

static int setup(void **state) {
        (void) state;
        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root (the probe unshares a network namespace)\n");
                exit(77);
        }
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dns_resolver),
                cmocka_unit_test(test_user),
                cmocka_unit_test(test_nfs_types),
                cmocka_unit_test(test_bad_types),
                cmocka_unit_test(test_side_effects),
                cmocka_unit_test(test_unprivileged),
                cmocka_unit_test(test_threads),
        };
        return cmocka_run_group_tests(tests, setup, NULL);
}
