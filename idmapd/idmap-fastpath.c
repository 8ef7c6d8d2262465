/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The id_resolver fast path: ask nsid-idmapd over its control socket (nsid/ctlproto.h,
 * "lookup host KIND VALUE host-ids") and use its cached answer; any failure (no daemon,
 * refused, slower than the bound, malformed reply) returns an error and the helper
 * resolves by itself. The daemon's reply is checked as strictly as the kernel's request.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nsid/ctlproto.h>
#include <nsid/keyring.h>

#include "nsid-idmap.h"

static uint64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

static int wait_fd(int fd, short events, uint64_t deadline) {
        for (;;) {
                uint64_t now = mono_ms();
                if (now >= deadline)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = events };
                int r = poll(&p, 1, (int) (deadline - now));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                return 0;
        }
}

int fastpath_lookup(const char *socket_path, unsigned timeout_ms, const nsid_idmap_keydesc *kd,
                    fastpath_answer *ret) {
        nsid_ctl_request rq = { .command = NSID_CTL_LOOKUP, .target = NSID_CTL_TARGET_HOST,
                                .kind = kd->kind, .view = NSID_CTL_VIEW_HOST_IDS };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char line[NSID_CTL_LINE_MAX + 1];
        uint64_t deadline = mono_ms() + timeout_ms;
        size_t got = 0, sent = 0;
        int fd, r, n;

        if (timeout_ms == 0)
                return -ECANCELED;
        if (strlen(socket_path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, socket_path);
        if (nsid_idmap_key_kind_answers_name(kd->kind))
                rq.id = kd->id;
        else {
                if (strlen(kd->name) >= sizeof(rq.name))
                        return -ENAMETOOLONG; /* beyond the protocol: resolve ourselves */
                strcpy(rq.name, kd->name);
        }
        n = nsid_ctl_request_format(&rq, line, sizeof(line));
        if (n < 0)
                return n;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
                r = -errno;
                goto out;
        }
        while (sent < (size_t) n) {
                r = wait_fd(fd, POLLOUT, deadline);
                if (r < 0)
                        goto out;
                ssize_t k = send(fd, line + sent, (size_t) n - sent, MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                continue;
                        r = -errno;
                        goto out;
                }
                sent += (size_t) k;
        }
        for (;;) {
                char *nl = memchr(line, '\n', got);
                if (nl) {
                        got = (size_t) (nl - line);
                        break;
                }
                if (got >= NSID_CTL_LINE_MAX) {
                        r = -EMSGSIZE;
                        goto out;
                }
                r = wait_fd(fd, POLLIN, deadline);
                if (r < 0)
                        goto out;
                ssize_t k = recv(fd, line + got, NSID_CTL_LINE_MAX - got, 0);
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                continue;
                        r = -errno;
                        goto out;
                }
                if (k == 0) {
                        r = -ECONNRESET;
                        goto out;
                }
                got += (size_t) k;
        }

        nsid_ctl_reply reply;
        r = nsid_ctl_reply_parse(line, got, &reply);
        if (r < 0) {
                r = -EBADMSG;
                goto out;
        }
        if (reply.kind == NSID_CTL_REPLY_ERROR) {
                r = reply.error > 0 ? -reply.error : -EIO;
                goto out;
        }
        fastpath_answer a = { .ttl = reply.ttl };
        if (reply.kind == NSID_CTL_REPLY_NEGATIVE) {
                a.negative = true;
                *ret = a;
                r = 0;
                goto out;
        }
        char value[NSID_CTL_VALUE_MAX];
        r = nsid_ctl_lookup_reply_parse(&reply, value, &a.ttl, &a.cached);
        if (r < 0) {
                r = -EBADMSG;
                goto out;
        }
        if (nsid_idmap_key_kind_answers_name(kd->kind)) {
                size_t l = strlen(value);
                if (nsid_idmap_name_check(value, l) < 0) {
                        r = -EBADMSG;
                        goto out;
                }
                a.is_name = true;
                memcpy(a.name, value, l + 1);
        } else {
                uint64_t v;
                if (parse_uint_strict(value, UINT32_MAX - 1, &v) < 0) {
                        r = -EBADMSG;
                        goto out;
                }
                a.id = (uint32_t) v;
        }
        *ret = a;
        r = 0;
out:
        close(fd);
        return r;
}
