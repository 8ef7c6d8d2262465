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
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/registry.h>

#include "nsidctl.h"
#include "fd-util.h"
#include "http.h"
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

/* A label value as the exposition format wants it: backslash, double quote and line feed
 * escaped (the values here are already escaped texts, \xHH: their backslashes double) */
static void label_value(const char *v) {
        for (; *v; v++)
                fputs(*v == '\\' ? "\\\\" : *v == '"' ? "\\\"" : *v == '\n' ? "\\n"
                                                                    : (char[]) { *v, 0 },
                      out);
}

/* The container namespaces that fare worst, as the daemon ranks them (at most 10) */
static void top_namespaces(json_object *m) {
        json_object *top = member(m, "namespaces_top");
        size_t n = top && json_object_is_type(top, json_type_array) ? json_object_array_length(top)
                                                                    : 0;
        static const struct {
                const char *name, *help;
        } fam[] = {
                { "nsid_idmapd_namespace_lookups_total",
                  "Lookups of the (at most 10) container namespaces that fare worst: most "
                  "failures and timeouts, then most lookups. netns is the namespace's inode." },
                { "nsid_idmapd_namespace_failures_total",
                  "Failed lookups of the same namespaces, by reason (timeout, error)." },
        };
        for (size_t f = 0; f < 2; f++) {
                family(fam[f].name, "counter", fam[f].help);
                for (size_t i = 0; i < n; i++) {
                        json_object *o = json_object_array_get_idx(top, i), *l;
                        const char *label = json_object_object_get_ex(o, "label", &l)
                                                    ? json_object_get_string(l)
                                                    : "";
                        uint64_t all = u(o, "failures"), to = u(o, "timeouts");
                        for (int r = 0; r < (f ? 2 : 1); r++) {
                                fprintf(out, "%s{netns=\"%" PRIu64 "\",name=\"", fam[f].name,
                                        u(o, "netns"));
                                label_value(label);
                                if (f == 0)
                                        fprintf(out, "\"} %" PRIu64 "\n", u(o, "requests"));
                                else
                                        fprintf(out, "\",reason=\"%s\"} %" PRIu64 "\n",
                                                r ? "error" : "timeout",
                                                r ? (all > to ? all - to : 0) : to);
                        }
                }
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
        per_context(ctx, "nsid_idmapd_key_invalidation_retries_total", "counter",
                    "Invalidations the kernel refused for the moment (the NFS client that asked "
                    "did not have the key back yet) and that were tried again.",
                    "key_retries");
        per_context(ctx, "nsid_idmapd_key_invalidations_abandoned_total", "counter",
                    "Keys never invalidated: not allowed within 10 minutes, or an error (one "
                    "namespace's answer may then have reached another).",
                    "key_give_ups");
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
        top_namespaces(m);
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

/* nsid-uniquifier's outcomes, counted in the registry: a fixed set of words */
static const char *const outcome_words[] = { "set", "already-set", "too-late", "no-nfs-client",
                                             "refused", "failed" };
#define N_OUTCOMES (sizeof(outcome_words) / sizeof(outcome_words[0]))

static int outcome_counts(uint64_t n[N_OUTCOMES]) {
        nsid_registry_outcome *v = NULL;
        nsid_registry *reg = NULL;
        size_t nv = 0;
        int r;

        memset(n, 0, N_OUTCOMES * sizeof(uint64_t));
        out_log_quiet(true);
        r = nsid_registry_open(ctx_registry_path(), NSID_REGISTRY_READONLY, &reg);
        if (r >= 0)
                r = nsid_registry_get_outcomes(reg, &v, &nv);
        out_log_quiet(false);
        for (size_t i = 0; r >= 0 && i < nv; i++)
                for (size_t k = 0; k < N_OUTCOMES; k++)
                        if (strcmp(v[i].outcome, outcome_words[k]) == 0)
                                n[k] = v[i].n;
        free(v);
        nsid_registry_unref(reg);
        return r == -ENOENT ? 0 : r;
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
        uint64_t oc[N_OUTCOMES];
        if (outcome_counts(oc) < 0 && !arg.quiet)
                warnf("cannot read the outcome counts in %s", ctx_registry_path());
        family("nsid_identity_outcomes_total", "counter",
               "What nsid-uniquifier's attempts to set a namespace's identifier ended in (udev, "
               "hooks, reconcile): set, already-set, too-late (NFS was mounted first), "
               "no-nfs-client, refused (another identifier set, or the identity another live "
               "namespace holds), failed. Kept in the identity registry.");
        for (size_t k = 0; k < N_OUTCOMES; k++)
                fprintf(out, "nsid_identity_outcomes_total{outcome=\"%s\"} %" PRIu64 "\n",
                        outcome_words[k], oc[k]);
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

/* Everything, as the exposition format (or one JSON object with --json), into f. */
static int render(FILE *f) {
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
        out = f;
        if (arg.json) {
                json_object *o = json_object_new_object(), *id = json_object_new_object();
                uint64_t c[N_IDENT_STATES];
                (void) ident_counts(&s, c);
                for (size_t k = 0; k < N_IDENT_STATES; k++)
                        json_object_object_add(id, ident_states[k], json_object_new_uint64(c[k]));
                json_object_object_add(o, "identities", id);
                json_object *oj = json_object_new_object();
                uint64_t oc[N_OUTCOMES];
                (void) outcome_counts(oc);
                for (size_t k = 0; k < N_OUTCOMES; k++)
                        json_object_object_add(oj, outcome_words[k], json_object_new_uint64(oc[k]));
                json_object_object_add(o, "identity_outcomes", oj);
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
        return EXIT_OK;
}

/* nsidctl metrics --http: one request on stdin (a connection nsid-metrics.socket accepted),
 * the response on stdout. The head is read for at most HTTP_READ_MS in all. */
#define HTTP_READ_MS 5000
static int serve_http(void) {
        char head[HTTP_HEAD_MAX], hdr[256];
        const char *text;
        http_verdict v = HTTP_INCOMPLETE;
        size_t n = 0, len = 0;
        char *body = NULL;
        int is_head = 0, code, r = EXIT_OK;
        FILE *f;

        for (int waited = 0; v == HTTP_INCOMPLETE && n < sizeof(head);) {
                struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
                ssize_t k;
                if (waited >= HTTP_READ_MS || poll(&p, 1, 100) < 0)
                        break;
                waited += 100;
                if (!(p.revents & (POLLIN | POLLHUP)))
                        continue;
                k = read(STDIN_FILENO, head + n, sizeof(head) - n);
                if (k <= 0)
                        break;
                n += (size_t) k;
                v = http_request_judge(head, n, &is_head);
        }
        if (v == HTTP_INCOMPLETE)
                v = HTTP_BAD_REQUEST; /* closed, too slow or too long */
        code = http_status(v, &text);
        if (v == HTTP_METRICS) {
                f = open_memstream(&body, &len);
                if (!f || render(f) != EXIT_OK) {
                        if (f)
                                fclose(f);
                        free(body);
                        body = NULL;
                        code = 503;
                        text = "Service Unavailable";
                        r = EXIT_FAIL;
                } else if (fclose(f) != 0) {
                        free(body);
                        body = NULL;
                        code = 503;
                        text = "Service Unavailable";
                        r = EXIT_FAIL;
                }
        }
        if (!body) {
                if (asprintf(&body, "%d %s\n", code, text) < 0)
                        return EXIT_FAIL;
                len = strlen(body);
        }
        snprintf(hdr, sizeof(hdr),
                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                 "Connection: close\r\n%s\r\n",
                 code, text,
                 code == 200 ? (arg.json ? "application/json" : "text/plain; version=0.0.4; charset=utf-8")
                             : "text/plain; charset=utf-8",
                 len, code == 405 ? "Allow: GET, HEAD\r\n" : "");
        if (write_all(STDOUT_FILENO, hdr, strlen(hdr)) < 0 ||
            (!is_head && write_all(STDOUT_FILENO, body, len) < 0))
                r = EXIT_FAIL;
        free(body);
        if (code != 200 && !arg.quiet)
                warnf("answered %d %s", code, text);
        return code == 200 ? r : (code == 503 ? EXIT_FAIL : EXIT_OK);
}

int cmd_metrics(void) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        if (arg.http)
                return serve_http();
        if (!arg.output) {
                r = render(stdout);
                return r == EXIT_OK && fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
        }
        f = open_memstream(&buf, &len);
        if (!f) {
                errorf("cannot buffer the metrics: %s", strerror(errno));
                return EXIT_FAIL;
        }
        r = render(f);
        if (fclose(f) != 0 && r == EXIT_OK)
                r = EXIT_FAIL;
        if (r == EXIT_OK) {
                int w = write_atomic(arg.output, buf, len);
                if (w < 0) {
                        errorf("cannot write %s: %s", arg.output, strerror(-w));
                        r = EXIT_FAIL;
                }
        }
        free(buf);
        return r;
}
