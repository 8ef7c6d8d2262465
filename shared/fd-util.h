/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing a whole buffer to a descriptor (a pipe, a socket), for the programs. */
#ifndef NSID_SHARED_FD_UTIL_H
#define NSID_SHARED_FD_UTIL_H

#include <stddef.h>

/* Write all n bytes of p to fd, again after EINTR and short writes. 0, or -errno (-EPIPE
 * when the reader is gone and SIGPIPE is ignored). */
int write_all(int fd, const void *p, size_t n);

#endif
