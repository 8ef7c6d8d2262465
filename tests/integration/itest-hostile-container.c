/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hostile containers against the public library API, on real namespaces (needs root).
 *
 * A "container" is a forked process that unshares a mount namespace, makes its mounts
 * private, optionally mounts a procfs (sharing the host's pid namespace, like a container run
 * with the host's pids) or a FUSE filesystem that never answers, and chroot()s into a fake
 * rootfs directory whose etc/ files the test fills with hostile content. The host side opens
 * it by pid (pidfd) like nsid-idmap and nsid-uniquifier do and reads through
 * nsid_userdb_load_proc() / nsid_proc_read_root_file() / nsid_worker_run().
 *
 * Every case asserts the exact outcome (errno, counts, answers), that nothing of the host
 * was read (marker strings in a host file and in the reader's environment never appear in
 * what was read), and that no read outlives its bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/file.h"
#include "nsid/ns.h"
#include "nsid/userdb.h"
#include "nsid/worker.h"

#define HOST_MARKER "NSID-HOST-SECRET-MARKER-7f3a"
#define ENV_MARKER "NSID-ENV-SECRET-MARKER-91c2"

static char tmpdir[] = "/tmp/nsid-itest-hostile-XXXXXX";
static char host_secret[PATH_MAX];

enum { CTR_PROC = 1, CTR_FUSE_ETC = 2 };

struct ctr {
        pid_t pid;
        int ctl; /* close to make the container exit */
        char root[PATH_MAX];
};

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void write_file(const char *path, const void *data, size_t n) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        const char *p = data;
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                assert_true(k > 0);
                p += k;
                n -= (size_t) k;
        }
        close(fd);
}

static void pathf(char *buf, const char *root, const char *rel) {
        assert_true((size_t) snprintf(buf, PATH_MAX, "%s/%s", root, rel) < PATH_MAX);
}

/* A fresh rootfs directory with etc/ (and proc/ as a mount point). */
static void make_root(char *ret, const char *name) {
        char p[PATH_MAX];
        assert_true((size_t) snprintf(ret, PATH_MAX, "%s/%s", tmpdir, name) < PATH_MAX);
        assert_int_equal(mkdir(ret, 0755), 0);
        pathf(p, ret, "etc");
        assert_int_equal(mkdir(p, 0755), 0);
        pathf(p, ret, "proc");
        assert_int_equal(mkdir(p, 0755), 0);
}

_Noreturn static void ctr_body(const char *root, unsigned flags, int ready, int ctl) {
        char p[PATH_MAX + 16], c;
        int fusefd = -1;

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* no copies of other containers' control pipes (they would never see EOF) */
        for (int fd = 3; fd < 1024; fd++)
                if (fd != ready && fd != ctl)
                        close(fd);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                _exit(10);
        if (flags & CTR_PROC) {
                snprintf(p, sizeof(p), "%s/proc", root);
                if (mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                        _exit(11);
        }
        if (flags & CTR_FUSE_ETC) {
                /* A FUSE filesystem over etc/ whose server never reads /dev/fuse: not even
                 * INIT is answered, so every lookup below etc/ waits until the connection
                 * dies (this process holds the only fd). */
                char opts[128];
                fusefd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
                if (fusefd < 0)
                        _exit(12);
                snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0",
                         fusefd);
                snprintf(p, sizeof(p), "%s/etc", root);
                if (mount("nsid-hung", p, "fuse", MS_NOSUID | MS_NODEV, opts) < 0)
                        _exit(13);
        }
        if (chroot(root) < 0 || chdir("/") < 0)
                _exit(14);
        if (write(ready, "r", 1) != 1)
                _exit(15);
        close(ready);
        while (read(ctl, &c, 1) < 0 && errno == EINTR)
                ;
        _exit(0);
}

static void ctr_start(struct ctr *c, const char *root, unsigned flags) {
        int ready[2], ctl[2];
        char b;

        *c = (struct ctr) {};
        snprintf(c->root, sizeof(c->root), "%s", root);
        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        assert_int_equal(pipe2(ctl, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(ready[0]);
                close(ctl[1]);
                ctr_body(root, flags, ready[1], ctl[0]);
        }
        close(ready[1]);
        close(ctl[0]);
        if (read(ready[0], &b, 1) != 1) {
                int st = 0;
                waitpid(pid, &st, 0);
                fail_msg("container setup failed: exit %d", WEXITSTATUS(st));
        }
        close(ready[0]);
        c->pid = pid;
        c->ctl = ctl[1];
}

static void ctr_stop(struct ctr *c) {
        if (c->pid <= 0)
                return;
        close(c->ctl);
        int st;
        assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
        c->pid = 0;
}

/* Nothing of the host in a buffer that was read from a container. */
static void assert_no_marker(const char *data, size_t size) {
        if (!data)
                return;
        assert_null(memmem(data, size, HOST_MARKER, strlen(HOST_MARKER)));
        assert_null(memmem(data, size, ENV_MARKER, strlen(ENV_MARKER)));
}

/* Read etc/passwd of a container both ways; both must give want_err (0: success). */
static void expect_passwd_read(const struct ctr *c, int want_err) {
        nsid_proc *p = NULL;
        nsid_userdb *db = NULL;
        char *data = NULL;
        size_t size = 0;
        uint64_t t0 = now_ms();

        assert_int_equal(nsid_proc_open(c->pid, &p), 0);
        int r = nsid_proc_read_root_file(p, "/etc/passwd", 0, &data, &size, NULL);
        if (r >= 0)
                assert_no_marker(data, size);
        assert_int_equal(r, want_err);
        free(data);
        r = nsid_userdb_load_proc(p, &db);
        assert_int_equal(r, want_err);
        nsid_userdb_unref(db);
        nsid_proc_unref(p);
        assert_true(now_ms() - t0 < 2000); /* a refusal never waits on the file */
}

static int setup(void **state) {
        (void) state;
        if (geteuid() != 0)
                skip_all("not root: the fake containers need mount namespaces (run as root)");
        assert_non_null(mkdtemp(tmpdir));
        assert_int_equal(chmod(tmpdir, 0755), 0);
        /* a host file no container may read */
        pathf(host_secret, tmpdir, "host-secret");
        write_file(host_secret, HOST_MARKER ":x:0:0::/:/bin/sh\n",
                   strlen(HOST_MARKER ":x:0:0::/:/bin/sh\n"));
        /* the reader's environment (/proc/self/environ) holds ENV_MARKER: main() re-execs
         * itself with it */
        return 0;
}

static int teardown(void **state) {
        (void) state;
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

/* etc/passwd -> the host's /etc/shadow, a host file by absolute path, and by a relative path
 * climbing out: every one stays inside the container's root (which has none of them). */
static void test_symlinks_to_host(void **state) {
        (void) state;
        char root[PATH_MAX], p[PATH_MAX], rel[PATH_MAX * 2] = "";
        const char *targets[4];
        struct ctr c;

        make_root(root, "symlink-host");
        for (int i = 0; i < 20; i++)
                strcat(rel, "../");
        strcat(rel, host_secret + 1);
        targets[0] = "/etc/shadow";
        targets[1] = "../../../../../../../../etc/shadow";
        targets[2] = host_secret;
        targets[3] = rel;
        pathf(p, root, "etc/passwd");
        ctr_start(&c, root, 0);
        for (size_t i = 0; i < 4; i++) {
                unlink(p);
                assert_int_equal(symlink(targets[i], p), 0);
                expect_passwd_read(&c, -ENOENT);
        }
        /* the container's own shadow is the container's business: read, but as passwd every
         * line is invalid (9 fields), so nothing is served from it */
        char sh[PATH_MAX];
        pathf(sh, root, "etc/shadow");
        write_file(sh, "root:$6$x:19000:0:99999:7:::\n", 29);
        unlink(p);
        assert_int_equal(symlink("/etc/shadow", p), 0);
        nsid_proc *pr = NULL;
        nsid_userdb *db = NULL;
        nsid_userdb_counts n;
        assert_int_equal(nsid_proc_open(c.pid, &pr), 0);
        assert_int_equal(nsid_userdb_load_proc(pr, &db), 0);
        assert_int_equal(nsid_userdb_get_counts(db, NSID_USERDB_PASSWD, &n), 0);
        assert_int_equal(n.entries, 0);
        assert_int_equal(n.invalid, 1);
        nsid_userdb_unref(db);
        nsid_proc_unref(pr);
        ctr_stop(&c);
}

/* etc/passwd -> /proc/self/..., /proc/1/... in a container that mounted a procfs of the
 * host's pid namespace (a container sharing the host's pids): magic links are refused, and
 * procfs files (the READER's environ, host PID 1's environ, mountinfo) are never read. */
static void test_symlinks_into_procfs(void **state) {
        (void) state;
        static const struct {
                const char *target;
                int err;
        } cases[] = {
                { "/proc/self/root/etc/passwd", -ELOOP },  /* magic link */
                { "/proc/1/root/etc/shadow", -EACCES },    /* host PID 1's root (magic;
                                                              refused by ptrace rules first) */
                { "/proc/self/fd/0", -ELOOP },             /* magic link */
                { "/proc/self/environ", -EMEDIUMTYPE },    /* the reader's environment */
                { "/proc/thread-self/environ", -EMEDIUMTYPE },
                { "/proc/1/environ", -EMEDIUMTYPE },       /* host PID 1 */
                { "/proc/self/mountinfo", -EMEDIUMTYPE },
                { "/proc/self/status", -EMEDIUMTYPE },
        };
        char root[PATH_MAX], p[PATH_MAX];
        struct ctr c;

        make_root(root, "symlink-proc");
        pathf(p, root, "etc/passwd");
        ctr_start(&c, root, CTR_PROC);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                unlink(p);
                assert_int_equal(symlink(cases[i].target, p), 0);
                print_message("passwd -> %s\n", cases[i].target);
                expect_passwd_read(&c, cases[i].err);
        }
        /* the same through a relative link and a directory symlink */
        unlink(p);
        assert_int_equal(symlink("../proc/self/environ", p), 0);
        expect_passwd_read(&c, -EMEDIUMTYPE);
        ctr_stop(&c);
}

/* etc/passwd -> another container's passwd: through /proc/PID/root (magic) or its rootfs
 * path on the host (clamped into this container's root): never the other one's file. */
static void test_symlink_to_other_container(void **state) {
        (void) state;
        char ra[PATH_MAX], rb[PATH_MAX], p[PATH_MAX], t[PATH_MAX + 64];
        struct ctr a, b;

        make_root(rb, "other-b");
        pathf(p, rb, "etc/passwd");
        write_file(p, HOST_MARKER ":x:7:7::/:/bin/sh\n", strlen(HOST_MARKER) + 17);
        ctr_start(&b, rb, 0);
        make_root(ra, "other-a");
        ctr_start(&a, ra, CTR_PROC);
        pathf(p, ra, "etc/passwd");

        snprintf(t, sizeof(t), "/proc/%d/root/etc/passwd", (int) b.pid);
        assert_int_equal(symlink(t, p), 0);
        expect_passwd_read(&a, -ELOOP);
        unlink(p);
        snprintf(t, sizeof(t), "%s/etc/passwd", rb);
        assert_int_equal(symlink(t, p), 0);
        expect_passwd_read(&a, -ENOENT);
        unlink(p);
        snprintf(t, sizeof(t), "../../other-b/etc/passwd");
        assert_int_equal(symlink(t, p), 0);
        expect_passwd_read(&a, -ENOENT);
        /* b itself is still served */
        nsid_proc *pb = NULL;
        nsid_userdb *db = NULL;
        uint32_t uid = 0;
        assert_int_equal(nsid_proc_open(b.pid, &pb), 0);
        assert_int_equal(nsid_userdb_load_proc(pb, &db), 0);
        assert_int_equal(nsid_userdb_user_by_name(db, HOST_MARKER, &uid, NULL), 0);
        assert_int_equal(uid, 7);
        nsid_userdb_unref(db);
        nsid_proc_unref(pb);
        ctr_stop(&a);
        ctr_stop(&b);
}

/* passwd as a FIFO (nobody writes: opening it would block), a listening socket, /dev/zero
 * (endless), a 1 GiB sparse file: refused from their type or size, immediately. */
static void test_special_files(void **state) {
        (void) state;
        char root[PATH_MAX], p[PATH_MAX], dz[PATH_MAX];
        struct ctr c;

        make_root(root, "special");
        pathf(p, root, "etc/passwd");
        ctr_start(&c, root, 0);

        assert_int_equal(mkfifo(p, 0644), 0);
        expect_passwd_read(&c, -ENXIO);
        unlink(p);

        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        assert_true(s >= 0);
        assert_true(strlen(p) < sizeof(sa.sun_path));
        strcpy(sa.sun_path, p);
        assert_int_equal(bind(s, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(s, 1), 0);
        expect_passwd_read(&c, -ENXIO);
        close(s);
        unlink(p);

        assert_int_equal(mknod(p, S_IFCHR | 0644, makedev(1, 5)), 0); /* /dev/zero */
        expect_passwd_read(&c, -ENXIO);
        unlink(p);
        /* a symlink to the container's own /dev/zero */
        pathf(dz, root, "dev");
        assert_int_equal(mkdir(dz, 0755), 0);
        pathf(dz, root, "dev/zero");
        assert_int_equal(mknod(dz, S_IFCHR | 0666, makedev(1, 5)), 0);
        assert_int_equal(symlink("/dev/zero", p), 0);
        expect_passwd_read(&c, -ENXIO);
        unlink(p);

        int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 1024L * 1024 * 1024), 0);
        close(fd);
        expect_passwd_read(&c, -EFBIG);
        unlink(p);
        ctr_stop(&c);
}

/* One passwd with everything a hostile text can do to the parser, loaded from a container:
 * 1 MiB lines, NUL bytes, invalid UTF-8, names over the kernel's 128-byte limit, ids of
 * 2^32-1 and more, duplicate names with other ids, and 100,000 valid entries. */
static void test_hostile_text(void **state) {
        (void) state;
        const size_t cap = 16u * 1024 * 1024;
        char *buf = malloc(cap), root[PATH_MAX], p[PATH_MAX];
        size_t n = 0;
        unsigned invalid = 0, dups = 0;
        struct ctr c;

        assert_non_null(buf);
#define ADD(...) (n += (size_t) snprintf(buf + n, cap - n, __VA_ARGS__))
        ADD("alice:x:4001:4001::/home/alice:/bin/sh\n");
        /* a 1 MiB line (a name of 1 MiB) and a 1 MiB gecos */
        memset(buf + n, 'A', 1024 * 1024);
        n += 1024 * 1024;
        ADD(":x:5000:5000::/:/bin/sh\n");
        invalid++;
        ADD("big:x:5001:5001:");
        memset(buf + n, 'g', 1024 * 1024);
        n += 1024 * 1024;
        ADD(":/:/bin/sh\n");
        invalid++;
        /* NUL bytes in a name and in a field */
        memcpy(buf + n, "nu\0l:x:5002:5002::/:/bin/sh\n", 28);
        n += 28;
        invalid++;
        memcpy(buf + n, "nul2:x:5003:5003:\0:/:/bin/sh\n", 29);
        n += 29;
        invalid++;
        /* invalid UTF-8: a lone continuation byte, an overlong '/', a surrogate, 0xff */
        ADD("bad\x80name:x:5004:5004::/:/bin/sh\n");
        ADD("over\xc0\xafx:x:5005:5005::/:/bin/sh\n");
        ADD("sur\xed\xa0\x80x:x:5006:5006::/:/bin/sh\n");
        ADD("ff\xffx:x:5007:5007::/:/bin/sh\n");
        invalid += 4;
        /* names: 127 bytes ok, 128 and 300 bytes too long for the kernel's idmap */
        char name[301];
        memset(name, 'n', sizeof(name));
        name[127] = '\0';
        ADD("%s:x:5008:5008::/:/bin/sh\n", name);
        name[127] = 'm';
        name[128] = '\0';
        ADD("%s:x:5009:5009::/:/bin/sh\n", name);
        name[128] = 'm';
        name[300] = '\0';
        ADD("%s:x:5010:5010::/:/bin/sh\n", name);
        invalid += 2;
        /* ids: 2^32-2 is the largest valid one; 2^32-1 is (u32)-1, and more overflows */
        ADD("maxid:x:4294967294:4294967294::/:/bin/sh\n");
        ADD("negone:x:4294967295:1::/:/bin/sh\n");
        ADD("wrap:x:4294967296:1::/:/bin/sh\n");
        ADD("huge:x:99999999999999999999999:1::/:/bin/sh\n");
        ADD("neg:x:-1:1::/:/bin/sh\n");
        ADD("hex:x:0x10:1::/:/bin/sh\n");
        invalid += 5;
        /* duplicates: a later alice claims root's uid, a later root claims alice's */
        ADD("alice:x:0:0::/root:/bin/sh\n");
        ADD("root:x:0:0::/root:/bin/sh\n");
        ADD("root:x:4001:4001::/:/bin/sh\n");
        dups += 2;
        /* 100,000 ordinary entries */
        for (unsigned i = 0; i < 100000; i++)
                ADD("user%u:x:%u:%u:User %u:/home/user%u:/bin/sh\n", i, 100000 + i, 100000 + i, i,
                    i);
        assert_true(n < cap - 1);
#undef ADD
        make_root(root, "text");
        pathf(p, root, "etc/passwd");
        write_file(p, buf, n);
        free(buf);

        ctr_start(&c, root, 0);
        nsid_proc *pr = NULL;
        nsid_userdb *db = NULL;
        nsid_userdb_counts k;
        const char *s;
        uint32_t uid, gid;
        uint64_t t0 = now_ms();
        assert_int_equal(nsid_proc_open(c.pid, &pr), 0);
        assert_int_equal(nsid_userdb_load_proc(pr, &db), 0);
        print_message("hostile passwd (%zu bytes) loaded in %llu ms\n", n,
                      (unsigned long long) (now_ms() - t0));
        assert_int_equal(nsid_userdb_get_counts(db, NSID_USERDB_PASSWD, &k), 0);
        assert_int_equal(k.entries, 100000 + 4); /* alice, n*127, maxid, root */
        assert_int_equal(k.invalid, invalid);
        assert_int_equal(k.duplicates, dups);
        /* the first alice and the first root win */
        assert_int_equal(nsid_userdb_user_by_name(db, "alice", &uid, &gid), 0);
        assert_int_equal(uid, 4001);
        assert_int_equal(nsid_userdb_user_by_uid(db, 0, &s, NULL), 0);
        assert_string_equal(s, "root");
        assert_int_equal(nsid_userdb_user_by_uid(db, 4001, &s, NULL), 0);
        assert_string_equal(s, "alice");
        assert_int_equal(nsid_userdb_user_by_name(db, "maxid", &uid, NULL), 0);
        assert_int_equal(uid, 4294967294u);
        assert_int_equal(nsid_userdb_user_by_uid(db, 4294967295u, &s, NULL), -ENOENT);
        assert_int_equal(nsid_userdb_user_by_name(db, "negone", &uid, NULL), -ENOENT);
        assert_int_equal(nsid_userdb_user_by_name(db, "wrap", &uid, NULL), -ENOENT);
        assert_int_equal(nsid_userdb_user_by_uid(db, 0 /* 2^32 wrapped */, &s, NULL), 0);
        assert_string_equal(s, "root");
        name[127] = '\0';
        assert_int_equal(nsid_userdb_user_by_name(db, name, &uid, NULL), 0);
        assert_int_equal(uid, 5008);
        for (uint32_t id = 5000; id <= 5010; id++)
                if (id != 5008)
                        assert_int_equal(nsid_userdb_user_by_uid(db, id, &s, NULL), -ENOENT);
        assert_int_equal(nsid_userdb_user_by_name(db, "user99999", &uid, NULL), 0);
        assert_int_equal(uid, 199999);
        assert_int_equal(nsid_userdb_user_by_uid(db, 150000, &s, NULL), 0);
        assert_string_equal(s, "user50000");
        nsid_userdb_unref(db);
        nsid_proc_unref(pr);
        ctr_stop(&c);
}

/* The process found at discovery exits, or execs another program, before its files are read:
 * the pidfd names the exited process (-ESRCH, even once its pid is reused), never another. */
static void test_exit_between_discovery_and_use(void **state) {
        (void) state;
        char root[PATH_MAX], p[PATH_MAX];
        struct ctr c;
        nsid_proc *pr = NULL;
        nsid_userdb *db = NULL;
        char *data = NULL;

        make_root(root, "exit");
        pathf(p, root, "etc/passwd");
        write_file(p, "root:x:0:0::/:/bin/sh\n", 22);
        ctr_start(&c, root, 0);
        assert_int_equal(nsid_proc_open(c.pid, &pr), 0);
        assert_int_equal(nsid_userdb_load_proc(pr, &db), 0);
        ctr_stop(&c); /* exits and is reaped: the pid is free for reuse */
        nsid_userdb *db2 = NULL;
        assert_int_equal(nsid_userdb_refresh(db, &db2), -ESRCH);
        assert_int_equal(nsid_proc_read_root_file(pr, "/etc/passwd", 0, &data, NULL, NULL),
                         -ESRCH);
        nsid_userdb *db3 = NULL;
        assert_int_equal(nsid_userdb_load_proc(pr, &db3), -ESRCH);
        assert_null(data);
        nsid_userdb_unref(db);
        nsid_proc_unref(pr);
}

/* A container whose etc/ is on a FUSE mount that never answers. */
static int read_passwd_in_worker(int reply_fd, void *userdata) {
        (void) userdata;
        char *data = NULL;
        size_t size = 0;
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        int r = nsid_file_read_in_root(root, "/etc/passwd", 0, &data, &size, NULL);
        close(root);
        if (r < 0)
                return r;
        (void) !write(reply_fd, data, size);
        free(data);
        return 0;
}

/* Issue 20, item 1: a worker chroot()ed into a container reopened the checked O_PATH fd
 * through "/proc/self/fd/N", i.e. the container's /proc. Here the container has no procfs,
 * and its proc/self/fd/ holds a FIFO for every plausible N (a device node there would have
 * its driver opened by host root the same way): the read must go through the reader's own
 * procfs (taken before entering) and succeed. The old code opened the container's FIFO and
 * then refused it (ESTALE): the open itself had happened. */
static void test_reopen_not_through_container_proc(void **state) {
        (void) state;
        char root[PATH_MAX], p[PATH_MAX];
        struct ctr c;
        nsid_proc *pr = NULL;
        char *reply = NULL;
        size_t size = 0;

        make_root(root, "fakeproc");
        pathf(p, root, "etc/passwd");
        write_file(p, "root:x:0:0::/:/bin/sh\n", 22);
        pathf(p, root, "proc/self");
        assert_int_equal(mkdir(p, 0755), 0);
        pathf(p, root, "proc/self/fd");
        assert_int_equal(mkdir(p, 0755), 0);
        for (int n = 3; n < 64; n++) {
                char rel[32];
                snprintf(rel, sizeof(rel), "proc/self/fd/%d", n);
                pathf(p, root, rel);
                assert_int_equal(mkfifo(p, 0644), 0);
        }
        ctr_start(&c, root, 0);
        assert_int_equal(nsid_proc_open(c.pid, &pr), 0);
        int r = nsid_worker_run(pr, NSID_NS_MASK(NSID_NS_MNT), 0, 5000, read_passwd_in_worker,
                                NULL, 1 << 20, &reply, &size);
        print_message("worker read with FIFOs at the container's /proc/self/fd/N: %d (%s)\n", r,
                      r < 0 ? strerror(-r) : "ok");
        assert_int_equal(r, 0);
        assert_non_null(reply);
        assert_int_equal(size, 22);
        assert_memory_equal(reply, "root:x:0:0::/:/bin/sh\n", 22);
        free(reply);
        nsid_proc_unref(pr);
        ctr_stop(&c);
}

/* FUSE usable here: /dev/fuse a character device this process may open, and the fuse
 * filesystem known to the kernel (else the module is not loaded). */
static bool have_fuse(void) {
        char line[256];
        struct stat st;
        bool found = false;

        if (stat("/dev/fuse", &st) < 0 || !S_ISCHR(st.st_mode) ||
            access("/dev/fuse", R_OK | W_OK) < 0)
                return false;
        FILE *f = fopen("/proc/filesystems", "re");
        if (!f)
                return false;
        while (!found && fgets(line, sizeof(line), f))
                found = strcmp(line, "nodev\tfuse\n") == 0;
        fclose(f);
        return found;
}

static void test_hung_mount(void **state) {
        (void) state;
        char root[PATH_MAX];
        struct ctr c, ok;
        nsid_proc *pr = NULL;
        char *reply = NULL;

        if (!have_fuse())
                test_skip("no FUSE: no /dev/fuse character device or no fuse in "
                          "/proc/filesystems (modprobe fuse; in a container, pass /dev/fuse in)");
        make_root(root, "hung");
        ctr_start(&c, root, CTR_FUSE_ETC);
        assert_int_equal(nsid_proc_open(c.pid, &pr), 0);

        /* Through a worker: bounded. The worker is killed at the timeout. */
        uint64_t t0 = now_ms();
        int r = nsid_worker_run(pr, NSID_NS_MASK(NSID_NS_MNT), 0, 1000, read_passwd_in_worker,
                                NULL, 1 << 20, &reply, NULL);
        uint64_t dt = now_ms() - t0;
        print_message("worker on a hung FUSE root: %d (%s) after %llu ms\n", r, strerror(-r),
                      (unsigned long long) dt);
        assert_int_equal(r, -ETIMEDOUT);
        assert_true(dt >= 900 && dt < 3000);
        assert_null(reply);

        /* Others are still served meanwhile. */
        char rok[PATH_MAX], pp[PATH_MAX];
        make_root(rok, "hung-neighbour");
        pathf(pp, rok, "etc/passwd");
        write_file(pp, "root:x:0:0::/:/bin/sh\n", 22);
        ctr_start(&ok, rok, 0);
        expect_passwd_read(&ok, 0);

        /* In-process (nsid_proc_read_root_file, nsid_userdb_load_proc): NOT bounded by the
         * library (documented in nsid/file.h). A reader blocks until the container's FUSE
         * connection dies; it can be killed meanwhile. Checked in a child so this test ends. */
        int pfd[2];
        assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                char *d = NULL;
                close(c.ctl); /* or the container would not see its EOF */
                close(ok.ctl);
                int rr = nsid_proc_read_root_file(pr, "/etc/passwd", 0, &d, NULL, NULL);
                (void) !write(pfd[1], &rr, sizeof(rr));
                _exit(0);
        }
        close(pfd[1]);
        struct timespec ts = { 1, 500000000 };
        nanosleep(&ts, NULL);
        assert_int_equal(waitpid(child, NULL, WNOHANG), 0); /* still blocked after 1.5 s */
        print_message("KNOWN GAP: an in-process read of a hung FUSE root still blocks after "
                      "1.5 s\n");
        /* The container dies: its FUSE connection is aborted and the reader fails cleanly. */
        t0 = now_ms();
        ctr_stop(&c);
        int rr = 1;
        assert_int_equal(read(pfd[0], &rr, sizeof(rr)), (ssize_t) sizeof(rr));
        print_message("after the container died: %d (%s) in %llu ms\n", rr, strerror(-rr),
                      (unsigned long long) (now_ms() - t0));
        assert_true(rr < 0);
        assert_int_equal(waitpid(child, NULL, 0), child);
        close(pfd[0]);
        nsid_proc_unref(pr);
        ctr_stop(&ok);
}

int main(int argc, char **argv) {
        (void) argc;
        /* /proc/self/environ shows the environment given to execve(), not setenv()'s */
        if (!getenv("NSID_SECRET")) {
                setenv("NSID_SECRET", ENV_MARKER ":x:0:0::/:/bin/sh", 1);
                execv("/proc/self/exe", argv);
                return 1;
        }
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_symlinks_to_host),
                cmocka_unit_test(test_symlinks_into_procfs),
                cmocka_unit_test(test_symlink_to_other_container),
                cmocka_unit_test(test_special_files),
                cmocka_unit_test(test_hostile_text),
                cmocka_unit_test(test_exit_between_discovery_and_use),
                cmocka_unit_test(test_reopen_not_through_container_proc),
                cmocka_unit_test(test_hung_mount),
        };
        return run_test_group(tests, setup, teardown);
}
