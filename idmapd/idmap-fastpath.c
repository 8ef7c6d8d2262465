/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The id_resolver fast path: ask nsid-idmapd over its control socket with one lookup frame
 * (nsid/ctlframe.h: "lookup host KIND VALUE host-ids" as a fixed-size frame) and use its
 * cached answer; any failure (no daemon, refused, slower than the bound, malformed reply)
 * returns an error and the helper resolves by itself. The daemon's reply is checked as
 * strictly as the kernel's request. The request is sent first and the reply read later, so
 * that the daemon's lookup runs while the helper finds its requester.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <nsid/ctlframe.h>
#include <nsid/keyring.h>

#include "macro.h"
#include "nsid-idmap.h"
#include "proc-util.h"

int fastpath_start(const char *socket_path, unsigned timeout_ms, const nsid_idmap_keydesc *kd,
                   fastpath_call *ret) {
        nsid_ctl_frame_request rq;
        int r, fd;

        *ret = (fastpath_call) { .fd = -EBADF, .kd = kd };
        if (timeout_ms == 0)
                return -ECANCELED;
        /* connected first: without a daemon nothing more is done (socket, connect: ENOENT) */
        fd = nsid_ctl_connect(socket_path);
        if (fd < 0)
                return fd;
        ret->deadline_ms = now_monotonic_ms() + timeout_ms;
        r = nsid_ctl_frame_request_init(&rq, kd->kind, kd->id, kd->name,
                                        nsid_idmap_key_kind_answers_name(kd->kind)
                                                ? 0
                                                : strlen(kd->name));
        /* A fresh local stream socket takes one frame whole, or the daemon is not reading:
         * a short send is a failure like any other (resolved here). A daemon that refused
         * us and closed (EPIPE) is seen as such by fastpath_finish(). */
        if (r >= 0) {
                ssize_t n = send(fd, &rq, sizeof(rq), MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno != EPIPE && errno != ECONNRESET)
                        r = negative_errno();
                else if (n >= 0 && (size_t) n != sizeof(rq))
                        r = -EAGAIN;
        }
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        ret->fd = fd;
        return 0;
}

int fastpath_finish(fastpath_call *c, fastpath_answer *ret) {
        nsid_ctl_frame_reply rp;
        size_t got = 0;
        int r = 0;

        if (c->fd < 0)
                return -EBADF;
        /* the bound counts from the send: what the helper did meanwhile is part of it; a
         * reply already there is read even after the deadline */
        while (got < sizeof(rp)) {
                ssize_t n = recv(c->fd, (char *) &rp + got, sizeof(rp) - got, MSG_DONTWAIT);
                if (n > 0) {
                        got += (size_t) n;
                        continue;
                }
                if (n == 0) {
                        /* closed: without a word (gone), or after part of a frame */
                        r = got == 0 ? -ECONNRESET : -EBADMSG;
                        break;
                }
                if (errno != EAGAIN && errno != EINTR) {
                        r = negative_errno();
                        break;
                }
                r = fd_wait_deadline(c->fd, POLLIN, c->deadline_ms);
                if (r < 0)
                        break;
        }
        c->fd = safe_close(c->fd);
        if (r < 0)
                return r;
        if (nsid_ctl_frame_reply_check(&rp, got, c->kd->kind) < 0)
                return -EBADMSG;
        if (rp.status == ENOENT) {
                *ret = (fastpath_answer) { .negative = true, .ttl = rp.ttl };
                return 0;
        }
        if (rp.status != 0)
                return -(int) rp.status;
        fastpath_answer a = { .ttl = rp.ttl, .cached = rp.flags & NSID_CTL_FRAME_CACHED };
        if (nsid_idmap_key_kind_answers_name(c->kd->kind)) {
                a.is_name = true;
                memcpy(a.name, rp.value, sizeof(a.name)); /* NUL-terminated, checked */
        } else
                a.id = rp.id;
        *ret = a;
        return 0;
}

void fastpath_cancel(fastpath_call *c) {
        c->fd = safe_close(c->fd);
}
