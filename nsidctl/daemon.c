/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: nsid-idmapd's statistics over its control socket (nsid/ctlproto.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nsid/ctlproto.h>

#include "nsidctl.h"

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One request line, one reply line, within timeout_ms overall. */
static int roundtrip(const char *path, const char *req, int timeout_ms, char **ret_line,
                     size_t *ret_len) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int64_t deadline = now_ms() + timeout_ms;
        size_t len = 0, cap = 0;
        char *buf = NULL;
        int fd, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path));
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* a local stream connect completes at once or fails (EAGAIN: backlog full) */
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 && errno != EPIPE &&
            errno != ECONNRESET) {
                r = -errno;
                close(fd);
                return r;
        }
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int64_t left = deadline - now_ms();
                ssize_t n;

                if (left <= 0) {
                        r = -ETIMEDOUT;
                        goto fail;
                }
                r = poll(&p, 1, (int) left);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        r = -errno;
                        goto fail;
                }
                if (r == 0)
                        continue;
                if (len + 4096 > cap) {
                        if (cap >= 64u * 1024 * 1024) {
                                r = -EFBIG;
                                goto fail;
                        }
                        char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
                        if (!nb) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        buf = nb;
                }
                n = recv(fd, buf + len, cap - len - 1, 0);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (n < 0) {
                        r = -errno;
                        goto fail;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (memchr(buf, '\n', len))
                        break;
        }
        close(fd);
        if (!buf || !memchr(buf, '\n', len)) {
                free(buf);
                return -EPROTO;
        }
        buf[len] = '\0';
        *ret_line = buf;
        *ret_len = (size_t) ((char *) memchr(buf, '\n', len) - buf);
        return 0;
fail:
        free(buf);
        close(fd);
        return r;
}

int daemon_status(const char *socket_path, int timeout_ms, json_object **ret) {
        nsid_ctl_reply rp;
        char *line = NULL, *js;
        size_t len = 0;
        json_object *o;
        int r;

        r = roundtrip(socket_path, "status\n", timeout_ms, &line, &len);
        if (r < 0)
                return r;
        r = nsid_ctl_reply_parse(line, len, &rp);
        if (r < 0) {
                free(line);
                return -EPROTO;
        }
        if (rp.kind == NSID_CTL_REPLY_ERROR) {
                free(line);
                return rp.error > 0 ? -rp.error : -EPROTO;
        }
        if (rp.kind != NSID_CTL_REPLY_OK) {
                free(line);
                return -EPROTO;
        }
        js = strndup(rp.rest, rp.rest_len);
        free(line);
        if (!js)
                return -ENOMEM;
        o = json_tokener_parse(js);
        free(js);
        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EPROTO;
        }
        *ret = o;
        return 0;
}
