/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Namespace handles (nsfs fds) and process handles (pidfd + /proc/PID dirfd). */
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "log-internal.h"
#include "macro.h"
#include "nsid/ns.h"
#include "parse-util.h"
#include "proc-util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

struct nsid_ns {
        unsigned n_ref;
        int fd;
        nsid_ns_type type;
        nsid_ns_id id;
};

struct nsid_proc {
        unsigned n_ref;
        pid_t pid;
        int pidfd;
        int procfd; /* /proc/PID, pins the same struct pid as pidfd */
};

/* The one table of namespace kinds. */
static const struct {
        const char *name;
        int clone_flag;
} ns_table[_NSID_NS_TYPE_MAX] = {
        [NSID_NS_NET] = { "net", CLONE_NEWNET },
        [NSID_NS_USER] = { "user", CLONE_NEWUSER },
        [NSID_NS_MNT] = { "mnt", CLONE_NEWNS },
        [NSID_NS_UTS] = { "uts", CLONE_NEWUTS },
        [NSID_NS_PID] = { "pid", CLONE_NEWPID },
        [NSID_NS_IPC] = { "ipc", CLONE_NEWIPC },
        [NSID_NS_CGROUP] = { "cgroup", CLONE_NEWCGROUP },
        [NSID_NS_TIME] = { "time", CLONE_NEWTIME },
};

static bool ns_type_valid(nsid_ns_type t) {
        return (int) t >= 0 && t < _NSID_NS_TYPE_MAX;
}

_public_ const char *nsid_ns_type_name(nsid_ns_type type) {
        return ns_type_valid(type) ? ns_table[type].name : NULL;
}

_public_ int nsid_ns_type_clone_flag(nsid_ns_type type) {
        return ns_type_valid(type) ? ns_table[type].clone_flag : 0;
}

_public_ int nsid_ns_type_from_name(const char *name) {
        assert_return(name, -EINVAL);
        for (int t = 0; t < _NSID_NS_TYPE_MAX; t++)
                if (strcmp(ns_table[t].name, name) == 0)
                        return t;
        return -EINVAL;
}

static int ns_type_from_clone_flag(int flag) {
        for (int t = 0; t < _NSID_NS_TYPE_MAX; t++)
                if (ns_table[t].clone_flag == flag)
                        return t;
        return -EINVAL;
}

/* Takes ownership of fd on success and on failure. */
static int ns_new_take_fd(int fd, nsid_ns_type expected, nsid_ns **ret) {
        _cleanup_close_ int owned = fd;
        struct statfs sfs;
        struct stat st;
        int flag, type;

        if (fstatfs(owned, &sfs) < 0 || fstat(owned, &st) < 0)
                return negative_errno();
        if ((unsigned long) sfs.f_type != NSFS_MAGIC)
                return log_debug_errno(EMEDIUMTYPE, "fd %d is not a namespace file", owned);

        flag = ioctl(owned, NS_GET_NSTYPE);
        if (flag < 0)
                return negative_errno();
        type = ns_type_from_clone_flag(flag);
        if (type < 0)
                return log_debug_errno(EOPNOTSUPP, "unknown namespace type 0x%x", flag);
        if (expected != NSID_NS_ANY && type != (int) expected)
                return log_debug_errno(EINVAL, "namespace is of type %s, expected %s",
                                       ns_table[type].name, ns_table[expected].name);

        nsid_ns *ns = calloc(1, sizeof(*ns));
        if (!ns)
                return -ENOMEM;
        ns->n_ref = 1;
        ns->fd = TAKE_FD(owned);
        ns->type = (nsid_ns_type) type;
        ns->id.dev = (uint64_t) st.st_dev;
        ns->id.ino = (uint64_t) st.st_ino;
        *ret = ns;
        return 0;
}

_public_ int nsid_ns_open_path(const char *path, nsid_ns_type type, nsid_ns **ret) {
        assert_return(path, -EINVAL);
        assert_return(type == NSID_NS_ANY || ns_type_valid(type), -EINVAL);
        assert_return(ret, -EINVAL);

        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return log_debug_errno(errno, "cannot open namespace %s: %s", path,
                                       strerror(errno));
        return ns_new_take_fd(fd, type, ret);
}

_public_ int nsid_ns_open_fd(int fd, nsid_ns_type type, nsid_ns **ret) {
        assert_return(fd >= 0, -EBADF);
        assert_return(type == NSID_NS_ANY || ns_type_valid(type), -EINVAL);
        assert_return(ret, -EINVAL);

        int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return negative_errno();
        return ns_new_take_fd(copy, type, ret);
}

_public_ nsid_ns *nsid_ns_ref(nsid_ns *ns) {
        if (ns)
                __atomic_add_fetch(&ns->n_ref, 1, __ATOMIC_RELAXED);
        return ns;
}

_public_ nsid_ns *nsid_ns_unref(nsid_ns *ns) {
        if (!ns)
                return NULL;
        if (__atomic_sub_fetch(&ns->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        safe_close(ns->fd);
        free(ns);
        return NULL;
}

_public_ int nsid_ns_get_fd(const nsid_ns *ns) {
        assert_return(ns, -EINVAL);
        return ns->fd;
}

_public_ nsid_ns_type nsid_ns_get_type(const nsid_ns *ns) {
        assert_return(ns, NSID_NS_ANY);
        return ns->type;
}

_public_ int nsid_ns_get_id(const nsid_ns *ns, nsid_ns_id *ret) {
        assert_return(ns, -EINVAL);
        assert_return(ret, -EINVAL);
        *ret = ns->id;
        return 0;
}

_public_ int nsid_ns_equal(const nsid_ns *a, const nsid_ns *b) {
        assert_return(a, -EINVAL);
        assert_return(b, -EINVAL);
        return a->type == b->type && a->id.dev == b->id.dev && a->id.ino == b->id.ino;
}

_public_ int nsid_ns_get_userns(const nsid_ns *ns, nsid_ns **ret) {
        assert_return(ns, -EINVAL);
        assert_return(ret, -EINVAL);

        int fd = ioctl(ns->fd, NS_GET_USERNS);
        if (fd < 0)
                return log_debug_errno(errno, "cannot get owning user namespace of %s:[%llu]: %s",
                                       ns_table[ns->type].name,
                                       (unsigned long long) ns->id.ino, strerror(errno));
        return ns_new_take_fd(fd, NSID_NS_USER, ret);
}

_public_ int nsid_ns_get_parent(const nsid_ns *userns, nsid_ns **ret) {
        assert_return(userns, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(userns->type == NSID_NS_USER, -EINVAL);

        int fd = ioctl(userns->fd, NS_GET_PARENT);
        if (fd < 0)
                return log_debug_errno(errno, "cannot get the parent of user:[%llu]: %s",
                                       (unsigned long long) userns->id.ino, strerror(errno));
        return ns_new_take_fd(fd, NSID_NS_USER, ret);
}

_public_ int nsid_ns_get_owner_uid(const nsid_ns *userns, uid_t *ret) {
        uid_t uid;
        assert_return(userns, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(userns->type == NSID_NS_USER, -EINVAL);

        if (ioctl(userns->fd, NS_GET_OWNER_UID, &uid) < 0)
                return log_debug_errno(errno, "cannot get the owner of user:[%llu]: %s",
                                       (unsigned long long) userns->id.ino, strerror(errno));
        *ret = uid;
        return 0;
}

/* Inode numbers the kernel reserves for its initial namespaces (include/linux/proc_ns.h).
 * Dynamic inode numbers start at 0xF0000000, so no other namespace can have these. Before
 * Linux 6.x the initial net and mnt namespaces had dynamic numbers: 0 = unknown. */
static const uint32_t ns_init_ino[_NSID_NS_TYPE_MAX] = {
        [NSID_NS_IPC] = 0xEFFFFFFFU,  [NSID_NS_UTS] = 0xEFFFFFFEU,
        [NSID_NS_USER] = 0xEFFFFFFDU, [NSID_NS_PID] = 0xEFFFFFFCU,
        [NSID_NS_CGROUP] = 0xEFFFFFFBU, [NSID_NS_TIME] = 0xEFFFFFFAU,
        [NSID_NS_NET] = 0xEFFFFFF9U,  [NSID_NS_MNT] = 0xEFFFFFF8U,
};

_public_ uint32_t nsid_ns_type_initial_ino(nsid_ns_type type) {
        if ((int) type < 0 || type >= _NSID_NS_TYPE_MAX)
                return 0;
        return ns_init_ino[type];
}

/* Whether this kernel gives the initial namespace of type its reserved inode: always for
 * the old types; for net and mnt only on newer kernels, which we know when any namespace of
 * that type we can see (our own) carries the reserved number. */
static bool kernel_reserves_init_ino(nsid_ns_type type) {
        char path[32];
        struct stat st;

        if (type != NSID_NS_NET && type != NSID_NS_MNT)
                return true;
        (void) snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_table[type].name);
        return stat(path, &st) == 0 && (uint64_t) st.st_ino == ns_init_ino[type];
}

_public_ int nsid_ns_is_initial(const nsid_ns *ns) {
        char path[32];
        struct stat st;

        assert_return(ns, -EINVAL);
        if (ns->id.ino == ns_init_ino[ns->type])
                return 1;
        /* Otherwise compare with the namespace of PID 1 (of the caller's pid namespace).
         * That needs ptrace-read access to PID 1; without it, a kernel whose initial
         * namespace of this type has a reserved inode number has answered above. */
        (void) snprintf(path, sizeof(path), "/proc/1/ns/%s", ns_table[ns->type].name);
        if (stat(path, &st) < 0) {
                if ((errno == EACCES || errno == EPERM) && kernel_reserves_init_ino(ns->type))
                        return 0;
                return log_debug_errno(errno, "cannot tell whether %s:[%llu] is initial: %s",
                                       ns_table[ns->type].name,
                                       (unsigned long long) ns->id.ino, strerror(errno));
        }
        return (uint64_t) st.st_dev == ns->id.dev && (uint64_t) st.st_ino == ns->id.ino;
}

/* ---- processes ---- */

static int proc_check_alive(const nsid_proc *p) {
        return pidfd_check_alive(p->pidfd);
}

/* pidfd is owned by the new object (also on failure). */
static int proc_new_take_pidfd(int pidfd, pid_t pid, nsid_proc **ret) {
        _cleanup_close_ int owned = pidfd;
        _cleanup_close_ int procfd = -EBADF;
        char path[32];
        int r;

        (void) snprintf(path, sizeof(path), "/proc/%d", (int) pid);
        procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (procfd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();

        nsid_proc *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->n_ref = 1;
        p->pid = pid;
        p->pidfd = TAKE_FD(owned);
        p->procfd = TAKE_FD(procfd);

        /* The pid may have been recycled between pidfd_open() and open(/proc/PID): if the
         * pinned process is still alive, /proc/PID is its directory. */
        r = proc_check_alive(p);
        if (r < 0) {
                nsid_proc_unref(p);
                return log_debug_errno(r, "process %d exited while being opened", (int) pid);
        }
        *ret = p;
        return 0;
}

_public_ int nsid_proc_open(pid_t pid, nsid_proc **ret) {
        assert_return(pid > 0, -EINVAL);
        assert_return(ret, -EINVAL);

        int pidfd = pidfd_open(pid, 0);
        if (pidfd < 0)
                return log_debug_errno(errno, "cannot pin process %d: %s", (int) pid,
                                       strerror(errno));
        return proc_new_take_pidfd(pidfd, pid, ret);
}

_public_ int nsid_proc_open_pidfd(int pidfd, nsid_proc **ret) {
        pid_t pid;
        int copy, r;

        assert_return(pidfd >= 0, -EBADF);
        assert_return(ret, -EINVAL);

        r = pidfd_get_pid(pidfd, &pid);
        if (r < 0)
                return r;
        copy = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return negative_errno();
        return proc_new_take_pidfd(copy, pid, ret);
}

_public_ int nsid_proc_open_self(nsid_proc **ret) {
        return nsid_proc_open(getpid(), ret);
}

_public_ nsid_proc *nsid_proc_ref(nsid_proc *p) {
        if (p)
                __atomic_add_fetch(&p->n_ref, 1, __ATOMIC_RELAXED);
        return p;
}

_public_ nsid_proc *nsid_proc_unref(nsid_proc *p) {
        if (!p)
                return NULL;
        if (__atomic_sub_fetch(&p->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        safe_close(p->pidfd);
        safe_close(p->procfd);
        free(p);
        return NULL;
}

_public_ pid_t nsid_proc_get_pid(const nsid_proc *p) {
        assert_return(p, -EINVAL);
        return p->pid;
}

_public_ int nsid_proc_get_pidfd(const nsid_proc *p) {
        assert_return(p, -EINVAL);
        return p->pidfd;
}

_public_ int nsid_proc_check_alive(const nsid_proc *p) {
        assert_return(p, -EINVAL);
        return proc_check_alive(p);
}

/* Open a file below /proc/PID, then confirm the process is still the pinned one. */
static int proc_openat(const nsid_proc *p, const char *name, int flags) {
        _cleanup_close_ int fd = openat(p->procfd, name, flags | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT || errno == ESRCH ? (proc_check_alive(p) < 0 ? -ESRCH : -ENOENT)
                                                         : negative_errno();
        int r = proc_check_alive(p);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

static bool proc_name_ok(const char *name) {
        if (!name || !*name || name[0] == '/')
                return false;
        for (const char *s = name; *s;) {
                size_t n = strcspn(s, "/");
                if ((n == 2 && s[0] == '.' && s[1] == '.') || n == 0)
                        return false;
                s += n;
                if (*s == '/')
                        s++;
        }
        return true;
}

_public_ int nsid_proc_open_ns(const nsid_proc *p, nsid_ns_type type, nsid_ns **ret) {
        char name[16];
        int fd;

        assert_return(p, -EINVAL);
        assert_return(ns_type_valid(type), -EINVAL);
        assert_return(ret, -EINVAL);

        (void) snprintf(name, sizeof(name), "ns/%s", ns_table[type].name);
        fd = proc_openat(p, name, O_RDONLY);
        if (fd < 0)
                return log_debug_errno(fd, "cannot open %s namespace of process %d: %s",
                                       ns_table[type].name, (int) p->pid, strerror(-fd));
        return ns_new_take_fd(fd, type, ret);
}

_public_ int nsid_proc_open_root(const nsid_proc *p, int *ret_fd) {
        assert_return(p, -EINVAL);
        assert_return(ret_fd, -EINVAL);

        int fd = proc_openat(p, "root", O_PATH | O_DIRECTORY);
        if (fd < 0)
                return log_debug_errno(fd, "cannot open root of process %d: %s", (int) p->pid,
                                       strerror(-fd));
        *ret_fd = fd;
        return 0;
}

_public_ int nsid_proc_read_file(const nsid_proc *p, const char *name, size_t max,
                                 char **ret_data, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        char *data = NULL;
        size_t size = 0;
        int r;

        assert_return(p, -EINVAL);
        assert_return(proc_name_ok(name), -EINVAL);
        assert_return(max > 0, -EINVAL);
        assert_return(ret_data, -EINVAL);

        fd = proc_openat(p, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return log_debug_errno(fd, "cannot open /proc/%d/%s: %s", (int) p->pid, name,
                                       strerror(-fd));
        r = read_fd_capped(fd, max, &data, &size);
        if (r < 0)
                return log_debug_errno(r, "cannot read /proc/%d/%s: %s", (int) p->pid, name,
                                       strerror(-r));
        /* The content must have come from the pinned process. */
        r = proc_check_alive(p);
        if (r < 0) {
                free(data);
                return r;
        }
        *ret_data = data;
        if (ret_size)
                *ret_size = size;
        return 0;
}
