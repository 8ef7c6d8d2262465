/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a container's files through its pidfd (nsid_proc_open + nsid_proc_read_root_file)
 * on real namespaces (needs root). A "container" here is a child process that unshares a
 * mount namespace (optionally user + pid namespaces too), makes its mounts private and
 * bind-mounts its own passwd over /etc/passwd, so its /etc/passwd differs from the host's
 * only inside its mount namespace.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/file.h"
#include "nsid/ns.h"

#define CONTAINER_PASSWD "root:x:0:0:inside the container:/root:/bin/sh\nalice:x:4001:4001::/home/alice:/bin/sh\n"

static char tmpdir[] = "/tmp/nsid-itest-cread-XXXXXX";
static char passwd_path[256];

struct container {
        pid_t pid;   /* the process holding the namespaces (host pid) */
        pid_t outer; /* for user+pid containers: the parent that unshared them; else == pid */
        int ctl;     /* commands to the container: 'x' exit, 'e' exec sleep */
};

static void write_all(int fd, const void *p, size_t n) {
        assert_int_equal(write(fd, p, n), (ssize_t) n);
}

static void write_proc_file(pid_t pid, const char *name, const char *text) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        write_all(fd, text, strlen(text));
        close(fd);
}

/* In the container: private mounts, own /etc/passwd, ready, then obey commands. */
_Noreturn static void container_body(int ready, int ctl) {
        char c;

        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                _exit(10);
        if (mount(passwd_path, "/etc/passwd", NULL, MS_BIND, NULL) < 0)
                _exit(11);
        if (write(ready, "r", 1) != 1)
                _exit(12);
        close(ready);
        for (;;) {
                ssize_t n = read(ctl, &c, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0 || c == 'x')
                        _exit(0);
                if (c == 'e') {
                        /* Same process, another program: pid, pidfd and namespaces stay. */
                        execl("/bin/sleep", "sleep", "1000", (char *) NULL);
                        _exit(13);
                }
        }
}

static struct container spawn_container(bool userns_pidns) {
        int ready[2], ctl[2], sync[2], pidp[2];
        struct container c = {};
        char b;

        assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
        assert_int_equal(pipe2(ctl, O_CLOEXEC), 0);
        assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
        assert_int_equal(pipe2(pidp, O_CLOEXEC), 0); /* the inner pid, apart from readiness */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(ready[0]);
                close(ctl[1]);
                close(sync[1]);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (!userns_pidns) {
                        if (unshare(CLONE_NEWNS) < 0)
                                _exit(2);
                        container_body(ready[1], ctl[0]);
                }
                /* User namespace first; the test writes our maps; then mount + pid. */
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(3);
                if (write(ready[1], "u", 1) != 1 || read(sync[0], &b, 1) != 1)
                        _exit(4);
                if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0)
                        _exit(5);
                pid_t inner = fork();
                if (inner < 0)
                        _exit(6);
                if (inner == 0) {
                        prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getpid() != 1)
                                _exit(7);
                        container_body(ready[1], ctl[0]);
                }
                if (write(pidp[1], &inner, sizeof(inner)) != sizeof(inner))
                        _exit(8);
                int st;
                while (waitpid(inner, &st, 0) < 0 && errno == EINTR)
                        ;
                _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 9);
        }
        close(ready[1]);
        close(ctl[0]);
        close(sync[0]);
        c.outer = c.pid = pid;
        if (userns_pidns) {
                assert_int_equal(read(ready[0], &b, 1), 1);
                assert_int_equal(b, 'u');
                write_proc_file(pid, "uid_map", "0 100000 65536\n");
                write_proc_file(pid, "gid_map", "0 100000 65536\n");
                write_all(sync[1], "m", 1);
                assert_int_equal(read(pidp[0], &c.pid, sizeof(c.pid)), sizeof(c.pid));
        }
        assert_int_equal(read(ready[0], &b, 1), 1);
        assert_int_equal(b, 'r');
        close(ready[0]);
        close(sync[1]);
        close(pidp[0]);
        close(pidp[1]);
        c.ctl = ctl[1];
        return c;
}

static void container_cmd(struct container *c, char cmd) {
        write_all(c->ctl, &cmd, 1);
}

static void container_destroy(struct container *c) {
        if (c->ctl >= 0)
                close(c->ctl); /* EOF: the container exits */
        c->ctl = -1;
        /* The inner process first: the outer one reaps it and exits, so no zombie is left for
         * the host's init. */
        kill(c->pid, SIGKILL);
        while (waitpid(c->outer, NULL, 0) < 0 && errno == EINTR)
                ;
}

static char proc_state(pid_t pid) {
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

static void wait_for(bool (*cond)(pid_t), pid_t pid) {
        for (int i = 0; i < 500; i++) {
                if (cond(pid))
                        return;
                usleep(10000);
        }
        fail_msg("condition not reached for pid %d", (int) pid);
}

static bool is_zombie(pid_t pid) {
        return proc_state(pid) == 'Z';
}

static bool runs_sleep(pid_t pid) {
        char path[64], comm[64] = "";
        snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, comm, sizeof(comm) - 1);
        close(fd);
        return n > 0 && strncmp(comm, "sleep\n", 6) == 0;
}

static int setup(void **state) {
        (void) state;
        if (geteuid() != 0)
                skip_all("not root: the containers need mount namespaces and uid maps of other "
                         "users (run as root)");
        if (!mkdtemp(tmpdir))
                return -1;
        /* The user-namespaced container's root (host uid 100000) must reach the file. */
        if (chmod(tmpdir, 0755) < 0)
                return -1;
        snprintf(passwd_path, sizeof(passwd_path), "%s/passwd", tmpdir);
        int fd = open(passwd_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -1;
        if (write(fd, CONTAINER_PASSWD, strlen(CONTAINER_PASSWD)) !=
            (ssize_t) strlen(CONTAINER_PASSWD))
                return -1;
        close(fd);
        return 0;
}

static int teardown(void **state) {
        (void) state;
        unlink(passwd_path);
        return rmdir(tmpdir);
}

/* Read etc/passwd of the container both ways and check it is the container's file. */
static void check_reads_container_passwd(pid_t pid) {
        nsid_proc *p = NULL, *self = NULL;
        char *data = NULL, *host = NULL;
        nsid_file_stat fst;
        struct stat st;
        size_t size = 0;
        int rootfd = -1;

        assert_int_equal(nsid_proc_open(pid, &p), 0);
        assert_int_equal(nsid_proc_read_root_file(p, "etc/passwd", 0, &data, &size, &fst), 0);
        assert_string_equal(data, CONTAINER_PASSWD);
        assert_int_equal(size, strlen(CONTAINER_PASSWD));
        /* Exactly the bind-mounted file. */
        assert_int_equal(stat(passwd_path, &st), 0);
        assert_int_equal(fst.dev, (uint64_t) st.st_dev);
        assert_int_equal(fst.ino, (uint64_t) st.st_ino);
        free(data);

        assert_int_equal(nsid_proc_read_root_file(p, "/etc/passwd", 0, &data, NULL, NULL), 0);
        assert_string_equal(data, CONTAINER_PASSWD);
        free(data);

        /* Through the root fd directly, and stat only. */
        assert_int_equal(nsid_proc_open_root(p, &rootfd), 0);
        nsid_file_stat fst2;
        assert_int_equal(nsid_file_stat_in_root(rootfd, "/etc/passwd", &fst2), 0);
        assert_memory_equal(&fst, &fst2, sizeof(fst));
        close(rootfd);

        /* The host (our own root) still has its own passwd. */
        assert_int_equal(nsid_proc_open_self(&self), 0);
        assert_int_equal(nsid_proc_read_root_file(self, "etc/passwd", 0, &host, NULL, NULL), 0);
        assert_string_not_equal(host, CONTAINER_PASSWD);
        assert_non_null(strstr(host, "root:x:0:0:"));
        free(host);
        nsid_proc_unref(self);
        nsid_proc_unref(p);
}

static void test_mntns_container(void **state) {
        (void) state;
        struct container c = spawn_container(false);
        check_reads_container_passwd(c.pid);
        container_destroy(&c);
}

static void test_userns_pidns_container(void **state) {
        (void) state;
        struct container c = spawn_container(true);
        assert_true(c.pid != c.outer);
        /* The holder really is in other user and pid namespaces. */
        nsid_proc *p = NULL, *self = NULL;
        nsid_ns *a = NULL, *b = NULL;
        assert_int_equal(nsid_proc_open(c.pid, &p), 0);
        assert_int_equal(nsid_proc_open_self(&self), 0);
        for (int t = 0; t < 2; t++) {
                nsid_ns_type type = t == 0 ? NSID_NS_USER : NSID_NS_PID;
                assert_int_equal(nsid_proc_open_ns(p, type, &a), 0);
                assert_int_equal(nsid_proc_open_ns(self, type, &b), 0);
                assert_int_equal(nsid_ns_equal(a, b), 0);
                a = nsid_ns_unref(a);
                b = nsid_ns_unref(b);
        }
        nsid_proc_unref(p);
        nsid_proc_unref(self);

        check_reads_container_passwd(c.pid);
        container_destroy(&c);
}

/* The process exits and is reaped between nsid_proc_open() and the read. */
static void test_exit_reaped(void **state) {
        nsid_proc *p = NULL;
        char *data = NULL;
        size_t size = 0;

        (void) state;
        struct container c = spawn_container(false);
        assert_int_equal(nsid_proc_open(c.pid, &p), 0);
        container_cmd(&c, 'x');
        int st;
        assert_int_equal(waitpid(c.pid, &st, 0), c.pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        assert_int_equal(nsid_proc_check_alive(p), -ESRCH);
        assert_int_equal(nsid_proc_read_root_file(p, "etc/passwd", 0, &data, &size, NULL),
                         -ESRCH);
        assert_null(data);
        nsid_proc_unref(p);
        close(c.ctl);
}

/* The process exits but nobody reaped it yet (a zombie): still reported as gone. */
static void test_exit_zombie(void **state) {
        nsid_proc *p = NULL;
        char *data = NULL;

        (void) state;
        struct container c = spawn_container(false);
        assert_int_equal(nsid_proc_open(c.pid, &p), 0);
        container_cmd(&c, 'x');
        wait_for(is_zombie, c.pid);
        assert_int_equal(nsid_proc_read_root_file(p, "etc/passwd", 0, &data, NULL, NULL),
                         -ESRCH);
        assert_null(data);
        nsid_proc_unref(p);
        container_destroy(&c);
}

/* A process that execs into another program keeps its pid, pidfd and namespaces: the library
 * guarantees "the same process" (pidfd), not "the same program". Reading still works and
 * still reads that process's root. */
static void test_exec(void **state) {
        nsid_proc *p = NULL;
        char *data = NULL;

        (void) state;
        struct container c = spawn_container(false);
        assert_int_equal(nsid_proc_open(c.pid, &p), 0);
        assert_false(runs_sleep(c.pid));
        container_cmd(&c, 'e');
        wait_for(runs_sleep, c.pid);
        assert_int_equal(nsid_proc_check_alive(p), 0);
        assert_int_equal(nsid_proc_read_root_file(p, "etc/passwd", 0, &data, NULL, NULL), 0);
        assert_string_equal(data, CONTAINER_PASSWD);
        free(data);
        /* Once the new program dies, the same handle reports it. */
        kill(c.pid, SIGKILL);
        assert_int_equal(waitpid(c.pid, NULL, 0), c.pid);
        assert_int_equal(nsid_proc_read_root_file(p, "etc/passwd", 0, &data, NULL, NULL),
                         -ESRCH);
        nsid_proc_unref(p);
        close(c.ctl);
}

/* A hostile container file reached through the pidfd path: refusals carry through. */
static void test_refusals_through_proc(void **state) {
        nsid_proc *p = NULL;
        char *data = NULL;

        (void) state;
        struct container c = spawn_container(false);
        assert_int_equal(nsid_proc_open(c.pid, &p), 0);
        assert_int_equal(nsid_proc_read_root_file(p, "etc", 0, &data, NULL, NULL), -EISDIR);
        assert_int_equal(nsid_proc_read_root_file(p, "dev/null", 0, &data, NULL, NULL), -ENXIO);
        assert_int_equal(nsid_proc_read_root_file(p, "etc/passwd", 8, &data, NULL, NULL),
                         -EFBIG);
        assert_int_equal(nsid_proc_read_root_file(p, "proc/self/root/etc/shadow", 0, &data,
                                                  NULL, NULL),
                         -ELOOP);
        assert_null(data);
        nsid_proc_unref(p);
        container_destroy(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mntns_container),
                cmocka_unit_test(test_userns_pidns_container),
                cmocka_unit_test(test_exit_reaped),
                cmocka_unit_test(test_exit_zombie),
                cmocka_unit_test(test_exec),
                cmocka_unit_test(test_refusals_through_proc),
        };
        return run_test_group(tests, setup, teardown);
}
