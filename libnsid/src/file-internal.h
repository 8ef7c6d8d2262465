/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a container's file without touching the heap. Internal. */
#ifndef NSID_FILE_INTERNAL_H
#define NSID_FILE_INTERNAL_H

#include <stddef.h>

/* nsid_file_read_in_root() into the caller's buf of max_size + 1 bytes (NUL-terminated; more
 * than max_size bytes is -EFBIG), with the same lookup, type checks and errors. Nothing is
 * allocated: a worker function (nsid/worker.h) runs in a fork()ed copy of a possibly
 * multithreaded program, where an allocator without fork handlers (ASan's) may have been
 * locked by another thread at the fork and would hang the child until its timeout. */
int file_read_in_root_buf(int rootfd, const char *path, char *buf, size_t max_size,
                          size_t *ret_size);

/* Where files are reopened (reopen_for_reading()): a worker child opens its own fd
 * directory, /proc/self/fd of the host's procfs (O_PATH, checked to be a procfs), with
 * file_procfs_open_self_fd() before it enters a container, and registers its number with
 * file_procfs_set(); from then on reopens go through it only, or fail (-ENOMEDIUM) when it
 * is negative. Outside workers each reopen opens the process's own (nsid's programs never
 * chroot outside a worker). Async-signal-safe. */
int file_procfs_open_self_fd(void);
void file_procfs_set(int fd);

#endif
