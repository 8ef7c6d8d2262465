/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_FILE_H
#define NSID_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Reading files a container controls. Paths are resolved with openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS) relative to the container's root, so "..", absolute paths and
 * absolute or relative symlinks all stay inside it, and /proc magic links are refused. The
 * lookup itself opens nothing but an O_PATH handle: a FIFO, socket or device node is refused
 * from its type without being opened (no blocking, no driver side effects). Only regular
 * files are read, at most max_size bytes: the cap applies to the bytes actually read, so a
 * file that grows while read or a procfs-like file reporting size 0 is still bounded, and a
 * file whose size already exceeds the cap (a 1 GiB sparse file) is refused without reading.
 * Each refusal is logged at debug level with the path and the reason.
 *
 * Errors: -ELOOP (magic link or symlink loop), -EXDEV (path escapes the root; RESOLVE_IN_ROOT
 * clamps instead, so this is not expected), -EISDIR (a directory), -ENXIO (FIFO, socket or
 * device: not a regular file), -EFBIG (larger than max_size), -ENOENT, -ENOTDIR, -EACCES,
 * -EMEDIUMTYPE (a file on a kernel pseudo-filesystem: procfs, sysfs, cgroupfs, ... whose
 * files describe the kernel or the reading process, e.g. /proc/self/environ through a procfs
 * the container mounted), -ESTALE (the file was replaced between lookup and open), -EAGAIN (lookups kept racing with
 * renames in the container), -ENOSYS (kernel without openat2, < 5.6: no unsafe fallback),
 * -EBADF/-EINVAL (bad arguments), or another negative errno.
 *
 * Not covered: a root on a mount that never answers (hung FUSE/NFS) blocks the caller; read
 * such roots from a forked worker with a timeout.
 */

#define NSID_FILE_MAX_DEFAULT (4u * 1024u * 1024u)

typedef struct nsid_file_stat {
        uint64_t dev;
        uint64_t ino;
        int64_t mtime_nsec; /* st_mtim as nanoseconds */
        uint64_t size;
} nsid_file_stat;

/* Read path (relative to rootfd, or absolute meaning "from rootfd"; rootfd may be an O_PATH
 * directory fd) into a malloc'ed NUL-terminated buffer (the data may contain NULs: use
 * ret_size). max_size 0 means NSID_FILE_MAX_DEFAULT. ret_size and ret_stat may be NULL;
 * ret_stat is the file's stat taken before reading, so a change during or after the read makes
 * a later nsid_file_stat_in_root() differ from it. */
NSID_API_WARN_UNUSED int nsid_file_read_in_root(int rootfd, const char *path, size_t max_size,
                                                char **ret_data, size_t *ret_size,
                                                nsid_file_stat *ret_stat);
/* Only the stat of such a file (same lookup and type checks, no size cap, nothing opened
 * for reading), to see whether a cached copy is stale. */
NSID_API_WARN_UNUSED int nsid_file_stat_in_root(int rootfd, const char *path,
                                                nsid_file_stat *ret_stat);
/* Convenience: the same inside a process's root (/proc/PID/root, pinned by p's pidfd).
 * -ESRCH when the process has exited (also as an unreaped zombie) before or while the file
 * is read. The guarantee is "the same process", not "the same program": a process that
 * exec()s keeps its pid, pidfd and root, and is still read. */
NSID_API_WARN_UNUSED int nsid_proc_read_root_file(const nsid_proc *p, const char *path,
                                                  size_t max_size, char **ret_data,
                                                  size_t *ret_size, nsid_file_stat *ret_stat);

#ifdef __cplusplus
}
#endif
#endif
