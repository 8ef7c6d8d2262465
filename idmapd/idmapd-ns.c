/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: network namespaces (discovery, their context, forgetting them) and the
 * request path shared by pipes, channels and the control socket (cache, resolver, deadline).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <nsid/netns.h>
#include <nsid/registry.h>

#include "idmapd.h"
#include "paths.h"
#include "idmapd-cache.h"
#include "idmapd-resolve.h"
#include "idmapd-kernel.h"
#include "idmapd-ns.h"
#include "idmapd-metrics.h"
#include "idmapd-quota.h"

static unsigned scan_generation = 0;
static uint64_t next_seq = 0;
static atomic_bool prune_wanted; /* a namespace was forgotten: the registry may be pruned */

dm_ns *dm_ns_find(const nsid_ns_id *id) {
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                if (ns->id.dev == id->dev && ns->id.ino == id->ino)
                        return ns;
        return NULL;
}

dm_ns *dm_ns_find_ino(uint64_t ino) {
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                if (ns->id.ino == ino)
                        return ns;
        return NULL;
}

dm_ns *dm_ns_host(void) {
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                if (ns->initial)
                        return ns;
        return NULL;
}

static int is_initial_ns(const nsid_proc *p, nsid_ns_type t) {
        nsid_ns *n = NULL;
        int r = nsid_proc_open_ns(p, t, &n);
        if (r < 0)
                return r;
        r = nsid_ns_is_initial(n);
        nsid_ns_unref(n);
        return r;
}

/* Decide the context of a netns: the host's, or the container's that owns it. */
static void classify(dm_ns *ns, const nsid_netns_info *info) {
        char comm[4 * 32 + 1] = "";

        /* pipes carry host ids, knfsd channels those of the listener creator's user
         * namespace (doc/kernel-findings.md, "Namespace-local ids on the wire") */
        dm_kernel_views(ns, &ns->kernel_view, &ns->channel_view);
        char path[200] = "";
        /* a process's comm and a /run/netns name are chosen by whoever runs or made them:
         * escaped, so a log line or the status stays one line of plain text */
        if (info && info->comm)
                (void) dm_log_esc(info->comm, strnlen(info->comm, 32), comm, sizeof(comm));
        if (info && info->path)
                (void) dm_log_esc(info->path, strlen(info->path), path, sizeof(path));
        if (ns->initial) {
                ns->is_host = true;
                snprintf(ns->label, sizeof(ns->label), "netns:[%" PRIu64 "] host", ns->id.ino);
        } else if (!ns->proc) {
                /* `ip netns add` and friends: no process, the host's files (ip netns exec
                 * runs commands with the host's /etc) */
                ns->is_host = true;
                snprintf(ns->label, sizeof(ns->label), "netns:[%" PRIu64 "] %s (host context)",
                         ns->id.ino, path[0] ? path : "no process");
        } else {
                int m = is_initial_ns(ns->proc, NSID_NS_MNT);
                ns->is_host = m == 1;
                snprintf(ns->label, sizeof(ns->label), "netns:[%" PRIu64 "] pid %d (%s)%s%s",
                         ns->id.ino, (int) nsid_proc_get_pid(ns->proc), comm,
                         ns->is_host ? " host context" : "",
                         ns->kernel_view == DM_VIEW_NS ? " userns" : "");
        }
}

static void pending_complete(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl) {
        p->complete(p, a, cached, ttl);
}

void dm_stats_record(dm_ns *ns, int64_t start_us, int error) {
        int64_t us = dm_now_us() - start_us;
        unsigned i = 0;
        while (i < DM_LAT_BUCKETS - 1 && (int64_t) (1ll << i) <= us)
                i++;
        ns->stats.lat[i]++;
        ns->stats.lat_sum_us += (uint64_t) (us > 0 ? us : 0);
        if (error == -ENOENT)
                ns->stats.negatives++;
        else if (error < 0)
                ns->stats.failures++;
}

/* Its context decided again (its process changed, or left the host's mount namespace): the
 * resolver of the old context goes, and what was cached for it. The answers dropped. */
static size_t reclassify(dm_ns *ns, const nsid_netns_info *info) {
        dm_resolver_release(ns->resolver);
        ns->resolver = NULL;
        size_t dropped = dm_cache_flush(ns->cache);
        ns->stats.cache_flushed += dropped;
        classify(ns, info);
        return dropped;
}

/* A netns answered in the host's context because its process shares the host's mount
 * namespace (a process that entered a pre-made netns, as CNI's are made): that process may
 * take a mount namespace and files of its own at any moment, and nothing else would notice
 * while it lives (issue #28, "the right root": it kept the host's answers). Checked at each
 * request, one open of its /proc/PID/ns/mnt: once it has left, the netns is classified again
 * before the request is answered, and what was cached for it goes. */
static void recheck_host_context(dm_ns *ns) {
        if (!ns->is_host || ns->initial || !ns->proc || is_initial_ns(ns->proc, NSID_NS_MNT) != 0)
                return;
        size_t dropped = reclassify(ns, NULL);
        dm_log(LOG_INFO, ns, "its process left the host's mount namespace: now answered in the "
               "%s context (%zu cached answers dropped)", ns->is_host ? "host" : "container",
               dropped);
}

/* A request that could not be queued: answered with the error now. */
static int request_failed(dm_ns *ns, dm_pending *t, int64_t now, int r) {
        dm_answer a = { .error = r };

        pending_complete(t, &a, false, 0);
        dm_stats_record(ns, now, r);
        return r;
}

int dm_request(dm_ns *ns, const dm_query *q, const dm_pending *tmpl) {
        dm_pending t = *tmpl;
        dm_answer a;
        uint32_t ttl;
        int64_t now = dm_now_us();
        int r;

        recheck_host_context(ns);
        ns->stats.requests++;
        ns->last_request_us = now;
        t.ns = ns;
        t.q = *q;
        t.start_us = now;
        if (dm_cache_get(ns->cache, q, now, &a, &ttl) == 1) {
                ns->stats.hits++;
                pending_complete(&t, &a, true, ttl);
                dm_stats_record(ns, now, a.error);
                return 1;
        }
        ns->stats.misses++;
        if (ns->resolver && dm_resolver_answer_now(ns->resolver, q, &a)) {
                ns->stats.resolved[DM_SRC_FILES]++; /* (the loaded files, in this thread) */
                ttl = a.error == 0 ? dm.cfg.cache_ttl : dm.cfg.negative_ttl;
                dm_cache_put(ns->cache, q, &a, now + (int64_t) ttl * 1000000);
                pending_complete(&t, &a, false, ttl);
                dm_stats_record(ns, now, a.error);
                return 1;
        }
        if (!ns->resolver && !(ns->resolver = dm_resolver_new(ns)))
                return request_failed(ns, &t, now, -ENOMEM);
        ns->resolver_used_us = now;
        dm_pending *p = malloc(sizeof(*p));
        if (!p)
                return request_failed(ns, &t, now, -ENOMEM);
        *p = t;
        p->seq = ++next_seq;
        p->deadline_us = now + (int64_t) dm.cfg.request_timeout_ms * 1000;
        r = dm_resolver_submit(ns->resolver, p->seq, q);
        if (r < 0) {
                free(p);
                return request_failed(ns, &t, now, r);
        }
        p->next = ns->pending;
        ns->pending = p;
        return 0;
}

static dm_pending *pending_take(dm_ns *ns, uint64_t seq) {
        for (dm_pending **pp = &ns->pending; *pp; pp = &(*pp)->next)
                if ((*pp)->seq == seq) {
                        dm_pending *p = *pp;
                        *pp = p->next;
                        return p;
                }
        return NULL;
}

typedef struct scan_job scan_job;
static void scan_done(scan_job *j);

void dm_result_ready(void) {
        dm_result res;
        for (;;) {
                ssize_t n = read(dm.results_fd[0], &res, sizeof(res));
                if (n != (ssize_t) sizeof(res))
                        return; /* EAGAIN; writes of < PIPE_BUF bytes are atomic */
                if (res.kind == DM_RESULT_SCAN) {
                        scan_done(res.ptr);
                        continue;
                }
                dm_ns *ns = dm_ns_find(&res.ns_id);
                if (!ns)
                        continue; /* forgotten meanwhile */
                switch (res.kind) {
                case DM_RESULT_FLUSH: {
                        size_t k = dm_cache_flush(ns->cache);
                        ns->stats.cache_flushed += k;
                        dm_log(LOG_INFO, ns, "%s: %zu cached answers dropped", res.text, k);
                        break;
                }
                case DM_RESULT_IDENTIFIER:
                        ns->identifier_wanted = false;
                        snprintf(ns->identifier_state, sizeof(ns->identifier_state), "%s",
                                 res.text);
                        dm_log(strncmp(res.text, "failed", 6) == 0 ? LOG_WARNING : LOG_INFO, ns,
                               "NFS client identifier: %s", res.text);
                        break;
                case DM_RESULT_ANSWER: {
                        int64_t now = dm_now_us();
                        unsigned ttl = res.a.error == 0 ? dm.cfg.cache_ttl : dm.cfg.negative_ttl;
                        dm_cache_put(ns->cache, &res.q, &res.a, now + (int64_t) ttl * 1000000);
                        if (res.source < _DM_SRC_MAX)
                                ns->stats.resolved[res.source]++;
                        dm_pending *p = pending_take(ns, res.seq);
                        if (!p)
                                break; /* timed out already */
                        pending_complete(p, &res.a, false, ttl);
                        dm_stats_record(ns, p->start_us, res.a.error);
                        free(p);
                        break;
                }
                case DM_RESULT_SCAN:
                        break; /* (above) */
                }
        }
}

/* The earliest deadline of any pending request, 0 if none: the event loop wakes up for it,
 * so a request times out at its deadline, not at the next 100 ms tick. */
int64_t dm_pending_next_deadline_us(void) {
        int64_t next = 0;
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                for (dm_pending *p = ns->pending; p; p = p->next)
                        if (next == 0 || p->deadline_us < next)
                                next = p->deadline_us;
        return next;
}

void dm_pending_expire(int64_t now_us) {
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next) {
                dm_pending **pp = &ns->pending;
                while (*pp) {
                        dm_pending *p = *pp;
                        if (p->deadline_us > now_us) {
                                pp = &p->next;
                                continue;
                        }
                        *pp = p->next;
                        ns->stats.timeouts++;
                        dm_log(LOG_WARNING, ns, "request timed out after %u ms (its resolver "
                               "is stuck: its files on a hung mount, or its name service not "
                               "answering?); answered as a failure",
                               dm.cfg.request_timeout_ms);
                        dm_answer a = { .error = -ETIMEDOUT };
                        pending_complete(p, &a, false, 0);
                        dm_stats_record(ns, p->start_us, a.error);
                        free(p);
                }
        }
}

void dm_pending_drop_client(dm_client *c) {
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                for (dm_pending *p = ns->pending; p; p = p->next)
                        if (p->client == c) /* only the control socket's requests have one */
                                p->client = NULL;
}

void dm_pending_drop_pipe(dm_pipe *pp) {
        for (dm_pending *p = pp->ns->pending; p; p = p->next)
                if (p->pipe == pp) /* only a pipe's requests have one */
                        p->pipe = NULL;
}

static void ns_free(dm_ns *ns) {
        dm_metrics_forget(ns);
        dm_kernel_detach(ns);
        dm_pending *p = ns->pending;
        while (p) {
                dm_pending *n = p->next;
                dm_answer a = { .error = -ESRCH };
                p->next = NULL;
                pending_complete(p, &a, false, 0);
                free(p);
                p = n;
        }
        dm_resolver_release(ns->resolver);
        dm_cache_free(ns->cache);
        nsid_proc_unref(ns->proc);
        nsid_ns_unref(ns->netns);
        if (ns->admitted)
                dm_quota_release(&ns->owner);
        free(ns);
}

static dm_ns *ns_new(const nsid_netns_info *info) {
        nsid_ns *netns = NULL;
        nsid_proc *proc = NULL;
        int r;

        r = nsid_netns_info_open(info, &netns, &proc);
        if (r < 0)
                return NULL; /* gone meanwhile */
        dm_ns *ns = calloc(1, sizeof(*ns));
        if (!ns) {
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return NULL;
        }
        ns->id = info->id;
        ns->born_us = dm_now_us();
        ns->netns = netns;
        ns->proc = proc;
        ns->initial = info->initial;
        ns->pipefs_fd = -1;
        ns->pipefs_wd = -1;
        ns->chan_fd[0] = ns->chan_fd[1] = -1;
        ns->cache = dm_cache_new();
        snprintf(ns->identifier_state, sizeof(ns->identifier_state), "%s",
                 info->initial ? "host (not managed)" : "pending");
        if (!ns->cache) {
                ns_free(ns);
                return NULL;
        }
        if (!ns->initial) {
                r = dm_quota_classify(ns->netns, &ns->charged, &ns->owner);
                if (r < 0) {
                        /* not told apart: charged, to an owner of its own */
                        ns->charged = true;
                        ns->owner = (dm_owner) { .uid = (uid_t) -1 };
                }
        }
        classify(ns, info);
        return ns;
}

/* A namespace known before any process was in it (`ip netns add`, then a container's first
 * process entered it, as CNI and Kubernetes do) was answered in the host's context: from its
 * first process on, it is answered in that process's. Whatever was cached for it goes. */
static void adopt_first_process(dm_ns *ns, nsid_proc *p, const nsid_netns_info *info) {
        ns->proc = nsid_proc_ref(p);
        size_t dropped = reclassify(ns, info);
        dm_log(LOG_INFO, ns, "its first process appeared: now answered in the %s context "
               "(was the host's; %zu cached answers dropped)", ns->is_host ? "host" : "container",
               dropped);
}

/* Bring the namespaces in line with a scan of /proc begun at scan_us (and free it). */
static int rescan_apply(nsid_netns_info *v, size_t n, int64_t scan_us) {
        unsigned g = ++scan_generation;
        for (size_t i = 0; i < n; i++) {
                dm_ns *ns = dm_ns_find(&v[i].id);
                if (ns) {
                        ns->generation = g;
                        if (!ns->proc && !ns->initial && v[i].pid > 0) {
                                nsid_ns *nn = NULL;
                                nsid_proc *np = NULL;
                                if (nsid_netns_info_open(&v[i], &nn, &np) >= 0 && np)
                                        adopt_first_process(ns, np, &v[i]);
                                nsid_proc_unref(np);
                                nsid_ns_unref(nn);
                                continue;
                        }
                        /* its process went away but the netns lives on: take another one */
                        if (ns->proc && nsid_proc_check_alive(ns->proc) < 0) {
                                nsid_ns *nn = NULL;
                                nsid_proc *np = NULL;
                                if (nsid_netns_info_open(&v[i], &nn, &np) >= 0) {
                                        nsid_proc_unref(ns->proc);
                                        ns->proc = np;
                                        nsid_ns_unref(nn);
                                        (void) reclassify(ns, &v[i]);
                                        dm_log(LOG_INFO, ns, "context process replaced");
                                }
                        }
                        continue;
                }
                /* refused before (over its owner's bound): skipped, once its handle (no
                 * process opened) shows it is the namespace refused under that number */
                if (dm_quota_is_refused(&v[i].id, NULL, 0)) {
                        char path[64];
                        nsid_ns *found = NULL;
                        if (v[i].pid > 0)
                                snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) v[i].pid);
                        if (nsid_ns_open_path(v[i].pid > 0 ? path : v[i].path, NSID_NS_NET,
                                              &found) < 0)
                                found = NULL; /* gone meanwhile: the id alone */
                        bool refused = dm_quota_is_refused(&v[i].id, found, g);
                        nsid_ns_unref(found);
                        if (refused)
                                continue;
                }
                ns = ns_new(&v[i]);
                if (!ns)
                        continue;
                if (ns->charged) {
                        int q = dm_quota_admit(&ns->owner);
                        if (q < 0) {
                                dm_quota_refuse(&ns->id, ns->netns, &ns->owner, g);
                                dm_log(LOG_DEBUG, ns, "not served: %s", strerror(-q));
                                ns_free(ns);
                                continue;
                        }
                        ns->admitted = true;
                }
                ns->generation = g;
                ns->next = dm.namespaces;
                dm.namespaces = ns;
                dm_log(LOG_INFO, ns, "discovered (%s context, %s ids on the wire%s)",
                       ns->is_host ? "host" : "container",
                       ns->kernel_view == DM_VIEW_HOST ? "host" : "namespace-local",
                       ns->charged ? ", owned by a user namespace: attached on use" : "");
                /* A netns owned by a user namespace is attached only when a lookup of its
                 * NFS client is routed to it (`route`): the kernel refuses rpc_pipefs and
                 * the nfsd control fs there, even to root (doc/kernel-findings.md, "No knfsd
                 * and no idmap pipe in a netns owned by a user namespace"), so nothing it has
                 * needs a pipe or channel held open from the start; a netns owned by the
                 * initial one (only root makes those) is attached at once, as its NFS client
                 * or knfsd may start any moment. */
                if ((!ns->initial || dm.cfg.host_pipes) && !ns->charged)
                        dm_kernel_attach(ns);
                if (!ns->initial && dm.cfg.set_identifier) {
                        /* (the attach above may have made it already: a netns found with
                         * its NFS client mounted gets its context preloaded; a second one
                         * here leaked the first, a thread that never stopped) */
                        if (!ns->resolver)
                                ns->resolver = dm_resolver_new(ns);
                        if (ns->resolver) {
                                ns->identifier_wanted = true;
                                ns->resolver_used_us = dm_now_us();
                                dm_resolver_request_identifier(ns->resolver);
                        }
                }
        }
        nsid_netns_info_free(v, n);
        dm_quota_sweep(g);

        /* Unlink every namespace this scan did not see first, free them after: ns_free()
         * fails their pending control requests, which lets a client's next buffered line
         * run, and a lookup by pid there may rescan (dm_ns_register_pid). That nested scan
         * moves the generation on; had this loop still been walking the list, it would have
         * taken every live namespace for gone (a double free, seen in the soak). */
        dm_ns *gone = NULL;
        for (dm_ns **pp = &dm.namespaces; *pp;) {
                dm_ns *ns = *pp;
                /* (one found after the scan had begun, by a registration or another scan,
                 * was not there yet for this one to see) */
                if (ns->generation == g || ns->born_us >= scan_us) {
                        pp = &ns->next;
                        continue;
                }
                *pp = ns->next;
                ns->next = gone;
                gone = ns;
        }
        while (gone) {
                dm_ns *ns = gone;
                gone = ns->next;
                dm_log(LOG_INFO, ns, "gone: forgotten (%zu cached answers dropped)",
                       dm_cache_size(ns->cache));
                if (!ns->initial)
                        atomic_store(&prune_wanted, true);
                ns_free(ns);
        }
        return 0;
}

int dm_ns_rescan(void) {
        nsid_netns_info *v = NULL;
        size_t n = 0;
        int64_t t = dm_now_us();
        int r = nsid_netns_scan(&v, &n);
        if (r < 0) {
                dm_log(LOG_ERR, NULL, "network namespace scan failed: %s", strerror(-r));
                return r;
        }
        return rescan_apply(v, n, t);
}

/* ---- the periodic rescan, in a thread ----
 * Walking /proc (every process's namespaces, a mountinfo per mount namespace) took the
 * main thread away from the pipes and channels for as long as it lasted, every
 * rescan-interval: the requests that came meanwhile waited (bench-idmapd, uprobes on
 * dm_ns_rescan). The periodic one is a fallback (/run/netns is watched, hooks register), so a
 * thread of its own walks /proc, at nice 19 (with few CPUs, a scan taking its full share
 * still delayed answers: 35-900 ms of CPU a scan in the lab's TCG guests), and the main
 * thread only applies the result. The thread lives as long as the daemon (a thread count
 * that does not come and go with every scan). */
struct scan_job {
        int64_t started_us;
        nsid_netns_info *v;
        size_t n;
        int r;
};
/* ---- pruning the identity registry ----
 * Every netns given an identifier (set-identifier) is bound in the registry; nothing here
 * removed a binding when its netns went, so the table grew by one row per namespace ever
 * made, throwaway ones included. After a scan in which namespaces were forgotten, at most
 * once a minute, the scan thread removes the bindings of namespaces that scan did not see
 * (and, with them, the keys rows nothing uses: nsid_registry_prune()). A binding made after
 * the scan began (its netns maybe not walked yet) is left for the next one. */
#define PRUNE_EVERY_US (60 * 1000000ll)

typedef struct prune_view {
        const nsid_netns_info *v;
        size_t n;
        char boot_id[37];
        int64_t scan_started_s; /* wall clock */
        bool kept_recent;       /* a row was kept only for being recent: prune again later */
} prune_view;

static int prune_live(const nsid_registry_entry *e, void *userdata) {
        prune_view *pv = userdata;
        if (!e->boot_id || strcmp(e->boot_id, pv->boot_id) != 0)
                return 0; /* a netns of another boot */
        if (e->last_seen >= pv->scan_started_s - 2) {
                /* bound or refreshed while the scan ran: not known to be gone (yet) */
                pv->kept_recent = true;
                return 1;
        }
        for (size_t i = 0; i < pv->n; i++) {
                if (pv->v[i].id.dev != e->netns.dev || pv->v[i].id.ino != e->netns.ino)
                        continue;
                nsid_ns *ns = NULL;
                uint64_t cookie = 0;
                int r = nsid_netns_info_open(&pv->v[i], &ns, NULL);
                if (r >= 0)
                        r = nsid_netns_get_cookie(ns, &cookie);
                nsid_ns_unref(ns);
                if (r < 0)
                        return r == -ESRCH || r == -ENOENT || r == -ESTALE ? 0 : r;
                return cookie == e->netns_cookie; /* else: its inode reused */
        }
        return 0;
}

static void registry_prune(const nsid_netns_info *v, size_t n, int64_t scan_started_s) {
        static int64_t last_us;
        int64_t now = dm_now_us();
        if (!dm.cfg.set_identifier || !atomic_load(&prune_wanted) ||
            (last_us && now - last_us < PRUNE_EVERY_US))
                return;
        atomic_store(&prune_wanted, false);
        last_us = now;
        prune_view pv = { .v = v, .n = n, .scan_started_s = scan_started_s };
        if (nsid_boot_id(pv.boot_id) < 0)
                return;
        char path[300];
        (void) paths_registry(NULL, dm.cfg.state_dir, path, sizeof(path));
        nsid_registry *reg = NULL;
        if (access(path, F_OK) < 0 || nsid_registry_open(path, 0, &reg) < 0)
                return;
        int r = nsid_registry_prune(reg, prune_live, &pv);
        /* Rows kept for being recent may be of namespaces that went right after: without
         * this, nothing forgotten later, they would stay until some other netns goes. */
        if (pv.kept_recent)
                atomic_store(&prune_wanted, true);
        if (r > 0)
                dm_log(LOG_INFO, NULL, "registry: %d binding%s of network namespaces that are "
                       "gone removed", r, r == 1 ? "" : "s");
        else if (r < 0)
                dm_log(LOG_WARNING, NULL, "registry %s: cannot remove the bindings of "
                       "namespaces that are gone: %s", path, strerror(-r));
        nsid_registry_unref(reg);
}

static pthread_t scan_thread;
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t scan_cond = PTHREAD_COND_INITIALIZER;
static bool scan_started = false, scan_running = false; /* main thread only */
static bool scan_want = false, scan_quit = false;      /* under scan_lock */

static void *scan_main(void *arg) {
        (void) setpriority(PRIO_PROCESS, (id_t) gettid(), 19);
        for (;;) {
                pthread_mutex_lock(&scan_lock);
                while (!scan_want && !scan_quit)
                        pthread_cond_wait(&scan_cond, &scan_lock);
                bool quit = scan_quit;
                scan_want = false;
                pthread_mutex_unlock(&scan_lock);
                if (quit)
                        return NULL;
                scan_job *j = calloc(1, sizeof(*j));
                if (!j) {
                        dm_result res = { .kind = DM_RESULT_SCAN, .ptr = NULL };
                        (void) !write(dm.results_fd[1], &res, sizeof(res));
                        continue;
                }
                j->started_us = dm_now_us();
                int64_t wall = (int64_t) time(NULL);
                j->r = nsid_netns_scan(&j->v, &j->n);
                if (j->r >= 0)
                        registry_prune(j->v, j->n, wall);
                dm_result res = { .kind = DM_RESULT_SCAN, .ptr = j };
                /* one write of less than PIPE_BUF bytes on a blocking pipe: whole or not at all */
                if (write(dm.results_fd[1], &res, sizeof(res)) != (ssize_t) sizeof(res)) {
                        nsid_netns_info_free(j->v, j->n);
                        free(j);
                }
        }
}

void dm_ns_rescan_async(void) {
        if (scan_running)
                return;
        if (!scan_started) {
                pthread_attr_t a;
                pthread_attr_init(&a);
                pthread_attr_setstacksize(&a, 256 * 1024);
                int e = pthread_create(&scan_thread, &a, scan_main, NULL);
                pthread_attr_destroy(&a);
                if (e != 0) {
                        (void) dm_ns_rescan();
                        return;
                }
                scan_started = true;
        }
        pthread_mutex_lock(&scan_lock);
        scan_want = true;
        pthread_cond_signal(&scan_cond);
        pthread_mutex_unlock(&scan_lock);
        scan_running = true;
}

static void scan_done(scan_job *j) {
        scan_running = false;
        if (!j)
                return;
        if (j->r < 0)
                dm_log(LOG_ERR, NULL, "network namespace scan failed: %s", strerror(-j->r));
        else
                (void) rescan_apply(j->v, j->n, j->started_us);
        free(j);
}

/* At exit: the thread ends (after the scan it may be in); a result on its way is freed. */
static void scan_stop(void) {
        if (!scan_started)
                return;
        pthread_mutex_lock(&scan_lock);
        scan_quit = true;
        pthread_cond_signal(&scan_cond);
        pthread_mutex_unlock(&scan_lock);
        (void) pthread_join(scan_thread, NULL);
        scan_started = scan_running = false;
        dm_result res;
        while (read(dm.results_fd[0], &res, sizeof(res)) == (ssize_t) sizeof(res))
                if (res.kind == DM_RESULT_SCAN && res.ptr) {
                        scan_job *j = res.ptr;
                        nsid_netns_info_free(j->v, j->n);
                        free(j);
                }
}

int dm_ns_register_pid(pid_t pid, dm_ns **ret) {
        nsid_proc *p = NULL;
        nsid_ns *n = NULL;
        nsid_ns_id id;
        int r;

        r = nsid_proc_open(pid, &p);
        if (r >= 0)
                r = nsid_proc_open_ns(p, NSID_NS_NET, &n);
        if (r >= 0)
                r = nsid_ns_get_id(n, &id);
        if (r < 0) {
                nsid_ns_unref(n);
                nsid_proc_unref(p);
                return r;
        }
        dm_ns *ns = dm_ns_find(&id);
        /* over its owner's bound: answered at once, without a scan of /proc each time */
        if (!ns && dm_quota_is_refused(&id, n, 0)) {
                nsid_ns_unref(n);
                nsid_proc_unref(p);
                return -EUSERS;
        }
        if (!ns) {
                (void) dm_ns_rescan();
                ns = dm_ns_find(&id);
                if (!ns && dm_quota_is_refused(&id, n, 0)) {
                        nsid_ns_unref(n);
                        nsid_proc_unref(p);
                        return -EUSERS;
                }
        }
        nsid_ns_unref(n);
        /* the pid named is in that netns (its ns link said so, through its pidfd) */
        if (ns && !ns->proc && !ns->initial && nsid_proc_check_alive(p) >= 0)
                adopt_first_process(ns, p, NULL);
        nsid_proc_unref(p);
        if (!ns)
                return -ESRCH;
        *ret = ns;
        return 0;
}

void dm_ns_preload(dm_ns *ns) {
        if (ns->is_host)
                return; /* libnfsidmap: nothing to load */
        if (!ns->resolver)
                ns->resolver = dm_resolver_new(ns);
        if (ns->resolver) {
                ns->resolver_used_us = dm_now_us();
                dm_resolver_preload(ns->resolver);
        }
}

void dm_ns_free_all(void) {
        scan_stop();
        while (dm.namespaces) {
                dm_ns *ns = dm.namespaces;
                dm.namespaces = ns->next;
                ns_free(ns);
        }
        dm_quota_free_all();
}

/* A resolver thread per namespace lived as long as its namespace: one per netns ever given an
 * identifier or asked anything, so any user could make the daemon hold a thread (256 KiB of
 * stack, a task) per namespace it made. One with nothing to do -- no request pending, no
 * cached answer to keep current (dm_ns_periodic's passwd/group checks), no identifier to set
 * -- for idle-thread-timeout is ended; the next request makes a new one (which loads the
 * container's files again, as after a context change). Returns how many were ended. */
static unsigned reap_idle_resolvers(int64_t now_us) {
        int64_t idle = (int64_t) dm.cfg.idle_thread_timeout * 1000000;
        unsigned n = 0;
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next) {
                if (!ns->resolver || ns->pending || ns->identifier_wanted ||
                    dm_cache_size(ns->cache) > 0 || now_us - ns->resolver_used_us < idle ||
                    (ns->last_request_us && now_us - ns->last_request_us < idle))
                        continue;
                dm_resolver_release(ns->resolver);
                ns->resolver = NULL;
                n++;
        }
        return n;
}

void dm_ns_periodic(int64_t now_us) {
        static int64_t next_rescan = 0, next_refresh = 0, next_expire = 0, next_reap = 0;
        if (now_us >= next_rescan) {
                next_rescan = now_us + (int64_t) dm.cfg.rescan_interval * 1000000;
                dm_ns_rescan_async();
                dm_kernel_idkeys_refresh(); /* nfsv4 loaded, unloaded or replaced since */
        }
        if (now_us >= next_refresh) {
                next_refresh = now_us + (int64_t) dm.cfg.refresh_interval * 1000000;
                /* Namespaces with cached answers, and those asked within one cache-ttl
                 * (their cache flushed, the answers not yet asked again): without a check
                 * kept current, the first request after a flush waited for a whole check of
                 * passwd, group and idmapd.conf through the container's root (the max of the
                 * lab bench's chown pass). An idle namespace is not checked. */
                int64_t active = (int64_t) dm.cfg.cache_ttl * 1000000;
                for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                        if (ns->resolver && (dm_cache_size(ns->cache) > 0 ||
                                             (ns->last_request_us &&
                                              now_us - ns->last_request_us < active)))
                                dm_resolver_poke_refresh(ns->resolver);
        }
        if (now_us >= next_expire) {
                next_expire = now_us + 30 * 1000000ll;
                for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                        ns->stats.cache_expired += dm_cache_expire(ns->cache, now_us);
        }
        if (now_us >= next_reap) {
                next_reap = now_us + 5 * 1000000ll;
                unsigned n = reap_idle_resolvers(now_us);
                if (n)
                        dm_log(LOG_DEBUG, NULL, "%u idle resolver thread%s ended", n,
                               n == 1 ? "" : "s");
        }
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                if (ns->next_attach_us && now_us >= ns->next_attach_us &&
                    (!ns->initial || dm.cfg.host_pipes))
                        dm_kernel_attach(ns);
        dm_pending_expire(now_us);
        dm_keys_run(now_us);
}
