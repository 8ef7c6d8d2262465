/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which way an id_resolver lookup goes: the helper's decisions, apart from the acts
 * (idmap-upcall.c carries each strategy out). Pure functions, unit-tested
 * (tests/unit/test-idmap-strategy.c).
 */
#ifndef NSID_IDMAP_STRATEGY_H
#define NSID_IDMAP_STRATEGY_H

#include <stdbool.h>

typedef enum idmap_strategy {
        IDMAP_START,       /* nothing tried yet */
        IDMAP_PIPE,        /* hand the lookup over to the requester's idmap pipe (nsid-idmapd) */
        IDMAP_DAEMON_NS,   /* nsid-idmapd answers in the requester's namespace (tagged keys) */
        IDMAP_HOST_FAST,   /* nsid-idmapd's answer in the host context (its cache) */
        IDMAP_HOST_LOCAL,  /* this helper's own answer in the host context (libnfsidmap) */
        IDMAP_REQUESTER,   /* the requester's own files, read by a worker */
        IDMAP_ANSWER,      /* the answer checked and given to the kernel */
        IDMAP_END,         /* the key is answered, rejected or handed over */
        _IDMAP_STRATEGY_MAX,
} idmap_strategy;

typedef enum idmap_outcome {
        IDMAP_NEXT,     /* not settled here: the next strategy */
        IDMAP_ANSWERED, /* an answer to give */
        IDMAP_DONE,     /* the key is dealt with (rejected, handed over, instantiated) */
} idmap_outcome;

/* What this lookup may do, from nsid.conf, the kernel and the options. */
typedef struct idmap_plan {
        /* the kernel keeps one ID key cache for all namespaces and nsid-idmapd may answer
         * the requester's idmap pipe: hand the lookup over there first */
        bool to_pipe;
        /* the kernel caches each network namespace's answers apart (kernel/patches/) */
        bool per_ns_keys;
        /* answer from the requester's own context (nsid.conf, or per_ns_keys) */
        bool requester_context;
} idmap_plan;

/* conf_set/conf_value: nsid.conf's [idmap] requester-context, when it says yes or no;
 * test_mode: --test-user-prefix; kernel_tagged: nsid_kernel_nfs_idkeys_tagged_cached()
 * (1 tagged, else not or unknown; only asked when neither conf_set nor test_mode);
 * daemon_timeout_ms: 0 when nsid-idmapd is not to be asked. */
idmap_plan idmap_plan_make(bool conf_set, bool conf_value, bool test_mode, int kernel_tagged,
                           unsigned daemon_timeout_ms);

/* The strategy after `done` ended with `outcome` (done = IDMAP_START: the first one). */
idmap_strategy idmap_strategy_next(const idmap_plan *p, idmap_strategy done,
                                   idmap_outcome outcome);

const char *idmap_strategy_name(idmap_strategy s);

#endif
