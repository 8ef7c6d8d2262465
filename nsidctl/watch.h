/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl watch --server: knfsd's client-id tracepoints followed (watch-trace.c), what they
 * show kept in a history (watch-history.c) that doctor and metrics read. */
#ifndef NSIDCTL_WATCH_H
#define NSIDCTL_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/nfsdtakeover.h>

/* The history file under the state directory. */
#define WATCH_HISTORY_FILE "server-watch.db"
/* Changes older than this, or beyond this many, are dropped; totals are kept. */
#define WATCH_KEEP_SECONDS (30 * 86400)
#define WATCH_KEEP_ROWS 100000
/* Owner strings with a total of their own (beyond: counted under "(other)"). */
#define WATCH_OWNERS_MAX 1000
/* Owner strings with a series of their own in nsidctl metrics. */
#define WATCH_METRICS_OWNERS 20

/* ---- watch-history.c ---- */
typedef struct watch_history watch_history;

/* Open (create: mode 0640, schema) the history at path for writing. -errno, with *ret_error
 * (static text) saying what failed. */
int history_open_write(const char *path, watch_history **ret, const char **ret_error);
/* Open it to read; -ENOENT when there is none (no watcher ever ran). */
int history_open_read(const char *path, watch_history **ret, const char **ret_error);
watch_history *history_close(watch_history *h);
/* A batch of changes in one transaction: begin, add..., commit. */
int history_begin(watch_history *h);
int history_add(watch_history *h, const nsid_nfsd_change *c, double wall_time);
int history_commit(watch_history *h);
/* The watcher's own counters (events, lost, untracked) and its start, stop time. */
int history_set_stat(watch_history *h, const char *key, double value);
int history_get_stat(watch_history *h, const char *key, double *ret);
/* Drop changes older than keep_seconds before now, and beyond keep_rows. */
int history_prune(watch_history *h, double now, double keep_seconds, long keep_rows);

typedef struct history_owner {
        char *owner;     /* escaped */
        uint64_t n;      /* changes of that kind in the window */
        double first, last;
        char *addresses; /* the distinct addresses involved, ", "-separated (at most a few) */
} history_owner;
/* Per owner string, the changes of kind since `since` (wall time), most first; at most max. */
int history_owners_since(watch_history *h, nsid_nfsd_change_kind kind, double since, size_t max,
                         history_owner **ret, size_t *ret_n);
void history_owners_free(history_owner *v, size_t n);

typedef struct history_total {
        char *owner; /* escaped; "" the sum of owners without a row of their own */
        uint64_t n;
} history_total;
/* Totals of a kind that never go down: the sum (owner NULL) or per owner (most first). */
int history_sum(watch_history *h, nsid_nfsd_change_kind kind, uint64_t *ret);
int history_owner_totals(watch_history *h, nsid_nfsd_change_kind kind, size_t max,
                         history_total **ret, size_t *ret_n);
void history_totals_free(history_total *v, size_t n);

/* ---- cmd-watch.c ---- */
/* The history's path: --history, else <state-dir>/server-watch.db. NULL: --history="" */
const char *watch_history_path(void);
/* 1 while a watcher runs (it holds the lock under the run directory), 0 when none, -errno */
int watch_running(void);

/* ---- watch-trace.c ---- */
typedef struct watch_stats {
        uint64_t events, lost, bad, untracked, info_reads, info_misses;
} watch_stats;
/* Called for every change, with the wall time it happened. */
typedef void (*watch_change_fn)(const nsid_nfsd_change *c, double wall_time, void *userdata);
/* Called when a batch of events was read (changes before it are complete). */
typedef void (*watch_batch_fn)(const watch_stats *s, void *userdata);

typedef struct watch_options {
        const char *nfsd_clients; /* /proc/fs/nfsd/clients */
        double duration_s;        /* 0: until *stop */
        volatile int *stop;       /* set by a signal handler */
        watch_change_fn on_change;
        watch_batch_fn on_batch;
        void (*on_ready)(void *userdata); /* tracing on, the clients read */
        void *userdata;
} watch_options;

/* Follow knfsd's client-id tracepoints in a tracefs instance of our own ("nsid-watch"), made
 * and removed here. 0 when stopped; -errno with *ret_error (static text) explaining. */
int watch_server(const watch_options *o, watch_stats *ret_stats, const char **ret_error);

#endif
