/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: lookups answered by a container's own name service, through nsid-nss-query
 * run inside the container (nsid_worker_session_start()): all its namespaces, its root, an
 * unprivileged id, no capability, no_new_privs, resource limits, a time limit, nothing of
 * the daemon's open, and its reply parsed strictly (nss-text.h).
 */
#ifndef NSID_IDMAPD_NSS_H
#define NSID_IDMAPD_NSS_H

#include <stdbool.h>
#include <stddef.h>

#include <nsid/ns.h>

#include "idmapd.h"

/* Copy nsid-nss-query into a sealed memfd (the container can reach the running program
 * through /proc/PID/exe; a sealed copy cannot be written). path NULL: the installed one,
 * or the one beside this program (a build tree). 0 or -errno (err says which file). */
int dm_nss_init(const char *path, char *err, size_t errlen);
bool dm_nss_available(void);

/* A namespace's nsid-nss-query, kept running between lookups (one exec for many lookups;
 * restarted after DM_NSS_AGENT_MAX_LOOKUPS, after any failure, and when its context
 * changes). One thread at a time (the namespace's resolver thread). */
#define DM_NSS_AGENT_MAX_LOOKUPS 10000u
#define DM_NSS_AGENT_IDLE_US (60ll * 1000000)
typedef struct dm_nss_agent dm_nss_agent;

dm_nss_agent *dm_nss_agent_new(void);
/* Stop its process, if any (the next lookup starts one). */
void dm_nss_agent_stop(dm_nss_agent *ag);
/* Stop it when it has been idle for DM_NSS_AGENT_IDLE_US. */
void dm_nss_agent_reap_idle(dm_nss_agent *ag);
dm_nss_agent *dm_nss_agent_free(dm_nss_agent *ag);

/* Answer q (namespace-local ids: the caller translates views) from the container of proc,
 * domain its NFSv4 domain (for NSS without libnfsidmap). a->error: 0, -ENOENT (the name
 * service does not know it), or another failure, which *why describes. *via_lib: whether
 * its libnfsidmap answered. */
void dm_nss_lookup(dm_nss_agent *ag, const nsid_proc *proc, const dm_query *q,
                   const char *domain, int timeout_ms, dm_answer *a, bool *via_lib, char *why,
                   size_t whylen);

#endif
