/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/fdio.h: reading a descriptor whole, within a deadline. */
#include <errno.h>
#include <stdint.h>

#include <nsid/fdio.h>

#include "macro.h"
#include "proc-util.h"

_public_ int nsid_fd_read_timeout(int fd, size_t max, unsigned timeout_ms, char **ret_data,
                                  size_t *ret_size) {
        assert_return(fd >= 0, -EBADF);
        assert_return(max < SIZE_MAX - 1, -EINVAL);
        assert_return(ret_data, -EINVAL);
        return read_fd_deadline(fd, max, now_monotonic_ms() + timeout_ms, false, NULL, ret_data,
                                ret_size);
}
