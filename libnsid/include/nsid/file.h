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
 * RESOLVE_NO_MAGICLINKS) relative to the container's root, so absolute and relative symlinks
 * stay inside it and /proc magic links are refused. Only regular files are read, opened with
 * O_NONBLOCK (a FIFO never blocks the caller), and at most max_size bytes.
 *
 * Errors: -ELOOP (magic link or symlink loop), -EXDEV (path escapes the root), -EISDIR (a
 * directory), -ENXIO (FIFO, socket or device: not a regular file), -EFBIG (larger than
 * max_size), -ENOENT, -EACCES, -ENOSYS (kernel without openat2), or another negative errno.
 */

#define NSID_FILE_MAX_DEFAULT (4u * 1024u * 1024u)

typedef struct nsid_file_stat {
        uint64_t dev;
        uint64_t ino;
        int64_t mtime_nsec; /* st_mtim as nanoseconds */
        uint64_t size;
} nsid_file_stat;

/* Read path (relative to rootfd, or absolute meaning "from rootfd") into a NUL-terminated
 * buffer. max_size 0 means NSID_FILE_MAX_DEFAULT. ret_stat may be NULL. */
NSID_API_WARN_UNUSED int nsid_file_read_in_root(int rootfd, const char *path, size_t max_size,
                                                char **ret_data, size_t *ret_size,
                                                nsid_file_stat *ret_stat);
/* Only the stat of such a file (same checks), to see whether a cached copy is stale. */
NSID_API_WARN_UNUSED int nsid_file_stat_in_root(int rootfd, const char *path,
                                                nsid_file_stat *ret_stat);
/* Convenience: the same inside a process's root (pinned by p). */
NSID_API_WARN_UNUSED int nsid_proc_read_root_file(const nsid_proc *p, const char *path,
                                                  size_t max_size, char **ret_data,
                                                  size_t *ret_size, nsid_file_stat *ret_stat);

#ifdef __cplusplus
}
#endif
#endif
