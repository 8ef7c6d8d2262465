/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "parse-util.h"
#include "proc-util.h"

int open_regular_at(int dfd, const char *path, int extra_flags, struct stat *ret_st) {
        int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags);

        if (fd < 0)
                return negative_errno();
        if (fstat(fd, ret_st) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        if (!S_ISREG(ret_st->st_mode)) {
                close(fd);
                return -ENXIO;
        }
        return fd;
}

int read_fd_capped(int fd, size_t max, char **ret_data, size_t *ret_size) {
        return read_fd_deadline(fd, max, READ_NO_DEADLINE, false, NULL, ret_data, ret_size);
}

uint64_t now_monotonic_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

int fd_wait_deadline(int fd, short events, uint64_t deadline_ms) {
        uint64_t now = now_monotonic_ms();
        struct pollfd p = { .fd = fd, .events = events };
        int r;

        if (now >= deadline_ms)
                return -ETIMEDOUT;
        r = poll(&p, 1, deadline_ms - now > INT_MAX ? INT_MAX : (int) (deadline_ms - now));
        if (r < 0)
                return errno == EINTR ? 0 : negative_errno();
        return r; /* 0: woken up within the deadline's last millisecond */
}

int read_fd_deadline(int fd, size_t max, uint64_t deadline_ms, bool stop_at_newline, char *buf,
                     char **ret_data, size_t *ret_size) {
        _cleanup_free_ char *owned = NULL;
        size_t size = 0, cap; /* cap: the data bytes buf holds now, without the NUL */

        if (fd < 0)
                return -EBADF;
        if (max >= SIZE_MAX - 1 || (!buf && !ret_data))
                return -EINVAL;
        if (buf)
                cap = max;
        else {
                cap = max < 4095 ? max : 4095;
                owned = malloc(cap + 1);
                if (!owned)
                        return -ENOMEM;
                buf = owned;
        }
        for (;;) {
                char beyond; /* full at max: one byte more proves the data too long */
                ssize_t k;

                if (deadline_ms != READ_NO_DEADLINE) {
                        int r = fd_wait_deadline(fd, POLLIN, deadline_ms);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;
                }
                if (owned && size == cap && cap < max) {
                        size_t ncap = cap > (max - 1) / 2 ? max : cap * 2 + 1;
                        char *nb = realloc(owned, ncap + 1);
                        if (!nb)
                                return -ENOMEM;
                        buf = owned = nb;
                        cap = ncap;
                }
                if (size < cap)
                        k = read(fd, buf + size, cap - size);
                else
                        k = read(fd, &beyond, 1);
                if (k < 0) {
                        if (errno == EINTR || (errno == EAGAIN && deadline_ms != READ_NO_DEADLINE))
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                if (size == cap)
                        return -EFBIG;
                if (stop_at_newline) {
                        const char *nl = memchr(buf + size, '\n', (size_t) k);
                        if (nl) {
                                size = (size_t) (nl - buf) + 1;
                                break;
                        }
                }
                size += (size_t) k;
                if (stop_at_newline && size == max)
                        return -EFBIG;
        }
        buf[size] = '\0';
        if (ret_data)
                *ret_data = owned ? TAKE_PTR(owned) : buf;
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

int pidfd_check_alive(int pidfd) {
        /* a pidfd becomes readable when its process exits */
        struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
        int n;

        do
                n = poll(&pfd, 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n > 0 && (pfd.revents & (POLLIN | POLLHUP)))
                return -ESRCH;
        if (n > 0 && (pfd.revents & POLLNVAL))
                return -EBADF;
        return 0;
}

int proc_stat_parse_starttime(const char *text, size_t len, uint64_t *ret) {
        const char *p = NULL, *end = text + len;
        uint64_t v;

        if (!text || !ret)
                return -EINVAL;
        for (const char *q = text; q < end; q++) /* the last ')' ends the command name */
                if (*q == ')')
                        p = q;
        if (!p || p + 1 >= end || p[1] != ' ')
                return -EINVAL;
        p += 2; /* field 3, the state */
        for (int field = 3; field < 22; field++) {
                const char *sp = memchr(p, ' ', (size_t) (end - p));
                if (!sp || sp == p)
                        return -EINVAL;
                p = sp + 1;
        }
        const char *fe = p;
        while (fe < end && *fe != ' ' && *fe != '\n')
                fe++;
        if (parse_u64_n(p, (size_t) (fe - p), UINT64_MAX, &v) < 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int proc_status_parse_tgid(const char *text, size_t len, pid_t *ret) {
        static const char key[] = "Tgid:";
        uint64_t v;

        if (!text || !ret)
                return -EINVAL;
        for (size_t off = 0; off < len;) {
                const char *nl = memchr(text + off, '\n', len - off);
                size_t ll = nl ? (size_t) (nl - (text + off)) : len - off;
                const char *l = text + off;
                if (ll > sizeof(key) - 1 && memcmp(l, key, sizeof(key) - 1) == 0) {
                        size_t i = sizeof(key) - 1;
                        while (i < ll && (l[i] == '\t' || l[i] == ' '))
                                i++;
                        if (parse_u64_n_canonical(l + i, ll - i, 4194304, &v) < 0 || v == 0)
                                return -EINVAL;
                        *ret = (pid_t) v;
                        return 0;
                }
                off += ll + 1;
        }
        return -EINVAL;
}
