/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_WORKER_H
#define NSID_WORKER_H

#include <stddef.h>

#include <nsid/common.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Run a function inside a target process's namespaces, in a forked child.
 *
 * The child joins the namespaces named in ns_mask (bits NSID_NS_MASK(type)) of the target in
 * one setns() on its pidfd (kernel >= 5.8; a recycled pid cannot be joined, and a target that
 * has exited, zombie or reaped, gives -ESRCH). A user namespace that is the caller's own is
 * skipped (the kernel refuses to "join" it). After joining another user namespace the child
 * becomes that namespace's root (uid/gid 0 inside, supplementary groups dropped) where it is
 * mapped, so files it touches belong to the container's root, not the host's.
 * With NSID_NS_MNT the child also chroot()s to the target's root (/proc/PID/root, pinned
 * before the fork): the kernel only moves a joiner to the root of the mount NAMESPACE, which
 * differs from the target's root when the target is chroot()ed inside it. cwd is "/".
 * With NSID_NS_PID fn runs in a grandchild inside the target's pid namespace; the middle
 * child stays outside and reaps it, so nothing is left as a zombie.
 *
 * Before fn runs: a new session (no controlling terminal), PR_SET_DUMPABLE 0 (the container's
 * root can neither ptrace the worker nor open its /proc/PID/fd), default signal dispositions
 * and an empty signal mask, fds 0-2 on /dev/null, the reply pipe on fd 3 (reply_fd) and every
 * other fd closed; unless NSID_WORKER_KEEP_CAPS: PR_SET_NO_NEW_PRIVS and every capability
 * dropped (effective, permitted, inheritable, ambient, and the bounding set where the worker
 * holds CAP_SETPCAP: without it no_new_privs and the empty permitted set leave nothing to
 * gain).
 *
 * fn writes its reply to reply_fd and returns 0 or a negative errno (-1 .. -254); that value
 * is returned to the caller exactly. The parent reads at most max_reply bytes (more: the
 * worker is killed, -EFBIG) and waits at most timeout_ms in all (then kills the worker:
 * -ETIMEDOUT). It always reaps its child and leaks no fd. On success (fn returned 0)
 * *ret_reply is a malloc'ed, NUL-terminated copy of the reply (which may contain NULs: see
 * *ret_size); ret_reply and ret_size may be NULL. On any failure they are left untouched and
 * the reply is discarded. The reply, and fn's return value, are untrusted input (fn may have
 * run container code, e.g. NSS modules): callers parse them as such.
 *
 * Errors: -EINVAL (bad arguments), -ESRCH (target gone), -ETIMEDOUT, -EFBIG, fn's own
 * negative errno, the errno of a failed setup step in the child (e.g. -EPERM from setns();
 * the step is logged at debug level), -EPROTO (the worker died from a signal or returned a
 * value outside 0 .. -254), -ECHILD (the child was reaped by someone else: the program set
 * SIGCHLD to SIG_IGN or reaps with waitpid(-1)), -ENOMEM, -EMFILE, -EAGAIN (fork).
 *
 * Caveats: fn runs in a fork()ed copy of the caller without exec(): it must be fork-safe
 * (locks held by other threads of the caller are not released; glibc's malloc is safe, an
 * allocator without fork handlers such as ASan's is not, so the library's own worker
 * functions allocate nothing; the library's log lock is held across the fork(), so fn may
 * log), and it must return rather than call exit() (which would run the caller's atexit
 * handlers). The library itself calls only async-signal-safe functions in the child before
 * fn, and the child ends with _exit() (no atexit handlers, no flush of inherited stdio
 * buffers). Processes that fn starts and leaves running are not waited for. A worker stuck
 * in an uninterruptible sleep delays the return until the kernel delivers SIGKILL.
 * Thread-safe: any number of workers may run concurrently.
 */

enum {
        NSID_WORKER_KEEP_CAPS = 1u << 0,   /* keep the caller's capabilities (e.g. to mount) */
        NSID_WORKER_UNSHARE_MNT = 1u << 1, /* unshare(CLONE_NEWNS) + private propagation first */
        NSID_WORKER_DROP_IN_FN = 1u << 2,  /* fn reads privileged, then drops: see below */
};

typedef int (*nsid_worker_fn)(int reply_fd, void *userdata);

/*
 * NSID_WORKER_DROP_IN_FN (nsid_worker_run() only; not with NSID_NS_USER in ns_mask): fn
 * starts with the caller's identity and capabilities (like NSID_WORKER_KEEP_CAPS), so it can
 * read a container's raw bytes (through nsid/file.h only), and must call
 * nsid_worker_drop_privileges() before it parses any of them. That call:
 *  - chroot()s to an empty, read-only tmpfs (a detached mount, mode 0111: nothing to list,
 *    every lookup ENOENT), made by the worker before it joined any namespace; cwd "/";
 *  - drops the supplementary groups, joins the target's user namespace when it is not the
 *    caller's own, and becomes an unprivileged id there: the overflow id 65534 (nobody) for
 *    uid and gid, where it is mapped to a host id other than 0; otherwise the first mapped id
 *    whose host id is not 0. A namespace that maps nothing but host id 0 (or nothing at all)
 *    has no unprivileged id: the call fails with -EPERM and fn must give up. The ids are
 *    chosen by the parent from the target's uid_map/gid_map (host procfs) before the fork;
 *  - empties the bounding set, the ambient, inheritable, permitted and effective sets and
 *    sets no_new_privs (checked: -EPERM if any capability is left);
 *  - closes the worker's fd directory (file reads fail with -ENOMEDIUM from then on).
 * It calls only async-signal-safe functions and allocates nothing. A second call returns 0.
 * fn returning 0 without having dropped is a protocol error (-EPROTO). The library's log is
 * silent inside every worker (nothing is logged from a container's root).
 * Outside a DROP_IN_FN worker the call returns -EINVAL and changes nothing.
 */
NSID_API_WARN_UNUSED int nsid_worker_drop_privileges(void);

#define NSID_NS_MASK(t) (1u << (t))

NSID_API_WARN_UNUSED int nsid_worker_run(const nsid_proc *target, unsigned ns_mask,
                                         unsigned flags, int timeout_ms, nsid_worker_fn fn,
                                         void *userdata, size_t max_reply, char **ret_reply,
                                         size_t *ret_size);

/* The same with namespaces given as handles (e.g. a netns from /run/netns with no process in
 * it); n handles (at most one per type), joined one setns() each: the user namespace first,
 * then the others in the given order. Joining a mount namespace puts the worker at that
 * namespace's root; there is no chroot. */
NSID_API_WARN_UNUSED int nsid_worker_run_ns(nsid_ns *const *ns, size_t n, unsigned flags,
                                            int timeout_ms, nsid_worker_fn fn, void *userdata,
                                            size_t max_reply, char **ret_reply,
                                            size_t *ret_size);

/*
 * Run a program inside a target process's namespaces as an unprivileged id, the way
 * container engines run `exec`, and keep it running for many requests (a session): for code
 * the container controls (its libc, its NSS modules, its directory clients), which must
 * never run with host privilege or in a copy of the caller's memory.
 *
 * The child joins the namespaces in ns_mask (the user namespace too, unless it is the
 * caller's own) in one setns() on the target's pidfd, chroot()s to the target's root
 * (NSID_NS_MNT), and forks: a middle process stays outside at the caller's uid (so that the
 * caller, which need not hold CAP_KILL, can always stop it), the runner enters the target's
 * pid namespace (NSID_NS_PID) and dies with the middle one (PR_SET_PDEATHSIG). The host's
 * supplementary groups go before joining; the runner then becomes the unprivileged ids
 * nsid_worker_drop_privileges() would (65534 where mapped to a host id other than 0, else
 * the first mapped id that is not host 0; -EPERM without one), with an empty bounding set,
 * no capability, no_new_privs, and these limits: no core file, no file written
 * (RLIMIT_FSIZE 0), no fork (RLIMIT_NPROC 0), NSID_WORKER_EXEC_CPU_SECONDS of CPU in all,
 * NSID_WORKER_EXEC_AS_BYTES of address space, NSID_WORKER_EXEC_NOFILE descriptors. Then it
 * calls execveat(exec_fd, "", argv, envp, AT_EMPTY_PATH) with envp only PATH and LC_ALL=C:
 * fd 0 the request socket, fd 1 the reply pipe, fd 2 /dev/null, nothing else open. exec_fd
 * should be a sealed memfd (memfd_create + F_SEAL_WRITE...) so that the container, which can
 * reach the program through /proc/PID/exe, cannot change it; it must be an ELF program.
 */
#define NSID_WORKER_EXEC_CPU_SECONDS 10
#define NSID_WORKER_EXEC_AS_BYTES (1024ul * 1024ul * 1024ul)
#define NSID_WORKER_EXEC_NOFILE 64

/*
 * nsid_worker_session_start(): the program's stdin is a socket the caller writes requests
 * to, its stdout a pipe the caller reads replies from. Errors: -EINVAL, -ESRCH (target
 * gone), -EPERM (no unprivileged id), -ENOMEM, -EMFILE, -EAGAIN; a program that cannot be
 * run there (execveat() fails, its loader refuses it) shows as -EPIPE on the first call.
 *
 * nsid_worker_session_call() sends req (req_len bytes; the caller frames it, e.g. one line)
 * and waits at most timeout_ms for a reply of exactly reply_lines newline-terminated lines,
 * at most max_reply bytes, which *ret_reply gets (malloc'ed, NUL-terminated; ret_size may be
 * NULL). Bytes after the reply are kept for the next call. Errors: -ETIMEDOUT, -EFBIG (too
 * long), -EPIPE (the program is gone: it exited, crashed, or was killed), -ENOMEM; after any
 * error the session is unusable: stop it (a late reply would answer the next request).
 * No SIGPIPE is raised in the caller. The reply is untrusted input.
 *
 * nsid_worker_session_stop() closes the program's stdin, waits 100 ms for it to end, then
 * kills it, reaps everything and frees the session; it takes NULL and returns NULL.
 * One thread at a time per session.
 */
typedef struct nsid_worker_session nsid_worker_session;

NSID_API_WARN_UNUSED int nsid_worker_session_start(const nsid_proc *target, unsigned ns_mask,
                                                   int exec_fd, char *const argv[],
                                                   nsid_worker_session **ret);
NSID_API_WARN_UNUSED int nsid_worker_session_call(nsid_worker_session *ws, const char *req,
                                                  size_t req_len, unsigned reply_lines,
                                                  int timeout_ms, size_t max_reply,
                                                  char **ret_reply, size_t *ret_size);
nsid_worker_session *nsid_worker_session_stop(nsid_worker_session *ws);

#ifdef __cplusplus
}
#endif
#endif
