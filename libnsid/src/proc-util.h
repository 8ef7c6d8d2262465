/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small fd and /proc helpers shared by the library's modules. Internal. */
#ifndef NSID_PROC_UTIL_H
#define NSID_PROC_UTIL_H

#include <stddef.h>
#include <sys/types.h>

/* Read fd to EOF into a NUL-terminated malloc'ed buffer of at most max bytes; -EFBIG if the
 * file has more. Works for files whose st_size is 0 (procfs, sysfs). EAGAIN (an O_NONBLOCK
 * FIFO or socket with nothing to read) is returned as -EAGAIN. */
int read_fd_capped(int fd, size_t max, char **ret_data, size_t *ret_size);

/* The pid a pidfd refers to, from /proc/self/fdinfo ("Pid:" line); -ESRCH if it exited. */
int pidfd_get_pid(int pidfd, pid_t *ret);

#endif
