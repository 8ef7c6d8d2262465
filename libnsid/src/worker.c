/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running a function inside a target's namespaces (nsid/worker.h).
 *
 * Parent                                   Child (fork(), single-threaded, never exec()s)
 * ------                                   -----
 * reply pipe, /dev/null, a shared page     PR_SET_PDEATHSIG(SIGKILL), default signals,
 * (and the target's root for NSID_NS_MNT)  setsid() (no controlling tty: no TIOCSTI),
 * fork(), pidfd_open(child)                PR_SET_DUMPABLE 0 (the container's root cannot
 * poll(reply, child pidfd) until the       ptrace it or open its /proc/PID/fd), fds laid
 *   deadline; at most max_reply bytes      out as 3 = reply, 0-2 = /dev/null, the rest closed
 * SIGKILL on timeout or oversize           setns() (one call on the pidfd; or one per handle,
 * waitid(P_PIDFD): always reaped             user namespace first)
 * decode: setup failure from the page,     NSID_NS_MNT: fchdir(target root); UNSHARE_MNT:
 *   fn's result from the exit status         unshare + MS_REC|MS_PRIVATE on "/"; chroot(".")
 *                                          joined a user ns: setgroups(0), uid/gid 0 inside
 *                                          NSID_NS_PID: fork again (the runner is inside the
 *                                            target's pid namespace), the middle child waits
 *                                          runner: no_new_privs, bounding set, ambient, capset
 *                                            all zero; unmap the page; fn(3); _exit()
 *                                          DROP_IN_FN: an empty tmpfs (fsmount) made before
 *                                            setns(), kept on fd 5 with the target's user
 *                                            namespace on fd 6; fn runs privileged and
 *                                            drops with nsid_worker_drop_privileges():
 *                                            chroot(empty), setgroups(0), setns(user),
 *                                            bounding set, setresgid/uid(nobody), caps
 *
 * Facts this relies on (checked on 6.18, see tests/integration/itest-worker.c):
 *  - setns(pidfd, CLONE_NEWNS | ...) (5.8+) joins atomically and sets root and cwd to the
 *    root of the target's MOUNT NAMESPACE, which is not the target's root when the target is
 *    chroot()ed inside its namespace. So the target's root is pinned from /proc/PID/root in the
 *    parent and the child chroot()s to it explicitly.
 *  - setns() into the caller's own user namespace fails with EINVAL (also through a pidfd), so
 *    a user namespace equal to the caller's is left out of the join.
 *  - setns(CLONE_NEWPID) only affects children: a second fork puts the runner in the target's
 *    pid namespace. If the middle child is killed, PR_SET_PDEATHSIG kills the runner.
 *
 * Between fork() and fn() the child calls only async-signal-safe functions (no malloc, no
 * locks, no logging). fn itself runs in a forked copy of a possibly multithreaded program: it
 * must be fork-safe (glibc keeps malloc usable after fork(), ASan's allocator does not; other
 * libraries' locks may not be). The library's log lock is held across the fork() and
 * released on both sides of it, the one step besides async-signal-safe calls. The child
 * leaves with _exit(): no atexit handlers, no flushing of inherited stdio buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "file-internal.h"
#include "worker-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "nsid/ns.h"
#include "nsid/worker.h"

#define WORKER_KNOWN_FLAGS \
        (NSID_WORKER_KEEP_CAPS | NSID_WORKER_UNSHARE_MNT | NSID_WORKER_DROP_IN_FN)
#define WORKER_ALL_NS ((1u << _NSID_NS_TYPE_MAX) - 1)

/* Exit status of the child: 0 fn returned 0; 1..254 fn returned -status; 255 anything else
 * (setup failure: see the shared page; or fn returned a value outside the protocol). */
#define WORKER_EXIT_OTHER 255

/* The fd numbers inside the child. */
#define CHILD_REPLY_FD 3
#define CHILD_NULL_FD 4
#define CHILD_FIRST_EXTRA_FD 5

enum worker_stage {
        STAGE_START,
        STAGE_PDEATHSIG,
        STAGE_SIGNALS,
        STAGE_SETSID,
        STAGE_DUMPABLE,
        STAGE_FDS,
        STAGE_EMPTY_ROOT,
        STAGE_SETNS,
        STAGE_CHDIR_ROOT,
        STAGE_UNSHARE_MNT,
        STAGE_MAKE_PRIVATE,
        STAGE_CHROOT,
        STAGE_SETGROUPS,
        STAGE_SETGID,
        STAGE_SETUID,
        STAGE_FORK_PID,
        STAGE_PID_CHILD,
        STAGE_NO_NEW_PRIVS,
        STAGE_BOUNDING_SET,
        STAGE_AMBIENT,
        STAGE_CAPSET,
        STAGE_RLIMIT,
        STAGE_EXEC,
        STAGE_FN,
        _STAGE_MAX,
};

static const char *const stage_names[_STAGE_MAX] = {
        [STAGE_START] = "start",
        [STAGE_PDEATHSIG] = "PR_SET_PDEATHSIG",
        [STAGE_SIGNALS] = "resetting signals",
        [STAGE_SETSID] = "setsid()",
        [STAGE_DUMPABLE] = "PR_SET_DUMPABLE",
        [STAGE_FDS] = "closing file descriptors",
        [STAGE_EMPTY_ROOT] = "making the empty root",
        [STAGE_SETNS] = "setns()",
        [STAGE_CHDIR_ROOT] = "entering the target's root",
        [STAGE_UNSHARE_MNT] = "unshare(CLONE_NEWNS)",
        [STAGE_MAKE_PRIVATE] = "making mounts private",
        [STAGE_CHROOT] = "chroot() to the target's root",
        [STAGE_SETGROUPS] = "setgroups()",
        [STAGE_SETGID] = "setresgid()",
        [STAGE_SETUID] = "setresuid()",
        [STAGE_FORK_PID] = "fork() into the pid namespace",
        [STAGE_PID_CHILD] = "pid namespace child setup",
        [STAGE_NO_NEW_PRIVS] = "PR_SET_NO_NEW_PRIVS",
        [STAGE_BOUNDING_SET] = "dropping the capability bounding set",
        [STAGE_AMBIENT] = "clearing ambient capabilities",
        [STAGE_CAPSET] = "capset()",
        [STAGE_RLIMIT] = "setting resource limits",
        [STAGE_EXEC] = "execveat() of the program",
        [STAGE_FN] = "running the function",
};

/* One MAP_SHARED page written by the child during setup. The runner unmaps it before calling
 * fn, so nothing fn runs (possibly container code: NSS modules) can forge it. */
struct worker_shared {
        int stage;
        int error;     /* errno of the failed setup stage */
        int fn_signal; /* NSID_NS_PID: the signal that killed the runner, reported by the middle */
};

/* Everything the child needs, prepared by the parent so the child allocates nothing. */
struct worker_ctx {
        pid_t parent_pid;
        int reply_fd;
        int null_fd;
        size_t n_join;
        int join_fd[_NSID_NS_TYPE_MAX];
        int join_flag[_NSID_NS_TYPE_MAX];
        int root_fd;         /* chroot() here after joining, or -EBADF */
        int proc_fd;         /* child: its own /proc/self/fd (O_PATH), for reopening files */
        int empty_fd;        /* DROP_IN_FN, child: the empty root (a detached tmpfs) */
        int late_userns_fd;  /* DROP_IN_FN: the target's user namespace, or -EBADF (ours) */
        uint32_t drop_uid, drop_gid; /* DROP_IN_FN: the unprivileged ids (in that namespace) */
        int drop_err;        /* DROP_IN_FN: -EPERM when nothing unprivileged is mapped */
        bool become_ns_root; /* joined a user namespace other than ours */
        bool fork_pid;       /* run fn in a grandchild inside the joined pid namespace */
        int exec_fd;         /* nsid_worker_session_start(): the program (kept on fd 5), or -EBADF */
        int req_fd;          /* a session: the program's stdin (kept on fd 6), or -EBADF */
        char *const *exec_argv;
        bool exec_unpriv;    /* nsid_worker_session_start(): become drop_uid/drop_gid after joining */
        unsigned flags;
        nsid_worker_fn fn;
        void *userdata;
        struct worker_shared *shared;
};

/* reply, /dev/null, the empty root, the late user namespace, the joined namespaces, the
 * target's root, the fd directory */
#define WORKER_MAX_FDS (4 + _NSID_NS_TYPE_MAX + 2)

/* ---- child side: async-signal-safe only ---- */

/* What nsid_worker_drop_privileges() needs, set in the child before fn runs (a fork()ed
 * copy: this is the child's own). */
static struct {
        bool armed;
        bool done;
        int empty_fd;
        int userns_fd;
        int procfs_fd;
        uint32_t uid, gid;
        int error;
} drop_state = { .empty_fd = -EBADF, .userns_fd = -EBADF, .procfs_fd = -EBADF };

/* An empty, read-only tmpfs that belongs to no mount namespace (fsopen/fsmount, 5.2+): the
 * root of a worker once it parses. Mode 0111: the worker may stand in it (lookups give
 * ENOENT, which libraries looking for their configuration take as "none") but can list
 * nothing; nr_inodes=1 and read-only: nothing can be created. */
static int child_make_empty_root(void) {
        int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0111", 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "1", 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "size", "4096", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                int e = errno;
                (void) close(fs);
                return -e;
        }
        int m = fsmount(fs, FSMOUNT_CLOEXEC,
                        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                MOUNT_ATTR_NOEXEC);
        int e = errno;
        (void) close(fs);
        return m < 0 ? -e : m;
}

_Noreturn static void child_fail(struct worker_ctx *c, int stage, int error) {
        c->shared->stage = stage;
        c->shared->error = error > 0 ? error : EIO;
        _exit(WORKER_EXIT_OTHER);
}

static int child_reset_signals(void) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        sigset_t all;

        /* Handlers and ignored signals of the caller have no business in the child (a SIGINT
         * to the caller's process group would run the caller's handler here). EINVAL for
         * SIGKILL, SIGSTOP and libc-internal signals is expected. */
        for (int sig = 1; sig < NSIG; sig++)
                (void) sigaction(sig, &sa, NULL);
        if (sigemptyset(&all) < 0 || sigprocmask(SIG_SETMASK, &all, NULL) < 0)
                return errno;
        return 0;
}

/* Move fds[0..n) to 3, 4, ..., point 0-2 at fds[1] (/dev/null), close all others. */
static int child_fd_layout(int *fds, size_t n) {
        int base = 3 + (int) n, tmp[WORKER_MAX_FDS];

        for (size_t i = 0; i < n; i++) {
                tmp[i] = fcntl(fds[i], F_DUPFD, base);
                if (tmp[i] < 0)
                        return errno;
        }
        for (size_t i = 0; i < n; i++) {
                if (dup2(tmp[i], 3 + (int) i) < 0)
                        return errno;
                fds[i] = 3 + (int) i;
        }
        for (int i = 0; i < 3; i++)
                if (dup2(CHILD_NULL_FD, i) < 0)
                        return errno;
        if (close_range((unsigned) base, ~0U, 0) < 0)
                return errno;
        return 0;
}

static int child_drop_caps(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -STAGE_NO_NEW_PRIVS;
        /* Up to the kernel's last capability: PR_CAPBSET_READ fails with EINVAL past it.
         * Capabilities already out of the bounding set are skipped (dropping them again would
         * need CAP_SETPCAP too). Without CAP_SETPCAP (an unprivileged caller, or a caller that
         * dropped it, like nsid-uniquifier) the bounding set cannot shrink; that is harmless
         * once nothing is left to use: the capset() below empties the permitted set, and
         * no_new_privs forbids gaining any through exec(). */
        for (unsigned long cap = 0;; cap++) {
                int k = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
                if (k < 0)
                        break;
                if (k == 0)
                        continue;
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno != EPERM)
                                return -STAGE_BOUNDING_SET;
                        break;
                }
        }
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return -STAGE_AMBIENT;
        if (syscall(SYS_capset, &hdr, data) < 0)
                return -STAGE_CAPSET;
        /* Nothing permitted remains (checked: the bounding set may be left as it was). */
        if (syscall(SYS_capget, &hdr, data) < 0)
                return -STAGE_CAPSET;
        if (data[0].permitted != 0 || data[1].permitted != 0 || data[0].effective != 0 ||
            data[1].effective != 0) {
                errno = EPERM;
                return -STAGE_CAPSET;
        }
        return 0;
}

_public_ int nsid_worker_drop_privileges(void) {
        if (!drop_state.armed)
                return -EINVAL;
        if (drop_state.done)
                return 0;
        if (drop_state.error < 0)
                return drop_state.error;

        /* The empty root first, while we may still chroot() anywhere: once in the target's
         * user namespace, the tmpfs (owned by the host's root) would not be ours to enter. */
        if (fchdir(drop_state.empty_fd) < 0 || chroot(".") < 0 || chdir("/") < 0)
                return -errno;
        (void) close(drop_state.empty_fd);
        drop_state.empty_fd = -EBADF;
        /* Host groups go while we are still the host's root (a namespace with setgroups
         * denied would keep them). Raw system calls: this thread only, async-signal-safe. */
        if (syscall(SYS_setgroups, 0, NULL) < 0)
                return -errno;
        if (drop_state.userns_fd >= 0) {
                if (setns(drop_state.userns_fd, CLONE_NEWUSER) < 0)
                        return -errno;
                (void) close(drop_state.userns_fd);
                drop_state.userns_fd = -EBADF;
        }
        /* The bounding set while CAP_SETPCAP is ours (all of them in a joined namespace);
         * changing uid from 0 then clears the permitted and effective sets, and
         * child_drop_caps() makes sure of the rest. */
        for (unsigned long cap = 0;; cap++) {
                int k = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
                if (k < 0)
                        break;
                if (k > 0 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EPERM)
                        return -errno;
        }
        if (syscall(SYS_setresgid, drop_state.gid, drop_state.gid, drop_state.gid) < 0 ||
            syscall(SYS_setresuid, drop_state.uid, drop_state.uid, drop_state.uid) < 0)
                return -errno;
        if (child_drop_caps() < 0)
                return -EPERM;
        if (getuid() != drop_state.uid || geteuid() != drop_state.uid ||
            getgid() != drop_state.gid)
                return -EPERM;
        /* Nothing of the host's procfs stays within reach of the parser. */
        if (drop_state.procfs_fd >= 0) {
                (void) close(drop_state.procfs_fd);
                drop_state.procfs_fd = -EBADF;
                file_procfs_set(-EBADF);
        }
        drop_state.done = true;
        return 0;
}

/* nsid_worker_session_start(): the limits a program the container controls runs under. No core
 * file, no file written, no process forked (RLIMIT_NPROC 0 for an unprivileged id), bounded
 * memory, CPU time and descriptors. */
static int child_exec_limits(void) {
        static const struct {
                int resource;
                rlim_t max;
        } lim[] = {
                { RLIMIT_CORE, 0 },
                { RLIMIT_FSIZE, 0 },
                { RLIMIT_NPROC, 0 },
                { RLIMIT_CPU, NSID_WORKER_EXEC_CPU_SECONDS },
                { RLIMIT_AS, NSID_WORKER_EXEC_AS_BYTES },
                { RLIMIT_NOFILE, NSID_WORKER_EXEC_NOFILE },
        };
        for (size_t i = 0; i < ELEMENTSOF(lim); i++) {
                struct rlimit rl = { lim[i].max, lim[i].max };
                if (setrlimit(lim[i].resource, &rl) < 0)
                        return errno;
        }
        return 0;
}

_Noreturn static void child_exec(struct worker_ctx *c) {
        static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
        int r = child_drop_caps();
        if (r < 0)
                child_fail(c, -r, errno);
        r = child_exec_limits();
        if (r > 0)
                child_fail(c, STAGE_RLIMIT, r);
        /* stdout is the reply pipe; nothing else of ours is left open across the exec: the
         * fd directory (4) is closed, the program's fd (5) goes with FD_CLOEXEC */
        if (dup2(CHILD_REPLY_FD, 1) < 0 || close(CHILD_REPLY_FD) < 0 ||
            close(CHILD_NULL_FD) < 0 || fcntl(c->exec_fd, F_SETFD, FD_CLOEXEC) < 0)
                child_fail(c, STAGE_FDS, errno);
        if (c->req_fd >= 0 && (dup2(c->req_fd, 0) < 0 || close(c->req_fd) < 0))
                child_fail(c, STAGE_FDS, errno);
        c->shared->stage = STAGE_FN;
        (void) syscall(SYS_execveat, c->exec_fd, "", c->exec_argv, envp, AT_EMPTY_PATH);
        child_fail(c, STAGE_EXEC, errno);
}

_Noreturn static void child_run_fn(struct worker_ctx *c) {
        int r;

        if (c->exec_fd >= 0)
                child_exec(c);
        if (c->flags & NSID_WORKER_DROP_IN_FN)
                drop_state.armed = true;
        else if (!(c->flags & NSID_WORKER_KEEP_CAPS)) {
                r = child_drop_caps();
                if (r < 0)
                        child_fail(c, -r, errno);
        }

        c->shared->stage = STAGE_FN;
        (void) munmap(c->shared, sizeof(*c->shared));
        c->shared = NULL;

        r = c->fn(CHILD_REPLY_FD, c->userdata);
        if (r == 0 && drop_state.armed && !drop_state.done)
                _exit(EPROTO); /* read with privilege and never dropped: not an answer */
        if (r == 0)
                _exit(0);
        if (r < 0 && r > -WORKER_EXIT_OTHER)
                _exit(-r);
        _exit(WORKER_EXIT_OTHER);
}

/*
 * NSID_NS_PID: the runner is our child, inside the target's pid namespace. We stay outside it
 * and reap the runner ourselves: if we simply died, the runner would be reparented to the
 * reaper of OUR pid namespace (the host's init), not the container's, and stay a zombie as
 * long as that init does not reap. So the parent asks us to stop with SIGTERM (we wait for it
 * with sigwaitinfo()); we SIGKILL the runner, reap it and exit. SIGKILL to us stays the last
 * resort, and PR_SET_PDEATHSIG still kills the runner then.
 */
/* nsid_worker_session_start(): the runner becomes the unprivileged ids chosen from the target's maps,
 * in its user namespace (joined, or ours). Only the runner: the middle child stays the
 * caller's uid so that the caller, which need not hold CAP_KILL, can still signal it. The
 * bounding set goes while CAP_SETPCAP may still be ours; the uid change then empties the
 * rest (child_drop_caps() checks). A change of credentials clears PR_SET_PDEATHSIG: the
 * caller sets it again afterwards. */
static void child_become_unprivileged(struct worker_ctx *c) {
        if (c->drop_err < 0)
                child_fail(c, STAGE_SETUID, -c->drop_err);
        for (unsigned long cap = 0;; cap++) {
                int k = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
                if (k < 0)
                        break;
                if (k > 0 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EPERM)
                        child_fail(c, STAGE_BOUNDING_SET, errno);
        }
        if (syscall(SYS_setresgid, c->drop_gid, c->drop_gid, c->drop_gid) < 0)
                child_fail(c, STAGE_SETGID, errno);
        if (syscall(SYS_setresuid, c->drop_uid, c->drop_uid, c->drop_uid) < 0)
                child_fail(c, STAGE_SETUID, errno);
}

_Noreturn static void child_pid_namespace(struct worker_ctx *c) {
        sigset_t wait_set, empty;
        int self_pidfd, status;
        pid_t pid;

        if (sigemptyset(&wait_set) < 0 || sigaddset(&wait_set, SIGCHLD) < 0 ||
            sigaddset(&wait_set, SIGTERM) < 0 || sigemptyset(&empty) < 0 ||
            sigprocmask(SIG_BLOCK, &wait_set, NULL) < 0)
                child_fail(c, STAGE_FORK_PID, errno);

        /* Lets the runner find out whether we died before its PR_SET_PDEATHSIG took effect
         * (getppid() is 0 inside the new pid namespace, so it cannot be compared). */
        self_pidfd = pidfd_open(getpid(), 0);
        if (self_pidfd < 0)
                child_fail(c, STAGE_FORK_PID, errno);

        pid = fork();
        if (pid < 0)
                child_fail(c, STAGE_FORK_PID, errno);
        if (pid == 0) {
                struct pollfd pfd = { .fd = self_pidfd, .events = POLLIN };

                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                        child_fail(c, STAGE_PID_CHILD, errno);
                if (c->exec_unpriv) {
                        child_become_unprivileged(c);
                        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                                child_fail(c, STAGE_PID_CHILD, errno);
                }
                if (poll(&pfd, 1, 0) != 0) /* the middle child already exited (or error) */
                        _exit(WORKER_EXIT_OTHER);
                (void) close(self_pidfd);
                /* the fd directory is the middle child's: no reopening here (file.c fails) */
                file_procfs_set(-EBADF);
                if (sigprocmask(SIG_SETMASK, &empty, NULL) < 0)
                        child_fail(c, STAGE_PID_CHILD, errno);
                child_run_fn(c);
        }

        /* The middle child keeps nothing open: the reply pipe's write end belongs to the
         * runner alone, so the parent sees EOF when the runner is done. */
        (void) close_range(0, ~0U, 0);
        /* A runner that became an unprivileged id can only be signalled by a process of
         * that effective uid or one holding CAP_KILL over it (that includes the
         * PR_SET_PDEATHSIG our death sends: the kernel checks it with our credentials). The
         * caller need not hold CAP_KILL: take the runner's effective uid, keep our real
         * uid, which lets the caller signal us. */
        if (c->exec_unpriv) {
                if (syscall(SYS_setresuid, -1, c->drop_uid, -1) < 0) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, NULL, 0);
                        child_fail(c, STAGE_SETUID, errno);
                }
                /* the change of effective uid cleared our own parent-death signal: set it
                 * again, and stop if the caller died before it took effect (a middle process
                 * that outlived the daemon kept a hung runner, seen in itest-idmapd-nss) */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != c->parent_pid) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, NULL, 0);
                        _exit(WORKER_EXIT_OTHER);
                }
        }
        for (;;) {
                siginfo_t si;
                int sig = sigwaitinfo(&wait_set, &si);
                if (sig < 0) {
                        if (errno == EINTR)
                                continue;
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, NULL, 0);
                        child_fail(c, STAGE_PID_CHILD, errno);
                }
                if (sig == SIGTERM) {
                        (void) kill(pid, SIGKILL);
                        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                                ;
                        _exit(WORKER_EXIT_OTHER);
                }
                pid_t k = waitpid(pid, &status, WNOHANG);
                if (k == pid)
                        break;
                if (k < 0 && errno != EINTR)
                        child_fail(c, STAGE_PID_CHILD, errno);
        }
        if (WIFEXITED(status))
                _exit(WEXITSTATUS(status));
        c->shared->fn_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        _exit(WORKER_EXIT_OTHER);
}

_Noreturn static void worker_child(struct worker_ctx *c) {
        int fds[WORKER_MAX_FDS];
        size_t n = 0;
        int r;

        c->shared->stage = STAGE_START;
        nsid_log_silence(); /* nothing is logged from a worker: it may sit in a container's
                             * root, where /dev/log and /etc/localtime are the container's */

        /* Die with the caller; if it is already gone, stop now. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                child_fail(c, STAGE_PDEATHSIG, errno);
        if (getppid() != c->parent_pid)
                _exit(WORKER_EXIT_OTHER);

        r = child_reset_signals();
        if (r > 0)
                child_fail(c, STAGE_SIGNALS, r);
        if (setsid() < 0)
                child_fail(c, STAGE_SETSID, errno);
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                child_fail(c, STAGE_DUMPABLE, errno);

        /* Its own fd directory, from the host's procfs, before any namespace is joined:
         * files read in the container are reopened through it (file.c), never through the
         * /proc of the container's root, which the container controls (a FIFO or a device
         * node where /proc/self/fd/N should be). It reaches this process's fds only. */
        c->proc_fd = file_procfs_open_self_fd();
        if (c->proc_fd < 0)
                child_fail(c, STAGE_FDS, -c->proc_fd);

        if (c->flags & NSID_WORKER_DROP_IN_FN) {
                c->empty_fd = child_make_empty_root();
                if (c->empty_fd < 0)
                        child_fail(c, STAGE_EMPTY_ROOT, -c->empty_fd);
        }

        /* Keep only what the setup needs; everything else the caller had open is closed
         * before any namespace is joined. The empty root and the late user namespace come
         * right after /dev/null (5, 6), where the final close_range() leaves them. */
        fds[n++] = c->reply_fd;
        fds[n++] = c->null_fd;
        size_t keep = 0;
        if (c->flags & NSID_WORKER_DROP_IN_FN) {
                fds[n++] = c->empty_fd;
                keep++;
                if (c->late_userns_fd >= 0) {
                        fds[n++] = c->late_userns_fd;
                        keep++;
                }
        } else if (c->exec_fd >= 0) {
                fds[n++] = c->exec_fd;
                keep++;
                if (c->req_fd >= 0) {
                        fds[n++] = c->req_fd;
                        keep++;
                }
        }
        size_t join_at = n;
        for (size_t i = 0; i < c->n_join; i++)
                fds[n++] = c->join_fd[i];
        if (c->root_fd >= 0)
                fds[n++] = c->root_fd;
        size_t proc_at = n;
        fds[n++] = c->proc_fd;
        r = child_fd_layout(fds, n);
        if (r > 0)
                child_fail(c, STAGE_FDS, r);
        c->proc_fd = fds[proc_at];
        c->reply_fd = fds[0];
        c->null_fd = fds[1];
        if (c->flags & NSID_WORKER_DROP_IN_FN) {
                c->empty_fd = fds[2];
                if (c->late_userns_fd >= 0)
                        c->late_userns_fd = fds[3];
        } else if (c->exec_fd >= 0) {
                c->exec_fd = fds[2];
                if (c->req_fd >= 0)
                        c->req_fd = fds[3];
        }
        for (size_t i = 0; i < c->n_join; i++)
                c->join_fd[i] = fds[join_at + i];
        if (c->root_fd >= 0)
                c->root_fd = fds[join_at + c->n_join];

        /* The host's supplementary groups go while we are the host's root: a user namespace
         * with setgroups denied would otherwise keep them. */
        if (c->exec_unpriv && syscall(SYS_setgroups, 0, NULL) < 0)
                child_fail(c, STAGE_SETGROUPS, errno);
        for (size_t i = 0; i < c->n_join; i++)
                if (setns(c->join_fd[i], c->join_flag[i]) < 0)
                        child_fail(c, STAGE_SETNS, errno);

        if (c->root_fd >= 0 && fchdir(c->root_fd) < 0)
                child_fail(c, STAGE_CHDIR_ROOT, errno);
        if (c->flags & NSID_WORKER_UNSHARE_MNT) {
                /* unshare() moves our root and cwd to the copies in the new namespace; "/" is
                 * still the namespace's root mount here (the chroot comes after), so the
                 * propagation change applies to the whole tree. */
                if (unshare(CLONE_NEWNS) < 0)
                        child_fail(c, STAGE_UNSHARE_MNT, errno);
                if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        child_fail(c, STAGE_MAKE_PRIVATE, errno);
        }
        if (c->root_fd >= 0 && chroot(".") < 0)
                child_fail(c, STAGE_CHROOT, errno);
        if (chdir("/") < 0)
                child_fail(c, STAGE_CHROOT, errno);

        if (c->become_ns_root && !c->exec_unpriv) {
                /* Our credentials are still the caller's (host uid 0): become the namespace's
                 * root, so that what we touch is owned by the container's root, not by the
                 * host's. A namespace without a mapping for 0, or with setgroups denied, keeps
                 * the caller's ids for that part (EINVAL/EPERM); the capabilities go anyway.
                 * Raw system calls: they change this (single) thread only and are
                 * async-signal-safe, without glibc's all-threads set*id machinery. */
                if (syscall(SYS_setgroups, 0, NULL) < 0 && errno != EPERM && errno != EINVAL)
                        child_fail(c, STAGE_SETGROUPS, errno);
                if (syscall(SYS_setresgid, 0, 0, 0) < 0 && errno != EINVAL)
                        child_fail(c, STAGE_SETGID, errno);
                if (syscall(SYS_setresuid, 0, 0, 0) < 0 && errno != EINVAL)
                        child_fail(c, STAGE_SETUID, errno);
        }

        /* From here on only the reply pipe (3), /dev/null (0-2), the fd directory (4, in
         * place of the spare /dev/null) and, for DROP_IN_FN, the empty root (5) and the
         * target's user namespace (6) stay open. */
        if (dup2(c->proc_fd, CHILD_NULL_FD) < 0)
                child_fail(c, STAGE_FDS, errno);
        if (close_range(CHILD_NULL_FD + 1 + (unsigned) keep, ~0U, 0) < 0)
                child_fail(c, STAGE_FDS, errno);
        file_procfs_set(CHILD_NULL_FD);
        if (c->flags & NSID_WORKER_DROP_IN_FN) {
                drop_state.empty_fd = c->empty_fd;
                drop_state.userns_fd = c->late_userns_fd;
                drop_state.procfs_fd = CHILD_NULL_FD;
                drop_state.uid = c->drop_uid;
                drop_state.gid = c->drop_gid;
                drop_state.error = c->drop_err;
        }

        if (c->fork_pid)
                child_pid_namespace(c);
        child_run_fn(c);
}

/* ---- parent side ---- */

/* The workers alive (their pids, as forked), for worker_pids_snapshot(). */
#define WORKER_REGISTRY_MAX 4096
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t registry[WORKER_REGISTRY_MAX];
static size_t n_registry;

static void registry_add(pid_t pid) {
        pthread_mutex_lock(&registry_lock);
        if (n_registry < WORKER_REGISTRY_MAX)
                registry[n_registry++] = pid;
        pthread_mutex_unlock(&registry_lock);
}

static void registry_remove(pid_t pid) {
        pthread_mutex_lock(&registry_lock);
        for (size_t i = 0; i < n_registry; i++)
                if (registry[i] == pid) {
                        registry[i] = registry[--n_registry];
                        break;
                }
        pthread_mutex_unlock(&registry_lock);
}

size_t worker_pids_snapshot(pid_t *out, size_t max) {
        size_t n;
        pthread_mutex_lock(&registry_lock);
        n = n_registry < max ? n_registry : max;
        memcpy(out, registry, n * sizeof(*out));
        pthread_mutex_unlock(&registry_lock);
        return n;
}

static int64_t now_ms(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read what is available: 0 would block, 1 EOF, negative errno (-EFBIG past max). */
static int reply_drain(int fd, size_t max, char **buf, size_t *alloc, size_t *size) {
        for (;;) {
                if (*size > max)
                        return -EFBIG;
                if (*alloc - *size < 2) {
                        size_t want = *alloc ? *alloc * 2 : 4096;
                        if (want > max + 2)
                                want = max + 2;
                        char *nb = realloc(*buf, want);
                        if (!nb)
                                return -ENOMEM;
                        *buf = nb;
                        *alloc = want;
                }
                ssize_t k = read(fd, *buf + *size, *alloc - *size - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return negative_errno();
                }
                if (k == 0)
                        return 1;
                *size += (size_t) k;
        }
}

static int decode_result(const struct worker_shared *sh, const siginfo_t *si, const char *what) {
        if (sh->stage != STAGE_FN) {
                const char *stage = sh->stage >= 0 && sh->stage < _STAGE_MAX ? stage_names[sh->stage]
                                                                           : "unknown stage";
                if (si->si_code == CLD_EXITED && sh->error > 0 && sh->error < 4096)
                        return log_debug_errno(sh->error, "worker for %s failed at %s: %s", what,
                                               stage, strerror(sh->error));
                if (si->si_code == CLD_EXITED)
                        return log_debug_errno(EPROTO, "worker for %s gave up at %s", what,
                                               stage);
                return log_debug_errno(EPROTO, "worker for %s killed by signal %d at %s", what,
                                       si->si_status, stage);
        }
        if (si->si_code == CLD_EXITED) {
                if (si->si_status == 0)
                        return 0;
                if (si->si_status > 0 && si->si_status < WORKER_EXIT_OTHER)
                        return -si->si_status;
                if (sh->fn_signal > 0)
                        return log_debug_errno(EPROTO, "worker for %s killed by signal %d", what,
                                               sh->fn_signal);
                return log_debug_errno(EPROTO,
                                       "worker for %s returned a value outside the protocol",
                                       what);
        }
        return log_debug_errno(EPROTO, "worker for %s killed by signal %d", what, si->si_status);
}

/* Stop a worker that is still running. With a pid namespace the middle child is asked first
 * (SIGTERM), so that it reaps the runner itself; SIGKILL if it does not exit in time. */
#define WORKER_STOP_GRACE_MS 1000

static void worker_kill(int cpidfd, bool fork_pid) {
        if (fork_pid && pidfd_send_signal(cpidfd, SIGTERM, NULL, 0) >= 0) {
                int64_t deadline = now_ms() + WORKER_STOP_GRACE_MS;
                for (;;) {
                        struct pollfd pfd = { .fd = cpidfd, .events = POLLIN };
                        int64_t left = deadline - now_ms();
                        if (left <= 0)
                                break;
                        int k = poll(&pfd, 1, (int) left);
                        if (k > 0)
                                return; /* exited */
                        if (k < 0 && errno != EINTR)
                                break;
                }
        }
        (void) pidfd_send_signal(cpidfd, SIGKILL, NULL, 0);
}

static void unmap_shared(struct worker_shared **sh) {
        if (*sh && *sh != MAP_FAILED)
                (void) munmap(*sh, sizeof(**sh));
}

/* Fork the child that runs worker_child(ctx): the reply pipe's read end, the child's pidfd
 * (always our own child: checked) and the status page come back; the child holds the write
 * end. 0 or -errno (nothing left behind). */
static int worker_fork(struct worker_ctx *ctx, const char *what, int *ret_rfd, int *ret_cpidfd,
                       struct worker_shared **ret_sh, pid_t *ret_pid) {
        _cleanup_(unmap_shared) struct worker_shared *sh = NULL;
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF, nullfd = -EBADF, cpidfd = -EBADF;
        siginfo_t si = {};
        int p[2], r;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return log_debug_errno(errno, "worker for %s: cannot create pipe: %s", what,
                                       strerror(errno));
        rfd = p[0];
        wfd = p[1];
        nullfd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (nullfd < 0)
                return log_debug_errno(errno, "worker for %s: cannot open /dev/null: %s", what,
                                       strerror(errno));
        sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (sh == MAP_FAILED) {
                sh = NULL;
                return log_debug_errno(errno, "worker for %s: cannot map status page: %s", what,
                                       strerror(errno));
        }
        sh->stage = -1;

        ctx->parent_pid = getpid();
        ctx->reply_fd = wfd;
        ctx->null_fd = nullfd;
        ctx->shared = sh;

        nsid_log_fork_prepare(); /* the child may log: not with the lock another thread held */
        pid = fork();
        nsid_log_fork_done();
        if (pid < 0)
                return log_debug_errno(errno, "worker for %s: fork() failed: %s", what,
                                       strerror(errno));
        if (pid == 0)
                worker_child(ctx);

        /* Our own child cannot be reaped by anyone else, so its pid is not recycled and this
         * pidfd is the child, unless the program lets the kernel reap its children (SIGCHLD
         * set to SIG_IGN) or reaps with waitpid(-1): then the child may already be gone
         * (ESRCH), or the pid even reused. waitid(P_PIDFD, WNOWAIT) tells: it succeeds only
         * for our own child. In those cases nothing is signalled by pid. */
        cpidfd = pidfd_open(pid, 0);
        if (cpidfd < 0 && errno != ESRCH) {
                r = log_debug_errno(errno, "worker for %s: pidfd_open(%d) failed: %s", what,
                                    (int) pid, strerror(errno));
                (void) kill(pid, SIGKILL);
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                return r;
        }
        if (cpidfd < 0 ||
            (waitid(P_PIDFD, (id_t) cpidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
             errno == ECHILD))
                return log_debug_errno(ECHILD,
                                       "worker for %s: child %d was reaped by someone else "
                                       "(SIGCHLD ignored, or waitpid(-1) elsewhere?)",
                                       what, (int) pid);
        registry_add(pid); /* (removed once reaped) */
        *ret_rfd = TAKE_FD(rfd);
        *ret_cpidfd = TAKE_FD(cpidfd);
        *ret_sh = TAKE_PTR(sh);
        *ret_pid = pid;
        return 0;
}

static int worker_spawn(struct worker_ctx *ctx, const char *what, int timeout_ms,
                        size_t max_reply, char **ret_reply, size_t *ret_size) {
        _cleanup_(unmap_shared) struct worker_shared *sh = NULL;
        _cleanup_close_ int rfd = -EBADF, cpidfd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t alloc = 0, size = 0;
        bool pipe_open = true, exited = false;
        int64_t deadline = now_ms() + timeout_ms;
        siginfo_t si = {};
        pid_t pid = 0;
        int r;

        r = worker_fork(ctx, what, &rfd, &cpidfd, &sh, &pid);
        if (r < 0)
                return r;
        if (fcntl(rfd, F_SETFL, O_NONBLOCK) < 0)
                r = negative_errno();

        while (r == 0 && !(exited && !pipe_open)) {
                struct pollfd pfd[2] = {
                        { .fd = cpidfd, .events = POLLIN },
                        { .fd = rfd, .events = POLLIN },
                };
                int64_t left = deadline - now_ms();
                int k;

                if (left <= 0) {
                        r = log_debug_errno(ETIMEDOUT, "worker for %s timed out after %d ms",
                                            what, timeout_ms);
                        break;
                }
                k = poll(pfd, pipe_open ? 2 : 1, left > INT32_MAX ? INT32_MAX : (int) left);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        break;
                }
                if (pipe_open && pfd[1].revents) {
                        k = reply_drain(rfd, max_reply, &buf, &alloc, &size);
                        if (k == -EFBIG)
                                r = log_debug_errno(EFBIG,
                                                    "worker for %s: reply longer than %zu bytes",
                                                    what, max_reply);
                        else if (k < 0)
                                r = k;
                        else if (k == 1)
                                pipe_open = false;
                }
                if (r == 0 && pfd[0].revents) {
                        /* Exited. Take what is still buffered; a writer left behind by fn
                         * (a background process holding the pipe) is not waited for. */
                        exited = true;
                        if (pipe_open) {
                                k = reply_drain(rfd, max_reply, &buf, &alloc, &size);
                                if (k == -EFBIG)
                                        r = log_debug_errno(
                                                EFBIG, "worker for %s: reply longer than %zu bytes",
                                                what, max_reply);
                                else if (k < 0)
                                        r = k;
                                pipe_open = false;
                        }
                }
        }

        if (r < 0 && !exited)
                worker_kill(cpidfd, ctx->fork_pid);
        rfd = safe_close(rfd);

        /* Always reap. After SIGKILL this returns as soon as the kernel has killed it. */
        for (;;) {
                if (waitid(P_PIDFD, (id_t) cpidfd, &si, WEXITED) >= 0)
                        break;
                if (errno == EINTR)
                        continue;
                int e = errno;
                if (r == 0)
                        r = log_debug_errno(e, "worker for %s: cannot reap child %d: %s%s", what,
                                            (int) pid, strerror(e),
                                            e == ECHILD ? " (SIGCHLD ignored, or reaped by "
                                                          "someone else?)"
                                                        : "");
                break;
        }
        registry_remove(pid);
        if (r < 0)
                return r;

        r = decode_result(sh, &si, what);
        if (r < 0)
                return r;

        if (ret_reply) {
                if (!buf) {
                        buf = malloc(1);
                        if (!buf)
                                return -ENOMEM;
                }
                buf[size] = 0;
                *ret_reply = TAKE_PTR(buf);
        }
        if (ret_size)
                *ret_size = size;
        return 0;
}

static int check_common_args(unsigned flags, int timeout_ms, nsid_worker_fn fn,
                             size_t max_reply) {
        assert_return((flags & ~WORKER_KNOWN_FLAGS) == 0, -EINVAL);
        assert_return(timeout_ms > 0, -EINVAL);
        assert_return(fn, -EINVAL);
        assert_return(max_reply < SIZE_MAX / 4, -EINVAL);
        return 0;
}

/* 1 if ns is the caller's own user namespace. */
static int is_own_userns(const nsid_ns *ns) {
        struct stat st;
        nsid_ns_id id;
        int r;

        r = nsid_ns_get_id(ns, &id);
        if (r < 0)
                return r;
        if (stat("/proc/self/ns/user", &st) < 0)
                return negative_errno();
        return (uint64_t) st.st_dev == id.dev && (uint64_t) st.st_ino == id.ino;
}

DEFINE_UNREF_CLEANUP(nsid_ns, nsid_ns_unref)

#define OVERFLOW_ID 65534u

/* The unprivileged id a DROP_IN_FN worker becomes, from a uid_map or gid_map as the host
 * sees it ("inside outside count" lines, outside ids the host's): 65534 where it is mapped
 * to a host id other than 0, else the first mapped id whose host id is not 0; -EPERM when
 * there is none (nothing mapped, or only host id 0). The map is the kernel's text. */
static int pick_unprivileged_id(const char *map, uint32_t *ret) {
        bool have = false;
        uint32_t first = 0;

        for (const char *p = map; p && *p;) {
                unsigned long long in, out, count;
                int used = 0;
                if (sscanf(p, " %llu %llu %llu%n", &in, &out, &count, &used) != 3)
                        break;
                p += used;
                if (count == 0 || in > UINT32_MAX || out > UINT32_MAX || count > UINT32_MAX)
                        continue;
                if (OVERFLOW_ID >= in && OVERFLOW_ID - in < count && out + (OVERFLOW_ID - in) != 0) {
                        *ret = OVERFLOW_ID;
                        return 0;
                }
                if (!have && (out != 0 || count > 1)) {
                        first = (uint32_t) (out != 0 ? in : in + 1);
                        have = true;
                }
        }
        if (!have)
                return -EPERM;
        *ret = first;
        return 0;
}

/* DROP_IN_FN: the target's user namespace (unless it is ours) and the ids to become. */
static int prepare_drop(const nsid_proc *target, struct worker_ctx *ctx, nsid_ns **ret_userns,
                        const char *what) {
        _cleanup_(nsid_ns_unrefp) nsid_ns *userns = NULL;
        _cleanup_free_ char *um = NULL, *gm = NULL;
        int r;

        r = nsid_proc_open_ns(target, NSID_NS_USER, &userns);
        if (r < 0)
                return r;
        int own = is_own_userns(userns);
        if (own < 0)
                return own;
        r = nsid_proc_read_file(target, "uid_map", 64 * 1024, &um, NULL);
        if (r >= 0)
                r = nsid_proc_read_file(target, "gid_map", 64 * 1024, &gm, NULL);
        if (r < 0)
                return log_debug_errno(r, "worker for %s: cannot read its id maps: %s", what,
                                       strerror(-r));
        ctx->drop_err = pick_unprivileged_id(um, &ctx->drop_uid);
        if (ctx->drop_err >= 0)
                ctx->drop_err = pick_unprivileged_id(gm, &ctx->drop_gid);
        if (ctx->drop_err < 0)
                log_debug("worker for %s: its user namespace maps no unprivileged id; the "
                          "worker will refuse to drop (and parse)", what);
        if (own == 0) {
                ctx->late_userns_fd = nsid_ns_get_fd(userns);
                *ret_userns = TAKE_PTR(userns);
        }
        return 0;
}

_public_ int nsid_worker_run(const nsid_proc *target, unsigned ns_mask, unsigned flags,
                             int timeout_ms, nsid_worker_fn fn, void *userdata,
                             size_t max_reply, char **ret_reply, size_t *ret_size) {
        _cleanup_close_ int rootfd = -EBADF;
        _cleanup_(nsid_ns_unrefp) nsid_ns *late_userns = NULL;
        struct worker_ctx ctx = {
                .root_fd = -EBADF,
                .empty_fd = -EBADF,
                .late_userns_fd = -EBADF,
                .exec_fd = -EBADF,
                .req_fd = -EBADF,
                .flags = flags,
                .fn = fn,
                .userdata = userdata,
        };
        char what[32];
        int clone_flags = 0, r;

        assert_return(target, -EINVAL);
        assert_return((ns_mask & ~WORKER_ALL_NS) == 0, -EINVAL);
        r = check_common_args(flags, timeout_ms, fn, max_reply);
        if (r < 0)
                return r;

        /* DROP_IN_FN joins the user namespace itself, late. */
        assert_return(!(flags & NSID_WORKER_DROP_IN_FN) ||
                              !(ns_mask & NSID_NS_MASK(NSID_NS_USER)),
                      -EINVAL);

        (void) snprintf(what, sizeof(what), "process %d", (int) nsid_proc_get_pid(target));
        r = nsid_proc_check_alive(target);
        if (r < 0)
                return log_debug_errno(r, "worker for %s: %s", what,
                                       r == -ESRCH ? "the process has exited" : strerror(-r));
        if (flags & NSID_WORKER_DROP_IN_FN) {
                r = prepare_drop(target, &ctx, &late_userns, what);
                if (r < 0)
                        return r;
        }

        for (int t = 0; t < _NSID_NS_TYPE_MAX; t++)
                if (ns_mask & NSID_NS_MASK(t))
                        clone_flags |= nsid_ns_type_clone_flag((nsid_ns_type) t);

        if (ns_mask & NSID_NS_MASK(NSID_NS_USER)) {
                _cleanup_(nsid_ns_unrefp) nsid_ns *userns = NULL;

                r = nsid_proc_open_ns(target, NSID_NS_USER, &userns);
                if (r < 0)
                        return r;
                r = is_own_userns(userns);
                if (r < 0)
                        return r;
                if (r > 0)
                        clone_flags &= ~CLONE_NEWUSER; /* setns() would fail with EINVAL */
                else
                        ctx.become_ns_root = true;
        }
        if (ns_mask & NSID_NS_MASK(NSID_NS_MNT)) {
                r = nsid_proc_open_root(target, &rootfd);
                if (r == -ENOENT)
                        r = -ESRCH; /* a zombie has no root */
                if (r < 0)
                        return log_debug_errno(r, "worker for %s: cannot pin its root: %s", what,
                                               strerror(-r));
                ctx.root_fd = rootfd;
        }
        if (clone_flags) {
                ctx.join_fd[0] = nsid_proc_get_pidfd(target);
                ctx.join_flag[0] = clone_flags;
                ctx.n_join = 1;
        }
        ctx.fork_pid = ns_mask & NSID_NS_MASK(NSID_NS_PID);

        return worker_spawn(&ctx, what, timeout_ms, max_reply, ret_reply, ret_size);
}

_public_ int nsid_worker_run_ns(nsid_ns *const *ns, size_t n, unsigned flags, int timeout_ms,
                                nsid_worker_fn fn, void *userdata, size_t max_reply,
                                char **ret_reply, size_t *ret_size) {
        struct worker_ctx ctx = {
                .root_fd = -EBADF,
                .empty_fd = -EBADF,
                .late_userns_fd = -EBADF,
                .exec_fd = -EBADF,
                .req_fd = -EBADF,
                .flags = flags,
                .fn = fn,
                .userdata = userdata,
        };
        unsigned seen = 0;
        int r;

        assert_return(ns || n == 0, -EINVAL);
        /* no process: no id maps to choose the unprivileged ids from */
        assert_return(!(flags & NSID_WORKER_DROP_IN_FN), -EINVAL);
        assert_return(n <= _NSID_NS_TYPE_MAX, -EINVAL);
        r = check_common_args(flags, timeout_ms, fn, max_reply);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++) {
                assert_return(ns[i], -EINVAL);
                nsid_ns_type t = nsid_ns_get_type(ns[i]);
                assert_return((int) t >= 0 && t < _NSID_NS_TYPE_MAX, -EINVAL);
                assert_return(!(seen & NSID_NS_MASK(t)), -EINVAL); /* one per type */
                seen |= NSID_NS_MASK(t);
        }

        /* The user namespace first: joining it gives the capabilities needed to join the
         * namespaces it owns. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        nsid_ns_type t = nsid_ns_get_type(ns[i]);
                        if ((pass == 0) != (t == NSID_NS_USER))
                                continue;
                        if (t == NSID_NS_USER) {
                                r = is_own_userns(ns[i]);
                                if (r < 0)
                                        return r;
                                if (r > 0)
                                        continue;
                                ctx.become_ns_root = true;
                        }
                        ctx.join_fd[ctx.n_join] = nsid_ns_get_fd(ns[i]);
                        ctx.join_flag[ctx.n_join] = nsid_ns_type_clone_flag(t);
                        ctx.n_join++;
                }
        ctx.fork_pid = seen & NSID_NS_MASK(NSID_NS_PID);

        /* For log messages: "namespaces net:[4026532438] user:[...]". */
        char what[160] = "namespaces";
        size_t len = strlen(what);
        for (size_t i = 0; i < n && len < sizeof(what); i++) {
                nsid_ns_id id = {};
                (void) nsid_ns_get_id(ns[i], &id);
                int k = snprintf(what + len, sizeof(what) - len, " %s:[%llu]",
                                 nsid_ns_type_name(nsid_ns_get_type(ns[i])),
                                 (unsigned long long) id.ino);
                if (k < 0)
                        break;
                len += (size_t) k;
        }

        return worker_spawn(&ctx, what, timeout_ms, max_reply, ret_reply, ret_size);
}

/* A session: what the child needs, from the target (its maps for the
 * unprivileged ids, its namespaces, its root pinned in *rootfd). */
static int prepare_exec(const nsid_proc *target, unsigned ns_mask, struct worker_ctx *ctx,
                        int *rootfd, char *what, size_t whatlen) {
        _cleanup_(nsid_ns_unrefp) nsid_ns *userns = NULL;
        int clone_flags = 0, r;

        (void) snprintf(what, whatlen, "process %d", (int) nsid_proc_get_pid(target));
        r = nsid_proc_check_alive(target);
        if (r < 0)
                return log_debug_errno(r, "worker for %s: %s", what,
                                       r == -ESRCH ? "the process has exited" : strerror(-r));
        /* the unprivileged ids, from its maps (the host's procfs), as DROP_IN_FN does */
        r = prepare_drop(target, ctx, &userns, what);
        if (r < 0)
                return r;
        if (ctx->drop_err < 0)
                return ctx->drop_err;
        ctx->late_userns_fd = -EBADF; /* joined with the others below, not late */

        for (int t = 0; t < _NSID_NS_TYPE_MAX; t++)
                if (ns_mask & NSID_NS_MASK(t))
                        clone_flags |= nsid_ns_type_clone_flag((nsid_ns_type) t);
        if (!userns)
                clone_flags &= ~CLONE_NEWUSER; /* its user namespace is ours */
        if (ns_mask & NSID_NS_MASK(NSID_NS_MNT)) {
                r = nsid_proc_open_root(target, rootfd);
                if (r == -ENOENT)
                        r = -ESRCH;
                if (r < 0)
                        return log_debug_errno(r, "worker for %s: cannot pin its root: %s", what,
                                               strerror(-r));
                ctx->root_fd = *rootfd;
        }
        if (clone_flags) {
                ctx->join_fd[0] = nsid_proc_get_pidfd(target);
                ctx->join_flag[0] = clone_flags;
                ctx->n_join = 1;
        }
        /* always a middle child, in the target's pid namespace or not: it keeps the
         * caller's uid, so the caller can stop it, and it stops the runner */
        ctx->fork_pid = true;
        return 0;
}

#define EXEC_CTX(fd, av)                                                                       \
        {                                                                                      \
                .root_fd = -EBADF, .empty_fd = -EBADF, .late_userns_fd = -EBADF,              \
                .exec_fd = (fd), .req_fd = -EBADF, .exec_argv = (av), .exec_unpriv = true,     \
        }

struct nsid_worker_session {
        pid_t pid;    /* the middle child */
        int cpidfd;
        int req_fd;   /* our end of the program's stdin (a socket: no SIGPIPE) */
        int reply_fd; /* the read end of its stdout, non-blocking */
        struct worker_shared *sh;
        char *buf;    /* bytes read past the last reply */
        size_t len, alloc;
};

_public_ int nsid_worker_session_start(const nsid_proc *target, unsigned ns_mask, int exec_fd,
                                       char *const argv[], nsid_worker_session **ret) {
        _cleanup_close_ int rootfd = -EBADF, ours = -EBADF, theirs = -EBADF;
        struct worker_ctx ctx = EXEC_CTX(exec_fd, argv);
        nsid_worker_session *ws;
        char what[32];
        int sv[2], r;

        assert_return(target, -EINVAL);
        assert_return(exec_fd >= 0, -EINVAL);
        assert_return(argv && argv[0], -EINVAL);
        assert_return((ns_mask & ~WORKER_ALL_NS) == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        r = prepare_exec(target, ns_mask, &ctx, &rootfd, what, sizeof(what));
        if (r < 0)
                return r;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        ours = sv[0];
        theirs = sv[1];
        (void) shutdown(ours, SHUT_RD);
        (void) shutdown(theirs, SHUT_WR);
        ctx.req_fd = theirs;
        ws = calloc(1, sizeof(*ws));
        if (!ws)
                return -ENOMEM;
        r = worker_fork(&ctx, what, &ws->reply_fd, &ws->cpidfd, &ws->sh, &ws->pid);
        if (r < 0) {
                free(ws);
                return r;
        }
        if (fcntl(ws->reply_fd, F_SETFL, O_NONBLOCK) < 0) {
                r = negative_errno();
                ws->req_fd = -EBADF;
                (void) nsid_worker_session_stop(ws);
                return r;
        }
        ws->req_fd = TAKE_FD(ours);
        *ret = ws;
        return 0;
}

_public_ int nsid_worker_session_call(nsid_worker_session *ws, const char *req, size_t req_len,
                                      unsigned reply_lines, int timeout_ms, size_t max_reply,
                                      char **ret_reply, size_t *ret_size) {
        int64_t deadline = now_ms() + timeout_ms;
        int r;

        assert_return(ws && ws->req_fd >= 0, -EINVAL);
        assert_return(req || req_len == 0, -EINVAL);
        assert_return(reply_lines > 0 && timeout_ms > 0, -EINVAL);
        assert_return(max_reply > 0 && max_reply < SIZE_MAX / 4, -EINVAL);

        for (size_t off = 0; off < req_len;) {
                ssize_t k = send(ws->req_fd, req + off, req_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN) {
                        struct pollfd pfd = { .fd = ws->req_fd, .events = POLLOUT };
                        int64_t left = deadline - now_ms();
                        if (left <= 0)
                                return -ETIMEDOUT;
                        (void) poll(&pfd, 1, (int) left);
                        continue;
                }
                if (k < 0)
                        return errno == EPIPE || errno == ECONNRESET ? -EPIPE : negative_errno();
                off += (size_t) k;
        }
        for (;;) {
                /* a whole reply in hand? */
                unsigned lines = 0;
                size_t end = 0;
                for (size_t i = 0; i < ws->len && lines < reply_lines; i++)
                        if (ws->buf[i] == '\n') {
                                lines++;
                                end = i + 1;
                        }
                if (lines == reply_lines) {
                        char *out = malloc(end + 1);
                        if (!out)
                                return -ENOMEM;
                        memcpy(out, ws->buf, end);
                        out[end] = '\0';
                        memmove(ws->buf, ws->buf + end, ws->len - end);
                        ws->len -= end;
                        *ret_reply = out;
                        if (ret_size)
                                *ret_size = end;
                        return 0;
                }
                if (ws->len > max_reply)
                        return -EFBIG;
                struct pollfd pfd = { .fd = ws->reply_fd, .events = POLLIN };
                int64_t left = deadline - now_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int) left);
                if (r < 0 && errno != EINTR)
                        return negative_errno();
                if (r <= 0)
                        continue;
                r = reply_drain(ws->reply_fd, max_reply, &ws->buf, &ws->alloc, &ws->len);
                if (r == -EFBIG || (r >= 0 && ws->len > max_reply))
                        return -EFBIG;
                if (r < 0)
                        return r;
                if (r == 1) /* EOF: the program is gone */
                        return -EPIPE;
        }
}

_public_ nsid_worker_session *nsid_worker_session_stop(nsid_worker_session *ws) {
        siginfo_t si;

        if (!ws)
                return NULL;
        /* its stdin closed, a well-behaved program ends at once; else it is killed */
        ws->req_fd = safe_close(ws->req_fd);
        if (ws->cpidfd >= 0) {
                struct pollfd pfd = { .fd = ws->cpidfd, .events = POLLIN };
                if (poll(&pfd, 1, 100) <= 0)
                        worker_kill(ws->cpidfd, true);
                while (waitid(P_PIDFD, (id_t) ws->cpidfd, &si, WEXITED) < 0 && errno == EINTR)
                        ;
                registry_remove(ws->pid);
        }
        ws->cpidfd = safe_close(ws->cpidfd);
        ws->reply_fd = safe_close(ws->reply_fd);
        unmap_shared(&ws->sh);
        free(ws->buf);
        free(ws);
        return NULL;
}
