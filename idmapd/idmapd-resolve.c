/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: resolvers. Each namespace has its own thread, so a container whose files sit
 * on a hung mount stalls only its own thread: the main loop answers that namespace's
 * requests with a failure at their deadline and keeps serving everyone else.
 *
 *  - host context: libnfsidmap with the host's idmapd.conf (Method = nsswitch, static, ...),
 *    as rpc.idmapd does; calls are serialised (libnfsidmap is not thread-safe);
 *  - container context, as rpc.idmapd run in the container would answer: its context is
 *    read and parsed by an unprivileged worker (idmapd-load.c; the daemon only stats its
 *    files). Where its nsswitch.conf names only files for passwd and group and its
 *    idmapd.conf asks nothing beyond nsswitch, its etc/passwd and etc/group, parsed there,
 *    answer from memory (the fast path); otherwise each lookup is answered by its own name
 *    service and libnfsidmap, in nsid-nss-query run inside it (idmapd-nss.c). Ids are
 *    translated through its uid_map/gid_map when the kernel interprets them in the initial
 *    user namespace (unmapped -> the overflow id), untranslated when it interprets them in
 *    the container's own (dm_kernel_views() says which, per side).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include <nfsidmap.h>
#include <nsid/conffile.h>
#include <nsid/file.h>
#include <nsid/identity.h>
#include <nsid/netns.h>
#include <nsid/nfsclient.h>
#include <nsid/registry.h>
#include <nsid/resolv.h>

#include "idmapd.h"
#include "macro.h"
#include "paths.h"
#include "idmapd-resolve.h"
#include "idmapd-load.h"
#include "idmapd-nss.h"

#define CONF_MAX (64u * 1024u)

static pthread_mutex_t nfsidmap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t identifier_lock = PTHREAD_MUTEX_INITIALIZER;
static char host_domain[NFS4_MAX_DOMAIN_LEN] = "localdomain";

typedef enum job_kind { JOB_QUERY, JOB_STOP, JOB_LOAD } job_kind;

typedef struct job {
        struct job *next;
        job_kind kind;
        uint64_t seq;
        dm_query q;
} job;

struct dm_resolver {
        atomic_int refs;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        job *head, *tail;
        bool started, want_refresh, want_identifier;
        /* a passwd/group check asked for and not done yet (set by the main thread under
         * lock, cleared by the resolver thread when the check is over) */
        atomic_bool refresh_due;
        /* immutable */
        nsid_ns_id ns_id;
        bool is_host, initial;
        nsid_ns *netns;
        nsid_proc *proc;
        char label[160];
        /* written by the resolver thread only, under db_lock; the main thread reads them under
         * db_lock (dm_resolver_answer_now), the resolver thread reads them without it */
        pthread_mutex_t db_lock;
        dm_context *ctx;
        dm_nss_agent *agent; /* its nsid-nss-query, when its name service answers */
        bool nss_failing;    /* its last name-service lookup failed (status: nss_error) */
        nsid_idmap *map[2];
        int64_t last_refresh_us;
        /* snapshot for status (under lock) */
        char info_domain[512];
        uint64_t info_users, info_groups, info_checks;
        int info_error;
        dm_nss_info info_nss;
};

int dm_resolve_global_init(char *err, size_t errlen) {
        int r;
        pthread_mutex_lock(&nfsidmap_lock);
        r = nfs4_init_name_mapping(dm.cfg.idmapd_conf);
        if (r == 0)
                r = nfs4_get_default_domain(NULL, host_domain, sizeof(host_domain));
        pthread_mutex_unlock(&nfsidmap_lock);
        if (r != 0) {
                snprintf(err, errlen, "libnfsidmap with %s: %s", dm.cfg.idmapd_conf,
                         strerror(r < 0 ? -r : EINVAL));
                return r < 0 ? r : -EINVAL;
        }
        return 0;
}

void dm_resolve_global_reload(void) {
        char e[256];
        pthread_mutex_lock(&nfsidmap_lock);
        nfs4_term_name_mapping();
        pthread_mutex_unlock(&nfsidmap_lock);
        if (dm_resolve_global_init(e, sizeof(e)) < 0)
                dm_log(LOG_ERR, NULL, "reload: %s", e);
}

const char *dm_query_kind_name(const dm_query *q) {
        switch (q->kind) {
        case NSID_IDMAP_KEY_UID:
                return "uid";
        case NSID_IDMAP_KEY_GID:
                return "gid";
        case NSID_IDMAP_KEY_USER:
                return "user";
        case NSID_IDMAP_KEY_GROUP:
                return "group";
        default:
                return "?";
        }
}

const char *dm_host_domain(void) {
        return host_domain;
}

static void post(const dm_result *res) {
        const char *p = (const char *) res;
        size_t left = sizeof(*res);
        while (left > 0) {
                ssize_t n = write(dm.results_fd[1], p, left);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                p += n;
                left -= (size_t) n;
        }
}

/* ---- host context ---- */

static void resolve_host(const dm_query *q, dm_answer *a) {
        int r;
        pthread_mutex_lock(&nfsidmap_lock);
        switch (q->kind) {
        case NSID_IDMAP_KEY_UID: {
                uid_t u = (uid_t) -1;
                r = nfs4_owner_to_uid((char *) q->name, &u);
                a->id = u;
                break;
        }
        case NSID_IDMAP_KEY_GID: {
                gid_t g = (gid_t) -1;
                r = nfs4_group_owner_to_gid((char *) q->name, &g);
                a->id = g;
                break;
        }
        case NSID_IDMAP_KEY_USER:
                r = nfs4_uid_to_name(q->id, host_domain, a->name, sizeof(a->name));
                break;
        case NSID_IDMAP_KEY_GROUP:
                r = nfs4_gid_to_name(q->id, host_domain, a->name, sizeof(a->name));
                break;
        default:
                r = -EINVAL;
        }
        pthread_mutex_unlock(&nfsidmap_lock);
        if (r != 0)
                a->error = -ENOENT; /* unknown: a negative answer */
        else if ((q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_GID) &&
                 a->id == UINT32_MAX)
                a->error = -ENOENT;
}

/* A host-context netns whose process is in another user namespace (a netns made by a
 * rootless runtime that shares the host's files): libnfsidmap's host ids are translated to
 * that namespace's ids for the namespace view. Identity maps otherwise. */
static void host_ns_view(dm_resolver *r, const dm_query *q, dm_answer *a) {
        bool user = q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_USER;
        int k = user ? 0 : 1;
        if (!r->proc) {
                resolve_host(q, a);
                return;
        }
        if (!r->map[k] && nsid_idmap_load_proc(r->proc, user ? NSID_IDMAP_UID : NSID_IDMAP_GID,
                                               &r->map[k]) < 0) {
                a->error = -ESRCH;
                return;
        }
        if (q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_GID) {
                resolve_host(q, a);
                if (a->error == 0)
                        (void) nsid_idmap_to_ns_munged(r->map[k], a->id, &a->id);
        } else {
                dm_query hq = *q;
                if (nsid_idmap_to_host(r->map[k], q->id, &hq.id) < 0) {
                        a->error = -ENOENT;
                        return;
                }
                resolve_host(&hq, a);
        }
}

/* ---- which ids the kernel presents ----
 *
 * The kernel converts ids at its edge in one user namespace, not always the netns owner's
 * (doc/kernel-findings.md, "Namespace-local ids on the wire"):
 *  - client pipes: idmap->user_ns, the user namespace of the cred that created the nfs_client.
 *    On 6.1 and 6.12 only creds of the initial user namespace can create one (mount(2) and
 *    fsopen() from a user namespace are refused), and a client the host makes inside a netns
 *    owned by a user namespace (setns + mount) still belongs to the initial one: host ids,
 *    translated through the container's uid_map/gid_map (unmapped -> overflow id).
 *  - knfsd channels: nfsd_user_namespace(), the user namespace of the cred that created the
 *    listener (xpt_cred = f_cred of whoever opened /proc/fs/nfsd/portlist, or threads when
 *    that creates the default listeners). The nfsd control fs mounts only in a netns owned by
 *    the initial user namespace, but a container whose processes run in their own user
 *    namespace (root mapped to a host uid that owns those files) starts knfsd from inside with
 *    rpc.nfsd: then ids on the channels are already local to that namespace, answered
 *    untranslated. Nothing the kernel exposes names the listener's cred; the container's
 *    process (the context) stands for whoever ran rpc.nfsd in that netns.
 */
void dm_kernel_views(const dm_ns *ns, dm_view *ret_pipe, dm_view *ret_channel) {
        nsid_ns *u = NULL;

        *ret_pipe = DM_VIEW_HOST;
        *ret_channel = DM_VIEW_HOST;
        if (ns->initial || !ns->proc || nsid_proc_open_ns(ns->proc, NSID_NS_USER, &u) < 0)
                return;
        if (nsid_ns_is_initial(u) == 0)
                *ret_channel = DM_VIEW_NS;
        nsid_ns_unref(u);
}

/* ---- container context ---- */

/* How long a worker may take to read and parse a container's files: a hung mount costs
 * only this namespace's thread, and the main loop answers its requests at their deadline. */
#define LOAD_TIMEOUT_MS 30000

static void snapshot(dm_resolver *r, int error, const char *why) {
        pthread_mutex_lock(&r->lock);
        if (r->ctx) {
                snprintf(r->info_domain, sizeof(r->info_domain), "%s", r->ctx->domain);
                r->info_users = r->ctx->users;
                r->info_groups = r->ctx->groups;
                r->info_nss.nss = r->ctx->nss;
                r->info_nss.libnfsidmap_conf = r->ctx->conf_libnfsidmap;
                nss_sources_format(&r->ctx->passwd, r->info_nss.passwd, sizeof(r->info_nss.passwd));
                nss_sources_format(&r->ctx->group, r->info_nss.group, sizeof(r->info_nss.group));
        } else if (r->is_host)
                snprintf(r->info_domain, sizeof(r->info_domain), "%s", host_domain);
        r->info_error = error;
        if (why)
                snprintf(r->info_nss.last_error, sizeof(r->info_nss.last_error), "%s", why);
        pthread_mutex_unlock(&r->lock);
}

static int load_context(dm_resolver *r, dm_context **ret) {
        char err[256] = "";
        int e = dm_context_load(r->proc, host_domain, LOAD_TIMEOUT_MS, ret, err, sizeof(err));
        if (e < 0) {
                dm_log(LOG_WARNING, NULL, "%s: cannot load its context: %s", r->label, err);
                return e;
        }
        if ((*ret)->baddomain)
                dm_log(LOG_WARNING, NULL, "%s: its idmapd.conf Domain is not a valid "
                       "domain name; using the host's (%s)", r->label, host_domain);
        if ((*ret)->nss && !dm_nss_available())
                dm_log(LOG_WARNING, NULL, "%s: its name service is not files only, and "
                       "nsid-nss-query is not installed: its lookups fail", r->label);
        return 0;
}

static int ensure_loaded(dm_resolver *r) {
        dm_context *ctx = NULL;
        nsid_idmap *map[2] = {};
        int e;
        if (r->ctx)
                return 0;
        e = load_context(r, &ctx);
        if (e < 0) {
                snapshot(r, e, NULL);
                return e;
        }
        for (int k = 0; k < 2; k++) {
                e = nsid_idmap_load_proc(r->proc, k == 0 ? NSID_IDMAP_UID : NSID_IDMAP_GID,
                                         &map[k]);
                if (e < 0) {
                        dm_log(LOG_WARNING, NULL, "%s: cannot read its %s: %s", r->label,
                               k == 0 ? "uid_map" : "gid_map", strerror(-e));
                        dm_context_free(ctx);
                        nsid_idmap_unref(map[0]);
                        snapshot(r, e, NULL);
                        return e;
                }
        }
        if (ctx->nss) {
                char pw[NSS_SOURCES_MAX * NSS_SOURCE_NAME_MAX], gr[sizeof(pw)];
                nss_sources_format(&ctx->passwd, pw, sizeof(pw));
                nss_sources_format(&ctx->group, gr, sizeof(gr));
                dm_log(LOG_INFO, NULL, "%s: answered by its own name service (passwd: %s; "
                       "group: %s%s)", r->label, pw, gr,
                       ctx->conf_libnfsidmap ? "; its idmapd.conf's methods" : "");
        }
        pthread_mutex_lock(&r->db_lock);
        r->ctx = ctx;
        r->map[0] = map[0];
        r->map[1] = map[1];
        r->last_refresh_us = dm_now_us();
        pthread_mutex_unlock(&r->db_lock);
        snapshot(r, 0, NULL);
        return 0;
}

/* Check the container's files (stat only); on change reload its context and post a cache
 * flush. (Not inlined: the lab bench counts and times the checks with a uprobe on it,
 * bench/idmapd/lab-bench.sh.) */
static void refresh_check(dm_resolver *r) __attribute__((noinline));
static void refresh(dm_resolver *r) {
        refresh_check(r);
        atomic_store(&r->refresh_due, false);
}

static void refresh_check(dm_resolver *r) {
        dm_context *n = NULL;
        int e;

        if (!r->ctx)
                return;
        pthread_mutex_lock(&r->db_lock);
        r->last_refresh_us = dm_now_us();
        pthread_mutex_unlock(&r->db_lock);
        pthread_mutex_lock(&r->lock);
        r->info_checks++;
        pthread_mutex_unlock(&r->lock);
        dm_nss_agent_reap_idle(r->agent);
        e = dm_context_changed(r->ctx, r->proc);
        if (e == 0)
                return;
        if (e < 0) {
                dm_log(LOG_INFO, NULL, "%s: checking its files failed: %s", r->label,
                       strerror(-e));
                return;
        }
        if (load_context(r, &n) < 0)
                return;
        dm_nss_agent_stop(r->agent); /* it read the old configuration */
        bool domain_changed = strcmp(n->domain, r->ctx->domain) != 0;
        pthread_mutex_lock(&r->db_lock);
        dm_context *old = r->ctx;
        r->ctx = n;
        pthread_mutex_unlock(&r->db_lock);
        dm_context_free(old);
        snapshot(r, 0, NULL);
        dm_result res = { .kind = DM_RESULT_FLUSH, .ns_id = r->ns_id };
        if (domain_changed)
                snprintf(res.text, sizeof(res.text), "domain changed");
        else
                snprintf(res.text, sizeof(res.text), "%s changed", dm_context_watched_name(e));
        post(&res);
}

static void answer_from_db(dm_resolver *r, const dm_query *q, dm_answer *a);

/* The container's name service, asked inside it (idmapd-nss.c); views translated here as
 * for the files. The time limit leaves the main loop's deadline to answer first. */
static void answer_from_nss(dm_resolver *r, const dm_query *q, dm_answer *a) {
        bool user = q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_USER;
        bool to_id = q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_GID;
        const nsid_idmap *m = r->map[user ? 0 : 1];
        dm_query nq = *q;
        char why[200];
        bool via_lib;

        if (!to_id && q->view == DM_VIEW_HOST && nsid_idmap_to_ns(m, q->id, &nq.id) < 0) {
                a->error = -ENOENT; /* not an id of this namespace */
                return;
        }
        int timeout = (int) dm.cfg.request_timeout_ms;
        if (!r->agent && !(r->agent = dm_nss_agent_new())) {
                a->error = -ENOMEM;
                return;
        }
        dm_nss_lookup(r->agent, r->proc, &nq, r->ctx->domain, timeout > 100 ? timeout : 100, a,
                      &via_lib, why, sizeof(why));
        if (a->error == 0 && to_id && q->view == DM_VIEW_HOST)
                (void) nsid_idmap_to_host_munged(m, a->id, &a->id);
        if (a->error != 0 && a->error != -ENOENT) {
                dm_log(LOG_WARNING, NULL, "%s: %s:%s: %s", r->label, dm_query_kind_name(q),
                       to_id ? q->name : "", why);
                snapshot(r, 0, why);
                r->nss_failing = true;
        } else if (r->nss_failing) {
                /* answering again: the status shows no failure that is over */
                dm_log(LOG_INFO, NULL, "%s: its name service answers again", r->label);
                snapshot(r, 0, "");
                r->nss_failing = false;
        }
}

static void resolve_container(dm_resolver *r, const dm_query *q, dm_answer *a) {
        int e = ensure_loaded(r);
        if (e < 0) {
                a->error = e == -ENOENT ? -ENOENT : e;
                return;
        }
        if (dm_now_us() - r->last_refresh_us >= (int64_t) dm.cfg.refresh_interval * 1000000)
                refresh(r);
        if (r->ctx->nss)
                answer_from_nss(r, q, a);
        else
                answer_from_db(r, q, a);
}

/* The answer from the loaded database, maps and domain: memory only, no file is read. */
static void answer_from_db(dm_resolver *r, const dm_query *q, dm_answer *a) {
        int e;
        bool user = q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_USER;
        const nsid_idmap *m = r->map[user ? 0 : 1];

        if (q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_GID) {
                const char *at = strrchr(q->name, '@');
                char local[DM_NAME_MAX];
                uint32_t id;
                if (!at || strcasecmp(at + 1, r->ctx->domain) != 0 ||
                    (size_t) (at - q->name) >= sizeof(local)) {
                        a->error = -ENOENT;
                        return;
                }
                memcpy(local, q->name, (size_t) (at - q->name));
                local[at - q->name] = '\0';
                e = user ? nsid_userdb_user_by_name(r->ctx->db, local, &id, NULL)
                         : nsid_userdb_group_by_name(r->ctx->db, local, &id);
                if (e < 0) {
                        a->error = -ENOENT;
                        return;
                }
                if (q->view == DM_VIEW_HOST)
                        (void) nsid_idmap_to_host_munged(m, id, &id);
                a->id = id;
        } else {
                uint32_t id = q->id;
                const char *n = NULL;
                if (q->view == DM_VIEW_HOST && nsid_idmap_to_ns(m, q->id, &id) < 0) {
                        a->error = -ENOENT; /* not an id of this namespace */
                        return;
                }
                e = user ? nsid_userdb_user_by_uid(r->ctx->db, id, &n, NULL)
                         : nsid_userdb_group_by_gid(r->ctx->db, id, &n);
                if (e < 0) {
                        a->error = -ENOENT;
                        return;
                }
                if ((size_t) snprintf(a->name, sizeof(a->name), "%s@%s", n, r->ctx->domain) >=
                    sizeof(a->name)) {
                        a->error = -ENAMETOOLONG;
                        return;
                }
        }
}

/* ---- the netns's NFS client identifier, as `nsid-uniquifier reconcile` sets it ---- */

DEFINE_UNREF_CLEANUP(nsid_registry, nsid_registry_unref)
DEFINE_UNREF_CLEANUP(nsid_identity, nsid_identity_unref)

/* The namespace's NFS identity derived (and recorded) and written to its client; what
 * happened, as the status line shows it, into text. Called with identifier_lock held. */
static void derive_and_set(dm_resolver *r, char *text, size_t size) {
        uint8_t secret[NSID_ID128_SIZE];
        _cleanup_(nsid_registry_unrefp) nsid_registry *reg = NULL;
        _cleanup_(nsid_identity_unrefp) nsid_identity *id = NULL;
        _cleanup_free_ char *prev = NULL;
        char regpath[300];
        int e;

        (void) paths_registry(NULL, dm.cfg.state_dir, regpath, sizeof(regpath));
        e = nsid_host_secret_load(NULL, dm.cfg.state_dir, secret, NULL);
        if (e < 0) {
                snprintf(text, size, "failed: host secret: %s", strerror(-e));
                return;
        }
        if (nsid_registry_open(regpath, 0, &reg) < 0)
                reg = NULL;
        e = nsid_identity_for_ns(secret, reg, r->netns, r->proc, NSID_APP_NFS4, NULL,
                                 NSID_KEY_AUTO, NULL, 0, &id);
        explicit_bzero(secret, sizeof(secret));
        if (e < 0) {
                snprintf(text, size, "failed: %s", strerror(-e));
                return;
        }
        nsid_ns_id nid = r->ns_id;
        const char *replaceable = nsid_netns_has_nfs_mounts(&nid) > 0 ? NULL
                                                                      : nsid_identity_get_replaced(id);
        e = nsid_nfs_client_set_identifier(r->netns, nsid_identity_get_string(id), replaceable,
                                           0, (int) dm.cfg.request_timeout_ms * 2, &prev);
        if (e == 1)
                snprintf(text, size, "set %s (%s)", nsid_identity_get_string(id),
                         nsid_key_source_to_string(nsid_identity_get_source(id)));
        else if (e == 0)
                snprintf(text, size, "already set");
        else if (e == -EEXIST)
                snprintf(text, size, "set by someone else (%.40s)", prev ? prev : "");
        else if (e == -ENOENT)
                snprintf(text, size, "no nfs client (module not loaded)");
        else
                snprintf(text, size, "failed: %s", strerror(-e));
        if (e < 0 && e != -ENOENT && reg)
                (void) nsid_identity_forget(id, reg);
}

static void set_identifier(dm_resolver *r) {
        dm_result res = { .kind = DM_RESULT_IDENTIFIER, .ns_id = r->ns_id };

        pthread_mutex_lock(&identifier_lock);
        derive_and_set(r, res.text, sizeof(res.text));
        pthread_mutex_unlock(&identifier_lock);
        post(&res);
}

/* ---- the thread ---- */

static void resolver_unref(dm_resolver *r) {
        if (atomic_fetch_sub(&r->refs, 1) != 1)
                return;
        job *j = r->head;
        while (j) {
                job *n = j->next;
                free(j);
                j = n;
        }
        dm_context_free(r->ctx);
        dm_nss_agent_free(r->agent);
        nsid_idmap_unref(r->map[0]);
        nsid_idmap_unref(r->map[1]);
        nsid_proc_unref(r->proc);
        nsid_ns_unref(r->netns);
        pthread_mutex_destroy(&r->lock);
        pthread_mutex_destroy(&r->db_lock);
        pthread_cond_destroy(&r->cond);
        free(r);
}

/* Resolver threads alive (detached): the daemon waits for them, bounded, before it exits,
 * so that none is cut off mid-work (its OpenSSL thread state then shows up as leaked). */
static atomic_int live_threads;

int dm_resolver_live_threads(void) {
        return atomic_load(&live_threads);
}

void dm_resolver_wait_all(int timeout_ms) {
        for (int waited = 0; atomic_load(&live_threads) > 0 && waited < timeout_ms; waited += 10)
                (void) usleep(10 * 1000);
}

static void *thread_main(void *arg) {
        dm_resolver *r = arg;
        dm_thread_label = r->label;
        for (;;) {
                job *j = NULL;
                bool do_refresh = false, do_ident = false;
                pthread_mutex_lock(&r->lock);
                while (!r->head && !r->want_refresh && !r->want_identifier)
                        pthread_cond_wait(&r->cond, &r->lock);
                if (r->head) {
                        j = r->head;
                        r->head = j->next;
                        if (!r->head)
                                r->tail = NULL;
                } else if (r->want_identifier) {
                        do_ident = true;
                        r->want_identifier = false;
                } else {
                        do_refresh = true;
                        r->want_refresh = false;
                }
                pthread_mutex_unlock(&r->lock);

                if (do_ident) {
                        set_identifier(r);
                        continue;
                }
                if (do_refresh) {
                        /* asked twice for one due check (by the periodic tick and by a
                         * request that found it due, dm_resolver_answer_now): once is enough */
                        if (!r->is_host && dm_now_us() - r->last_refresh_us >=
                                                   (int64_t) dm.cfg.refresh_interval * 500000)
                                refresh(r);
                        else
                                atomic_store(&r->refresh_due, false);
                        continue;
                }
                if (j->kind == JOB_STOP) {
                        free(j);
                        break;
                }
                if (j->kind == JOB_LOAD) {
                        /* (a failure is logged, and met again by the first request) */
                        if (!r->is_host)
                                (void) ensure_loaded(r);
                        free(j);
                        continue;
                }
                dm_result res = { .kind = DM_RESULT_ANSWER, .ns_id = r->ns_id, .seq = j->seq,
                                  .q = j->q };
                res.source = DM_SRC_LIBNFSIDMAP;
                if (r->is_host && j->q.view == DM_VIEW_NS)
                        host_ns_view(r, &j->q, &res.a);
                else if (r->is_host)
                        resolve_host(&j->q, &res.a);
                else {
                        resolve_container(r, &j->q, &res.a);
                        res.source = r->ctx && r->ctx->nss ? DM_SRC_NSS : DM_SRC_FILES;
                }
                free(j);
                post(&res);
        }
        resolver_unref(r);
        atomic_fetch_sub(&live_threads, 1);
        return NULL;
}

dm_resolver *dm_resolver_new(dm_ns *ns) {
        dm_resolver *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        atomic_init(&r->refs, 1);
        atomic_init(&r->refresh_due, false);
        pthread_mutex_init(&r->lock, NULL);
        pthread_mutex_init(&r->db_lock, NULL);
        pthread_cond_init(&r->cond, NULL);
        r->ns_id = ns->id;
        r->is_host = ns->is_host;
        r->initial = ns->initial;
        r->netns = nsid_ns_ref(ns->netns);
        r->proc = ns->proc ? nsid_proc_ref(ns->proc) : NULL;
        snprintf(r->label, sizeof(r->label), "%s", ns->label);
        snprintf(r->info_domain, sizeof(r->info_domain), "%s", ns->is_host ? host_domain : "");
        return r;
}

static int start(dm_resolver *r) {
        pthread_attr_t a;
        pthread_t t;
        int e;
        if (r->started)
                return 0;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 256 * 1024);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        atomic_fetch_add(&r->refs, 1);
        atomic_fetch_add(&live_threads, 1);
        e = pthread_create(&t, &a, thread_main, r);
        pthread_attr_destroy(&a);
        if (e != 0) {
                atomic_fetch_sub(&live_threads, 1);
                atomic_fetch_sub(&r->refs, 1);
                return -e;
        }
        r->started = true;
        return 0;
}

static int enqueue(dm_resolver *r, job *j) {
        int e = start(r);
        if (e < 0) {
                free(j);
                return e;
        }
        pthread_mutex_lock(&r->lock);
        if (r->tail)
                r->tail->next = j;
        else
                r->head = j;
        r->tail = j;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->lock);
        return 0;
}

int dm_resolver_submit(dm_resolver *r, uint64_t seq, const dm_query *q) {
        job *j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->kind = JOB_QUERY;
        j->seq = seq;
        j->q = *q;
        return enqueue(r, j);
}

void dm_resolver_preload(dm_resolver *r) {
        job *j;
        if (r->is_host || !(j = calloc(1, sizeof(*j))))
                return;
        j->kind = JOB_LOAD;
        (void) enqueue(r, j);
}

void dm_resolver_poke_refresh(dm_resolver *r) {
        if (!r->started || r->is_host)
                return;
        pthread_mutex_lock(&r->lock);
        r->want_refresh = true;
        atomic_store(&r->refresh_due, true);
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->lock);
}

void dm_resolver_request_identifier(dm_resolver *r) {
        if (start(r) < 0)
                return;
        pthread_mutex_lock(&r->lock);
        r->want_identifier = true;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->lock);
}

/* Main thread: a container whose database is loaded and not due for its passwd/group check
 * is answered at once from memory, without the round trip through its resolver thread (two
 * wakeups per miss, the cost of a miss in the lab benchmark). Anything else -- not loaded
 * yet, a check due, the host's libnfsidmap, the resolver busy swapping its data -- returns
 * 0 and goes to the thread as before. */
int dm_resolver_answer_now(dm_resolver *r, const dm_query *q, dm_answer *a) {
        int done = 0;
        bool poke = false;
        if (!r || r->is_host || pthread_mutex_trylock(&r->db_lock) != 0)
                return 0;
        int64_t age = dm_now_us() - r->last_refresh_us, every = (int64_t) dm.cfg.refresh_interval * 1000000;
        /* Checked within the interval: answer. Due by less than a quarter interval: answer
         * from the data in hand and have the thread check now, in the background (the
         * periodic check of a namespace with cached answers was only not run yet: the main
         * loop's 100 ms tick and the thread's wakeup lag behind the interval, and a request
         * there waited for a whole check of passwd, group and idmapd.conf through the
         * container's root). Any older (an idle namespace, a flushed cache, a thread stuck
         * on a hung mount): to the thread, which checks first, as before. */
        if (r->ctx && !r->ctx->nss && r->map[0] && r->map[1] && age < every + every / 4) {
                *a = (dm_answer) {};
                answer_from_db(r, q, a);
                done = 1;
                poke = age >= every && !atomic_load(&r->refresh_due);
        }
        pthread_mutex_unlock(&r->db_lock);
        if (poke)
                dm_resolver_poke_refresh(r);
        return done;
}

void dm_resolver_release(dm_resolver *r) {
        if (!r)
                return;
        if (r->started) {
                job *j = calloc(1, sizeof(*j));
                if (j) {
                        j->kind = JOB_STOP;
                        /* jump the queue: pending queries are abandoned */
                        pthread_mutex_lock(&r->lock);
                        j->next = r->head;
                        r->head = j;
                        if (!r->tail)
                                r->tail = j;
                        pthread_cond_signal(&r->cond);
                        pthread_mutex_unlock(&r->lock);
                }
        }
        resolver_unref(r);
}

int dm_resolver_get_info(dm_resolver *r, char *domain, size_t dlen, uint64_t *users,
                         uint64_t *groups, uint64_t *checks, int *load_error,
                         dm_nss_info *nss) {
        pthread_mutex_lock(&r->lock);
        if (nss)
                *nss = r->info_nss;
        *checks = r->info_checks;
        snprintf(domain, dlen, "%s", r->info_domain);
        *users = r->info_users;
        *groups = r->info_groups;
        *load_error = r->info_error;
        pthread_mutex_unlock(&r->lock);
        return 0;
}
