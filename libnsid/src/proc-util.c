/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "parse-util.h"
#include "proc-util.h"

int read_fd_capped(int fd, size_t max, char **ret_data, size_t *ret_size) {
        /* Read up to max + 1 bytes: one byte past the cap proves the file is too big without
         * reading the rest of it. The buffer keeps one byte for the terminating NUL. */
        size_t limit = max + 1, alloc = limit < 4096 ? limit + 1 : 4096, size = 0;
        _cleanup_free_ char *buf = NULL;

        if (max >= SIZE_MAX - 2)
                return -EINVAL;
        buf = malloc(alloc);
        if (!buf)
                return -ENOMEM;
        while (size < limit) {
                if (size == alloc - 1) {
                        size_t n = alloc * 2 > limit + 1 ? limit + 1 : alloc * 2;
                        char *nb = realloc(buf, n);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = n;
                }
                ssize_t k = read(fd, buf + size, alloc - 1 - size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                size += (size_t) k;
        }
        if (size > max)
                return -EFBIG;
        buf[size] = 0;
        *ret_data = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int pidfd_get_pid(int pidfd, pid_t *ret) {
        char path[64], line[256];
        FILE *f;
        int r = -ENOTTY;

        (void) snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        f = fopen(path, "re");
        if (!f)
                return negative_errno();
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "Pid:\t", 5) != 0)
                        continue;
                line[strcspn(line, "\n")] = 0;
                if (strcmp(line + 5, "-1") == 0 || strcmp(line + 5, "0") == 0) {
                        r = -ESRCH; /* exited (or not in our pid namespace) */
                        break;
                }
                int pid;
                r = parse_pid(line + 5, &pid);
                if (r >= 0) {
                        *ret = pid;
                        r = 0;
                }
                break;
        }
        fclose(f);
        return r;
}
