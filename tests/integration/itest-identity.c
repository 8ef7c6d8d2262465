/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The identity API on real network namespaces (unshare), a real SQLite registry and real
 * bind mounts: nsid_identity_for_ns() key selection, nsid_netns_scan(), cookies, liveness,
 * nsid_nfs_client_set_identifier() decisions.
 *
 * FAKE: this host has no nfs module, so the kernel's identifier file cannot exist. The tests
 * of nsid_nfs_client_*() set NSID_TEST_SYSFS_NFS_CLIENT_DIR: the worker still joins the netns
 * and mounts its sysfs, then uses DIR/<inode of the netns it joined> with the kernel file's
 * semantics. The real file is exercised in the qemu lab (tests/vm, identity-* scenarios).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "log-internal.h"
#include "nsid/identity.h"
#include "nsid/log.h"
#include "nsid/netns.h"
#include "nsid/nfsclient.h"
#include "nsid/registry.h"

static char dir[] = "/tmp/itest-identity-XXXXXX";
static char fakedir[300], dbpath[300];
static const uint8_t secret[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };

/* A child in a new netns (and, with a machine-id file, a private mount ns where that file is
 * bind-mounted over /etc/machine-id). */
static pid_t spawn_netns(const char *machine_id_file) {
        int p[2];
        char c;

        if (geteuid() != 0)
                test_skip("not root: a new network namespace needs CAP_SYS_ADMIN (run as root)");
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(p[0]);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (unshare(CLONE_NEWNET | (machine_id_file ? CLONE_NEWNS : 0)) < 0)
                        _exit(1);
                if (machine_id_file &&
                    (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                     mount(machine_id_file, "/etc/machine-id", NULL, MS_BIND, NULL) < 0))
                        _exit(1);
                if (write(p[1], "r", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(p[1]);
        assert_int_equal(read(p[0], &c, 1), 1);
        close(p[0]);
        return pid;
}

static void reap(pid_t pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

static void open_pid(pid_t pid, nsid_proc **p, nsid_ns **ns) {
        assert_int_equal(nsid_proc_open(pid, p), 0);
        assert_int_equal(nsid_proc_open_ns(*p, NSID_NS_NET, ns), 0);
}

static char *fake_file(nsid_ns *ns) {
        static char path[400];
        nsid_ns_id id;
        assert_int_equal(nsid_ns_get_id(ns, &id), 0);
        snprintf(path, sizeof(path), "%s/%llu", fakedir, (unsigned long long) id.ino);
        return path;
}

static void write_str(const char *path, const char *s) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(s, f);
        fclose(f);
}

static int setup(void **state) {
        if (!mkdtemp(dir))
                return -1;
        snprintf(fakedir, sizeof(fakedir), "%s/fake", dir);
        snprintf(dbpath, sizeof(dbpath), "%s/state/registry.db", dir);
        if (mkdir(fakedir, 0755) < 0)
                return -1;
        setenv("NSID_TEST_SYSFS_NFS_CLIENT_DIR", fakedir, 1);
        return 0;
}

static int teardown(void **state) {
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_nfs_client_decisions(void **state) {
        pid_t pid = spawn_netns(NULL);
        nsid_proc *p = NULL;
        nsid_ns *ns = NULL;
        char *prev = NULL, *cur = NULL, buf[200];
        FILE *f;

        open_pid(pid, &p, &ns);
        unlink(fake_file(ns));
        assert_int_equal(nsid_nfs_client_get_identifier(ns, 5000, &cur), 0);
        assert_string_equal(cur, ""); /* "(null)" */
        free(cur);

        /* dry run: decides, writes nothing */
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "id-one", NULL, NSID_NFS_SET_DRY_RUN,
                                                        5000, &prev),
                         0);
        assert_string_equal(prev, "");
        free(prev);
        assert_int_equal(access(fake_file(ns), F_OK), -1);

        /* unset -> written, with "\n", read back */
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "id-one", NULL, 0, 5000, &prev), 1);
        free(prev);
        f = fopen(fake_file(ns), "r");
        assert_non_null(f);
        assert_non_null(fgets(buf, sizeof(buf), f));
        fclose(f);
        assert_string_equal(buf, "id-one\n");
        /* the same again: nothing to do */
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "id-one", NULL, 0, 5000, NULL), 0);
        /* a different one: refused, previous reported, file unchanged */
        prev = NULL;
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "id-two", NULL, 0, 5000, &prev),
                         -EEXIST);
        assert_string_equal(prev, "id-one");
        free(prev);
        assert_int_equal(nsid_nfs_client_get_identifier(ns, 5000, &cur), 0);
        assert_string_equal(cur, "id-one");
        free(cur);
        /* replaceable: the caller knows it set id-one itself */
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "id-two", "id-one", 0, 5000, NULL), 1);
        /* replaceable naming something else does not help; force does */
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "id-3", "id-one", 0, 5000, NULL),
                         -EEXIST);
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "id-3", NULL, NSID_NFS_SET_FORCE, 5000,
                                                        NULL),
                         1);
        /* invalid identifiers never reach the kernel */
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "", NULL, 0, 5000, NULL), -EINVAL);
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "a b", NULL, 0, 5000, NULL), -EINVAL);
        assert_int_equal(nsid_nfs_client_set_identifier(
                                 ns, "0123456789012345678901234567890123456789012345678901234567890123",
                                 NULL, 0, 5000, NULL),
                         -EINVAL); /* 64 > 63 */

        /* the worker really joined this netns: another netns has its own file */
        {
                pid_t pid2 = spawn_netns(NULL);
                nsid_proc *p2 = NULL;
                nsid_ns *ns2 = NULL;
                open_pid(pid2, &p2, &ns2);
                unlink(fake_file(ns2));
                assert_int_equal(nsid_nfs_client_get_identifier(ns2, 5000, &cur), 0);
                assert_string_equal(cur, "");
                free(cur);
                nsid_ns_unref(ns2);
                nsid_proc_unref(p2);
                reap(pid2);
        }
        nsid_ns_unref(ns);
        nsid_proc_unref(p);
        reap(pid);
}

static void test_no_nfs_module(void **state) {
        /* Without the test hook the real path is taken: on this host no nfs module means no
         * identifier file in the netns's sysfs, reported as -ENOENT. */
        pid_t pid = spawn_netns(NULL);
        nsid_proc *p = NULL;
        nsid_ns *ns = NULL;
        char *cur = NULL;
        struct stat st;

        if (stat("/sys/fs/nfs/net/nfs_client", &st) == 0) {
                reap(pid);
                test_skip("/sys/fs/nfs/net/nfs_client exists: this host has the nfs module "
                          "loaded, so the missing-module path cannot be taken (the qemu lab "
                          "covers it: ctest -L vm)");
        }
        open_pid(pid, &p, &ns);
        unsetenv("NSID_TEST_SYSFS_NFS_CLIENT_DIR");
        assert_int_equal(nsid_nfs_client_get_identifier(ns, 5000, &cur), -ENOENT);
        assert_int_equal(nsid_nfs_client_set_identifier(ns, "x", NULL, 0, 5000, NULL), -ENOENT);
        setenv("NSID_TEST_SYSFS_NFS_CLIENT_DIR", fakedir, 1);
        nsid_ns_unref(ns);
        nsid_proc_unref(p);
        reap(pid);
}

/* nsid_netns_nfs_volumes(): a process in the netns answers (0 here: the netns has just been
 * made; 0 also when no nfs module is loaded); a process that is not in the netns asked about
 * is refused (-ESTALE), as is one that moved out after being opened. Volumes that exist are
 * counted by the lab (tests/vm/scenarios/identity-hooks.sh: "too-late" through the hooks). */
static void test_nfs_volumes(void **state) {
        pid_t pid = spawn_netns(NULL);
        nsid_proc *p = NULL, *self = NULL;
        nsid_ns *ns = NULL;

        (void) state;
        open_pid(pid, &p, &ns);
        assert_int_equal(nsid_netns_nfs_volumes(p, ns), 0);
        assert_int_equal(nsid_proc_open_self(&self), 0);
        assert_int_equal(nsid_netns_nfs_volumes(self, ns), -ESTALE);
        reap(pid);
        /* gone: its /proc entry, and with it the netns's, cannot be read any more */
        assert_true(nsid_netns_nfs_volumes(p, ns) < 0);
        nsid_ns_unref(ns);
        nsid_proc_unref(p);
        nsid_proc_unref(self);
}

static void test_scan_cookie_live(void **state) {
        pid_t pid = spawn_netns(NULL);
        nsid_proc *p = NULL;
        nsid_ns *ns = NULL, *self = NULL, *byinfo = NULL;
        nsid_netns_info *v = NULL;
        nsid_ns_id id, init;
        uint64_t c1 = 0, c2 = 0, cs = 0;
        char path[400], boot[37];
        size_t n = 0;
        bool seen_pid = false, seen_path = false;
        int fd;

        open_pid(pid, &p, &ns);
        assert_int_equal(nsid_ns_get_id(ns, &id), 0);
        assert_int_equal(nsid_ns_open_path("/proc/self/ns/net", NSID_NS_NET, &self), 0);
        assert_int_equal(nsid_netns_get_cookie(ns, &c1), 0);
        assert_int_equal(nsid_netns_get_cookie(ns, &c2), 0);
        assert_int_equal(nsid_netns_get_cookie(self, &cs), 0);
        assert_true(c1 == c2 && c1 != cs);
        assert_int_equal(nsid_boot_id(boot), 0);
        assert_int_equal(strlen(boot), 36);
        assert_int_equal(nsid_netns_initial_id(&init), 0);

        /* also held by a bind mount, like ip netns add */
        snprintf(path, sizeof(path), "%s/nsbind", dir);
        fd = open(path, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        close(fd);
        {
                char src[64];
                snprintf(src, sizeof(src), "/proc/%d/ns/net", (int) pid);
                assert_int_equal(mount(src, path, NULL, MS_BIND, NULL), 0);
        }

        assert_int_equal(nsid_netns_scan(&v, &n), 0);
        for (size_t i = 0; i < n; i++) {
                if (v[i].id.ino == id.ino && v[i].id.dev == id.dev) {
                        seen_pid = v[i].pid == pid && v[i].n_procs == 1;
                        seen_path = v[i].path && strcmp(v[i].path, path) == 0;
                        assert_false(v[i].initial);
                        assert_false(v[i].nfs_mounted);
                        assert_non_null(v[i].comm);
                }
                if (v[i].id.ino == init.ino)
                        assert_true(v[i].initial);
        }
        assert_true(seen_pid);
        assert_true(seen_path);
        nsid_netns_info_free(v, n);

        /* liveness of a registry entry: same cookie alive; other cookie or boot gone */
        {
                nsid_registry_entry e = { .netns = id, .boot_id = boot, .netns_cookie = c1 };
                assert_int_equal(nsid_netns_entry_is_live(&e, NULL), 1);
                e.netns_cookie = c1 + 1000000;
                assert_int_equal(nsid_netns_entry_is_live(&e, NULL), 0);
                e.netns_cookie = c1;
                e.boot_id = (char *) "00000000-0000-0000-0000-000000000000";
                assert_int_equal(nsid_netns_entry_is_live(&e, NULL), 0);
                e.boot_id = boot;

                /* the process dies: the bind mount keeps the netns, found by path */
                nsid_ns_unref(ns);
                nsid_proc_unref(p);
                reap(pid);
                assert_int_equal(nsid_netns_entry_is_live(&e, NULL), 1);
                assert_int_equal(nsid_netns_scan(&v, &n), 0);
                for (size_t i = 0; i < n; i++)
                        if (v[i].id.ino == id.ino) {
                                assert_int_equal(v[i].pid, 0);
                                assert_int_equal(nsid_netns_info_open(&v[i], &byinfo, NULL), 0);
                        }
                nsid_netns_info_free(v, n);
                assert_non_null(byinfo);
                byinfo = nsid_ns_unref(byinfo);
                /* and after the unmount it is gone */
                assert_int_equal(umount2(path, MNT_DETACH), 0);
                assert_int_equal(nsid_netns_entry_is_live(&e, NULL), 0);
        }
        nsid_ns_unref(self);
}

static void test_mountinfo_parser(void **state) {
        const char *nfs4 = "36 25 0:4 net:[4026532438] /run/netns/t1 rw shared:5 - nsfs nsfs rw\n"
                           "40 25 0:50 / /mnt/x rw,relatime shared:7 - nfs4 srv:/ rw,vers=4.2\n";
        const char *nfs3 = "40 25 0:50 / /mnt/x rw - nfs srv:/e rw,vers=3\n";
        const char *none = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                           "23 22 0:5 / /a\\040-\\040nfs4 rw - tmpfs tmpfs rw\n"
                           "24 22 0:6 / /b rw master:1 - nfsd nfsd rw\n"
                           "25 22 0:7 / /c rw - - nfs4 rw\n";

        assert_int_equal(nsid_mountinfo_has_nfs(nfs4, strlen(nfs4)), 1);
        assert_int_equal(nsid_mountinfo_has_nfs(nfs3, strlen(nfs3)), 1);
        assert_int_equal(nsid_mountinfo_has_nfs(none, strlen(none)), 0);
        assert_int_equal(nsid_mountinfo_has_nfs("", 0), 0);
        /* the last line without "\n", cut in the middle */
        assert_int_equal(nsid_mountinfo_has_nfs(nfs4, strlen(nfs4) - 10), 1);
        assert_int_equal(nsid_mountinfo_has_nfs(nfs4, 70), 0);
}

static void test_identity_for_ns(void **state) {
        nsid_registry *reg = NULL;
        nsid_identity *a = NULL, *b = NULL;
        nsid_proc *p1 = NULL, *p2 = NULL, *p3 = NULL;
        nsid_ns *n1 = NULL, *n2 = NULL, *n3 = NULL;
        char mid[400], expect[33], buf[33];
        pid_t pid1, pid2, pid3;

        assert_int_equal(nsid_registry_open(dbpath, 0, &reg), 0);
        snprintf(mid, sizeof(mid), "%s/container-machine-id", dir);
        write_str(mid, "fedcba9876543210fedcba9876543210\n");
        pid1 = spawn_netns(mid);
        pid2 = spawn_netns(mid);
        pid3 = spawn_netns(NULL);
        open_pid(pid1, &p1, &n1);
        open_pid(pid2, &p2, &n2);
        open_pid(pid3, &p3, &n3);

        /* the container's own machine-id is the key */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n1, p1, NULL, NULL, NSID_KEY_AUTO,
                                              "one", 0, &a),
                         0);
        assert_int_equal(nsid_identity_get_source(a), NSID_KEY_MACHINE_ID);
        assert_string_equal(nsid_identity_get_app(a), "nfs4");
        assert_true(nsid_identity_get_flags(a) & NSID_IDENTITY_NEW_BINDING);
        assert_int_equal(nsid_identity_derive(secret, "nfs4", "fedcba9876543210fedcba9876543210",
                                              expect),
                         0);
        assert_string_equal(nsid_identity_get_string(a), expect);
        snprintf(buf, sizeof(buf), "%s", nsid_identity_get_string(a));
        a = nsid_identity_unref(a);

        /* asked again for the same netns: the recorded key, same identity */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n1, p1, NULL, NULL, NSID_KEY_AUTO,
                                              NULL, 0, &a),
                         0);
        assert_true(nsid_identity_get_flags(a) & NSID_IDENTITY_REUSED);
        assert_string_equal(nsid_identity_get_string(a), buf);
        a = nsid_identity_unref(a);

        /* the same machine-id in another live container: not reused, random instead */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n2, p2, NULL, NULL, NSID_KEY_AUTO,
                                              NULL, 0, &b),
                         0);
        assert_int_equal(nsid_identity_get_source(b), NSID_KEY_RANDOM);
        assert_true(nsid_identity_get_flags(b) & NSID_IDENTITY_MACHINE_ID_SHARED);
        assert_string_not_equal(nsid_identity_get_string(b), buf);
        b = nsid_identity_unref(b);

        /* a container key outranks the recorded machine-id key: replaced, and says so */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n1, p1, NULL, "web", NSID_KEY_CONTAINER_ID,
                                              "web", 0, &a),
                         0);
        assert_int_equal(nsid_identity_get_source(a), NSID_KEY_CONTAINER_ID);
        assert_string_equal(nsid_identity_get_replaced(a), buf);
        snprintf(buf, sizeof(buf), "%s", nsid_identity_get_string(a));
        a = nsid_identity_unref(a);
        /* another container key of the same rank does not replace it (pods)... */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n1, p1, NULL, "sidecar",
                                              NSID_KEY_CONTAINER_ID, NULL, 0, &a),
                         0);
        assert_true(nsid_identity_get_flags(a) & NSID_IDENTITY_KEPT_EXISTING);
        assert_string_equal(nsid_identity_get_string(a), buf);
        a = nsid_identity_unref(a);
        /* ...unless asked to */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n1, p1, NULL, "sidecar",
                                              NSID_KEY_CONTAINER_ID, NULL,
                                              NSID_IDENTITY_FOR_NS_REPLACE, &a),
                         0);
        assert_string_not_equal(nsid_identity_get_string(a), buf);
        a = nsid_identity_unref(a);

        /* the same container key on another live netns: refused */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n3, p3, NULL, "sidecar",
                                              NSID_KEY_CONTAINER_ID, NULL, 0, &b),
                         -EADDRINUSE);
        /* per app: the same key is fine for another app, and unrelated */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n3, p3, "smb", "sidecar",
                                              NSID_KEY_CONTAINER_ID, NULL, 0, &b),
                         0);
        assert_string_equal(nsid_identity_get_app(b), "smb");
        b = nsid_identity_unref(b);

        /* without a registry: derivation still works, marked unrecorded */
        assert_int_equal(nsid_identity_for_ns(secret, NULL, n3, p3, NULL, "web", NSID_KEY_EXPLICIT,
                                              NULL, 0, &b),
                         0);
        assert_int_equal(nsid_identity_derive(secret, "nfs4", "web", expect), 0);
        assert_string_equal(nsid_identity_get_string(b), expect);
        b = nsid_identity_unref(b);

        /* bad arguments */
        assert_int_equal(nsid_identity_for_ns(secret, reg, n3, p3, NULL, "k", NSID_KEY_RANDOM,
                                              NULL, 0, &b),
                         -EINVAL);
        assert_int_equal(nsid_identity_for_ns(secret, reg, n3, p3, "Bad", NULL, NSID_KEY_AUTO, NULL,
                                              0, &b),
                         -EINVAL);
        assert_null(b);

        /* the netns of the first container dies: its identity may move to a new netns */
        nsid_ns_unref(n1);
        nsid_proc_unref(p1);
        reap(pid1);
        assert_int_equal(nsid_identity_for_ns(secret, reg, n3, p3, NULL, "sidecar",
                                              NSID_KEY_CONTAINER_ID, NULL,
                                              NSID_IDENTITY_FOR_NS_REPLACE, &b),
                         0);
        b = nsid_identity_unref(b);
        assert_int_equal(nsid_registry_check_integrity(reg), 0);

        nsid_ns_unref(n2);
        nsid_proc_unref(p2);
        nsid_ns_unref(n3);
        nsid_proc_unref(p3);
        reap(pid2);
        reap(pid3);
        nsid_registry_unref(reg);
}

/* nsid_proc_read_machine_id() (the bounded worker) and a machine-id handed over as the key. */
/* 0a1b2c3d4e5f60718293a4b5c6d7e8f9, the machine-id the read tests give their containers */
static const uint8_t mid_want[16] = { 0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71,
                                      0x82, 0x93, 0xa4, 0xb5, 0xc6, 0xd7, 0xe8, 0xf9 };

static void test_machine_id_read(void **state) {
        char mid[400], bad[400], expect[33];
        uint8_t got[16];
        nsid_proc *p1 = NULL, *p2 = NULL;
        nsid_ns *n1 = NULL, *n2 = NULL;
        nsid_identity *a = NULL;
        pid_t pid1, pid2;

        (void) state;
        snprintf(mid, sizeof(mid), "%s/mid-read", dir);
        write_str(mid, "0A1B2C3D4E5F60718293A4B5C6D7E8F9\n");
        snprintf(bad, sizeof(bad), "%s/mid-bad", dir);
        write_str(bad, "not a machine id\n");
        pid1 = spawn_netns(mid);
        pid2 = spawn_netns(bad);
        open_pid(pid1, &p1, &n1);
        open_pid(pid2, &p2, &n2);

        assert_int_equal(nsid_proc_read_machine_id(p1, 5000, got), 0);
        assert_memory_equal(got, mid_want, 16);
        assert_int_equal(nsid_proc_read_machine_id(p2, 5000, got), -EINVAL);
        assert_int_equal(nsid_proc_read_machine_id(p1, 0, got), -EINVAL);

        /* handed over as the key: used as step 3 would, source machine-id */
        assert_int_equal(nsid_identity_for_ns_timeout(secret, NULL, n2, p2, NULL,
                                                      "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                                                      NSID_KEY_MACHINE_ID, NULL, 0, 1000, &a),
                         0);
        assert_int_equal(nsid_identity_get_source(a), NSID_KEY_MACHINE_ID);
        assert_int_equal(nsid_identity_derive(secret, "nfs4", "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                                              expect),
                         0);
        assert_string_equal(nsid_identity_get_string(a), expect);
        a = nsid_identity_unref(a);
        /* read here: malformed, so random, and the error is kept */
        assert_int_equal(nsid_identity_for_ns_timeout(secret, NULL, n2, p2, NULL, NULL,
                                                      NSID_KEY_AUTO, NULL, 0, 1000, &a),
                         0);
        assert_int_equal(nsid_identity_get_source(a), NSID_KEY_RANDOM);
        assert_int_equal(nsid_identity_get_machine_id_error(a), -EINVAL);
        a = nsid_identity_unref(a);
        /* NO_MACHINE_ID: not read at all */
        assert_int_equal(nsid_identity_for_ns_timeout(secret, NULL, n1, p1, NULL, NULL,
                                                      NSID_KEY_AUTO, NULL,
                                                      NSID_IDENTITY_FOR_NS_NO_MACHINE_ID, 1000,
                                                      &a),
                         0);
        assert_int_equal(nsid_identity_get_source(a), NSID_KEY_RANDOM);
        assert_int_equal(nsid_identity_get_machine_id_error(a), 0);
        a = nsid_identity_unref(a);
        /* a machine-id key must be 32 lowercase hex, nonzero, with a process */
        assert_int_equal(nsid_identity_for_ns_timeout(secret, NULL, n1, p1, NULL,
                                                      "0A1B2C3D4E5F60718293A4B5C6D7E8F9",
                                                      NSID_KEY_MACHINE_ID, NULL, 0, 1000, &a),
                         -EINVAL);
        assert_int_equal(nsid_identity_for_ns_timeout(secret, NULL, n1, p1, NULL,
                                                      "00000000000000000000000000000000",
                                                      NSID_KEY_MACHINE_ID, NULL, 0, 1000, &a),
                         -EINVAL);
        assert_int_equal(nsid_identity_for_ns_timeout(secret, NULL, n1, NULL, NULL,
                                                      "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                                                      NSID_KEY_MACHINE_ID, NULL, 0, 1000, &a),
                         -EINVAL);
        assert_int_equal(nsid_identity_for_ns_timeout(secret, NULL, n1, p1, NULL, NULL,
                                                      NSID_KEY_AUTO, NULL, 0, 0, &a),
                         -EINVAL);
        assert_null(a);

        nsid_ns_unref(n1);
        nsid_proc_unref(p1);
        nsid_ns_unref(n2);
        nsid_proc_unref(p2);
        reap(pid1);
        reap(pid2);
}

/* reconcile reads machine-ids from several threads while others allocate: every forked worker
 * must finish. (A worker that malloc()s can hang in the child on an allocator lock another
 * thread held at the fork: ASan's allocator has no fork handlers. The ASan tier ran this
 * against the old worker and 8 of 480 reads timed out.) */
struct mid_reader {
        nsid_proc *p;
        int ok;
};

static volatile int churn_stop;

static void *churn_main(void *userdata) {
        (void) userdata;
        while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)) {
                void *v[64];
                for (size_t i = 0; i < 64; i++)
                        v[i] = malloc(16 + (i * 37) % 4000);
                for (size_t i = 0; i < 64; i++)
                        free(v[i]);
        }
        return NULL;
}

static void *mid_reader_main(void *userdata) {
        struct mid_reader *m = userdata;

        for (int i = 0; i < 40; i++) {
                uint8_t got[16];
                int r = nsid_proc_read_machine_id(m->p, 5000, got);
                if (r == 0 && memcmp(got, mid_want, 16) == 0)
                        m->ok++;
                else
                        fprintf(stderr, "# read %d: %s\n", i, r < 0 ? strerror(-r) : "wrong id");
        }
        return NULL;
}

static void test_machine_id_read_threads(void **state) {
        struct mid_reader readers[8];
        pthread_t t[8], churn[2];
        char mid[400];
        nsid_proc *p = NULL;
        nsid_ns *n = NULL;
        int ok = 0;
        pid_t pid;

        (void) state;
        snprintf(mid, sizeof(mid), "%s/mid-threads", dir);
        write_str(mid, "0a1b2c3d4e5f60718293a4b5c6d7e8f9\n");
        pid = spawn_netns(mid);
        open_pid(pid, &p, &n);

        __atomic_store_n(&churn_stop, 0, __ATOMIC_RELAXED);
        for (size_t i = 0; i < 2; i++)
                assert_int_equal(pthread_create(&churn[i], NULL, churn_main, NULL), 0);
        for (size_t i = 0; i < 8; i++) {
                readers[i] = (struct mid_reader) { .p = p };
                assert_int_equal(pthread_create(&t[i], NULL, mid_reader_main, &readers[i]), 0);
        }
        for (size_t i = 0; i < 8; i++) {
                assert_int_equal(pthread_join(t[i], NULL), 0);
                ok += readers[i].ok;
        }
        __atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
        for (size_t i = 0; i < 2; i++)
                assert_int_equal(pthread_join(churn[i], NULL), 0);
        assert_int_equal(ok, 8 * 40);

        nsid_ns_unref(n);
        nsid_proc_unref(p);
        reap(pid);
}

/* A worker logs (at debug level: why it refused the file) while another thread of the same
 * program logs too. The worker holds the library's log lock across its fork(), so the child
 * never starts with it taken by a thread it does not have: each read ends with the file's
 * error, not with the worker's timeout. (Without that, the first read here timed out: the
 * other thread holds the lock most of the time.) */
static volatile int logger_stop;
static int log_handler_calls;

static void slow_handler(int priority, const char *message, void *userdata) {
        (void) priority;
        (void) message;
        (void) userdata;
        __atomic_add_fetch(&log_handler_calls, 1, __ATOMIC_RELAXED);
        usleep(300);
}

static void *logger_main(void *userdata) {
        (void) userdata;
        while (!__atomic_load_n(&logger_stop, __ATOMIC_RELAXED))
                log_debug("itest: another thread logging");
        return NULL;
}

static void test_machine_id_worker_logs(void **state) {
        char big[400], line[4200];
        nsid_proc *p = NULL;
        nsid_ns *n = NULL;
        pthread_t t;
        pid_t pid;

        (void) state;
        snprintf(big, sizeof(big), "%s/mid-big", dir);
        memset(line, 'a', sizeof(line) - 1);
        line[sizeof(line) - 1] = '\0';
        write_str(big, line); /* over the 4096 bytes the worker reads: refused (EFBIG) there */
        pid = spawn_netns(big);
        open_pid(pid, &p, &n);

        nsid_log_set_handler(slow_handler, NULL);
        nsid_log_set_max_priority(LOG_DEBUG);
        __atomic_store_n(&logger_stop, 0, __ATOMIC_RELAXED);
        assert_int_equal(pthread_create(&t, NULL, logger_main, NULL), 0);
        for (int i = 0; i < 10; i++) {
                uint8_t got[16];
                assert_int_equal(nsid_proc_read_machine_id(p, 2000, got), -EFBIG);
        }
        __atomic_store_n(&logger_stop, 1, __ATOMIC_RELAXED);
        assert_int_equal(pthread_join(t, NULL), 0);
        nsid_log_set_max_priority(LOG_INFO);
        nsid_log_set_handler(NULL, NULL);
        assert_true(__atomic_load_n(&log_handler_calls, __ATOMIC_RELAXED) > 10);

        nsid_ns_unref(n);
        nsid_proc_unref(p);
        reap(pid);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nfs_client_decisions),
                cmocka_unit_test(test_no_nfs_module),
                cmocka_unit_test(test_nfs_volumes),
                cmocka_unit_test(test_scan_cookie_live),
                cmocka_unit_test(test_mountinfo_parser),
                cmocka_unit_test(test_identity_for_ns),
                cmocka_unit_test(test_machine_id_read),
                cmocka_unit_test(test_machine_id_read_threads),
                cmocka_unit_test(test_machine_id_worker_logs),
        };
        return run_test_group(tests, setup, teardown);
}
