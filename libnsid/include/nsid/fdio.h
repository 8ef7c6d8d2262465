/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_FDIO_H
#define NSID_FDIO_H

#include <stddef.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Read fd (a pipe, socket, terminal or file, blocking or not) to EOF into a malloc'ed,
 * NUL-terminated buffer (free() it; the data may contain NULs: use ret_size, which may be
 * NULL), waiting at most timeout_ms in total: -ETIMEDOUT, then what was read is dropped.
 * More than max bytes is -EFBIG (one byte past max is read to tell). For input another
 * program writes, such as an OCI hook's state on stdin, where a writer that never closes
 * must not hang the reader. */
NSID_API_WARN_UNUSED int nsid_fd_read_timeout(int fd, size_t max, unsigned timeout_ms,
                                              char **ret_data, size_t *ret_size);

#ifdef __cplusplus
}
#endif
#endif
