/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: totals that never go down, for nsidctl metrics (idmapd-metrics.c). */
#ifndef NSID_IDMAPD_METRICS_H
#define NSID_IDMAPD_METRICS_H

struct json_object;

#include "idmapd.h"

/* A namespace about to be freed: its counts go to its context's totals. */
void dm_metrics_forget(const dm_ns *ns);
/* The "metrics" reply: per context (host, container) the counts of every namespace served
 * now and forgotten since start, the namespaces served, forgotten and refused. */
struct json_object *dm_metrics_json(void);
/* The counters of s as members of o (status's per-namespace object, metrics' per context). */
void dm_stats_json_add(struct json_object *o, const dm_stats *s);

#endif
