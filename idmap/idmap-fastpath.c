/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The id_resolver fast path: ask nsid-idmapd over its control socket (nsid/ctlproto.h,
 * "lookup host KIND VALUE host-ids", or "lookup pid:PID ..." for the network namespace of
 * the requesting process) and use its cached answer; any failure (no daemon,
 * refused, slower than the bound, malformed reply) returns an error and the helper
 * resolves by itself. The daemon's reply is checked as strictly as the kernel's request.
 * The request is sent first and the reply read later, so that the daemon's lookup runs
 * while the helper finds its requester.
 */
#include <errno.h>
#include <string.h>

#include <nsid/ctlproto.h>
#include <nsid/keyring.h>

#include "macro.h"
#include "nsid-idmap.h"
#include "proc-util.h"

int fastpath_start(const char *socket_path, unsigned timeout_ms, const nsid_idmap_keydesc *kd,
                   pid_t pid, fastpath_call *ret) {
        nsid_ctl_request rq = { .command = NSID_CTL_LOOKUP,
                                .target = pid > 0 ? NSID_CTL_TARGET_PID : NSID_CTL_TARGET_HOST,
                                .pid = pid, .kind = kd->kind, .view = NSID_CTL_VIEW_HOST_IDS };
        char req[NSID_CTL_LINE_MAX + 1];
        int n, fd;

        *ret = (fastpath_call) { .fd = -EBADF, .kd = kd };
        if (timeout_ms == 0)
                return -ECANCELED;
        if (nsid_idmap_key_kind_answers_name(kd->kind))
                rq.id = kd->id;
        else {
                if (strlen(kd->name) >= sizeof(rq.name))
                        return -ENAMETOOLONG; /* beyond the protocol: resolve ourselves */
                strcpy(rq.name, kd->name);
        }
        /* connected first: without a daemon nothing more is done (socket, connect: ENOENT) */
        fd = nsid_ctl_connect(socket_path);
        if (fd < 0)
                return fd;
        ret->deadline_ms = now_monotonic_ms() + timeout_ms;
        n = nsid_ctl_request_format(&rq, req, sizeof(req));
        if (n >= 0)
                n = nsid_ctl_write(fd, req, (size_t) n, timeout_ms);
        if (n < 0) {
                safe_close(fd);
                return n;
        }
        ret->fd = fd;
        return 0;
}

int fastpath_finish(fastpath_call *c, fastpath_answer *ret) {
        char line[NSID_CTL_LINE_MAX + 1];
        uint64_t now = now_monotonic_ms();
        int r;

        if (c->fd < 0)
                return -EBADF;
        /* the bound counts from the send: what the helper did meanwhile is part of it (at
         * least 1 ms, so a daemon that has already answered is read) */
        unsigned left = c->deadline_ms > now ? (unsigned) (c->deadline_ms - now) : 1;
        /* poll, read; the reply goes into line: no allocation */
        r = nsid_ctl_receive(c->fd, left, line, sizeof(line), NULL);
        c->fd = safe_close(c->fd);
        if (r < 0)
                return r;

        nsid_ctl_reply reply;
        if (nsid_ctl_reply_parse(line, (size_t) r, &reply) < 0)
                return -EBADMSG;
        if (reply.kind == NSID_CTL_REPLY_ERROR)
                return reply.error > 0 ? -reply.error : -EIO;
        fastpath_answer a = { .ttl = reply.ttl };
        if (reply.kind == NSID_CTL_REPLY_NEGATIVE) {
                a.negative = true;
                *ret = a;
                return 0;
        }
        char value[NSID_CTL_VALUE_MAX];
        if (nsid_ctl_lookup_reply_parse(&reply, value, &a.ttl, &a.cached) < 0)
                return -EBADMSG;
        if (nsid_idmap_key_kind_answers_name(c->kd->kind)) {
                size_t l = strlen(value);
                if (nsid_idmap_name_check(value, l) < 0)
                        return -EBADMSG;
                a.is_name = true;
                memcpy(a.name, value, l + 1);
        } else {
                uint64_t v;
                if (parse_uint_strict(value, UINT32_MAX - 1, &v) < 0)
                        return -EBADMSG;
                a.id = (uint32_t) v;
        }
        *ret = a;
        return 0;
}

void fastpath_cancel(fastpath_call *c) {
        c->fd = safe_close(c->fd);
}

int fastpath_route(const char *socket_path, unsigned timeout_ms, pid_t pid) {
        nsid_ctl_request rq = { .command = NSID_CTL_ROUTE,
                                .target = pid > 0 ? NSID_CTL_TARGET_PID : NSID_CTL_TARGET_HOST,
                                .pid = pid };
        char req[64], line[512];
        nsid_ctl_reply reply;
        uint64_t v;
        int n, r;

        if (timeout_ms == 0)
                return -ECANCELED;
        n = nsid_ctl_request_format(&rq, req, sizeof(req));
        if (n < 0)
                return n;
        r = nsid_ctl_roundtrip(socket_path, req, (size_t) n, timeout_ms, line, sizeof(line), NULL);
        if (r < 0)
                return r;
        if (nsid_ctl_reply_parse(line, (size_t) r, &reply) < 0)
                return -EBADMSG;
        if (reply.kind == NSID_CTL_REPLY_ERROR)
                return reply.error > 0 ? -reply.error : -EIO;
        char count[12];
        if (reply.kind != NSID_CTL_REPLY_OK || reply.rest_len == 0 ||
            reply.rest_len >= sizeof(count))
                return -EBADMSG;
        memcpy(count, reply.rest, reply.rest_len);
        count[reply.rest_len] = '\0';
        if (parse_uint_strict(count, 1000000, &v) < 0)
                return -EBADMSG;
        return (int) v;
}
