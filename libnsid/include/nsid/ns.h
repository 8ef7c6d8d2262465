/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_NS_H
#define NSID_NS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Namespaces and processes, addressed by file descriptors.
 *
 * A namespace is identified by the (st_dev, st_ino) of its nsfs file. A process is pinned by
 * a pidfd; every /proc/PID file opened through an nsid_proc is checked to belong to the same
 * process (the pidfd is still alive after the open), so a recycled pid is detected instead of
 * silently reading another process.
 */

typedef enum nsid_ns_type {
        NSID_NS_NET,
        NSID_NS_USER,
        NSID_NS_MNT,
        NSID_NS_UTS,
        NSID_NS_PID,
        NSID_NS_IPC,
        NSID_NS_CGROUP,
        NSID_NS_TIME,
        _NSID_NS_TYPE_MAX,
        NSID_NS_ANY = -1, /* accept any type when opening by path or fd */
} nsid_ns_type;

typedef struct nsid_ns_id {
        uint64_t dev;
        uint64_t ino;
} nsid_ns_id;

typedef struct nsid_ns nsid_ns;
typedef struct nsid_proc nsid_proc;

/* "net", "user", "mnt", ... (the /proc/PID/ns/ names), or NULL for an invalid type. */
const char *nsid_ns_type_name(nsid_ns_type type);
/* The CLONE_NEW* flag of a type, 0 for an invalid type. */
int nsid_ns_type_clone_flag(nsid_ns_type type);
/* The inode number the kernel reserves for the initial namespace of a type (for net and mnt
 * only since Linux 6.x; older kernels number them dynamically), 0 for an invalid type. A
 * namespace file with this inode (on nsfs) is the initial one; one without it is not,
 * where the kernel reserves the number (compare with /proc/1/ns otherwise). */
uint32_t nsid_ns_type_initial_ino(nsid_ns_type type);
/* Parse "net", "user", ...; returns the type or -EINVAL. */
int nsid_ns_type_from_name(const char *name);

/*
 * Open a namespace by path (/proc/PID/ns/net, /run/netns/NAME, a bind mount). The file must
 * be an nsfs file of the expected type (NSID_NS_ANY: any type): -ENOTTY/-EINVAL otherwise
 * (-EMEDIUMTYPE when it is not an nsfs file at all, -ENOTSUP... see nsid_ns_open_fd()).
 */
NSID_API_WARN_UNUSED int nsid_ns_open_path(const char *path, nsid_ns_type type,
                                           nsid_ns **ret);
/* Take a duplicate of fd (the caller keeps fd). Fails with -EMEDIUMTYPE when fd is not an nsfs
 * file, -EINVAL when its type is not the expected one. */
NSID_API_WARN_UNUSED int nsid_ns_open_fd(int fd, nsid_ns_type type, nsid_ns **ret);

nsid_ns *nsid_ns_ref(nsid_ns *ns);
nsid_ns *nsid_ns_unref(nsid_ns *ns);

/* The namespace's fd, owned by the handle (valid while the handle lives). */
int nsid_ns_get_fd(const nsid_ns *ns);
nsid_ns_type nsid_ns_get_type(const nsid_ns *ns);
int nsid_ns_get_id(const nsid_ns *ns, nsid_ns_id *ret);
/* 1 if both name the same namespace, 0 if not, negative errno on bad arguments. */
int nsid_ns_equal(const nsid_ns *a, const nsid_ns *b);
/* The user namespace owning ns (NS_GET_USERNS). -EPERM when it is outside the caller's
 * scope. */
NSID_API_WARN_UNUSED int nsid_ns_get_userns(const nsid_ns *ns, nsid_ns **ret);
/* The uid that created the user namespace userns (NS_GET_OWNER_UID), as the caller's user
 * namespace sees it: for a daemon in the initial one, the host uid, also for a user namespace
 * nested in another (its creator's host uid). -EINVAL when userns is not a user namespace. */
NSID_API_WARN_UNUSED int nsid_ns_get_owner_uid(const nsid_ns *userns, uid_t *ret);
/* The parent of the user namespace userns (NS_GET_PARENT). -EPERM when it is outside the
 * caller's scope (userns is the caller's own, or an ancestor of it): the initial user
 * namespace has no parent. -EINVAL when userns is not a user namespace. */
NSID_API_WARN_UNUSED int nsid_ns_get_parent(const nsid_ns *userns, nsid_ns **ret);
/* Whether ns is the initial namespace of its type (compared with PID 1's as seen through
 * /proc/1/ns; 1 yes, 0 no). */
int nsid_ns_is_initial(const nsid_ns *ns);

/*
 * Processes. nsid_proc_open() pins pid with a pidfd and opens its /proc directory; both stay
 * open for the life of the handle.
 */
NSID_API_WARN_UNUSED int nsid_proc_open(pid_t pid, nsid_proc **ret);
/* The same, for a pidfd the caller already has (duplicated). */
NSID_API_WARN_UNUSED int nsid_proc_open_pidfd(int pidfd, nsid_proc **ret);
/* The calling process. */
NSID_API_WARN_UNUSED int nsid_proc_open_self(nsid_proc **ret);

nsid_proc *nsid_proc_ref(nsid_proc *p);
nsid_proc *nsid_proc_unref(nsid_proc *p);

pid_t nsid_proc_get_pid(const nsid_proc *p);
int nsid_proc_get_pidfd(const nsid_proc *p);
/* 0 while the process is alive, -ESRCH once it has exited. */
int nsid_proc_check_alive(const nsid_proc *p);

/* Open one of its namespaces; -ESRCH if the process exited (or the pid was recycled). */
NSID_API_WARN_UNUSED int nsid_proc_open_ns(const nsid_proc *p, nsid_ns_type type,
                                           nsid_ns **ret);
/* An O_PATH fd of its root directory (/proc/PID/root), checked like nsid_proc_open_ns(). */
NSID_API_WARN_UNUSED int nsid_proc_open_root(const nsid_proc *p, int *ret_fd);
/* Read a small file of its /proc directory ("comm", "cgroup", "uid_map", "mountinfo"...),
 * at most max bytes (-EFBIG beyond), NUL-terminated; checked like nsid_proc_open_ns(). */
NSID_API_WARN_UNUSED int nsid_proc_read_file(const nsid_proc *p, const char *name, size_t max,
                                             char **ret_data, size_t *ret_size);

#ifdef __cplusplus
}
#endif
#endif
