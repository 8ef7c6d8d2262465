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

/* ---- the daemon (nsid-idmapd.c) ----
 *
 * What its modules share, in one object: dm. Everything else a module keeps is its own
 * (static), behind the functions of its header (idmapd-<module>.h). */
typedef struct dm_daemon {
        dm_config cfg;            /* nsid.conf's [idmapd]: read at start and on SIGHUP */
        int64_t start_us;         /* when it started (monotonic) */
        dm_ns *namespaces;        /* the network namespaces served (idmapd-ns.c) */
        /* Whether the NFS client tags its ID keys by network namespace (nsid/kernel.h): 1 yes
         * (each namespace has its own key cache: nothing to invalidate), 0 no, -errno not
         * known yet (the nfsv4 module not loaded: -ENODEV). Kept by
         * dm_kernel_idkeys_refresh(), called at start, at every rescan and when a pipe is
         * found. */
        int kernel_idkeys;
        int results_fd[2];        /* resolver threads -> the loop (idmapd-resolve.c) */
        int key_timer_fd;         /* the ID keys' invalidation timer (idmapd-kernel.c) */
        int netns_dir_wd;         /* inotify watch on /run/netns (or /run until it exists) */
        int64_t rescan_at_us;     /* a rescan requested for this time (0: none) */
} dm_daemon;
extern dm_daemon dm;

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


#endif
