/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: the network namespaces served and their requests (idmapd-ns.c). */
#ifndef NSID_IDMAPD_NS_H
#define NSID_IDMAPD_NS_H

#include "idmapd.h"

dm_ns *dm_ns_find(const nsid_ns_id *id);
dm_ns *dm_ns_find_ino(uint64_t ino);
dm_ns *dm_ns_host(void);
int dm_ns_rescan(void);
/* The periodic rescan: /proc walked by a thread, the result applied by dm_result_ready(). */
void dm_ns_rescan_async(void);
int dm_ns_register_pid(pid_t pid, dm_ns **ret);
/* A container netns got an idmap pipe: its database is loaded in the background. */
void dm_ns_preload(dm_ns *ns);
void dm_ns_free_all(void);
/* Start a request. tmpl says who asked and how to answer (its complete function, called
 * exactly once): answered at once from the cache or the loaded files (returns 1), queued to
 * the resolver (returns 0; a copy of tmpl is completed later), or failed and answered with
 * the error (-errno). */
int dm_request(dm_ns *ns, const dm_query *q, const dm_pending *tmpl);
void dm_result_ready(void);
void dm_pending_expire(int64_t now_us);
int64_t dm_pending_next_deadline_us(void);
void dm_stats_record(dm_ns *ns, int64_t start_us, int error);

void dm_ns_periodic(int64_t now_us);
/* A pending record was completed or abandoned by its origin (client gone). */
void dm_pending_drop_client(dm_client *c);
void dm_pending_drop_pipe(dm_pipe *p);

#endif
