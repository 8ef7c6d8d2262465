/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading files that a container controls (nsid/file.h).
 *
 * Every lookup is one openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) relative to the
 * container's root fd: "..", absolute paths and absolute symlinks are all clamped to that root
 * by the kernel, and /proc magic links (/proc/self/root, /proc/PID/fd/N, ...) are refused with
 * ELOOP. The lookup opens an O_PATH fd only, so the file itself is never opened before its
 * type is known: a FIFO, a socket or a device node inside the container is refused from the
 * fstat() of the O_PATH fd, without running a driver's open() or blocking on a FIFO. A regular
 * file is then reopened for reading through the reader's own /proc/self/fd, opened from the
 * host's procfs before any container was entered (the same inode, no second path walk, so nothing can be swapped in
 * between; a worker chroot()ed into a container never looks at the container's /proc), and read with a size cap that applies to the
 * bytes actually read, not to st_size: a file that grows while it is read, or a procfs-like
 * file that reports size 0, still stops at the cap.
 *
 * Regular files on the kernel's pseudo-filesystems (procfs, sysfs, ...) are refused too: a
 * container that mounted a procfs of a pid namespace the reader is visible in (one sharing the
 * host's pids) could otherwise point etc/passwd at /proc/self/environ, which is not a magic
 * link but a file describing the READER, and have the host process's environment, mounts or
 * status read as its own data. No container configuration file lives on such a filesystem.
 *
 * What this does not protect against: a root on a mount whose lookups or reads never return
 * (a hung FUSE or NFS server). Such reads belong in a worker with a timeout (nsid/worker.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "file-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "nsid/file.h"
#include "nsid/ns.h"
#include "proc-util.h"

/* openat2() returns EAGAIN when it cannot rule out that a concurrent rename let ".." escape the
 * root; the caller is expected to retry. A container can provoke this on purpose, so give up
 * after a few rounds instead of looping for ever. */
#define OPENAT2_RETRIES 16

static int openat2_path_in_root(int rootfd, const char *path) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };

        for (unsigned i = 0;; i++) {
                long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return (int) fd;
                if (errno == EINTR)
                        continue;
                if (errno == EAGAIN && i < OPENAT2_RETRIES)
                        continue;
                return negative_errno();
        }
}

static const char *lookup_error_reason(int r) {
        switch (r) {
        case -ELOOP:
                return "symlink loop or /proc magic link";
        case -EXDEV:
                return "path escapes the root";
        case -ENOENT:
                return "no such file";
        case -ENOTDIR:
                return "a path component is not a directory";
        case -EACCES:
                return "permission denied";
        case -ENOSYS:
                return "kernel without openat2()";
        case -EAGAIN:
                return "lookup kept racing with renames";
        case -ENAMETOOLONG:
                return "name too long";
        default:
                return strerror(-r);
        }
}

static const char *file_type_name(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFDIR:
                return "a directory";
        case S_IFIFO:
                return "a FIFO";
        case S_IFSOCK:
                return "a socket";
        case S_IFCHR:
                return "a character device";
        case S_IFBLK:
                return "a block device";
        case S_IFLNK:
                return "a symlink";
        default:
                return "not a regular file";
        }
}

static void stat_to_file_stat(const struct stat *st, nsid_file_stat *ret) {
        *ret = (nsid_file_stat) {
                .dev = (uint64_t) st->st_dev,
                .ino = (uint64_t) st->st_ino,
                .mtime_nsec = (int64_t) st->st_mtim.tv_sec * 1000000000 +
                              (int64_t) st->st_mtim.tv_nsec,
                .size = (uint64_t) st->st_size,
        };
}

/* A kernel pseudo-filesystem whose files describe the kernel or the process reading them,
 * never container configuration. */
static bool is_kernel_pseudo_fs(int fd, const char **ret_name) {
        static const struct {
                unsigned long magic;
                const char *name;
        } fs[] = {
                { PROC_SUPER_MAGIC, "procfs" },     { SYSFS_MAGIC, "sysfs" },
                { DEBUGFS_MAGIC, "debugfs" },       { TRACEFS_MAGIC, "tracefs" },
                { SECURITYFS_MAGIC, "securityfs" }, { BPF_FS_MAGIC, "bpffs" },
                { CGROUP_SUPER_MAGIC, "cgroupfs" }, { CGROUP2_SUPER_MAGIC, "cgroup2fs" },
                { EFIVARFS_MAGIC, "efivarfs" },     { PSTOREFS_MAGIC, "pstore" },
                { SELINUX_MAGIC, "selinuxfs" },     { SMACK_MAGIC, "smackfs" },
                { NSFS_MAGIC, "nsfs" },             { BINFMTFS_MAGIC, "binfmt_misc" },
        };
        struct statfs sf;

        if (fstatfs(fd, &sf) < 0)
                return false; /* the type check stands; the read itself will fail if broken */
        for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
                if ((unsigned long) sf.f_type == fs[i].magic) {
                        *ret_name = fs[i].name;
                        return true;
                }
        return false;
}

/* Resolve path inside rootfd to an O_PATH fd of a regular file, with its stat. Logs the reason
 * of every refusal. */
static int open_regular_in_root(int rootfd, const char *path, int *ret_fd,
                                struct stat *ret_st) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = openat2_path_in_root(rootfd, path);
        if (fd < 0)
                return log_debug_errno(fd, "refusing to read %s in container root: %s", path,
                                       lookup_error_reason(fd));
        if (fstat(fd, &st) < 0)
                return log_debug_errno(errno, "cannot stat %s in container root: %s", path,
                                       strerror(errno));
        if (S_ISDIR(st.st_mode))
                return log_debug_errno(EISDIR, "refusing to read %s in container root: %s",
                                       path, file_type_name(st.st_mode));
        if (!S_ISREG(st.st_mode))
                return log_debug_errno(ENXIO, "refusing to read %s in container root: %s", path,
                                       file_type_name(st.st_mode));
        const char *fsname = NULL;
        if (is_kernel_pseudo_fs(fd, &fsname))
                return log_debug_errno(EMEDIUMTYPE,
                                       "refusing to read %s in container root: a file on %s",
                                       path, fsname);
        *ret_fd = TAKE_FD(fd);
        *ret_st = st;
        return 0;
}

/* The fd directory reopens go through: see file-internal.h. */
static int worker_procfs_fd = -EBADF;
static bool in_worker = false;

int file_procfs_open_self_fd(void) {
        struct statfs sf;
        int fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC) {
                close(fd);
                return -ENOMEDIUM;
        }
        return fd;
}

void file_procfs_set(int fd) {
        worker_procfs_fd = fd;
        in_worker = true;
}

/* Turn the O_PATH fd of a regular file into a readable fd of the same inode, through the
 * reader's own fd directory of the host's procfs, taken before any container was entered:
 * no second walk of the path, and nothing the container controls (its /proc) is looked up.
 * Any failure fails. */
static int reopen_for_reading(int pathfd, const struct stat *st, const char *path) {
        const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
        _cleanup_close_ int fd = -EBADF, own = -EBADF;
        char rel[16];
        struct stat st2;
        int procfd;

        if (in_worker)
                procfd = worker_procfs_fd;
        else
                procfd = own = file_procfs_open_self_fd();
        if (procfd < 0)
                return log_debug_errno(in_worker ? -ENOMEDIUM : procfd,
                                       "cannot reopen %s in container root: no procfs of the "
                                       "reader's own to reopen it through", path);
        (void) snprintf(rel, sizeof(rel), "%d", pathfd);
        fd = openat(procfd, rel, flags);
        if (fd < 0)
                return log_debug_errno(errno, "cannot open %s in container root: %s", path,
                                       strerror(errno));
        if (fstat(fd, &st2) < 0)
                return negative_errno();
        if (st2.st_dev != st->st_dev || st2.st_ino != st->st_ino)
                return log_debug_errno(ESTALE,
                                       "refusing to read %s in container root: it was replaced "
                                       "while being opened",
                                       path);
        return TAKE_FD(fd);
}

static int check_args(int rootfd, const char *path) {
        assert_return(rootfd >= 0, -EBADF);
        assert_return(path && *path, -EINVAL);
        return 0;
}

_public_ int nsid_file_stat_in_root(int rootfd, const char *path, nsid_file_stat *ret_stat) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        r = check_args(rootfd, path);
        if (r < 0)
                return r;
        assert_return(ret_stat, -EINVAL);

        r = open_regular_in_root(rootfd, path, &fd, &st);
        if (r < 0)
                return r;
        stat_to_file_stat(&st, ret_stat);
        return 0;
}

/* buf (max_size + 1 bytes) or, when NULL, a malloc'ed buffer returned in *ret_data. */
static int read_in_root(int rootfd, const char *path, size_t max_size, char *buf,
                        char **ret_data, size_t *ret_size, nsid_file_stat *ret_stat) {
        _cleanup_close_ int pathfd = -EBADF, fd = -EBADF;
        char *data = NULL;
        size_t size = 0;
        struct stat st;
        int r;

        r = check_args(rootfd, path);
        if (r < 0)
                return r;
        assert_return(buf || ret_data, -EINVAL);
        if (max_size == 0)
                max_size = NSID_FILE_MAX_DEFAULT;
        assert_return(max_size < SIZE_MAX / 2, -EINVAL);

        r = open_regular_in_root(rootfd, path, &pathfd, &st);
        if (r < 0)
                return r;
        /* A file that already claims more than the cap is refused without reading any of it
         * (a 1 GiB sparse file costs one fstat). st_size is only a hint: the read below
         * enforces the cap on what actually comes back. */
        if (st.st_size < 0 || (uint64_t) st.st_size > (uint64_t) max_size)
                return log_debug_errno(EFBIG,
                                       "refusing to read %s in container root: %lld bytes, "
                                       "more than the limit of %zu",
                                       path, (long long) st.st_size, max_size);

        fd = reopen_for_reading(pathfd, &st, path);
        if (fd < 0)
                return fd;

        r = read_fd_deadline(fd, max_size, READ_NO_DEADLINE, false, buf, &data, &size);
        if (r == -EFBIG)
                return log_debug_errno(r,
                                       "refusing to read %s in container root: it grew past "
                                       "the limit of %zu bytes while being read",
                                       path, max_size);
        if (r < 0)
                return log_debug_errno(r, "cannot read %s in container root: %s", path,
                                       strerror(-r));

        /* The stat taken before reading: if the file changes after it, a later
         * nsid_file_stat_in_root() differs from it and a cached copy is reloaded. */
        if (ret_stat)
                stat_to_file_stat(&st, ret_stat);
        if (ret_data)
                *ret_data = data;
        if (ret_size)
                *ret_size = size;
        return 0;
}

_public_ int nsid_file_read_in_root(int rootfd, const char *path, size_t max_size,
                                    char **ret_data, size_t *ret_size,
                                    nsid_file_stat *ret_stat) {
        assert_return(ret_data, -EINVAL);
        return read_in_root(rootfd, path, max_size, NULL, ret_data, ret_size, ret_stat);
}

int file_read_in_root_buf(int rootfd, const char *path, char *buf, size_t max_size,
                          size_t *ret_size) {
        assert_return(buf && max_size > 0, -EINVAL);
        return read_in_root(rootfd, path, max_size, buf, NULL, ret_size, NULL);
}

_public_ int nsid_proc_read_root_file(const nsid_proc *p, const char *path, size_t max_size,
                                      char **ret_data, size_t *ret_size,
                                      nsid_file_stat *ret_stat) {
        _cleanup_close_ int rootfd = -EBADF;
        nsid_file_stat st;
        char *data = NULL;
        size_t size = 0;
        int r;

        assert_return(p, -EINVAL);
        assert_return(path && *path, -EINVAL);
        assert_return(ret_data, -EINVAL);

        r = nsid_proc_open_root(p, &rootfd);
        if (r == -ENOENT) {
                /* /proc/PID/root of a live process always resolves; ENOENT means the process
                 * has exited and is a zombie (its fs_struct is gone). */
                r = nsid_proc_check_alive(p);
                return log_debug_errno(r < 0 ? r : -ESRCH,
                                       "process %d has exited, cannot read %s in its root",
                                       (int) nsid_proc_get_pid(p), path);
        }
        if (r < 0)
                return r;

        r = nsid_file_read_in_root(rootfd, path, max_size, &data, &size, &st);
        if (r < 0)
                return r;

        /* The root was pinned while the process was alive; confirm it still is, so that a
         * container that went away is reported as gone rather than answered for. */
        r = nsid_proc_check_alive(p);
        if (r < 0) {
                free(data);
                return log_debug_errno(r, "process %d exited while %s was read in its root",
                                       (int) nsid_proc_get_pid(p), path);
        }

        *ret_data = data;
        if (ret_size)
                *ret_size = size;
        if (ret_stat)
                *ret_stat = st;
        return 0;
}

int tmpfile_open(int dfd, const char *tmpname, bool *ret_named) {
        int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0) {
                *ret_named = false;
                return fd;
        }
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
                return -errno;
        fd = openat(dfd, tmpname, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        *ret_named = true;
        return fd;
}

int tmpfile_name(int dfd, int fd, bool named, const char *tmpname) {
        char procpath[64];

        if (named)
                return 0;
        snprintf(procpath, sizeof(procpath), "/proc/self/fd/%d", fd);
        return linkat(AT_FDCWD, procpath, dfd, tmpname, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}
