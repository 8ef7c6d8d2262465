/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid-idmapd control socket: the client's round trip (nsid/ctlproto.h). Linked into
 * nsid-idmap's per-upcall fast path: system calls only, no library beyond libc. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <nsid/ctlproto.h>

#include "macro.h"
#include "proc-util.h"

static int send_all(int fd, const char *p, size_t len, uint64_t deadline_ms) {
        /* Send first: a fresh local stream socket takes a request line at once; poll only
         * when the peer's queue is full. */
        while (len > 0) {
                ssize_t k = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k >= 0) {
                        p += k;
                        len -= (size_t) k;
                        continue;
                }
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return negative_errno();
                int r;
                do
                        r = fd_wait_deadline(fd, POLLOUT, deadline_ms);
                while (r == 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int ctl_connect(const char *socket_path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        size_t pl;

        pl = strlen(socket_path);
        if (pl == 0)
                return -EINVAL;
        if (pl >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, socket_path, pl);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        /* A local stream connect completes at once or fails: -ENOENT or -ECONNREFUSED (no
         * daemon), -EAGAIN (its listen backlog is full). */
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

static int ctl_write(int fd, const char *request, size_t len, uint64_t deadline_ms) {
        int r = send_all(fd, request, len, deadline_ms);
        /* EPIPE, ECONNRESET: the daemon refused us and closed; its reason may still be queued
         * for reading */
        if (r < 0 && r != -EPIPE && r != -ECONNRESET)
                return r;
        return 0;
}

static int ctl_send(const char *socket_path, const char *request, size_t len,
                    uint64_t deadline_ms) {
        _cleanup_close_ int fd = ctl_connect(socket_path);
        if (fd < 0)
                return fd;
        int r = ctl_write(fd, request, len, deadline_ms);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

static int ctl_receive(int fd, uint64_t deadline_ms, char *buf, size_t size, char **ret_reply) {
        size_t got;
        char *line;
        int r;

        r = read_fd_deadline(fd, size - 1, deadline_ms, true, buf, &line, &got);
        if (r == -EFBIG)
                return -EMSGSIZE;
        if (r < 0)
                return r;
        if (got == 0 || line[got - 1] != '\n') {
                if (!buf)
                        free(line);
                return -ECONNRESET; /* closed before a whole line */
        }
        line[--got] = '\0';
        if (ret_reply)
                *ret_reply = line;
        return (int) got;
}

_public_ int nsid_ctl_send(const char *socket_path, const char *request, size_t len,
                           unsigned timeout_ms) {
        assert_return(socket_path, -EINVAL);
        assert_return(request && len > 0 && request[len - 1] == '\n', -EINVAL);
        assert_return(timeout_ms > 0, -EINVAL);

        return ctl_send(socket_path, request, len, now_monotonic_ms() + timeout_ms);
}

_public_ int nsid_ctl_connect(const char *socket_path) {
        assert_return(socket_path, -EINVAL);

        return ctl_connect(socket_path);
}

_public_ int nsid_ctl_write(int fd, const char *request, size_t len, unsigned timeout_ms) {
        assert_return(fd >= 0, -EBADF);
        assert_return(request && len > 0 && request[len - 1] == '\n', -EINVAL);
        assert_return(timeout_ms > 0, -EINVAL);

        return ctl_write(fd, request, len, now_monotonic_ms() + timeout_ms);
}

_public_ int nsid_ctl_receive(int fd, unsigned timeout_ms, char *buf, size_t size,
                              char **ret_reply) {
        assert_return(fd >= 0, -EBADF);
        assert_return(timeout_ms > 0, -EINVAL);
        assert_return(size >= 2 && size <= INT_MAX, -EINVAL);
        assert_return(buf || ret_reply, -EINVAL);

        return ctl_receive(fd, now_monotonic_ms() + timeout_ms, buf, size, ret_reply);
}

_public_ int nsid_ctl_roundtrip(const char *socket_path, const char *request, size_t len,
                                unsigned timeout_ms, char *buf, size_t size, char **ret_reply) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t deadline_ms;

        assert_return(socket_path, -EINVAL);
        assert_return(request && len > 0 && request[len - 1] == '\n', -EINVAL);
        assert_return(timeout_ms > 0, -EINVAL);
        assert_return(size >= 2 && size <= INT_MAX, -EINVAL);
        assert_return(buf || ret_reply, -EINVAL);

        deadline_ms = now_monotonic_ms() + timeout_ms;
        fd = ctl_send(socket_path, request, len, deadline_ms);
        if (fd < 0)
                return fd;
        return ctl_receive(fd, deadline_ms, buf, size, ret_reply);
}
