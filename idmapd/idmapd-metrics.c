/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd's totals for metrics (issue #31): what `nsidctl metrics` turns into the
 * Prometheus exposition format. Counters must never go down while the daemon runs, and a
 * host's namespaces come and go by the thousand: so the counts are kept per context (host,
 * container: two label values, whatever the number of namespaces), and a forgotten
 * namespace's counts are added to its context's totals before it is freed. A restart starts
 * every counter at zero again, which Prometheus sees by start_time_s (and handles as a
 * counter reset).
 */
#include <json-c/json.h>
#include <time.h>

#include "idmapd.h"
#include "idmapd-cache.h"
#include "idmapd-metrics.h"
#include "idmapd-quota.h"


static dm_stats gone[2]; /* [0] host, [1] container */
static uint64_t forgotten;

static void add(dm_stats *to, const dm_stats *s) {
        to->requests += s->requests;
        to->hits += s->hits;
        to->misses += s->misses;
        to->failures += s->failures;
        to->negatives += s->negatives;
        to->timeouts += s->timeouts;
        to->pipe_upcalls += s->pipe_upcalls;
        to->channel_requests += s->channel_requests;
        to->ctl_lookups += s->ctl_lookups;
        to->keys_invalidated += s->keys_invalidated;
        to->key_retries += s->key_retries;
        to->key_give_ups += s->key_give_ups;
        for (int i = 0; i < _DM_SRC_MAX; i++)
                to->resolved[i] += s->resolved[i];
        to->cache_expired += s->cache_expired;
        to->cache_flushed += s->cache_flushed;
        for (int i = 0; i < DM_LAT_BUCKETS; i++)
                to->lat[i] += s->lat[i];
        to->lat_sum_us += s->lat_sum_us;
}

void dm_metrics_forget(const dm_ns *ns) {
        add(&gone[ns->is_host ? 0 : 1], &ns->stats);
        forgotten++;
}

void dm_stats_json_add(json_object *o, const dm_stats *s) {
#define S(f) json_object_object_add(o, #f, json_object_new_uint64(s->f))
        S(requests);
        S(hits);
        S(misses);
        S(failures);
        S(negatives);
        S(timeouts);
        S(pipe_upcalls);
        S(channel_requests);
        S(ctl_lookups);
        S(keys_invalidated);
        S(key_retries);
        S(key_give_ups);
        S(cache_expired);
        S(cache_flushed);
#undef S
}

static json_object *stats_json(const dm_stats *s, uint64_t cache_entries) {
        json_object *o = json_object_new_object(), *res = json_object_new_object(),
                    *lat = json_object_new_array();
        dm_stats_json_add(o, s);
        static const char *const src[_DM_SRC_MAX] = { "files", "nss", "libnfsidmap" };
        for (int i = 0; i < _DM_SRC_MAX; i++)
                json_object_object_add(res, src[i], json_object_new_uint64(s->resolved[i]));
        json_object_object_add(o, "resolved", res);
        json_object_object_add(o, "cache_entries", json_object_new_uint64(cache_entries));
        /* bucket i: lookups that took less than 2^i microseconds (not cumulative) */
        for (int i = 0; i < DM_LAT_BUCKETS; i++)
                json_object_array_add(lat, json_object_new_uint64(s->lat[i]));
        json_object_object_add(o, "latency_buckets_us", lat);
        json_object_object_add(o, "latency_sum_us", json_object_new_uint64(s->lat_sum_us));
        return o;
}

/* The container namespaces that fare worst (most failures and timeouts, then most lookups),
 * at most DM_METRICS_TOP: series of their own in nsidctl metrics, a bounded number whatever
 * the host runs. */
#define DM_METRICS_TOP 10
static uint64_t badness(const dm_ns *ns) {
        return ns->stats.failures + ns->stats.timeouts;
}

static bool worse(const dm_ns *a, const dm_ns *b) {
        if (badness(a) != badness(b))
                return badness(a) > badness(b);
        return a->stats.requests > b->stats.requests;
}

static json_object *top_namespaces(void) {
        const dm_ns *top[DM_METRICS_TOP];
        json_object *a = json_object_new_array();
        size_t n = 0;

        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next) {
                size_t i;
                if (ns->is_host || ns->stats.requests == 0)
                        continue;
                /* insertion into the sorted few */
                for (i = n; i > 0 && worse(ns, top[i - 1]); i--)
                        if (i < DM_METRICS_TOP)
                                top[i] = top[i - 1];
                if (i < DM_METRICS_TOP) {
                        top[i] = ns;
                        if (n < DM_METRICS_TOP)
                                n++;
                }
        }
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "netns", json_object_new_uint64(top[i]->id.ino));
                json_object_object_add(o, "label", json_object_new_string(top[i]->label));
                json_object_object_add(o, "requests", json_object_new_uint64(top[i]->stats.requests));
                json_object_object_add(o, "failures", json_object_new_uint64(top[i]->stats.failures));
                json_object_object_add(o, "timeouts", json_object_new_uint64(top[i]->stats.timeouts));
                json_object_array_add(a, o);
        }
        return a;
}

json_object *dm_metrics_json(void) {
        dm_stats tot[2] = { gone[0], gone[1] };
        uint64_t entries[2] = { 0, 0 }, live[2] = { 0, 0 };
        struct timespec rt;
        dm_quota_stats qs;

        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next) {
                int k = ns->is_host ? 0 : 1;
                add(&tot[k], &ns->stats);
                entries[k] += dm_cache_size(ns->cache);
                live[k]++;
        }
        dm_quota_get_stats(&qs);
        clock_gettime(CLOCK_REALTIME, &rt);
        int64_t start_s = (int64_t) rt.tv_sec - (dm_now_us() - dm.start_us) / 1000000;

        json_object *o = json_object_new_object(), *ctx = json_object_new_object(),
                    *n = json_object_new_object();
        json_object_object_add(o, "version", json_object_new_string(NSID_VERSION));
        json_object_object_add(o, "start_time_s", json_object_new_int64(start_s));
        json_object_object_add(ctx, "host", stats_json(&tot[0], entries[0]));
        json_object_object_add(ctx, "container", stats_json(&tot[1], entries[1]));
        json_object_object_add(o, "contexts", ctx);
        json_object_object_add(n, "host", json_object_new_uint64(live[0]));
        json_object_object_add(n, "container", json_object_new_uint64(live[1]));
        json_object_object_add(o, "namespaces", n);
        json_object_object_add(o, "namespaces_forgotten", json_object_new_uint64(forgotten));
        json_object_object_add(o, "namespaces_refused", json_object_new_uint64(qs.refused_total));
        json_object_object_add(o, "namespaces_top", top_namespaces());
        return o;
}
