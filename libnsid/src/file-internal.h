/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a container's file without touching the heap. Internal. */
#ifndef NSID_FILE_INTERNAL_H
#define NSID_FILE_INTERNAL_H

#include <stdbool.h>
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

/* A new file of mode 0600 in directory dfd, written and then given its name: O_TMPFILE (no
 * name until tmpfile_name()) where the file system has it, else a file made at tmpname with
 * O_EXCL (overlayfs before Linux 6.6, some network file systems: EOPNOTSUPP; seen under the
 * 6.1 lab kernel, where `nsidctl host-secret new` failed in /var/lib). *ret_named says which.
 * The fd, or -errno. */
int tmpfile_open(int dfd, const char *tmpname, bool *ret_named);
/* Make the file of fd (from tmpfile_open()) present as tmpname in dfd: a link of the
 * O_TMPFILE (never replacing: -EEXIST), or nothing when it is there already. */
int tmpfile_name(int dfd, int fd, bool named, const char *tmpname);

#endif
