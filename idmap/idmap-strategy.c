/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stddef.h>

#include "idmap-strategy.h"

idmap_plan idmap_plan_make(bool conf_set, bool conf_value, bool test_mode, int kernel_tagged,
                           unsigned daemon_timeout_ms) {
        idmap_plan p = { .requester_context = conf_set && conf_value };

        /* A kernel that tags ID keys by network namespace caches each namespace's answers
         * apart: there every requester is answered in its own network namespace's context
         * by default (nsid-idmapd's; without the daemon, its files read by a worker).
         * nsid.conf's requester-context = no keeps the host's answers for everyone, as
         * nfsidmap gives. */
        if (!conf_set && !test_mode && kernel_tagged == 1) {
                p.requester_context = true;
                p.per_ns_keys = true;
        }
        /* A kernel that keeps one ID key cache for every namespace: an answer this helper
         * gives is served to every namespace that asks the same name, so the lookup goes to
         * the requester's own namespace instead, through its idmap pipe (nsid-idmapd).
         * nsid.conf's requester-context (either value) keeps this helper answering itself. */
        p.to_pipe = !conf_set && !test_mode && !p.per_ns_keys && daemon_timeout_ms > 0;
        return p;
}

idmap_strategy idmap_strategy_next(const idmap_plan *p, idmap_strategy done,
                                   idmap_outcome outcome) {
        if (outcome == IDMAP_DONE || done == IDMAP_ANSWER || done >= IDMAP_END)
                return IDMAP_END;
        if (outcome == IDMAP_ANSWERED)
                return IDMAP_ANSWER;
        switch (done) {
        case IDMAP_START:
                if (p->to_pipe)
                        return IDMAP_PIPE;
                /* fall through */
        case IDMAP_PIPE:
                if (p->per_ns_keys)
                        return IDMAP_DAEMON_NS;
                /* fall through */
        case IDMAP_DAEMON_NS:
                /* the host's answer: in the requester's context too, to compare with */
                return p->requester_context ? IDMAP_HOST_LOCAL : IDMAP_HOST_FAST;
        case IDMAP_HOST_FAST:
                return IDMAP_HOST_LOCAL;
        case IDMAP_HOST_LOCAL:
                return p->requester_context ? IDMAP_REQUESTER : IDMAP_ANSWER;
        case IDMAP_REQUESTER:
                return IDMAP_ANSWER;
        default:
                return IDMAP_END;
        }
}

const char *idmap_strategy_name(idmap_strategy s) {
        static const char *const names[_IDMAP_STRATEGY_MAX] = {
                [IDMAP_START] = "start",
                [IDMAP_PIPE] = "idmap pipe",
                [IDMAP_DAEMON_NS] = "nsid-idmapd, requester's namespace",
                [IDMAP_HOST_FAST] = "nsid-idmapd, host context",
                [IDMAP_HOST_LOCAL] = "host context",
                [IDMAP_REQUESTER] = "requester's files",
                [IDMAP_ANSWER] = "answer",
                [IDMAP_END] = "end",
        };
        return s >= 0 && s < _IDMAP_STRATEGY_MAX ? names[s] : NULL;
}
