/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The id_resolver fast path: ask nsid-idmapd over its control socket (nsid/ctlproto.h,
 * "lookup host KIND VALUE host-ids") and use its cached answer; any failure (no daemon,
 * refused, slower than the bound, malformed reply) returns an error and the helper
 * resolves by itself. The daemon's reply is checked as strictly as the kernel's request.
 */
#include <errno.h>
#include <string.h>

#include <nsid/ctlproto.h>
#include <nsid/keyring.h>

#include "nsid-idmap.h"

int fastpath_lookup(const char *socket_path, unsigned timeout_ms, const nsid_idmap_keydesc *kd,
                    fastpath_answer *ret) {
        nsid_ctl_request rq = { .command = NSID_CTL_LOOKUP, .target = NSID_CTL_TARGET_HOST,
                                .kind = kd->kind, .view = NSID_CTL_VIEW_HOST_IDS };
        char req[NSID_CTL_LINE_MAX + 1], line[NSID_CTL_LINE_MAX + 1];
        int r, n;

        if (timeout_ms == 0)
                return -ECANCELED;
        if (nsid_idmap_key_kind_answers_name(kd->kind))
                rq.id = kd->id;
        else {
                if (strlen(kd->name) >= sizeof(rq.name))
                        return -ENAMETOOLONG; /* beyond the protocol: resolve ourselves */
                strcpy(rq.name, kd->name);
        }
        n = nsid_ctl_request_format(&rq, req, sizeof(req));
        if (n < 0)
                return n;
        /* socket, connect, send, poll, read, close (a poll before send only if the daemon's queue
         * is full); the reply goes into line: no allocation */
        r = nsid_ctl_roundtrip(socket_path, req, (size_t) n, timeout_ms, line, sizeof(line), NULL);
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
        if (nsid_idmap_key_kind_answers_name(kd->kind)) {
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
