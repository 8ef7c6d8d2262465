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
 * The child joins the namespaces named in ns_mask (bits 1 << nsid_ns_type) of the target
 * (through its pidfd, so a recycled pid cannot be joined), closes every fd but its reply pipe,
 * and, unless NSID_WORKER_KEEP_CAPS is set, sets no_new_privs and drops every capability
 * (effective, permitted, inheritable, bounding, ambient) before calling fn. With NSID_NS_PID
 * in the mask the function runs in a grandchild that is inside the target's pid namespace.
 * With NSID_NS_MNT the child also changes root and cwd to the target's root.
 *
 * fn writes its reply to reply_fd and returns 0 or a negative errno; that value becomes the
 * child's exit status. The parent reads at most max_reply bytes (more: -EFBIG), waits at
 * most timeout_ms (then kills the child: -ETIMEDOUT), and returns fn's result. The reply is
 * untrusted input: callers parse it as such.
 */

enum {
        NSID_WORKER_KEEP_CAPS = 1u << 0,   /* keep the caller's capabilities (e.g. to mount) */
        NSID_WORKER_UNSHARE_MNT = 1u << 1, /* unshare(CLONE_NEWNS) + private propagation first */
};

typedef int (*nsid_worker_fn)(int reply_fd, void *userdata);

#define NSID_NS_MASK(t) (1u << (t))

NSID_API_WARN_UNUSED int nsid_worker_run(const nsid_proc *target, unsigned ns_mask,
                                         unsigned flags, int timeout_ms, nsid_worker_fn fn,
                                         void *userdata, size_t max_reply, char **ret_reply,
                                         size_t *ret_size);

/* The same with namespaces given as handles (e.g. a netns from /run/netns with no process in
 * it); n handles, joined in the order user, then the others. No chroot. */
NSID_API_WARN_UNUSED int nsid_worker_run_ns(nsid_ns *const *ns, size_t n, unsigned flags,
                                            int timeout_ms, nsid_worker_fn fn, void *userdata,
                                            size_t max_reply, char **ret_reply,
                                            size_t *ret_size);

#ifdef __cplusplus
}
#endif
#endif
