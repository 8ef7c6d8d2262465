/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "std-fds.h"

int std_fds_ensure(void) {
        struct pollfd p[3] = { { .fd = 0 }, { .fd = 1 }, { .fd = 2 } };
        if (poll(p, 3, 0) < 0)
                for (int fd = 0; fd < 3; fd++)
                        p[fd].revents = fcntl(fd, F_GETFD) < 0 && errno == EBADF ? POLLNVAL : 0;
        for (int fd = 0; fd < 3; fd++) {
                if (!(p[fd].revents & POLLNVAL))
                        continue;
                int n = open("/dev/null", (fd == 0 ? O_RDONLY : O_WRONLY) | O_NOCTTY);
                if (n < 0)
                        return -errno;
                if (n != fd) {
                        /* (a lower one was open meanwhile: put it where it belongs) */
                        if (dup2(n, fd) < 0) {
                                int e = errno;
                                close(n);
                                return -e;
                        }
                        close(n);
                }
        }
        return 0;
}
