/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: declarations shared by the daemon's files. */
#ifndef NSID_IDMAPD_H
#define NSID_IDMAPD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/ctlproto.h>
#include <nsid/idmap.h>
#include <nsid/idmapmsg.h>
#include <nsid/keyring.h>
#include <nsid/nfsdchan.h>
#include <nsid/ns.h>
#include <nsid/userdb.h>

#define DM_NAME_MAX 128u /* IDMAP_NAMESZ */
/* A name no user has in any context (.invalid is reserved, RFC 6761): what an owner name the
 * daemon refuses to look up is answered as. */
#define DM_UNKNOWN_OWNER "refused-owner@nsid.invalid"

/* Who a netns owned by a user namespace is charged to (idmapd-quota.c): a host uid, or a
 * top-level user namespace host root made. */
typedef struct dm_owner {
        bool by_userns;
        uid_t uid;           /* !by_userns: the host uid ((uid_t) -1: not told apart) */
        uint64_t userns_ino; /* by_userns */
} dm_owner;

typedef struct dm_config {
        unsigned cache_ttl;          /* s, positive answers (cache and kernel expiry) */
        unsigned negative_ttl;       /* s */
        unsigned request_timeout_ms; /* bound of one resolution */
        unsigned rescan_interval;    /* s */
        unsigned refresh_interval;   /* s, passwd/group stat check */
        bool isolate_keys;           /* invalidate namespace-specific id_legacy keys */
        bool set_identifier;         /* give new netns an NFS client identifier */
        bool host_pipes;             /* also serve the host netns's pipes and channels */
        unsigned max_netns_per_owner;    /* netns in user namespaces of one host uid */
        unsigned max_netns_unprivileged; /* netns in user namespaces, all owners */
        unsigned idle_thread_timeout;    /* s, an idle namespace's resolver thread ends */
        char idmapd_conf[256];       /* host libnfsidmap configuration */
        char socket_path[256];
        char state_dir[256];         /* host secret and registry (identifier setting) */
} dm_config;
/* The namespace a resolver thread works for, for library log lines. */
extern __thread const char *dm_thread_label;

/* One answer in a namespace's cache and on the wire. */
typedef enum dm_view { DM_VIEW_HOST, DM_VIEW_NS, _DM_VIEW_MAX } dm_view;

typedef struct dm_query {
        nsid_idmap_key_kind kind; /* UID/GID: name -> id; USER/GROUP: id -> name */
        dm_view view;
        uint32_t id;
        char name[DM_NAME_MAX];
} dm_query;

typedef struct dm_answer {
        int error;     /* 0, -ENOENT (negative), or another failure (not cached) */
        uint32_t id;
        char name[DM_NAME_MAX];
} dm_answer;

/* What resolved an answer the cache did not have: the container's files (the fast path),
 * its own name service (nsid-nss-query inside it), or libnfsidmap in the host's context. */
typedef enum dm_source {
        DM_SRC_FILES,
        DM_SRC_NSS,
        DM_SRC_LIBNFSIDMAP,
        _DM_SRC_MAX,
} dm_source;

/* Latency histogram: bucket i counts requests of < 2^i microseconds. */
#define DM_LAT_BUCKETS 32
typedef struct dm_stats {
        uint64_t requests, hits, misses, failures, negatives, timeouts;
        uint64_t pipe_upcalls, channel_requests, ctl_lookups, keys_invalidated;
        /* invalidations the kernel refused for now (the reader not back yet) and tried again;
         * jobs given up (never allowed within 10 minutes, or an error) */
        uint64_t key_retries, key_give_ups;
        uint64_t resolved[_DM_SRC_MAX];
        uint64_t cache_expired, cache_flushed; /* answers dropped from the cache, why */
        uint64_t lat[DM_LAT_BUCKETS];
        uint64_t lat_sum_us;
} dm_stats;

typedef struct dm_tag {
        int kind; /* dm_tag_kind */
        void *obj;
        int which;
} dm_tag;

typedef struct dm_cache dm_cache;
typedef struct dm_ns dm_ns;
typedef struct dm_pipe dm_pipe;
typedef struct dm_client dm_client;

typedef struct dm_pending dm_pending;
/* How a request is answered once resolved, by the part that received it (the idmap pipe,
 * knfsd's channel, the control socket): cached says the answer came from the cache, ttl is
 * how long it stays there (0 for a failure). */
typedef void (*dm_complete_fn)(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl);

struct dm_pending {
        struct dm_pending *next;
        uint64_t seq;
        dm_ns *ns;
        dm_query q;
        dm_complete_fn complete;
        int64_t start_us, deadline_us;
        /* from an idmap pipe (dm_pipe_answer) */
        dm_pipe *pipe;
        nsid_idmap_request pipe_req;
        /* from knfsd's channel (dm_channel_answer) */
        int channel;          /* nsid_nfsd_channel */
        nsid_nfsd_request chan_req;
        /* from the control socket (dm_ctl_answer) */
        dm_client *client;
};

/* The resolver side of a namespace (runs in its own thread; see idmapd-resolve.c). */
typedef struct dm_resolver dm_resolver;

struct dm_pipe {
        dm_pipe *next;
        dm_ns *ns;
        dm_tag tag;
        int fd;
        char clnt[64];
        bool busy;   /* one outstanding request per pipe */
        bool masked; /* out of the epoll set while its request waits for a resolver */
        bool seen;
};

struct dm_ns {
        dm_ns *next;
        nsid_ns_id id;
        nsid_ns *netns;
        nsid_proc *proc;      /* a process in it (its root and user namespace), or NULL */
        bool is_host;         /* answered in the host context (libnfsidmap) */
        bool initial;         /* the initial netns */
        dm_view kernel_view;  /* ids the kernel uses for this netns's pipes and channels */
        dm_view channel_view; /* ids on knfsd's channels (dm_kernel_views; kernel_view: pipes) */
        char label[160];      /* "netns:[ino] pid 123 (comm)" for log lines */
        bool charged;         /* owned by a user namespace: counted against owner */
        bool admitted;        /* counted (dm_quota_admit), to release when forgotten */
        dm_owner owner;       /* who it is charged to (idmapd-quota.c) */
        bool identifier_wanted; /* asked of the resolver, no answer yet */
        int64_t resolver_used_us; /* the resolver last created or given work */
        unsigned generation;  /* last scan that saw it */
        dm_cache *cache;
        dm_resolver *resolver;
        dm_stats stats;
        /* client side: the netns's own rpc_pipefs, a detached mount held by fd */
        int pipefs_fd;
        int pipefs_wd;        /* inotify watch on nfs/ */
        int pipefs_error;
        dm_pipe *pipes;
        /* server side: the netns's knfsd channels */
        int chan_fd[2];
        dm_tag chan_tag[2];
        int chan_error;
        dm_pending *pending;
        int64_t born_us;         /* a scan begun before this cannot say it is gone */
        int64_t last_request_us; /* its last request (keeps its passwd/group checks going) */
        int64_t next_attach_us; /* retry attaching rpc_pipefs / channels */
        char identifier_state[96];
};

/* ---- the daemon (nsid-idmapd.c) ---- */
extern dm_config dm_cfg;

/* Whether the NFS client tags its ID keys by network namespace (nsid/kernel.h): 1 yes (each
 * namespace has its own key cache: nothing to invalidate), 0 no, -errno not known yet (the
 * nfsv4 module not loaded: -ENODEV). Kept by dm_kernel_idkeys_refresh(), called at start,
 * at every rescan and when a pipe is found. */
extern int dm_kernel_idkeys;
void dm_kernel_idkeys_refresh(void);
/* Whether namespace-specific answers must be invalidated: isolate-keys and a kernel that
 * does not tag (or not known to tag) its ID keys. */
bool dm_keys_isolation_needed(void);
void dm_log(int priority, const dm_ns *ns, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int64_t dm_now_us(void);
int dm_epoll_add(int fd, uint32_t events, void *tag);
int dm_epoll_mod(int fd, uint32_t events, void *tag);
void dm_epoll_del(int fd);
/* epoll tags are pointers to these kinds */
typedef enum dm_tag_kind {
        DM_TAG_SIGNAL,
        DM_TAG_TIMER,
        DM_TAG_RESULTS,
        DM_TAG_INOTIFY,
        DM_TAG_LISTEN,
        DM_TAG_CLIENT,
        DM_TAG_PIPE,
        DM_TAG_CHANNEL,
        DM_TAG_KEYTIMER,
} dm_tag_kind;

/* ---- cache (idmapd-cache.c) ---- */
dm_cache *dm_cache_new(void);
void dm_cache_free(dm_cache *c);
/* 1 hit (answer filled, remaining ttl), 0 miss */
int dm_cache_get(dm_cache *c, const dm_query *q, int64_t now_us, dm_answer *ret, uint32_t *ret_ttl);
void dm_cache_put(dm_cache *c, const dm_query *q, const dm_answer *a, int64_t expires_us);
size_t dm_cache_flush(dm_cache *c);
size_t dm_cache_size(const dm_cache *c);
size_t dm_cache_expire(dm_cache *c, int64_t now_us);

/* ---- resolvers (idmapd-resolve.c) ---- */
int dm_resolve_global_init(char *err, size_t errlen);
void dm_resolve_global_reload(void);
const char *dm_host_domain(void);
dm_resolver *dm_resolver_new(dm_ns *ns);
/* Hand a query to the namespace's thread; the answer comes back through the results pipe
 * (dm_result). Returns 0 or -errno. */
int dm_resolver_submit(dm_resolver *r, uint64_t seq, const dm_query *q);
/* Ask the thread to check passwd/group (cache invalidation) and, once, set the netns's NFS
 * identifier. */
void dm_resolver_poke_refresh(dm_resolver *r);
/* Have the thread load the container's database now, not at the first request. */
void dm_resolver_preload(dm_resolver *r);
void dm_resolver_request_identifier(dm_resolver *r);
/* Detach: the thread ends on its own (it may be stuck in a read of a hung mount). */
/* Answer from memory at once if the container's database is loaded and fresh: 1, else 0. */
int dm_resolver_answer_now(dm_resolver *r, const dm_query *q, dm_answer *a);
void dm_resolver_release(dm_resolver *r);
/* Wait (at most timeout_ms) until every resolver thread has stopped. */
void dm_resolver_wait_all(int timeout_ms);
/* Resolver threads alive now (status). */
int dm_resolver_live_threads(void);
/* What answers a container: its files (the fast path) or its name service, the sources its
 * nsswitch.conf names, and the last failure of its name service. */
typedef struct dm_nss_info {
        bool nss;
        bool libnfsidmap_conf;
        char passwd[128], group[128];
        char last_error[200];
} dm_nss_info;
/* For status: the domain, users and groups loaded, the checks of its files made, the load
 * error, how its name service answers (nss may be NULL) */
int dm_resolver_get_info(dm_resolver *r, char *domain, size_t dlen, uint64_t *users,
                         uint64_t *groups, uint64_t *checks, int *load_error,
                         dm_nss_info *nss);
/* "uid", "gid", "user", "group" */
const char *dm_query_kind_name(const dm_query *q);
/* Text a remote peer or a container chose, as a log line shows it: bytes below 0x20, from
 * 0x7f, '\\' and '"' as \xNN. size must allow 4 bytes per byte of s and a NUL; it is cut
 * otherwise. (idmapd-kernel.c) */
const char *dm_log_esc(const char *s, size_t len, char *buf, size_t size);
/* The ids the kernel presents, and reads back, on the client pipes and on the knfsd channels
 * of a netns (see idmapd-resolve.c: the nfs_client's and the listener's creator). */
void dm_kernel_views(const dm_ns *ns, dm_view *ret_pipe, dm_view *ret_channel);

typedef enum dm_result_kind {
        DM_RESULT_ANSWER,
        DM_RESULT_FLUSH,
        DM_RESULT_IDENTIFIER,
        DM_RESULT_SCAN, /* a periodic /proc scan done by its thread (ptr: idmapd-ns.c's) */
} dm_result_kind;
typedef struct dm_result {
        dm_result_kind kind;
        void *ptr;
        nsid_ns_id ns_id;
        uint64_t seq;
        dm_query q;
        dm_answer a;
        dm_source source; /* (DM_RESULT_ANSWER) */
        char text[96];
} dm_result;
extern int dm_results_fd[2];

/* ---- kernel side (idmapd-kernel.c) ---- */
void dm_kernel_attach(dm_ns *ns);
void dm_kernel_detach(dm_ns *ns);
void dm_kernel_inotify_event(int ifd);
void dm_pipe_readable(dm_pipe *p);
/* Open the idmap pipes of NFS clients made since the last look (inotify may lag behind). */
void dm_kernel_sync_pipes(dm_ns *ns);
void dm_channel_readable(dm_ns *ns, int which);
void dm_pipe_answer(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl);
void dm_channel_answer(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl);
void dm_keys_schedule_invalidate(dm_ns *ns, const dm_query *q);
void dm_keys_run(int64_t now_us);
/* KEYCTL_CLEAR of .id_resolver where keys are isolated (a kernel without tagging): at start,
 * at stop, and when a namespace's NFS client appears (why: for the log). */
void dm_keys_clear(const char *why);
int dm_inotify_fd(void);
extern int dm_key_timer_fd;
extern int dm_netns_dir_wd;      /* inotify watch on /run/netns (or /run until it exists) */
extern int64_t dm_rescan_at_us;  /* a rescan requested for this time (0: none) */

/* ---- namespaces and requests (idmapd-ns.c) ---- */
extern dm_ns *dm_namespaces;
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

/* ---- metrics (idmapd-metrics.c): totals that never go down, for nsidctl metrics ---- */
/* A namespace about to be freed: its counts go to its context's totals. */
void dm_metrics_forget(const dm_ns *ns);
/* The "metrics" reply: per context (host, container) the counts of every namespace served
 * now and forgotten since start, the namespaces served, forgotten and refused. */
struct json_object *dm_metrics_json(void);
/* The counters of s as members of o (status's per-namespace object, metrics' per context). */
void dm_stats_json_add(struct json_object *o, const dm_stats *s);
void dm_ns_periodic(int64_t now_us);
/* A pending record was completed or abandoned by its origin (client gone). */
void dm_pending_drop_client(dm_client *c);
void dm_pending_drop_pipe(dm_pipe *p);

/* ---- bounds on namespaces owned by user namespaces (idmapd-quota.c) ---- */
/* Whether netns is owned by a user namespace other than the initial one (*ret_charged), and
 * who it is charged to: the host uid that made its top-level user namespace (the child of
 * the initial one), or, when host root made that one, the top-level user namespace itself.
 * 0 or -errno. */
int dm_quota_classify(const nsid_ns *netns, bool *ret_charged, dm_owner *ret_owner);
/* "uid 1000", "user namespace user:[N] (made by root)" */
const char *dm_owner_to_string(const dm_owner *o, char *buf, size_t size);
/* Count one more kept netns of owner: 0, or -EUSERS (max-netns-per-owner) / -ENOSPC
 * (max-netns-unprivileged) when it must not be kept (logged once per owner). */
int dm_quota_admit(const dm_owner *owner);
void dm_quota_release(const dm_owner *owner);
/* Remember a refused netns (no fd held: its id, owner and cookie); true when id is one
 * (generation: the scan that saw it again, 0 for none). Given the namespace found under that
 * id (netns, may be NULL), a refusal that is not it (another owner; another cookie while the
 * owner has room) is forgotten and false returned. dm_quota_sweep() forgets those the scan
 * did not see. */
void dm_quota_refuse(const nsid_ns_id *id, nsid_ns *netns, const dm_owner *owner,
                     unsigned generation);
bool dm_quota_is_refused(const nsid_ns_id *id, nsid_ns *netns, unsigned generation);
void dm_quota_sweep(unsigned generation);
typedef struct dm_quota_stats {
        unsigned kept;          /* namespaces of unprivileged owners kept */
        unsigned kept_all;      /* every charged namespace kept (root-made containers' too) */
        size_t refused_now;     /* remembered refusals */
        uint64_t refused_total; /* refusals since start */
        size_t owners;
} dm_quota_stats;
void dm_quota_get_stats(dm_quota_stats *ret);
void dm_quota_free_all(void);

/* ---- control socket (idmapd-ctl.c) ---- */
int dm_ctl_listen(const char *path);
void dm_ctl_accept(int lfd);
void dm_ctl_client_event(dm_client *c, uint32_t events);
/* Resume the clients whose pipelined lines waited for a late answer (dm_ctl_answer()):
 * the main loop calls it after each round of work, when no namespace is in use. */
void dm_ctl_resume(void);
void dm_ctl_answer(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl);
void dm_ctl_close_all(void);
int dm_status_client(const char *path, bool json, bool legend);
int dm_ctl_command(const char *path, const char *request);

#endif
