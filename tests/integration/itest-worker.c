/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsid/worker.h on real namespaces (needs root). Targets are "holder" processes that unshare
 * namespaces (net; user with a real uid_map + mount with a bind-mounted /etc/passwd; pid;
 * mount + chroot) and wait. Each test asserts what the worker really saw from the inside:
 * namespace inodes, uid, files, /proc/self/status capabilities, its open fds; and what the
 * caller sees: exact error codes, elapsed time, no zombie, no fd leaked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/log.h"
#include "nsid/ns.h"
#include "nsid/worker.h"

#include "itest-util.h"

#define CONTAINER_PASSWD "root:x:0:0:worker test container:/root:/bin/sh\n"
#define MARKER "marker inside the chroot\n"

static char tmpdir[] = "/tmp/nsid-itest-worker-XXXXXX";
static char passwd_path[300], croot_path[300], shared_dir[300];

static char last_log[2048];
static void log_capture(int priority, const char *message, void *userdata) {
        (void) priority;
        (void) userdata;
        snprintf(last_log, sizeof(last_log), "%s", message);
}

/* ---- targets ---- */

struct holder {
        pid_t pid;   /* the target (host pid) */
        pid_t outer; /* the forked child (== pid unless a pid namespace was made) */
};

enum {
        H_BIND_PASSWD = 1 << 0,
        H_CHROOT = 1 << 1,
        H_MAP_HOST_ROOT_ONLY = 1 << 2, /* CLONE_NEWUSER maps "0 0 1": nothing unprivileged */
};

static void write_proc_file(pid_t pid, const char *name, const char *text) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

/* A child unsharing `flags` (CLONE_NEWUSER gets uid/gid map 0 100000 65536), optionally with
 * a bind-mounted /etc/passwd or chroot()ed into croot; with CLONE_NEWPID the target is its
 * child, pid 1 of the new namespace. Waits until killed. */
static struct holder spawn_holder(int flags, unsigned opts) {
        int ready[2], sync[2];
        struct holder h = {};
        char b;

        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (flags & CLONE_NEWUSER) {
                        if (unshare(CLONE_NEWUSER) < 0)
                                _exit(2);
                        if (write(ready[1], "u", 1) != 1 || read(sync[0], &b, 1) != 1)
                                _exit(3);
                }
                if (unshare(flags & ~CLONE_NEWUSER) < 0)
                        _exit(4);
                if (flags & CLONE_NEWNS) {
                        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                                _exit(5);
                        if ((opts & H_BIND_PASSWD) &&
                            mount(passwd_path, "/etc/passwd", NULL, MS_BIND, NULL) < 0)
                                _exit(6);
                        if ((opts & H_CHROOT) && (chroot(croot_path) < 0 || chdir("/") < 0))
                                _exit(7);
                }
                pid_t target = getpid();
                if (flags & CLONE_NEWPID) {
                        target = fork();
                        if (target < 0)
                                _exit(8);
                        if (target == 0) {
                                prctl(PR_SET_PDEATHSIG, SIGKILL);
                                for (;;)
                                        pause();
                        }
                }
                if (write(ready[1], &target, sizeof(target)) != sizeof(target))
                        _exit(9);
                if (target != getpid()) /* reap the target, so it never lingers as a zombie */
                        while (waitpid(target, NULL, 0) < 0 && errno == EINTR)
                                ;
                else
                        for (;;)
                                pause();
                _exit(0);
        }
        close(ready[1]);
        close(sync[0]);
        h.outer = pid;
        if (flags & CLONE_NEWUSER) {
                assert_int_equal(read(ready[0], &b, 1), 1);
                const char *map = opts & H_MAP_HOST_ROOT_ONLY ? "0 0 1\n" : "0 100000 65536\n";
                write_proc_file(pid, "uid_map", map);
                write_proc_file(pid, "gid_map", map);
                assert_int_equal(write(sync[1], "m", 1), 1);
        }
        assert_int_equal(read(ready[0], &h.pid, sizeof(h.pid)), sizeof(h.pid));
        close(ready[0]);
        close(sync[1]);
        return h;
}

static void holder_kill(struct holder *h) {
        if (h->pid != h->outer)
                kill(h->pid, SIGKILL); /* the outer child reaps it and exits */
        else
                kill(h->outer, SIGKILL);
        while (waitpid(h->outer, NULL, 0) < 0 && errno == EINTR)
                ;
}

static nsid_proc *open_target(const struct holder *h) {
        nsid_proc *p = NULL;
        assert_int_equal(nsid_proc_open(h->pid, &p), 0);
        return p;
}

static uint64_t ns_ino_of(pid_t pid, const char *type) {
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int) pid, type);
        assert_int_equal(stat(path, &st), 0);
        return (uint64_t) st.st_ino;
}

/* ---- process bookkeeping of the test itself ---- */

/* Children of this process, found through /proc/PID/stat (any state, zombies included). */
static int count_children(void) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        int n = 0;
        assert_non_null(d);
        while ((e = readdir(d))) {
                char path[300], buf[1024];
                if (e->d_name[0] < '0' || e->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                ssize_t k = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (k <= 0)
                        continue;
                buf[k] = 0;
                char *p = strrchr(buf, ')');
                int ppid;
                char st;
                if (p && sscanf(p + 2, "%c %d", &st, &ppid) == 2 && ppid == getpid())
                        n++;
        }
        closedir(d);
        return n;
}

/* Processes whose pid namespace has this inode. */
static int count_in_pidns(uint64_t ino) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        int n = 0;
        assert_non_null(d);
        while ((e = readdir(d))) {
                char path[300];
                struct stat st;
                if (e->d_name[0] < '0' || e->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/ns/pid", e->d_name);
                if (stat(path, &st) == 0 && (uint64_t) st.st_ino == ino)
                        n++;
        }
        closedir(d);
        return n;
}

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- functions run in the worker ----
 * They run in a fork()ed copy of this (multithreaded) test, so they are fork-safe as the API
 * asks: no malloc in the ones used while other threads run (dprintf() would allocate a FILE
 * buffer, and ASan's allocator, which GCC 12's libasan does not make fork-safe, then deadlocks
 * in the child if another thread held its lock at fork()), only stack buffers and system
 * calls. fn_list_fds uses opendir() and only runs while the test is single-threaded. */

__attribute__((format(printf, 2, 3)))
static void reply_printf(int fd, const char *fmt, ...) {
        char buf[4096];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n > 0)
                (void) !write(fd, buf, (size_t) n < sizeof(buf) ? (size_t) n : sizeof(buf) - 1);
}

static int fn_ns_inodes(int fd, void *userdata) {
        struct stat net, pid;
        (void) userdata;
        if (stat("/proc/self/ns/net", &net) < 0 || stat("/proc/self/ns/pid", &pid) < 0)
                return -errno;
        reply_printf(fd, "net=%llu pid=%llu getpid=%d", (unsigned long long) net.st_ino,
                (unsigned long long) pid.st_ino, (int) getpid());
        return 0;
}

static int fn_identity_and_passwd(int fd, void *userdata) {
        char buf[4096], path[400];
        ssize_t n;
        int f;

        (void) userdata;
        f = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
        if (f < 0)
                return -errno;
        n = read(f, buf, sizeof(buf) - 1);
        close(f);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        /* A file created here shows whose credentials the worker really has. */
        snprintf(path, sizeof(path), "%s/created-by-worker", shared_dir);
        f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (f < 0)
                return -errno;
        close(f);
        reply_printf(fd, "uid=%d gid=%d\n%s", (int) getuid(), (int) getgid(), buf);
        return 0;
}

static int fn_read_marker(int fd, void *userdata) {
        char buf[256];
        (void) userdata;
        int f = open("/marker", O_RDONLY | O_CLOEXEC);
        if (f < 0)
                return -errno;
        ssize_t n = read(f, buf, sizeof(buf));
        close(f);
        if (n < 0)
                return -errno;
        return write(fd, buf, (size_t) n) == n ? 0 : -EIO;
}

static int fn_status(int fd, void *userdata) {
        static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
                                            "CapAmb:", "NoNewPrivs:" };
        char buf[8192];
        (void) userdata;
        int f = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (f < 0)
                return -errno;
        ssize_t n = read(f, buf, sizeof(buf) - 1);
        close(f);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                        if (strncmp(line, keys[i], strlen(keys[i])) == 0)
                                reply_printf(fd, "%s\n", line);
        reply_printf(fd, "dumpable:\t%d\nsession_leader:\t%d\n", prctl(PR_GET_DUMPABLE),
                getsid(0) == getpid());
        return 0;
}

/* NSID_WORKER_DROP_IN_FN: read the container's file with privilege, drop, then report what
 * the parsing step would run as (status read through an fd opened before the drop), and
 * what its root holds. */
static int fn_read_then_drop(int fd, void *userdata) {
        char buf[8192], passwd[256];
        struct stat st;
        (void) userdata;
        int pf = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
        int sf = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        int nsdir = open("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pf < 0 || sf < 0 || nsdir < 0)
                return -EIO;
        ssize_t n = read(pf, passwd, sizeof(passwd) - 1);
        close(pf);
        passwd[n > 0 ? n : 0] = 0;
        int r = nsid_worker_drop_privileges();
        if (r < 0) {
                reply_printf(fd, "drop=%d\n", r);
                return r;
        }
        reply_printf(fd, "drop=0\nuid=%d gid=%d groups=%d\n", (int) getuid(), (int) getgid(),
                     getgroups(0, NULL));
        n = pread(sf, buf, sizeof(buf) - 1, 0);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
                if (strncmp(line, "Cap", 3) == 0 || strncmp(line, "NoNewPrivs:", 11) == 0)
                        reply_printf(fd, "%s\n", line);
        if (fstatat(nsdir, "user", &st, 0) < 0)
                return -errno;
        reply_printf(fd, "userns=%llu\n", (unsigned long long) st.st_ino);
        DIR *d = opendir("/");
        reply_printf(fd, "opendir=%d\n", d ? 0 : errno);
        if (d)
                closedir(d);
        reply_printf(fd, "stat_etc=%d\n", stat("/etc", &st) < 0 ? errno : 0);
        reply_printf(fd, "open_status=%d\n",
                     open("/proc/self/status", O_RDONLY | O_CLOEXEC) < 0 ? errno : 0);
        reply_printf(fd, "mkdir=%d\n", mkdir("/x", 0755) < 0 ? errno : 0);
        reply_printf(fd, "setuid0=%d\n", setuid(0) < 0 ? errno : 0);
        reply_printf(fd, "second=%d\n", nsid_worker_drop_privileges());
        reply_printf(fd, "passwd=%s", passwd);
        return 0;
}

static int fn_never_drops(int fd, void *userdata) {
        (void) userdata;
        reply_printf(fd, "read with privilege, parsed without dropping\n");
        return 0;
}

static int fn_list_fds(int fd, void *userdata) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        (void) userdata;
        if (!d)
                return -errno;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
                        continue;
                char path[300], target[300] = "";
                snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
                ssize_t n = readlink(path, target, sizeof(target) - 1);
                if (n > 0)
                        target[n] = 0;
                reply_printf(fd, "%s %s\n", e->d_name, target);
        }
        closedir(d);
        return 0;
}

static int fn_sleep(int fd, void *userdata) {
        (void) fd;
        (void) userdata;
        sleep(10);
        return 0;
}

static int fn_write_n(int fd, void *userdata) {
        size_t n = *(size_t *) userdata;
        char buf[4096];
        memset(buf, 'z', sizeof(buf));
        while (n > 0) {
                size_t k = n < sizeof(buf) ? n : sizeof(buf);
                if (write(fd, buf, k) != (ssize_t) k)
                        return -EIO;
                n -= k;
        }
        return 0;
}

static int fn_write_forever(int fd, void *userdata) {
        char buf[4096];
        (void) userdata;
        memset(buf, 'y', sizeof(buf));
        for (;;)
                if (write(fd, buf, sizeof(buf)) < 0)
                        return -errno;
}

static int fn_return(int fd, void *userdata) {
        (void) fd;
        reply_printf(fd, "partial reply");
        return *(int *) userdata;
}

static int fn_die(int fd, void *userdata) {
        (void) fd;
        (void) userdata;
        raise(SIGKILL);
        return 0;
}

static int fn_binary(int fd, void *userdata) {
        (void) userdata;
        return write(fd, "a\0b\0", 4) == 4 ? 0 : -EIO;
}

static int fn_mount_tmpfs(int fd, void *userdata) {
        char path[400];
        (void) userdata;
        snprintf(path, sizeof(path), "%s/mnt", shared_dir);
        if (mount("tmpfs", path, "tmpfs", 0, "size=64k") < 0)
                return -errno;
        snprintf(path, sizeof(path), "%s/mnt/inside-private-mount", shared_dir);
        int f = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (f < 0)
                return -errno;
        close(f);
        reply_printf(fd, "mounted");
        return 0;
}

/* ---- tests ---- */

static int setup(void **state) {
        (void) state;
        if (geteuid() != 0)
                skip_all("not root: the targets are made with unshare() of namespaces a user "
                         "cannot make, the workers join them (run as root)");
        if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) < 0)
                return -1;
        snprintf(passwd_path, sizeof(passwd_path), "%s/passwd", tmpdir);
        snprintf(croot_path, sizeof(croot_path), "%s/croot", tmpdir);
        snprintf(shared_dir, sizeof(shared_dir), "%s/shared", tmpdir);
        FILE *f = fopen(passwd_path, "we");
        if (!f || fputs(CONTAINER_PASSWD, f) < 0 || fclose(f) != 0)
                return -1;
        if (mkdir(croot_path, 0755) < 0 || mkdir(shared_dir, 0777) < 0 ||
            chmod(shared_dir, 01777) < 0)
                return -1;
        char p[400];
        snprintf(p, sizeof(p), "%s/mnt", shared_dir);
        if (mkdir(p, 0755) < 0)
                return -1;
        snprintf(p, sizeof(p), "%s/marker", croot_path);
        f = fopen(p, "we");
        if (!f || fputs(MARKER, f) < 0 || fclose(f) != 0)
                return -1;
        return 0;
}

static int teardown(void **state) {
        char p[400];
        (void) state;
        snprintf(p, sizeof(p), "%s/marker", croot_path);
        unlink(p);
        rmdir(croot_path);
        snprintf(p, sizeof(p), "%s/created-by-worker", shared_dir);
        unlink(p);
        snprintf(p, sizeof(p), "%s/mnt", shared_dir);
        rmdir(p);
        rmdir(shared_dir);
        unlink(passwd_path);
        return rmdir(tmpdir);
}

static void test_netns(void **state) {
        char *reply = NULL, expect[64];
        size_t size = 0;
        nsid_ns *net = NULL;

        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        nsid_proc *p = open_target(&h);
        uint64_t target = ns_ino_of(h.pid, "net");
        assert_true(target != ns_ino_of(getpid(), "net"));

        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET), 0, 5000, fn_ns_inodes,
                                         NULL, 4096, &reply, &size),
                         0);
        snprintf(expect, sizeof(expect), "net=%llu ", (unsigned long long) target);
        assert_true(strncmp(reply, expect, strlen(expect)) == 0);
        assert_int_equal(size, strlen(reply));
        free(reply);

        /* The same through a namespace handle (no process needed). */
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_NET, &net), 0);
        assert_int_equal(nsid_worker_run_ns(&net, 1, 0, 5000, fn_ns_inodes, NULL, 4096, &reply,
                                            NULL),
                         0);
        assert_true(strncmp(reply, expect, strlen(expect)) == 0);
        free(reply);

        /* No namespaces asked: runs in ours. */
        assert_int_equal(nsid_worker_run(p, 0, 0, 5000, fn_ns_inodes, NULL, 4096, &reply, NULL),
                         0);
        snprintf(expect, sizeof(expect), "net=%llu ",
                 (unsigned long long) ns_ino_of(getpid(), "net"));
        assert_true(strncmp(reply, expect, strlen(expect)) == 0);
        free(reply);

        nsid_ns_unref(net);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void check_user_mnt_reply(char *reply) {
        char path[400];
        struct stat st;

        /* Became the namespace's root: uid 0 inside, host uid 100000 outside. */
        assert_true(strncmp(reply, "uid=0 gid=0\n", 12) == 0);
        assert_string_equal(reply + 12, CONTAINER_PASSWD);
        snprintf(path, sizeof(path), "%s/created-by-worker", shared_dir);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_uid, 100000);
        assert_int_equal(st.st_gid, 100000);
        assert_int_equal(unlink(path), 0);
}

static void test_user_mnt(void **state) {
        char *reply = NULL;
        nsid_ns *ns[2] = {};

        (void) state;
        struct holder h = spawn_holder(CLONE_NEWUSER | CLONE_NEWNS, H_BIND_PASSWD);
        nsid_proc *p = open_target(&h);

        assert_int_equal(nsid_worker_run(p,
                                         NSID_NS_MASK(NSID_NS_USER) | NSID_NS_MASK(NSID_NS_MNT),
                                         0, 5000, fn_identity_and_passwd, NULL, 8192, &reply,
                                         NULL),
                         0);
        check_user_mnt_reply(reply);
        free(reply);

        /* Handles given mount first: the user namespace is still joined first. */
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_MNT, &ns[0]), 0);
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_USER, &ns[1]), 0);
        assert_int_equal(nsid_worker_run_ns(ns, 2, 0, 5000, fn_identity_and_passwd, NULL, 8192,
                                            &reply, NULL),
                         0);
        check_user_mnt_reply(reply);
        free(reply);

        /* The mount namespace without its user namespace: joined as host root (allowed for
         * us), who keeps its ids: the file is owned by host uid 0. */
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_MNT), 0, 5000,
                                         fn_identity_and_passwd, NULL, 8192, &reply, NULL),
                         0);
        assert_true(strncmp(reply, "uid=0 gid=0\n", 12) == 0);
        assert_string_equal(reply + 12, CONTAINER_PASSWD);
        free(reply);
        char path[400];
        struct stat st;
        snprintf(path, sizeof(path), "%s/created-by-worker", shared_dir);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(unlink(path), 0);

        /* A setup step that fails in the child comes back as its exact errno, and the log
         * names the step: after joining the container's user namespace, the host's network
         * namespace (owned by the initial user namespace) can no longer be joined. */
        nsid_proc *self = NULL;
        nsid_ns *hostnet = NULL;
        assert_int_equal(nsid_proc_open_self(&self), 0);
        assert_int_equal(nsid_proc_open_ns(self, NSID_NS_NET, &hostnet), 0);
        nsid_ns_unref(ns[0]);
        ns[0] = hostnet;
        last_log[0] = 0;
        nsid_log_set_handler(log_capture, NULL);
        nsid_log_set_max_priority(LOG_DEBUG);
        reply = (char *) 0x1;
        assert_int_equal(nsid_worker_run_ns(ns, 2, 0, 5000, fn_identity_and_passwd, NULL, 8192,
                                            &reply, NULL),
                         -EPERM);
        assert_ptr_equal(reply, (char *) 0x1);
        assert_non_null(strstr(last_log, "setns()"));
        assert_non_null(strstr(last_log, "net:["));
        nsid_log_set_handler(NULL, NULL);
        nsid_proc_unref(self);

        nsid_ns_unref(ns[0]);
        nsid_ns_unref(ns[1]);
        nsid_proc_unref(p);
        holder_kill(&h);
}

/* The kernel fact the chroot step exists for: setns(pidfd, CLONE_NEWNS) puts the caller at
 * the root of the target's mount namespace, not at the target's chroot. */
static void test_kernel_setns_mnt_root(void **state) {
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNS, H_CHROOT);
        int pidfd = pidfd_open(h.pid, 0);
        assert_true(pidfd >= 0);
        pid_t c = fork();
        assert_true(c >= 0);
        if (c == 0) {
                struct stat st;
                if (setns(pidfd, CLONE_NEWNS) < 0)
                        _exit(1);
                /* at the namespace root: the host tree, no /marker */
                _exit(stat("/marker", &st) == 0 ? 2 : stat("/etc/passwd", &st) == 0 ? 0 : 3);
        }
        int st;
        assert_int_equal(waitpid(c, &st, 0), c);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        close(pidfd);

        /* The worker does chroot to the target's root. */
        nsid_proc *p = open_target(&h);
        char *reply = NULL;
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_MNT), 0, 5000, fn_read_marker,
                                         NULL, 4096, &reply, NULL),
                         0);
        assert_string_equal(reply, MARKER);
        free(reply);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void test_pidns(void **state) {
        char *reply = NULL, expect[128];
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWPID | CLONE_NEWNET, 0);
        assert_true(h.pid != h.outer);
        nsid_proc *p = open_target(&h);
        uint64_t pidns = ns_ino_of(h.pid, "pid");

        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_PID) | NSID_NS_MASK(NSID_NS_NET),
                                         0, 5000, fn_ns_inodes, NULL, 4096, &reply, NULL),
                         0);
        snprintf(expect, sizeof(expect), "net=%llu pid=%llu getpid=",
                 (unsigned long long) ns_ino_of(h.pid, "net"), (unsigned long long) pidns);
        assert_true(strncmp(reply, expect, strlen(expect)) == 0);
        /* pid 1 is the target; the worker is a small pid inside that namespace */
        int inner = atoi(reply + strlen(expect));
        assert_true(inner > 1 && inner < 100);
        free(reply);

        /* Killed on timeout: no process of ours is left in the target's pid namespace. */
        int64_t t0 = now_ms();
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_PID), 0, 300, fn_sleep, NULL,
                                         4096, &reply, NULL),
                         -ETIMEDOUT);
        assert_true(now_ms() - t0 < 1000);
        int n = 0;
        for (int i = 0; i < 100 && (n = count_in_pidns(pidns)) != 1; i++)
                usleep(10000);
        assert_int_equal(n, 1);

        nsid_proc_unref(p);
        holder_kill(&h);
}

static const char *status_field(const char *reply, const char *key) {
        const char *s = strstr(reply, key);
        assert_non_null(s);
        s += strlen(key);
        while (*s == '\t' || *s == ' ')
                s++;
        return s;
}

static void test_caps_dropped(void **state) {
        char *reply = NULL;
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        nsid_proc *p = open_target(&h);

        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET), 0, 5000, fn_status, NULL,
                                         4096, &reply, NULL),
                         0);
        for (const char *const *k = (const char *const[]) { "CapInh:", "CapPrm:", "CapEff:",
                                                             "CapBnd:", "CapAmb:", NULL };
             *k; k++)
                assert_true(strncmp(status_field(reply, *k), "0000000000000000\n", 17) == 0);
        assert_true(strncmp(status_field(reply, "NoNewPrivs:"), "1\n", 2) == 0);
        assert_true(strncmp(status_field(reply, "dumpable:"), "0\n", 2) == 0);
        assert_true(strncmp(status_field(reply, "session_leader:"), "1\n", 2) == 0);
        free(reply);

        /* NSID_WORKER_KEEP_CAPS keeps them (we run as root). */
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET), NSID_WORKER_KEEP_CAPS,
                                         5000, fn_status, NULL, 4096, &reply, NULL),
                         0);
        assert_true(strncmp(status_field(reply, "CapEff:"), "0000000000000000", 16) != 0);
        free(reply);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void check_dropped(const char *reply, uint64_t want_userns) {
        char want[64];
        assert_non_null(strstr(reply, "drop=0\nuid=65534 gid=65534 groups=0\n"));
        for (const char *const *k = (const char *const[]) { "CapInh:", "CapPrm:", "CapEff:",
                                                             "CapBnd:", "CapAmb:", NULL };
             *k; k++)
                assert_true(strncmp(status_field(reply, *k), "0000000000000000\n", 17) == 0);
        assert_true(strncmp(status_field(reply, "NoNewPrivs:"), "1\n", 2) == 0);
        snprintf(want, sizeof(want), "userns=%llu\n", (unsigned long long) want_userns);
        assert_non_null(strstr(reply, want));
        /* an empty root it cannot list, where nothing exists and nothing can be made */
        assert_non_null(strstr(reply, "opendir=13\n"));     /* EACCES */
        assert_non_null(strstr(reply, "stat_etc=2\n"));     /* ENOENT */
        assert_non_null(strstr(reply, "open_status=2\n"));  /* no /proc */
        assert_non_null(strstr(reply, "mkdir=30\n"));       /* EROFS */
        assert_non_null(strstr(reply, "setuid0=1\n"));      /* EPERM */
        assert_non_null(strstr(reply, "second=0\n"));
}

/* Issue #20 item 2: a worker that reads a container's files with privilege parses them as
 * nobody, in the container's user namespace, with no capability, in an empty root. */
static void test_drop_in_fn(void **state) {
        char *reply = NULL;
        (void) state;

        /* a container with its own user namespace (0 100000 65536: 65534 -> host 165534) */
        struct holder h = spawn_holder(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET, H_BIND_PASSWD);
        nsid_proc *p = open_target(&h);
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_MNT) | NSID_NS_MASK(NSID_NS_NET),
                                         NSID_WORKER_DROP_IN_FN, 5000, fn_read_then_drop, NULL,
                                         8192, &reply, NULL),
                         0);
        check_dropped(reply, ns_ino_of(h.pid, "user"));
        /* the bytes were read before the drop, from the container's root */
        assert_non_null(strstr(reply, "passwd=" CONTAINER_PASSWD));
        free(reply);
        reply = NULL;

        /* fn that parses without dropping: no answer */
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_MNT), NSID_WORKER_DROP_IN_FN,
                                         5000, fn_never_drops, NULL, 4096, &reply, NULL),
                         -EPROTO);
        assert_null(reply);
        /* it joins the user namespace itself; not with handles (no id maps) */
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_USER), NSID_WORKER_DROP_IN_FN,
                                         5000, fn_read_then_drop, NULL, 4096, &reply, NULL),
                         -EINVAL);
        assert_int_equal(nsid_worker_run_ns(NULL, 0, NSID_WORKER_DROP_IN_FN, 5000,
                                            fn_read_then_drop, NULL, 4096, &reply, NULL),
                         -EINVAL);
        nsid_proc_unref(p);
        holder_kill(&h);

        /* a target in our own user namespace: the host's nobody */
        h = spawn_holder(CLONE_NEWNS | CLONE_NEWNET, H_BIND_PASSWD);
        p = open_target(&h);
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_MNT) | NSID_NS_MASK(NSID_NS_NET),
                                         NSID_WORKER_DROP_IN_FN, 5000, fn_read_then_drop, NULL,
                                         8192, &reply, NULL),
                         0);
        check_dropped(reply, ns_ino_of(getpid(), "user"));
        free(reply);
        reply = NULL;
        nsid_proc_unref(p);
        holder_kill(&h);

        /* a user namespace that maps only the host's root: nothing unprivileged to become,
         * so the worker refuses (fn sees -EPERM and gives up) */
        h = spawn_holder(CLONE_NEWUSER | CLONE_NEWNS, H_MAP_HOST_ROOT_ONLY);
        p = open_target(&h);
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_MNT), NSID_WORKER_DROP_IN_FN,
                                         5000, fn_read_then_drop, NULL, 8192, &reply, NULL),
                         -EPERM);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void test_fd_isolation(void **state) {
        char *reply = NULL;
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        nsid_proc *p = open_target(&h);

        /* Extra fds in the caller, one without O_CLOEXEC. */
        int leak = open("/etc/hostname", O_RDONLY);
        int leak2 = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
        assert_true(leak >= 0 && leak2 >= 0);
        int before = count_fds();

        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET), 0, 5000, fn_list_fds,
                                         NULL, 4096, &reply, NULL),
                         0);
        /* Exactly 0-2 on /dev/null, the reply pipe on 3 and the worker's own fd directory
         * (from the host's procfs, for reopening files: issue 20) on 4. */
        assert_true(strncmp(reply,
                            "0 /dev/null\n1 /dev/null\n2 /dev/null\n3 pipe:[", 42) == 0);
        const char *l4 = strchr(reply + 42, '\n') + 1;
        assert_true(strncmp(l4, "4 /proc/", 8) == 0);
        assert_non_null(strstr(l4, "/fd\n"));
        assert_int_equal(strchr(l4, '\n')[1], 0);
        assert_null(strstr(reply, "hostname"));
        free(reply);

        assert_int_equal(count_fds(), before);
        close(leak);
        close(leak2);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void test_timeout(void **state) {
        char *reply = (char *) 0x1;
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        nsid_proc *p = open_target(&h);
        int fds = count_fds(), children = count_children();
        assert_int_equal(children, 1); /* the holder */

        int64_t t0 = now_ms();
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET), 0, 300, fn_sleep, NULL,
                                         4096, &reply, NULL),
                         -ETIMEDOUT);
        int64_t took = now_ms() - t0;
        assert_true(took >= 300 && took < 1000);
        assert_ptr_equal(reply, (char *) 0x1);
        assert_int_equal(count_children(), children); /* reaped: no zombie */
        assert_int_equal(count_fds(), fds);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void test_reply_limits(void **state) {
        char *reply = NULL;
        size_t size = 0, n;
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        nsid_proc *p = open_target(&h);
        unsigned mask = NSID_NS_MASK(NSID_NS_NET);
        int fds = count_fds();

        n = 1000;
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_write_n, &n, 1000, &reply, &size),
                         0);
        assert_int_equal(size, 1000);
        assert_int_equal(strlen(reply), 1000);
        free(reply);
        reply = NULL;

        n = 1001;
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_write_n, &n, 1000, &reply, &size),
                         -EFBIG);
        n = 100000;
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_write_n, &n, 1000, &reply, &size),
                         -EFBIG);
        /* A writer that never stops is cut off by size, long before the timeout. */
        int64_t t0 = now_ms();
        assert_int_equal(nsid_worker_run(p, mask, 0, 10000, fn_write_forever, NULL, 65536,
                                         &reply, &size),
                         -EFBIG);
        assert_true(now_ms() - t0 < 2000);
        assert_null(reply);

        /* Binary replies keep their size. */
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_binary, NULL, 16, &reply, &size),
                         0);
        assert_int_equal(size, 4);
        assert_memory_equal(reply, "a\0b\0", 5);
        free(reply);
        /* No reply wanted. */
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_binary, NULL, 16, NULL, NULL), 0);

        assert_int_equal(count_fds(), fds);
        assert_int_equal(count_children(), 1);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void test_fn_result(void **state) {
        char *reply = (char *) 0x1;
        size_t size = 77;
        int v;
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        nsid_proc *p = open_target(&h);
        unsigned mask = NSID_NS_MASK(NSID_NS_NET);

        static const int errs[] = { -ENOENT, -EPERM, -EACCES, -ENAMETOOLONG, -EHWPOISON };
        for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
                v = errs[i];
                assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_return, &v, 4096, &reply,
                                                 &size),
                                 v);
                assert_ptr_equal(reply, (char *) 0x1); /* untouched on failure */
                assert_int_equal(size, 77);
        }
        /* Outside the protocol: positive, or too negative to carry. */
        v = 12345;
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_return, &v, 4096, &reply, NULL),
                         -EPROTO);
        v = -300;
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_return, &v, 4096, &reply, NULL),
                         -EPROTO);
        assert_int_equal(nsid_worker_run(p, mask, 0, 5000, fn_die, NULL, 4096, &reply, NULL),
                         -EPROTO);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void test_target_gone(void **state) {
        char *reply = NULL;
        (void) state;
        unsigned masks[] = { NSID_NS_MASK(NSID_NS_NET),
                             NSID_NS_MASK(NSID_NS_NET) | NSID_NS_MASK(NSID_NS_MNT) };

        for (size_t i = 0; i < 2; i++) {
                /* Reaped before the run. */
                struct holder h = spawn_holder(CLONE_NEWNET, 0);
                nsid_proc *p = open_target(&h);
                holder_kill(&h);
                assert_int_equal(nsid_worker_run(p, masks[i], 0, 5000, fn_ns_inodes, NULL, 4096,
                                                 &reply, NULL),
                                 -ESRCH);
                nsid_proc_unref(p);

                /* A zombie: alive for signals, but no namespaces left to join. */
                h = spawn_holder(CLONE_NEWNET, 0);
                p = open_target(&h);
                kill(h.pid, SIGKILL);
                siginfo_t si;
                assert_int_equal(waitid(P_PID, (id_t) h.pid, &si, WEXITED | WNOWAIT), 0);
                assert_int_equal(nsid_worker_run(p, masks[i], 0, 5000, fn_ns_inodes, NULL, 4096,
                                                 &reply, NULL),
                                 -ESRCH);
                nsid_proc_unref(p);
                holder_kill(&h);
        }
        assert_null(reply);
}

static void test_unshare_mnt(void **state) {
        char *reply = NULL, path[400];
        struct stat st;
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        nsid_proc *p = open_target(&h);

        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET),
                                         NSID_WORKER_KEEP_CAPS | NSID_WORKER_UNSHARE_MNT, 5000,
                                         fn_mount_tmpfs, NULL, 4096, &reply, NULL),
                         0);
        assert_string_equal(reply, "mounted");
        free(reply);
        /* The mount happened in the worker's private namespace only. */
        snprintf(path, sizeof(path), "%s/mnt/inside-private-mount", shared_dir);
        assert_int_equal(stat(path, &st), -1);
        assert_int_equal(errno, ENOENT);

        /* Without capabilities the same mount is refused. */
        assert_int_equal(nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET), NSID_WORKER_UNSHARE_MNT,
                                         5000, fn_mount_tmpfs, NULL, 4096, &reply, NULL),
                         -EPERM);
        nsid_proc_unref(p);
        holder_kill(&h);
}

static void test_args(void **state) {
        char *reply = NULL;
        nsid_ns *ns[2] = {};
        (void) state;
        nsid_proc *self = NULL;
        assert_int_equal(nsid_proc_open_self(&self), 0);

        assert_int_equal(nsid_worker_run(NULL, 0, 0, 100, fn_sleep, NULL, 1, &reply, NULL),
                         -EINVAL);
        assert_int_equal(nsid_worker_run(self, 1u << 20, 0, 100, fn_sleep, NULL, 1, &reply, NULL),
                         -EINVAL);
        assert_int_equal(nsid_worker_run(self, 0, 1u << 7, 100, fn_sleep, NULL, 1, &reply, NULL),
                         -EINVAL);
        assert_int_equal(nsid_worker_run(self, 0, 0, 0, fn_sleep, NULL, 1, &reply, NULL),
                         -EINVAL);
        assert_int_equal(nsid_worker_run(self, 0, 0, 100, NULL, NULL, 1, &reply, NULL), -EINVAL);
        assert_int_equal(nsid_worker_run_ns(NULL, 1, 0, 100, fn_sleep, NULL, 1, &reply, NULL),
                         -EINVAL);

        /* Two handles of one type: refused. */
        assert_int_equal(nsid_proc_open_ns(self, NSID_NS_NET, &ns[0]), 0);
        assert_int_equal(nsid_proc_open_ns(self, NSID_NS_NET, &ns[1]), 0);
        assert_int_equal(nsid_worker_run_ns(ns, 2, 0, 100, fn_sleep, NULL, 1, &reply, NULL),
                         -EINVAL);
        nsid_ns_unref(ns[1]);

        /* Our own user namespace is not "joined" (setns would fail with EINVAL). */
        assert_int_equal(nsid_proc_open_ns(self, NSID_NS_USER, &ns[1]), 0);
        assert_int_equal(nsid_worker_run_ns(ns, 2, 0, 5000, fn_ns_inodes, NULL, 4096, &reply,
                                            NULL),
                         0);
        free(reply);
        assert_int_equal(nsid_worker_run(self, NSID_NS_MASK(NSID_NS_USER), 0, 5000,
                                         fn_ns_inodes, NULL, 4096, &reply, NULL),
                         0);
        free(reply);
        nsid_ns_unref(ns[0]);
        nsid_ns_unref(ns[1]);
        nsid_proc_unref(self);
}

/* A program that sets SIGCHLD to SIG_IGN has its children reaped by the kernel: the worker
 * cannot get fn's status and says so (-ECHILD) instead of guessing; nothing hangs. Checked
 * in a child process so the disposition does not leak into the other tests. */
static void test_sigchld_ignored(void **state) {
        (void) state;
        struct holder h = spawn_holder(CLONE_NEWNET, 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                nsid_proc *p = NULL;
                char *reply = NULL;
                signal(SIGCHLD, SIG_IGN);
                if (nsid_proc_open(h.pid, &p) < 0)
                        _exit(2);
                int r = nsid_worker_run(p, NSID_NS_MASK(NSID_NS_NET), 0, 5000, fn_ns_inodes, NULL,
                                        4096, &reply, NULL);
                if (r != -ECHILD)
                        fprintf(stderr, "worker with SIGCHLD ignored: %d (%s)\n", r,
                                strerror(-r));
                _exit(r == -ECHILD ? 0 : 3);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        holder_kill(&h);
}

/* An unprivileged caller (no capabilities to drop, no CAP_SETPCAP to shrink the bounding
 * set) can still run a sandboxed worker in its own namespaces. */
static void test_unprivileged_caller(void **state) {
        (void) state;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char *reply = NULL;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                int r = nsid_worker_run_ns(NULL, 0, 0, 5000, fn_status, NULL, 4096, &reply,
                                           NULL);
                if (r < 0)
                        _exit(3);
                if (!strstr(reply, "CapEff:\t0000000000000000") ||
                    !strstr(reply, "NoNewPrivs:\t1"))
                        _exit(4);
                _exit(0);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* A privileged caller that dropped CAP_SETPCAP itself (nsid-uniquifier does) and some of its
 * bounding set: the worker cannot shrink the bounding set further, but still ends up with
 * nothing permitted or effective and no_new_privs. (Before, it failed with -EPERM.) */
static void test_caller_without_setpcap(void **state) {
        (void) state;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                cap_value_t drop[] = { CAP_SETPCAP };
                char *reply = NULL, bnd[64];
                cap_t c;
                if (cap_drop_bound(CAP_SYS_MODULE) < 0)
                        _exit(2);
                c = cap_get_proc();
                if (!c || cap_set_flag(c, CAP_EFFECTIVE, 1, drop, CAP_CLEAR) < 0 ||
                    cap_set_flag(c, CAP_PERMITTED, 1, drop, CAP_CLEAR) < 0 || cap_set_proc(c) < 0)
                        _exit(2);
                cap_free(c);
                /* the caller's own bounding set, as the worker will show it */
                FILE *f = fopen("/proc/self/status", "re");
                char line[256];
                bnd[0] = 0;
                while (f && fgets(line, sizeof(line), f))
                        if (strncmp(line, "CapBnd:", 7) == 0)
                                snprintf(bnd, sizeof(bnd), "%.*s", (int) strcspn(line, "\n"),
                                         line);
                if (f)
                        fclose(f);
                int r = nsid_worker_run_ns(NULL, 0, 0, 5000, fn_status, NULL, 4096, &reply,
                                           NULL);
                if (r < 0) {
                        fprintf(stderr, "worker without CAP_SETPCAP: %s\n", strerror(-r));
                        _exit(3);
                }
                if (!strstr(reply, "CapEff:\t0000000000000000") ||
                    !strstr(reply, "CapPrm:\t0000000000000000") ||
                    !strstr(reply, "CapInh:\t0000000000000000") ||
                    !strstr(reply, "NoNewPrivs:\t1") || !bnd[0] || !strstr(reply, bnd)) {
                        fprintf(stderr, "worker status: %s (caller %s)\n", reply, bnd);
                        _exit(4);
                }
                _exit(0);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

/* Many workers at once from several threads, while other threads allocate: every run gets
 * its own answer, nothing deadlocks, nothing leaks. */
struct thread_arg {
        nsid_proc *p;
        uint64_t expect_net;
        int failures;
};

static void *worker_thread(void *userdata) {
        struct thread_arg *a = userdata;
        char expect[64];
        snprintf(expect, sizeof(expect), "net=%llu ", (unsigned long long) a->expect_net);
        for (int i = 0; i < 20; i++) {
                char *reply = NULL;
                int r = nsid_worker_run(a->p, NSID_NS_MASK(NSID_NS_NET), 0, 10000, fn_ns_inodes,
                                        NULL, 4096, &reply, NULL);
                if (r < 0 || strncmp(reply, expect, strlen(expect)) != 0) {
                        fprintf(stderr, "worker run %d: %s, reply \"%s\"\n", i, strerror(-r),
                                reply ? reply : "");
                        a->failures++;
                }
                free(reply);
        }
        return NULL;
}

static volatile bool stop_alloc;

static void test_threads(void **state) {
        (void) state;
        struct holder h[2] = { spawn_holder(CLONE_NEWNET, 0), spawn_holder(CLONE_NEWNET, 0) };
        struct thread_arg args[4];
        pthread_t t[4], at;
        int fds = count_fds();

        stop_alloc = false;
        assert_int_equal(pthread_create(&at, NULL, alloc_churn_thread, (void *) &stop_alloc), 0);
        for (int i = 0; i < 4; i++) {
                args[i] = (struct thread_arg) { .p = open_target(&h[i % 2]),
                                                .expect_net = ns_ino_of(h[i % 2].pid, "net") };
                assert_int_equal(pthread_create(&t[i], NULL, worker_thread, &args[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
                assert_int_equal(pthread_join(t[i], NULL), 0);
                assert_int_equal(args[i].failures, 0);
                nsid_proc_unref(args[i].p);
        }
        stop_alloc = true;
        assert_int_equal(pthread_join(at, NULL), 0);
        assert_int_equal(count_fds(), fds);
        assert_int_equal(count_children(), 2);
        holder_kill(&h[0]);
        holder_kill(&h[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_netns),
                cmocka_unit_test(test_user_mnt),
                cmocka_unit_test(test_kernel_setns_mnt_root),
                cmocka_unit_test(test_pidns),
                cmocka_unit_test(test_caps_dropped),
                cmocka_unit_test(test_drop_in_fn),
                cmocka_unit_test(test_fd_isolation),
                cmocka_unit_test(test_timeout),
                cmocka_unit_test(test_reply_limits),
                cmocka_unit_test(test_fn_result),
                cmocka_unit_test(test_target_gone),
                cmocka_unit_test(test_unshare_mnt),
                cmocka_unit_test(test_args),
                cmocka_unit_test(test_sigchld_ignored),
                cmocka_unit_test(test_unprivileged_caller),
                cmocka_unit_test(test_caller_without_setpcap),
                cmocka_unit_test(test_threads),
        };
        return run_test_group(tests, setup, teardown);
}
