/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <unistd.h>

#include "fd-util.h"

int write_all(int fd, const void *p, size_t n) {
        const char *c = p;

        while (n > 0) {
                ssize_t k = write(fd, c, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO;
                c += k;
                n -= (size_t) k;
        }
        return 0;
}
