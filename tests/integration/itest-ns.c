/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Namespace and process handles on real namespaces (needs root: unshare). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/ns.h"

/* A child that unshares the given namespaces, reports readiness on a pipe and then waits
 * until it is killed. */
static pid_t spawn_holder(int unshare_flags) {
        int p[2];
        char c;
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(p[0]);
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
                if (unshare_flags && unshare(unshare_flags) < 0)
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

static void test_types(void **state) {
        for (int t = 0; t < _NSID_NS_TYPE_MAX; t++) {
                const char *n = nsid_ns_type_name((nsid_ns_type) t);
                assert_non_null(n);
                assert_int_equal(nsid_ns_type_from_name(n), t);
                assert_true(nsid_ns_type_clone_flag((nsid_ns_type) t) != 0);
        }
        assert_int_equal(nsid_ns_type_from_name("bogus"), -EINVAL);
        assert_null(nsid_ns_type_name(_NSID_NS_TYPE_MAX));

        /* This test runs in the host's initial user namespace (the kernel has reserved its
         * inode since 3.8), and PID 1's namespaces are the initial ones: where the kernel
         * gives one of them its reserved number, it is ours for that type. */
        struct stat st;
        assert_int_equal(stat("/proc/self/ns/user", &st), 0);
        assert_int_equal((uint64_t) st.st_ino, nsid_ns_type_initial_ino(NSID_NS_USER));
        for (int t = 0; t < _NSID_NS_TYPE_MAX; t++) {
                char path[64];
                uint32_t ino = nsid_ns_type_initial_ino((nsid_ns_type) t);
                assert_true(ino >= 0xEFFFFFF0U && ino < 0xF0000000U);
                snprintf(path, sizeof(path), "/proc/1/ns/%s", nsid_ns_type_name((nsid_ns_type) t));
                if (stat(path, &st) == 0 && st.st_ino >= 0xEFFFFFF0U && st.st_ino < 0xF0000000U)
                        assert_int_equal((uint64_t) st.st_ino, ino);
        }
        assert_int_equal(nsid_ns_type_initial_ino(_NSID_NS_TYPE_MAX), 0);
        assert_int_equal(nsid_ns_type_initial_ino((nsid_ns_type) -1), 0);
}

static void test_open_path(void **state) {
        nsid_ns *a = NULL, *b = NULL, *u = NULL;
        struct stat st;

        assert_int_equal(nsid_ns_open_path("/proc/self/ns/net", NSID_NS_NET, &a), 0);
        assert_int_equal(nsid_ns_get_type(a), NSID_NS_NET);
        assert_int_equal(stat("/proc/self/ns/net", &st), 0);
        nsid_ns_id id;
        assert_int_equal(nsid_ns_get_id(a, &id), 0);
        assert_true(id.ino == (uint64_t) st.st_ino && id.dev == (uint64_t) st.st_dev);

        /* NSID_NS_ANY detects the type. */
        assert_int_equal(nsid_ns_open_path("/proc/self/ns/net", NSID_NS_ANY, &b), 0);
        assert_int_equal(nsid_ns_equal(a, b), 1);
        b = nsid_ns_unref(b);

        /* Wrong type, not an nsfs file, missing file. */
        assert_int_equal(nsid_ns_open_path("/proc/self/ns/net", NSID_NS_USER, &b), -EINVAL);
        assert_int_equal(nsid_ns_open_path("/etc/hostname", NSID_NS_NET, &b), -EMEDIUMTYPE);
        assert_int_equal(nsid_ns_open_path("/nonexistent/ns", NSID_NS_NET, &b), -ENOENT);
        assert_null(b);

        /* The test runs in the initial namespaces (CI runs as root on the host). */
        assert_int_equal(nsid_ns_is_initial(a), 1);
        assert_int_equal(nsid_ns_get_userns(a, &u), 0);
        assert_int_equal(nsid_ns_get_type(u), NSID_NS_USER);
        assert_int_equal(nsid_ns_is_initial(u), 1);

        /* By fd: a duplicate that outlives the caller's fd. */
        int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(nsid_ns_open_fd(fd, NSID_NS_UTS, &b), 0);
        close(fd);
        assert_true(nsid_ns_get_fd(b) >= 0);
        assert_int_equal(nsid_ns_equal(a, b), 0); /* different types never equal */

        /* ref/unref */
        assert_ptr_equal(nsid_ns_ref(a), a);
        assert_null(nsid_ns_unref(a));
        assert_int_equal(nsid_ns_get_type(a), NSID_NS_NET); /* still alive: one ref left */
        nsid_ns_unref(a);
        nsid_ns_unref(b);
        nsid_ns_unref(u);
        assert_null(nsid_ns_unref(NULL));
}

static void test_child_netns(void **state) {
        if (geteuid() != 0)
                test_skip("not root: new network and UTS namespaces need CAP_SYS_ADMIN (run "
                          "as root)");
        pid_t pid = spawn_holder(CLONE_NEWNET | CLONE_NEWUTS);
        nsid_proc *p = NULL, *self = NULL;
        nsid_ns *cn = NULL, *sn = NULL, *cu = NULL, *su = NULL;
        char path[64];
        struct stat st;

        assert_int_equal(nsid_proc_open(pid, &p), 0);
        assert_int_equal(nsid_proc_get_pid(p), pid);
        assert_int_equal(nsid_proc_open_self(&self), 0);
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_NET, &cn), 0);
        assert_int_equal(nsid_proc_open_ns(self, NSID_NS_NET, &sn), 0);
        assert_int_equal(nsid_ns_equal(cn, sn), 0);
        assert_int_equal(nsid_ns_is_initial(cn), 0);

        snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
        assert_int_equal(stat(path, &st), 0);
        nsid_ns_id id;
        assert_int_equal(nsid_ns_get_id(cn, &id), 0);
        assert_true(id.ino == (uint64_t) st.st_ino);

        /* Same user namespace for both. */
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_USER, &cu), 0);
        assert_int_equal(nsid_proc_open_ns(self, NSID_NS_USER, &su), 0);
        assert_int_equal(nsid_ns_equal(cu, su), 1);

        /* A small /proc file of the process. */
        char *data = NULL;
        size_t n;
        assert_int_equal(nsid_proc_read_file(p, "comm", 64, &data, &n), 0);
        assert_true(n > 0 && data[n - 1] == '\n');
        free(data);
        data = NULL;
        assert_int_equal(nsid_proc_read_file(p, "status", 8, &data, &n), -EFBIG);
        assert_int_equal(nsid_proc_read_file(p, "../self/status", 4096, &data, &n), -EINVAL);
        assert_int_equal(nsid_proc_read_file(p, "/etc/passwd", 4096, &data, &n), -EINVAL);
        assert_null(data);

        int rootfd = -1;
        assert_int_equal(nsid_proc_open_root(p, &rootfd), 0);
        assert_true(rootfd >= 0);
        close(rootfd);

        /* Once the process is gone, every access says so (-ESRCH), whatever the pid
         * becomes later. */
        reap(pid);
        assert_int_equal(nsid_proc_check_alive(p), -ESRCH);
        nsid_ns *gone = NULL;
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_NET, &gone), -ESRCH);
        assert_null(gone);
        assert_int_equal(nsid_proc_read_file(p, "comm", 64, &data, &n), -ESRCH);
        assert_int_equal(nsid_proc_open_root(p, &rootfd), -ESRCH);

        /* The namespace handle taken before still names the namespace... which is now dead
         * but still pinned by our fd. */
        assert_int_equal(nsid_ns_get_type(cn), NSID_NS_NET);

        nsid_ns_unref(cn);
        nsid_ns_unref(sn);
        nsid_ns_unref(cu);
        nsid_ns_unref(su);
        nsid_proc_unref(p);
        nsid_proc_unref(self);
}

static void test_zombie(void **state) {
        /* An exited but unreaped child is gone for every purpose of the library. */
        pid_t pid = spawn_holder(0);
        nsid_proc *p = NULL;
        nsid_ns *ns = NULL;
        siginfo_t si;

        assert_int_equal(nsid_proc_open(pid, &p), 0);
        assert_int_equal(nsid_proc_check_alive(p), 0);
        kill(pid, SIGKILL);
        assert_int_equal(waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT), 0); /* zombie */
        assert_int_equal(nsid_proc_check_alive(p), -ESRCH);
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_NET, &ns), -ESRCH);
        assert_null(ns);
        waitpid(pid, NULL, 0);
        nsid_proc_unref(p);
}

static void test_userns_owner(void **state) {
        /* A netns created inside a new user namespace is owned by it. */
        pid_t pid = spawn_holder(CLONE_NEWUSER | CLONE_NEWNET);
        nsid_proc *p = NULL;
        nsid_ns *net = NULL, *owner = NULL, *user = NULL;

        assert_int_equal(nsid_proc_open(pid, &p), 0);
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_NET, &net), 0);
        assert_int_equal(nsid_proc_open_ns(p, NSID_NS_USER, &user), 0);
        assert_int_equal(nsid_ns_get_userns(net, &owner), 0);
        assert_int_equal(nsid_ns_equal(owner, user), 1);
        assert_int_equal(nsid_ns_is_initial(owner), 0);
        reap(pid);
        nsid_ns_unref(net);
        nsid_ns_unref(owner);
        nsid_ns_unref(user);
        nsid_proc_unref(p);
}

static void test_pidfd(void **state) {
        pid_t pid = spawn_holder(0);
        int pidfd = pidfd_open(pid, 0);
        nsid_proc *p = NULL;

        assert_true(pidfd >= 0);
        assert_int_equal(nsid_proc_open_pidfd(pidfd, &p), 0);
        assert_int_equal(nsid_proc_get_pid(p), pid);
        assert_true(nsid_proc_get_pidfd(p) != pidfd); /* a duplicate */
        reap(pid);
        nsid_proc_unref(p);

        /* A pidfd of a process that already exited cannot be opened. */
        p = NULL;
        assert_int_equal(nsid_proc_open_pidfd(pidfd, &p), -ESRCH);
        assert_null(p);
        close(pidfd);

        /* Not a pidfd at all. */
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(nsid_proc_open_pidfd(fd, &p) < 0);
        close(fd);

        assert_int_equal(nsid_proc_open(0, &p), -EINVAL);
        assert_int_equal(nsid_proc_open(-1, &p), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_types),
                cmocka_unit_test(test_open_path),
                cmocka_unit_test(test_child_netns),
                cmocka_unit_test(test_zombie),
                cmocka_unit_test(test_userns_owner),
                cmocka_unit_test(test_pidfd),
        };
        return run_test_group(tests, NULL, NULL);
}
