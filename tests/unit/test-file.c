/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nsid/file.h on a real directory tree used as a fake container root (no mocks): real
 * symlinks, a FIFO, a bound unix socket, a device node made with mknod, a sparse file, and a
 * real procfs mounted inside the root (in a private mount namespace of this test) so that
 * /proc magic links exist where a container would have them.
 *
 * Layout under a fresh /tmp/nsid-test-file-XXXXXX:
 *   c1/                 the container root under test
 *   c2/etc/passwd       another container's file, must never be reachable from c1
 *   c3/                 a root without etc/shadow
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/file.h"
#include "nsid/log.h"

#define SMALL_CAP 1000u
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define SHADOW_MARKER "CONTAINER-SHADOW-MARKER\n"
#define PASSWD_C1 "root:x:0:0:container one:/root:/bin/sh\n"
#define PASSWD_C2 "root:x:0:0:container two SECRET:/root:/bin/sh\n"

static char tmpdir[] = "/tmp/nsid-test-file-XXXXXX";
static int root1 = -EBADF;      /* c1, O_PATH */
static int root1_rd = -EBADF;   /* c1, O_RDONLY|O_DIRECTORY */
static int root3 = -EBADF;      /* c3, O_PATH */
static bool have_proc_in_root;
static int sock_fd = -EBADF;
static char last_log[2048];

static void log_capture(int priority, const char *message, void *userdata) {
        (void) priority;
        (void) userdata;
        snprintf(last_log, sizeof(last_log), "%s", message);
}

static void write_file(const char *rel, const void *data, size_t size) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, size), (ssize_t) size);
        close(fd);
}

static void write_sized(const char *rel, size_t size) {
        char *buf = malloc(size ? size : 1);
        assert_non_null(buf);
        for (size_t i = 0; i < size; i++)
                buf[i] = (char) ('a' + i % 26);
        write_file(rel, buf, size);
        free(buf);
}

static void mk(const char *rel) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
        assert_int_equal(mkdir(path, 0755), 0);
}

static void ln(const char *target, const char *rel) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
        assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state) {
        char path[512];

        if (!mkdtemp(tmpdir))
                return -1;
        mk("c1");
        mk("c1/etc");
        mk("c1/proc");
        mk("c1/dir");
        mk("c2");
        mk("c2/etc");
        mk("c3");
        mk("c3/etc");
        write_file("c1/etc/passwd", PASSWD_C1, strlen(PASSWD_C1));
        write_file("c1/etc/shadow", SHADOW_MARKER, strlen(SHADOW_MARKER));
        write_file("c2/etc/passwd", PASSWD_C2, strlen(PASSWD_C2));
        ln("/etc/shadow", "c1/etc/abs-shadow");
        ln("../../../etc/shadow", "c1/etc/rel-shadow");
        ln("../../../../../../../../../../../../etc/shadow", "c1/etc/deep-rel-shadow");
        ln("/proc/self/root/etc/shadow", "c1/etc/magic-shadow");
        ln("/etc", "c1/etc-link");
        ln("loop2", "c1/etc/loop1");
        ln("loop1", "c1/etc/loop2");
        ln("../../c2/etc/passwd", "c1/etc/other-rel");
        snprintf(path, sizeof(path), "%s/c2/etc/passwd", tmpdir);
        ln(path, "c1/etc/other-abs");
        ln("/etc/shadow", "c3/etc/abs-shadow");
        ln("../../etc/shadow", "c3/etc/rel-shadow");

        snprintf(path, sizeof(path), "%s/c1/etc/fifo", tmpdir);
        assert_int_equal(mkfifo(path, 0644), 0);

        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/c1/etc/sock", tmpdir);
        sock_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(sock_fd >= 0);
        assert_int_equal(bind(sock_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(sock_fd, 1), 0);

        if (geteuid() == 0) {
                snprintf(path, sizeof(path), "%s/c1/etc/null", tmpdir);
                assert_int_equal(mknod(path, S_IFCHR | 0666, makedev(1, 3)), 0);
                snprintf(path, sizeof(path), "%s/c1/etc/zero", tmpdir);
                assert_int_equal(mknod(path, S_IFCHR | 0666, makedev(1, 5)), 0);

                /* A real procfs inside the root, as in a container; private to this test. */
                if (unshare(CLONE_NEWNS) == 0 &&
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) {
                        snprintf(path, sizeof(path), "%s/c1/proc", tmpdir);
                        have_proc_in_root = mount("proc", path, "proc", 0, NULL) == 0;
                }
        }

        write_sized("c1/etc/empty", 0);
        write_sized("c1/etc/small-exact", SMALL_CAP);
        write_sized("c1/etc/small-over", SMALL_CAP + 1);
        write_sized("c1/etc/default-exact", NSID_FILE_MAX_DEFAULT);
        write_sized("c1/etc/default-over", NSID_FILE_MAX_DEFAULT + 1);

        snprintf(path, sizeof(path), "%s/c1/etc/sparse", tmpdir);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t) 1 << 30), 0);
        close(fd);

        snprintf(path, sizeof(path), "%s/c1", tmpdir);
        root1 = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        root1_rd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        snprintf(path, sizeof(path), "%s/c3", tmpdir);
        root3 = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root1 >= 0 && root1_rd >= 0 && root3 >= 0);

        nsid_log_set_handler(log_capture, NULL);
        nsid_log_set_max_priority(LOG_DEBUG);
        (void) state;
        return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int teardown(void **state) {
        char path[512];

        (void) state;
        nsid_log_set_handler(NULL, NULL);
        close(root1);
        close(root1_rd);
        close(root3);
        close(sock_fd);
        if (have_proc_in_root) {
                snprintf(path, sizeof(path), "%s/c1/proc", tmpdir);
                (void) umount2(path, MNT_DETACH);
        }
        /* FTW_MOUNT: never descend into a mount left behind. */
        return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static int read_c1(const char *path, size_t max, char **data, size_t *size) {
        return nsid_file_read_in_root(root1, path, max, data, size, NULL);
}

static void test_regular(void **state) {
        nsid_file_stat fst;
        struct stat st;
        char *data = NULL, p[512];
        size_t size = 0;

        (void) state;
        assert_int_equal(nsid_file_read_in_root(root1, "etc/passwd", 0, &data, &size, &fst), 0);
        assert_string_equal(data, PASSWD_C1);
        assert_int_equal(size, strlen(PASSWD_C1));
        free(data);

        snprintf(p, sizeof(p), "%s/c1/etc/passwd", tmpdir);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(fst.dev, (uint64_t) st.st_dev);
        assert_int_equal(fst.ino, (uint64_t) st.st_ino);
        assert_int_equal(fst.size, (uint64_t) st.st_size);
        assert_int_equal(fst.mtime_nsec,
                         (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);

        /* Absolute means "from the root", through an O_RDONLY root fd as well; ".." at the
         * root stays at the root. */
        assert_int_equal(nsid_file_read_in_root(root1_rd, "/etc/passwd", 0, &data, NULL, NULL), 0);
        assert_string_equal(data, PASSWD_C1);
        free(data);
        assert_int_equal(read_c1("../../../../etc/passwd", 0, &data, &size), 0);
        assert_string_equal(data, PASSWD_C1);
        free(data);
        /* A directory symlink pointing at the host's /etc lands in the container's. */
        assert_int_equal(read_c1("etc-link/passwd", 0, &data, &size), 0);
        assert_string_equal(data, PASSWD_C1);
        free(data);

        /* stat alone agrees. */
        nsid_file_stat fst2;
        assert_int_equal(nsid_file_stat_in_root(root1, "/etc/passwd", &fst2), 0);
        assert_memory_equal(&fst, &fst2, sizeof(fst));
}

static void test_symlinks_stay_inside(void **state) {
        char *data = NULL;
        size_t size = 0;

        (void) state;
        /* Both resolve to the container's own etc/shadow (the marker), never the host's. */
        assert_int_equal(read_c1("etc/abs-shadow", 0, &data, &size), 0);
        assert_string_equal(data, SHADOW_MARKER);
        free(data);
        assert_int_equal(read_c1("etc/rel-shadow", 0, &data, &size), 0);
        assert_string_equal(data, SHADOW_MARKER);
        free(data);
        assert_int_equal(read_c1("etc/deep-rel-shadow", 0, &data, &size), 0);
        assert_string_equal(data, SHADOW_MARKER);
        free(data);

        /* A root without etc/shadow: ENOENT, not the host's file. */
        data = (char *) 0x1;
        assert_int_equal(nsid_file_read_in_root(root3, "etc/abs-shadow", 0, &data, &size, NULL),
                         -ENOENT);
        assert_int_equal(nsid_file_read_in_root(root3, "etc/rel-shadow", 0, &data, &size, NULL),
                         -ENOENT);
        assert_ptr_equal(data, (char *) 0x1); /* untouched on failure */

        /* Another container's file, by relative or by absolute host path: not reachable. */
        assert_int_equal(read_c1("etc/other-rel", 0, &data, &size), -ENOENT);
        assert_int_equal(read_c1("etc/other-abs", 0, &data, &size), -ENOENT);

        assert_int_equal(read_c1("etc/loop1", 0, &data, &size), -ELOOP);
        assert_int_equal(read_c1("etc/missing", 0, &data, &size), -ENOENT);
        assert_int_equal(read_c1("etc/passwd/x", 0, &data, &size), -ENOTDIR);
}

static void test_magic_links(void **state) {
        char *data = NULL;
        size_t size = 0;

        (void) state;
        if (!have_proc_in_root) {
                /* Without procfs in the root the link dangles inside it. */
                assert_int_equal(read_c1("etc/magic-shadow", 0, &data, &size), -ENOENT);
                test_skip("no procfs in the container root (setup() mounts one in a private "
                          "mount namespace: run as root, with CAP_SYS_ADMIN)");
        }
        /* With a real procfs in the container: /proc/self/root is a magic link: refused. */
        last_log[0] = 0;
        assert_int_equal(read_c1("etc/magic-shadow", 0, &data, &size), -ELOOP);
        assert_non_null(strstr(last_log, "etc/magic-shadow"));
        assert_non_null(strstr(last_log, "magic link"));
        assert_int_equal(read_c1("/proc/self/root/etc/shadow", 0, &data, &size), -ELOOP);
        char p[64];
        snprintf(p, sizeof(p), "proc/%d/root/etc/shadow", (int) getpid());
        assert_int_equal(read_c1(p, 0, &data, &size), -ELOOP);
        snprintf(p, sizeof(p), "/proc/self/fd/%d", root1);
        assert_int_equal(read_c1(p, 0, &data, &size), -ELOOP);
        nsid_file_stat fst;
        assert_int_equal(nsid_file_stat_in_root(root1, "etc/magic-shadow", &fst), -ELOOP);

        /* Ordinary procfs files (reached through the plain symlink /proc/self) describe the
         * READER, not the container (its environment, mounts, status): refused as files of a
         * kernel pseudo-filesystem, whatever the cap. */
        last_log[0] = 0;
        assert_int_equal(read_c1("/proc/self/status", 0, &data, &size), -EMEDIUMTYPE);
        assert_non_null(strstr(last_log, "procfs"));
        assert_int_equal(read_c1("/proc/self/environ", 16, &data, &size), -EMEDIUMTYPE);
        assert_int_equal(nsid_file_stat_in_root(root1, "/proc/self/environ", &fst),
                         -EMEDIUMTYPE);
        assert_null(data);
}

static void test_not_regular(void **state) {
        nsid_file_stat fst;
        char *data = NULL;
        size_t size = 0;
        struct timespec a, b;

        (void) state;
        alarm(10); /* a blocking FIFO open would hang here: die instead */
        clock_gettime(CLOCK_MONOTONIC, &a);
        last_log[0] = 0;
        assert_int_equal(read_c1("etc/fifo", 0, &data, &size), -ENXIO);
        clock_gettime(CLOCK_MONOTONIC, &b);
        assert_true((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 1000);
        assert_non_null(strstr(last_log, "etc/fifo"));
        assert_non_null(strstr(last_log, "FIFO"));
        assert_int_equal(nsid_file_stat_in_root(root1, "etc/fifo", &fst), -ENXIO);
        alarm(0);

        assert_int_equal(read_c1("etc/sock", 0, &data, &size), -ENXIO);
        assert_non_null(strstr(last_log, "socket"));
        assert_int_equal(read_c1("etc", 0, &data, &size), -EISDIR);
        assert_int_equal(read_c1("/", 0, &data, &size), -EISDIR);
        assert_int_equal(nsid_file_stat_in_root(root1, "dir", &fst), -EISDIR);
        assert_null(data);
}

/* Character devices (made by setup() with mknod, as root only): refused. */
static void test_char_devices(void **state) {
        char *data = NULL;
        size_t size = 0;

        (void) state;
        if (geteuid() != 0)
                test_skip("not root: setup() made no device nodes (mknod; run as root)");
        last_log[0] = 0;
        assert_int_equal(read_c1("etc/null", 0, &data, &size), -ENXIO);
        assert_non_null(strstr(last_log, "character device"));
        assert_int_equal(read_c1("etc/zero", 0, &data, &size), -ENXIO);
        assert_null(data);
}

static void test_sizes(void **state) {
        char *data = NULL;
        size_t size = 99;
        struct timespec a, b;
        nsid_file_stat fst;

        (void) state;
        assert_int_equal(read_c1("etc/empty", 0, &data, &size), 0);
        assert_int_equal(size, 0);
        assert_string_equal(data, "");
        free(data);

        assert_int_equal(read_c1("etc/small-exact", SMALL_CAP, &data, &size), 0);
        assert_int_equal(size, SMALL_CAP);
        assert_int_equal(strlen(data), SMALL_CAP);
        free(data);
        data = NULL;
        last_log[0] = 0;
        assert_int_equal(read_c1("etc/small-over", SMALL_CAP, &data, &size), -EFBIG);
        assert_non_null(strstr(last_log, "etc/small-over"));
        assert_null(data);

        /* Default cap (max_size 0). */
        assert_int_equal(read_c1("etc/default-exact", 0, &data, &size), 0);
        assert_int_equal(size, NSID_FILE_MAX_DEFAULT);
        assert_int_equal(data[size], 0);
        free(data);
        data = NULL;
        assert_int_equal(read_c1("etc/default-over", 0, &data, &size), -EFBIG);

        /* 1 GiB sparse: refused from its size, without reading it. */
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_int_equal(read_c1("etc/sparse", 0, &data, &size), -EFBIG);
        clock_gettime(CLOCK_MONOTONIC, &b);
        assert_true((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 100);
        assert_null(data);
        /* stat is not capped: it reports the size so a caller can decide. */
        assert_int_equal(nsid_file_stat_in_root(root1, "etc/sparse", &fst), 0);
        assert_int_equal(fst.size, (uint64_t) 1 << 30);
}

static void test_args(void **state) {
        char *data = NULL;
        size_t size = 0;
        nsid_file_stat fst;

        (void) state;
        assert_int_equal(nsid_file_read_in_root(-1, "etc/passwd", 0, &data, &size, NULL), -EBADF);
        assert_int_equal(nsid_file_read_in_root(root1, NULL, 0, &data, &size, NULL), -EINVAL);
        assert_int_equal(nsid_file_read_in_root(root1, "", 0, &data, &size, NULL), -EINVAL);
        assert_int_equal(nsid_file_read_in_root(root1, "etc/passwd", 0, NULL, &size, NULL),
                         -EINVAL);
        assert_int_equal(nsid_file_read_in_root(root1, "etc/passwd", SIZE_MAX, &data, &size,
                                                NULL),
                         -EINVAL);
        assert_int_equal(nsid_file_stat_in_root(root1, "etc/passwd", NULL), -EINVAL);
        assert_int_equal(nsid_file_stat_in_root(-1, "etc/passwd", &fst), -EBADF);
        assert_int_equal(nsid_proc_read_root_file(NULL, "etc/passwd", 0, &data, &size, NULL),
                         -EINVAL);
        /* A root fd that is not a directory. */
        char p[512];
        snprintf(p, sizeof(p), "%s/c1/etc/passwd", tmpdir);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(nsid_file_read_in_root(fd, "x", 0, &data, &size, NULL), -ENOTDIR);
        close(fd);
        assert_null(data);
}

/* The reads happen through our own process's root too: /proc/self/root of this process. */
static void test_proc_self(void **state) {
        nsid_proc *p = NULL;
        char *data = NULL, *direct = NULL;
        size_t size = 0;
        FILE *f;

        (void) state;
        assert_int_equal(nsid_proc_open_self(&p), 0);
        assert_int_equal(nsid_proc_read_root_file(p, "/etc/hostname", 0, &data, &size, NULL),
                         0);
        f = fopen("/etc/hostname", "re");
        assert_non_null(f);
        direct = calloc(1, 4096);
        assert_non_null(direct);
        assert_true(fread(direct, 1, 4095, f) == size);
        fclose(f);
        assert_string_equal(data, direct);
        free(data);
        free(direct);
        nsid_proc_unref(p);
}

/* A kernel without openat2 (simulated with a seccomp filter in a child): no unsafe fallback,
 * a clear -ENOSYS. */
static void test_no_openat2(void **state) {
        (void) state;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sock_filter filter[] = {
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                };
                struct sock_fprog prog = { .len = ELEMENTSOF(filter), .filter = filter };
                char *data = NULL;
                nsid_file_stat fst;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                        _exit(2);
                if (read_c1("etc/passwd", 0, &data, NULL) != -ENOSYS || data)
                        _exit(3);
                if (nsid_file_stat_in_root(root1, "etc/passwd", &fst) != -ENOSYS)
                        _exit(4);
                _exit(0);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_regular),     cmocka_unit_test(test_symlinks_stay_inside),
                cmocka_unit_test(test_magic_links), cmocka_unit_test(test_not_regular),
                cmocka_unit_test(test_char_devices),
                cmocka_unit_test(test_sizes),       cmocka_unit_test(test_args),
                cmocka_unit_test(test_proc_self),   cmocka_unit_test(test_no_openat2),
        };
        return run_test_group(tests, setup, teardown);
}
