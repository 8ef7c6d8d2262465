/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsid/kernel.h on this kernel (needs root: the probe unshares a network namespace).
 *
 * Known answers of the host kernel (6.18): "dns_resolver" is built in and KEY_TYPE_NET_DOMAIN
 * (tagged; it iterates on search, so a search from another namespace still finds its keys),
 * "user" is not tagged, and there is no NFS client, so "id_resolver" and "id_legacy" are not
 * registered. A host where /sys/module/nfsv4 exists may have either answer for the NFS
 * types: there only the agreement of the two is checked (the qemu lab runs both kernels).
 *
 * The cache is exercised through idkeys_pair_tagged_cached() with the "user" type (probe
 * answer 0) and a srcversion file of the test's own, since the NFS types cannot be probed
 * here: a cache that claims 1 with matching ids and comes back as 1 was not probed.
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

#include "test-skip.h" /* after cmocka.h */

#include "kernel-keys-internal.h"
#include "nsid/kernel.h"
#include "nsid/netns.h"

#include "itest-util.h"

static char tmpdir[] = "/tmp/nsid-itest-kernel-keys-XXXXXX";
static char cache_path[300], srcv_path[340], mod_dir[300];

static void write_text(const char *path, const char *text, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(fchmod(fd, mode), 0);
        close(fd);
}

/* The whole file, or "" when it does not exist. */
static const char *read_text(const char *path) {
        static char buf[1024];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        buf[0] = '\0';
        if (fd < 0)
                return buf;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

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
        assert_int_equal(nsid_kernel_nfs_idkeys_tagged_cached(cache_path), -ENODEV);
        assert_int_equal(access(cache_path, F_OK), -1); /* errors are not cached */
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

/* ---- the cache ---- */

static int cached(void) {
        return idkeys_pair_tagged_cached(cache_path, "user", "user", srcv_path);
}

/* The cache text for this boot with the given srcversion ("-": none) and answer. */
static const char *cache_text(const char *srcversion, int tagged) {
        static char buf[300];
        char boot[37];
        assert_int_equal(nsid_boot_id(boot), 0);
        snprintf(buf, sizeof(buf),
                 "nsid-nfs-idkeys 1\nboot-id %s\nnfsv4-srcversion %s\ntagged %d\n", boot,
                 srcversion, tagged);
        return buf;
}

static void assert_cache_file(const char *want) {
        struct stat st;
        assert_int_equal(lstat(cache_path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_string_equal(read_text(cache_path), want);
}

static void test_cache_probe_then_read(void **state) {
        (void) state;
        unlink(cache_path);
        write_text(srcv_path, "0123ABCDEF\n", 0444);

        /* no file: probed, answer written with this boot and srcversion */
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("0123ABCDEF", 0));

        /* a file claiming the other answer with matching ids is believed: no probe */
        write_text(cache_path, cache_text("0123ABCDEF", 1), 0644);
        assert_int_equal(cached(), 1);
        assert_int_equal(cached(), 1);
        assert_cache_file(cache_text("0123ABCDEF", 1)); /* not rewritten */
}

static void test_cache_ids_change(void **state) {
        char text[300], *p;
        (void) state;

        /* another boot: probed again, rewritten */
        snprintf(text, sizeof(text), "%s", cache_text("0123ABCDEF", 1));
        p = strstr(text, "boot-id ") + strlen("boot-id ");
        *p = *p == '0' ? '1' : '0';
        write_text(cache_path, text, 0644);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("0123ABCDEF", 0));

        /* a rebuilt module (another srcversion): probed again */
        write_text(cache_path, cache_text("0123ABCDEF", 1), 0644);
        write_text(srcv_path, "FEDCBA9876\n", 0444);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("FEDCBA9876", 0));

        /* a module without a srcversion (Debian's nfsv4, stock or rebuilt): its sysfs
         * directory's inode stands for it, and a module loaded anew (a new directory, a new
         * inode) is probed again */
        char ino[32];
        struct stat st;
        write_text(cache_path, cache_text("FEDCBA9876", 1), 0644);
        unlink(srcv_path);
        assert_int_equal(stat(mod_dir, &st), 0);
        snprintf(ino, sizeof(ino), "%llX", (unsigned long long) st.st_ino);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text(ino, 0));
        write_text(cache_path, cache_text(ino, 1), 0644);
        assert_int_equal(cached(), 1); /* believed while the same module stays loaded */
        char other[300];
        snprintf(other, sizeof(other), "%s/other", tmpdir); /* holds the old inode number */
        assert_int_equal(rename(mod_dir, other), 0);
        assert_int_equal(mkdir(mod_dir, 0755), 0);
        assert_int_equal(cached(), 0); /* rmmod + insmod: probed again */
        assert_int_equal(rmdir(other), 0);

        /* the module unloaded or built in (no sysfs directory): "-", probed again */
        write_text(cache_path, cache_text("FEDCBA9876", 1), 0644);
        assert_int_equal(rmdir(mod_dir), 0);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("-", 0));
        write_text(cache_path, cache_text("-", 1), 0644);
        assert_int_equal(cached(), 1); /* ...and believed with the boot id alone */
        assert_int_equal(mkdir(mod_dir, 0755), 0);

        /* a srcversion file with unexpected content: probe, no cache written */
        write_text(cache_path, cache_text("-", 1), 0644);
        write_text(srcv_path, "not hex\n", 0444);
        assert_int_equal(cached(), 0);
        assert_string_equal(read_text(cache_path), cache_text("-", 1));
        unlink(srcv_path);
}

static void test_cache_untrusted(void **state) {
        char link_target[320];
        (void) state;

        unlink(srcv_path);
        rmdir(mod_dir); /* "-": no module directory */
        /* writable by others, by group: ignored, replaced by a 0644 file */
        write_text(cache_path, cache_text("-", 1), 0666);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("-", 0));
        write_text(cache_path, cache_text("-", 1), 0664);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("-", 0));

        /* owned by someone else */
        write_text(cache_path, cache_text("-", 1), 0644);
        assert_int_equal(chown(cache_path, 65534, 65534), 0);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("-", 0));

        /* a symlink to a good file is not followed */
        snprintf(link_target, sizeof(link_target), "%s/elsewhere", tmpdir);
        write_text(link_target, cache_text("-", 1), 0644);
        unlink(cache_path);
        assert_int_equal(symlink(link_target, cache_path), 0);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("-", 0)); /* the link itself replaced */
        assert_string_equal(read_text(link_target), cache_text("-", 1));

        /* not the format: a trailing blank */
        snprintf(link_target, sizeof(link_target), "%s ", cache_text("-", 1));
        write_text(cache_path, link_target, 0644);
        assert_int_equal(cached(), 0);
        assert_cache_file(cache_text("-", 0));

        /* a directory in its place: probe answered, nothing written */
        unlink(cache_path);
        assert_int_equal(mkdir(cache_path, 0755), 0);
        assert_int_equal(cached(), 0);
        assert_int_equal(rmdir(cache_path), 0);
}

static void test_cache_errors(void **state) {
        char path[320];
        DIR *d;
        struct dirent *e;
        (void) state;

        unlink(cache_path);
        /* errors are not remembered */
        assert_int_equal(idkeys_pair_tagged_cached(cache_path, "nsid-no-such-type", "user",
                                                   srcv_path),
                         -ENODEV);
        assert_int_equal(access(cache_path, F_OK), -1);
        assert_int_equal(idkeys_pair_tagged(".x", "user"), -EINVAL);
        /* a missing directory: the answer all the same */
        snprintf(path, sizeof(path), "%s/no/such/dir/cache", tmpdir);
        assert_int_equal(idkeys_pair_tagged_cached(path, "user", "user", srcv_path), 0);
        assert_int_equal(idkeys_pair_tagged_cached("relative", "user", "user", srcv_path),
                         -EINVAL);
        /* no temporary file left behind */
        d = opendir(tmpdir);
        assert_non_null(d);
        while ((e = readdir(d)))
                assert_null(strstr(e->d_name, ".tmp-"));
        closedir(d);
}

static int setup(void **state) {
        (void) state;
        if (geteuid() != 0)
                skip_all("not root: the probe unshares a network namespace (run as root)");
        assert_non_null(mkdtemp(tmpdir));
        snprintf(cache_path, sizeof(cache_path), "%s/nfs-idkeys", tmpdir);
        /* mod_dir stands for /sys/module/nfsv4: its srcversion file, or, without one, the
         * directory's inode identifies the loaded module */
        snprintf(mod_dir, sizeof(mod_dir), "%s/nfsv4", tmpdir);
        assert_int_equal(mkdir(mod_dir, 0755), 0);
        snprintf(srcv_path, sizeof(srcv_path), "%s/srcversion", mod_dir);
        return 0;
}

static int teardown(void **state) {
        char cmd[400];
        (void) state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
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
                cmocka_unit_test(test_cache_probe_then_read),
                cmocka_unit_test(test_cache_ids_change),
                cmocka_unit_test(test_cache_untrusted),
                cmocka_unit_test(test_cache_errors),
        };
        return run_test_group(tests, setup, teardown);
}
