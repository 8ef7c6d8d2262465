/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: the resolvers, a thread per namespace context, and their results (idmapd-resolve.c). */
#ifndef NSID_IDMAPD_RESOLVE_H
#define NSID_IDMAPD_RESOLVE_H

#include "idmapd.h"

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

#endif
