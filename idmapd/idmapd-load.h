/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: a container's context (its files-only user database or the fact that its
 * name service must be asked, its NFSv4 domain, the sources its nsswitch.conf names), read
 * and parsed in a worker that holds no privilege when it parses (nsid/worker.h,
 * NSID_WORKER_DROP_IN_FN). The daemon itself only stats the container's files (to notice a
 * change) and parses the worker's canonical reply (dm_context_parse_reply(), fuzzed).
 */
#ifndef NSID_IDMAPD_LOAD_H
#define NSID_IDMAPD_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <nsid/file.h>
#include <nsid/ns.h>
#include <nsid/userdb.h>

#include "nss-text.h"

/* The container files whose change reloads a context: the files-only sources, and the
 * configuration of the directory clients its name service may use. */
#define DM_WATCHED_FILES 15

typedef struct dm_context {
        bool nss;                 /* its name service answers (nsid-nss-query), not files */
        bool conf_libnfsidmap;    /* its idmapd.conf asks libnfsidmap for more than nsswitch */
        bool baddomain;           /* its Domain was invalid: the host's is used */
        bool systemd_empty;       /* nss-systemd has no record or service to add there */
        nss_sources passwd, group;
        char domain[256];
        nsid_userdb *db;          /* files-only: its passwd and group; NULL otherwise */
        uint64_t users, groups;
        /* what the daemon saw of the watched files before the worker read them */
        int stat_err[DM_WATCHED_FILES];
        nsid_file_stat stat[DM_WATCHED_FILES];
} dm_context;

/* Read a container's context through the root of proc, in a worker with timeout_ms.
 * host_domain stands in for a missing or invalid Domain. 0 or -errno (err says why). */
int dm_context_load(const nsid_proc *proc, const char *host_domain, int timeout_ms,
                    dm_context **ret, char *err, size_t errlen);

/* The worker's reply for proc's context (its canonical lines: *reply malloc'ed, *size), the
 * worker run from this process (nsid_worker_run()). 0 or -errno. */
int dm_context_load_direct(const nsid_proc *proc, const char *host_domain, int timeout_ms,
                           char **reply, size_t *size);
/* What dm_context_load() runs the worker with: NULL, dm_context_load_direct(). nsid-idmapd
 * sets its load server's (idmapd-loadsrv.h): a worker forked from a threaded program may
 * find another thread's allocator lock held forever (ASan's allocator has no fork handler). */
typedef int (*dm_load_runner)(const nsid_proc *proc, const char *host_domain, int timeout_ms,
                              char **reply, size_t *size);
extern dm_load_runner dm_load_run;
/* The largest reply the worker may give. */
#define DM_LOAD_REPLY_MAX (48u * 1024u * 1024u)

/* 1 + the index of the first watched file that changed (or appeared, or went) since c was
 * loaded, 0 if none did, -errno when the root cannot be reached. Stats only; reads and
 * parses nothing. dm_context_watched_name() names it ("passwd/group" for those two). */
int dm_context_changed(const dm_context *c, const nsid_proc *proc);
const char *dm_context_watched_name(int changed);

dm_context *dm_context_free(dm_context *c);

/* The worker's reply (exported for the fuzz target): 0 or -EBADMSG. Fills c's fields but
 * the stats. */
int dm_context_parse_reply(const char *buf, size_t size, dm_context *c);

#endif
