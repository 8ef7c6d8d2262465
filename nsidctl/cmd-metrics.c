/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsidctl metrics: nsid's state in the Prometheus text exposition format (issue #31), for
 * node_exporter's textfile collector or any scraper. Every metric and label is in
 * nsidctl(8), METRICS. Label values come from fixed sets (context host|container, path,
 * source, reason, state): a host with a thousand containers has as many series as one with
 * one. The ID-mapping counters are nsid-idmapd's ("metrics" on its control socket: totals
 * that never go down while it runs, forgotten namespaces included); the identity gauges are
 * counted here, from the same look at every network namespace as `nsidctl status`.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsidctl.h"
#include "watch.h"

/* lookups of 2^LAT_FIRST .. 2^LAT_LAST microseconds get a bucket each (16 us .. 33.5 s) */
#define LAT_FIRST 4
#define LAT_LAST 25

static const char *const contexts[] = { "host", "container" };

static FILE *out; /* stdout, or the buffer --output writes */

static void family(const char *name, const char *type, const char *help) {
        fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static uint64_t u(json_object *o, const char *k) {
        json_object *v;
        return o && json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) : 0;
}

static json_object *member(json_object *o, const char *k) {
        json_object *v;
        return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* One counter or gauge per context from ctx[k].key. */
static void per_context(json_object *ctx, const char *name, const char *type, const char *help,
                        const char *key) {
        family(name, type, help);
        for (size_t k = 0; k < 2; k++)
                fprintf(out, "%s{context=\"%s\"} %" PRIu64 "\n", name, contexts[k],
                       u(member(ctx, contexts[k]), key));
}

static void histogram(json_object *ctx) {
        const char *name = "nsid_idmapd_lookup_duration_seconds";
        family(name, "histogram",
               "Time from a lookup's arrival to its answer, cached answers included.");
        for (size_t k = 0; k < 2; k++) {
                json_object *c = member(ctx, contexts[k]), *b = member(c, "latency_buckets_us");
                size_t n = b && json_object_is_type(b, json_type_array)
                                   ? json_object_array_length(b)
                                   : 0;
                uint64_t acc = 0, total = 0;
                for (size_t i = 0; i < n; i++)
                        total += json_object_get_uint64(json_object_array_get_idx(b, i));
                for (size_t i = 0; i <= LAT_LAST; i++) {
                        /* (bucket i of the daemon counts lookups of less than 2^i us) */
                        acc += i < n ? json_object_get_uint64(json_object_array_get_idx(b, i)) : 0;
                        if (i >= LAT_FIRST)
                                fprintf(out, "%s_bucket{context=\"%s\",le=\"%.6g\"} %" PRIu64 "\n",
                                       name, contexts[k], (double) (1ull << i) / 1e6, acc);
                }
                fprintf(out, "%s_bucket{context=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name, contexts[k],
                       total);
                fprintf(out, "%s_sum{context=\"%s\"} %.6f\n", name, contexts[k],
                       (double) u(c, "latency_sum_us") / 1e6);
                fprintf(out, "%s_count{context=\"%s\"} %" PRIu64 "\n", name, contexts[k], total);
        }
}

static void idmapd_metrics(json_object *m) {
        json_object *ctx = member(m, "contexts"), *ns = member(m, "namespaces"), *v;

        family("nsid_idmapd_start_time_seconds", "gauge",
               "When nsid-idmapd started (Unix time): its counters start from zero then.");
        fprintf(out, "nsid_idmapd_start_time_seconds %" PRIu64 "\n", u(m, "start_time_s"));
        family("nsid_idmapd_info", "gauge", "nsid-idmapd's version, as a label.");
        fprintf(out, "nsid_idmapd_info{version=\"%s\"} 1\n",
               json_object_object_get_ex(m, "version", &v) ? json_object_get_string(v) : "");

        family("nsid_idmapd_lookups_total", "counter",
               "ID lookups nsid-idmapd was asked, by the namespace's context and the way they "
               "came: the namespace's idmap pipe, knfsd's channel, or the request-key helper.");
        static const struct {
                const char *path, *key;
        } paths[] = { { "pipe", "pipe_upcalls" },
                      { "channel", "channel_requests" },
                      { "helper", "ctl_lookups" } };
        for (size_t k = 0; k < 2; k++)
                for (size_t i = 0; i < 3; i++)
                        fprintf(out, "nsid_idmapd_lookups_total{context=\"%s\",path=\"%s\"} %" PRIu64
                               "\n",
                               contexts[k], paths[i].path,
                               u(member(ctx, contexts[k]), paths[i].key));
        per_context(ctx, "nsid_idmapd_cache_hits_total", "counter",
                    "Lookups answered from nsid-idmapd's cache.", "hits");
        per_context(ctx, "nsid_idmapd_cache_misses_total", "counter",
                    "Lookups the cache did not answer.", "misses");
        family("nsid_idmapd_resolutions_total", "counter",
               "Answers resolved anew, by what resolved them: the container's files, its own "
               "name service (inside it), or libnfsidmap in the host's context.");
        static const char *const sources[] = { "files", "nss", "libnfsidmap" };
        for (size_t k = 0; k < 2; k++)
                for (size_t i = 0; i < 3; i++)
                        fprintf(out, "nsid_idmapd_resolutions_total{context=\"%s\",source=\"%s\"} "
                               "%" PRIu64 "\n",
                               contexts[k], sources[i],
                               u(member(member(ctx, contexts[k]), "resolved"), sources[i]));
        per_context(ctx, "nsid_idmapd_negative_answers_total", "counter",
                    "Lookups answered \"no such user or group\" (the namespace's nobody).",
                    "negatives");
        family("nsid_idmapd_failures_total", "counter",
               "Lookups that got no answer: timed out (the namespace's resolver did not answer "
               "in time) or another error.");
        for (size_t k = 0; k < 2; k++) {
                json_object *c = member(ctx, contexts[k]);
                uint64_t all = u(c, "failures"), to = u(c, "timeouts");
                fprintf(out, "nsid_idmapd_failures_total{context=\"%s\",reason=\"timeout\"} %" PRIu64
                       "\n",
                       contexts[k], to);
                fprintf(out, "nsid_idmapd_failures_total{context=\"%s\",reason=\"error\"} %" PRIu64
                       "\n",
                       contexts[k], all > to ? all - to : 0);
        }
        histogram(ctx);
        per_context(ctx, "nsid_idmapd_cache_entries", "gauge",
                    "Answers in nsid-idmapd's cache now.", "cache_entries");
        family("nsid_idmapd_cache_evictions_total", "counter",
               "Answers dropped from the cache: expired, or flushed (the namespace's files or "
               "context changed, a flush request, SIGHUP).");
        for (size_t k = 0; k < 2; k++) {
                json_object *c = member(ctx, contexts[k]);
                fprintf(out, "nsid_idmapd_cache_evictions_total{context=\"%s\",reason=\"expired\"} "
                       "%" PRIu64 "\n",
                       contexts[k], u(c, "cache_expired"));
                fprintf(out, "nsid_idmapd_cache_evictions_total{context=\"%s\",reason=\"flushed\"} "
                       "%" PRIu64 "\n",
                       contexts[k], u(c, "cache_flushed"));
        }
        per_context(ctx, "nsid_idmapd_key_invalidations_total", "counter",
                    "Kernel ID keys nsid-idmapd invalidated so that a namespace-specific answer "
                    "is not reused by another namespace.",
                    "keys_invalidated");
        family("nsid_idmapd_namespaces", "gauge",
               "Network namespaces nsid-idmapd serves now, by context.");
        for (size_t k = 0; k < 2; k++)
                fprintf(out, "nsid_idmapd_namespaces{context=\"%s\"} %" PRIu64 "\n", contexts[k],
                       u(ns, contexts[k]));
        family("nsid_idmapd_namespaces_forgotten_total", "counter",
               "Network namespaces nsid-idmapd served and forgot (gone).");
        fprintf(out, "nsid_idmapd_namespaces_forgotten_total %" PRIu64 "\n",
               u(m, "namespaces_forgotten"));
        family("nsid_idmapd_namespaces_refused_total", "counter",
               "Network namespaces refused by the per-owner bounds (max-netns-per-owner, "
               "max-netns-unprivileged).");
        fprintf(out, "nsid_idmapd_namespaces_refused_total %" PRIu64 "\n", u(m, "namespaces_refused"));
}

static const char *const ident_states[] = { "set", "unset", "no-nfs-client", "recorded",
                                            "gone", "error" };
#define N_IDENT_STATES (sizeof(ident_states) / sizeof(ident_states[0]))

/* The namespaces in each identifier state; returns those of containers that are unset with
 * NFS mounted. */
static uint64_t ident_counts(const survey *s, uint64_t n[N_IDENT_STATES]) {
        uint64_t unset_mounted = 0;
        for (size_t k = 0; k < N_IDENT_STATES; k++)
                n[k] = 0;
        for (size_t i = 0; i < s->n; i++) {
                const char *st = ns_ident_state(&s->f[i]);
                for (size_t k = 0; k < N_IDENT_STATES; k++)
                        if (strcmp(st, ident_states[k]) == 0)
                                n[k]++;
                if (strcmp(st, "unset") == 0 && s->f[i].info->nfs_mounted &&
                    !s->f[i].info->initial)
                        unset_mounted++;
        }
        return unset_mounted;
}

static void identity_metrics(const survey *s) {
        uint64_t n[N_IDENT_STATES], unset_mounted = ident_counts(s, n);
        family("nsid_identity_namespaces", "gauge",
               "Network namespaces by the state of their NFSv4 client identifier: set, unset, "
               "no-nfs-client (nfs not loaded), recorded (in nsid's registry, nfs not "
               "loaded), gone, error.");
        for (size_t k = 0; k < N_IDENT_STATES; k++)
                fprintf(out, "nsid_identity_namespaces{state=\"%s\"} %" PRIu64 "\n", ident_states[k],
                       n[k]);
        family("nsid_identity_unset_with_nfs_mounts", "gauge",
               "Containers' network namespaces with NFS mounted and no identifier: their "
               "client shares the host's name (a lease stealing risk).");
        fprintf(out, "nsid_identity_unset_with_nfs_mounts %" PRIu64 "\n", unset_mounted);
}

/* A label value: the history's escaped owner strings hold backslashes (\xHH) */
static void label_value(const char *v) {
        for (; *v; v++)
                fputs(*v == '\\' ? "\\\\" : (char[]) { *v, 0 }, out);
}

/* What nsidctl watch --server recorded, when this host keeps such a history (an NFS server
 * where it ran): the changes by kind, and the owner strings taken over most. */
static void server_metrics(json_object *json) {
        static const nsid_nfsd_change_kind kinds[] = {
                NSID_NFSD_CHANGE_TAKEOVER, NSID_NFSD_CHANGE_RESTART, NSID_NFSD_CHANGE_REPLACED,
                NSID_NFSD_CHANGE_REFUSED };
        const char *path = watch_history_path(), *err;
        watch_history *h = NULL;
        history_total *top = NULL;
        size_t ntop = 0;
        double lost = 0, events = 0;
        int running = watch_running();

        if (!path || history_open_read(path, &h, &err) < 0)
                return;
        (void) history_get_stat(h, "lost", &lost);
        (void) history_get_stat(h, "events", &events);
        if (history_owner_totals(h, NSID_NFSD_CHANGE_TAKEOVER, WATCH_METRICS_OWNERS, &top, &ntop) < 0)
                ntop = 0;
        if (json) {
                json_object *o = json_object_new_object(), *k = json_object_new_object(),
                            *ow = json_object_new_object();
                for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                        uint64_t n = 0;
                        (void) history_sum(h, kinds[i], &n);
                        json_object_object_add(k, nsid_nfsd_change_kind_to_string(kinds[i]),
                                               json_object_new_uint64(n));
                }
                for (size_t i = 0; i < ntop; i++)
                        json_object_object_add(ow, top[i].owner, json_object_new_uint64(top[i].n));
                json_object_object_add(o, "watch_running", json_object_new_boolean(running == 1));
                json_object_object_add(o, "changes", k);
                json_object_object_add(o, "owner_takeovers", ow);
                json_object_object_add(o, "events", json_object_new_uint64((uint64_t) events));
                json_object_object_add(o, "lost_events", json_object_new_uint64((uint64_t) lost));
                json_object_object_add(json, "server", o);
        } else {
                family("nsid_server_watch_up", "gauge",
                       "1 while nsidctl watch --server follows knfsd's client-id tracepoints.");
                fprintf(out, "nsid_server_watch_up %d\n", running == 1);
                family("nsid_server_changes_total", "counter",
                       "Changes of a client owner string's record on this NFS server, by kind: "
                       "takeover (another client took it: lease stealing), restart (a new "
                       "verifier from the holder's address), replaced (holder not known), "
                       "refused (other credentials, NFS4ERR_CLID_INUSE).");
                for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                        uint64_t n = 0;
                        (void) history_sum(h, kinds[i], &n);
                        fprintf(out, "nsid_server_changes_total{kind=\"%s\"} %" PRIu64 "\n",
                                nsid_nfsd_change_kind_to_string(kinds[i]), n);
                }
                family("nsid_server_owner_takeovers_total", "counter",
                       "Takeovers of the owner strings taken over most (at most 20 series).");
                for (size_t i = 0; i < ntop; i++) {
                        fputs("nsid_server_owner_takeovers_total{owner=\"", out);
                        label_value(top[i].owner);
                        fprintf(out, "\"} %" PRIu64 "\n", top[i].n);
                }
                family("nsid_server_watch_events_total", "counter",
                       "knfsd client-id trace events the running watcher read.");
                fprintf(out, "nsid_server_watch_events_total %.0f\n", events);
                family("nsid_server_watch_lost_events_total", "counter",
                       "Trace events the running watcher lost (its buffer overflowed).");
                fprintf(out, "nsid_server_watch_lost_events_total %.0f\n", lost);
        }
        history_totals_free(top, ntop);
        history_close(h);
}

/* text (len bytes) to path, atomically: a new file beside it, then renamed over it */
static int write_atomic(const char *path, const char *text, size_t len) {
        char *tmp = NULL;
        int fd, r = 0;

        if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkstemp(tmp);
        if (fd < 0) {
                r = -errno;
                free(tmp);
                return r;
        }
        for (size_t done = 0; done < len && r == 0;) {
                ssize_t n = write(fd, text + done, len - done);
                if (n < 0 && errno != EINTR)
                        r = -errno;
                else if (n > 0)
                        done += (size_t) n;
        }
        if (r == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0))
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(tmp);
        free(tmp);
        return r;
}

int cmd_metrics(void) {
        json_object *m = NULL;
        survey s;
        int r, dr;

        r = survey_run(&s);
        if (r < 0) {
                errorf("cannot enumerate network namespaces: %s", strerror(-r));
                survey_done(&s);
                return EXIT_FAIL;
        }
        dr = daemon_metrics(ctx_socket_path(), arg.timeout_ms, &m);
        char *buf = NULL;
        size_t len = 0;
        out = stdout;
        if (arg.output && !(out = open_memstream(&buf, &len))) {
                errorf("cannot buffer the metrics: %s", strerror(errno));
                json_object_put(m);
                survey_done(&s);
                return EXIT_FAIL;
        }
        if (arg.json) {
                json_object *o = json_object_new_object(), *id = json_object_new_object();
                uint64_t c[N_IDENT_STATES];
                (void) ident_counts(&s, c);
                for (size_t k = 0; k < N_IDENT_STATES; k++)
                        json_object_object_add(id, ident_states[k], json_object_new_uint64(c[k]));
                json_object_object_add(o, "identities", id);
                json_object_object_add(o, "idmapd", dr == 0 ? json_object_get(m) : NULL);
                server_metrics(o);
                if (dr < 0)
                        json_object_object_add(o, "idmapd_error",
                                               json_object_new_string(strerror(-dr)));
                if (out == stdout)
                        print_json(o);
                else
                        fprintf(out, "%s\n", json_object_to_json_string_ext(
                                                     o, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else {
                family("nsid_build_info", "gauge", "nsidctl's version, as a label.");
                fprintf(out, "nsid_build_info{version=\"%s\"} 1\n", NSID_VERSION);
                family("nsid_idmapd_up", "gauge",
                       "1 when nsidctl reached nsid-idmapd's control socket, else 0 (and no "
                       "nsid_idmapd_* series follow).");
                fprintf(out, "nsid_idmapd_up %d\n", dr == 0);
                if (dr == 0)
                        idmapd_metrics(m);
                else if (!arg.quiet)
                        warnf("nsid-idmapd not reachable at %s: %s", ctx_socket_path(),
                              strerror(-dr));
                identity_metrics(&s);
                server_metrics(NULL);
        }
        json_object_put(m);
        survey_done(&s);
        if (out == stdout)
                return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
        r = fclose(out) == 0 ? write_atomic(arg.output, buf, len) : -ENOMEM;
        free(buf);
        if (r < 0) {
                errorf("cannot write %s: %s", arg.output, strerror(-r));
                return EXIT_FAIL;
        }
        return EXIT_OK;
}
