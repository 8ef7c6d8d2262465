/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * knfsd's client-id tracepoints, followed through a tracefs instance of our own (libtracefs,
 * libtraceevent: the kernel's binary ring buffer, never the text trace, whose owner strings a
 * client could fill with forged lines). Each event goes to libnsid's takeover tracker; a
 * confirmed record it does not know is read from /proc/fs/nfsd/clients at once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include <nsid/nfsdclients.h>

#include "macro.h"
#include "watch.h"

#define INSTANCE "nsid-watch"
/* per CPU: at 1,000 takeovers a second (about 3 events of 100 bytes each) a full second */
#define BUFFER_KB "4096"

static const struct {
        const char *name;
        nsid_nfsd_event_kind kind;
} events[] = {
        { "nfsd_clid_fresh", NSID_NFSD_EVENT_FRESH },
        { "nfsd_clid_confirmed_r", NSID_NFSD_EVENT_CONFIRMED_R },
        { "nfsd_clid_confirmed", NSID_NFSD_EVENT_CONFIRMED },
        { "nfsd_clid_verf_mismatch", NSID_NFSD_EVENT_VERF_MISMATCH },
        { "nfsd_clid_cred_mismatch", NSID_NFSD_EVENT_CRED_MISMATCH },
        { "nfsd_clid_replaced", NSID_NFSD_EVENT_REPLACED },
        { "nfsd_clid_destroyed", NSID_NFSD_EVENT_GONE },
        { "nfsd_clid_expire_unconf", NSID_NFSD_EVENT_GONE },
        { "nfsd_clid_admin_expired", NSID_NFSD_EVENT_GONE },
        { "nfsd_clid_purged", NSID_NFSD_EVENT_GONE },
};
#define N_EVENTS (sizeof(events) / sizeof(events[0]))

typedef struct watcher {
        const watch_options *o;
        nsid_nfsd_takeovers *t;
        watch_stats st;
        int ids[N_EVENTS];
        double wall_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC, seconds */
        int clients_fd;
        bool base_known;
        uint32_t base; /* the directory of a record is its cl_id - base */
        /* the tracing set-up, undone by watcher_done() */
        struct tracefs_instance *inst;
        struct tep_handle *tep;
        int pipe_fd; /* the instance's trace_pipe, polled */
} watcher;

static double clock_s(clockid_t c) {
        struct timespec ts;
        clock_gettime(c, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Read <dir>/info (at most NSID_NFSD_INFO_MAX bytes) into buf; its length or -errno. */
static ssize_t read_info(int dfd, const char *dir, char *buf) {
        char path[64];
        ssize_t n, total = 0;
        int fd;

        snprintf(path, sizeof(path), "%s/info", dir);
        fd = openat(dfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while (total < NSID_NFSD_INFO_MAX && (n = read(fd, buf + total,
                                                       (size_t) (NSID_NFSD_INFO_MAX - total))) > 0)
                total += n;
        close(fd);
        return total;
}

/* The cl_id of an info file's client id (as the kernel prints the bytes of clientid_t). */
static uint32_t cl_id_of(uint64_t clientid) {
        struct {
                uint32_t boot, id;
        } c;
        memcpy(&c, &clientid, sizeof(c));
        return c.id;
}

static uint64_t clientid_of(uint32_t boot, uint32_t id) {
        struct {
                uint32_t boot, id;
        } c = { boot, id };
        uint64_t v;
        memcpy(&v, &c, sizeof(v));
        return v;
}

/* Learn every record under the clients directory, and the directory numbering's base. */
static void scan_clients(watcher *w) {
        char *buf = malloc(NSID_NFSD_INFO_MAX);
        int dfd = dup(w->clients_fd);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        struct dirent *de;

        if (!d) {
                if (dfd >= 0)
                        close(dfd);
                free(buf);
                return;
        }
        rewinddir(d);
        while (buf && (de = readdir(d))) {
                char *end;
                unsigned long n = strtoul(de->d_name, &end, 10);
                ssize_t len;

                if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end)
                        continue;
                len = read_info(w->clients_fd, de->d_name, buf);
                if (len > 0 && nsid_nfsd_takeovers_learn_info(w->t, buf, (size_t) len) >= 0) {
                        /* (the clientid line is the first: parse it again cheaply) */
                        unsigned long long clid;
                        if (sscanf(buf, "clientid: 0x%llx", &clid) == 1) {
                                w->base = cl_id_of(clid) - (uint32_t) n;
                                w->base_known = true;
                        }
                }
        }
        closedir(d);
        free(buf);
}

/* A confirmed record not known yet: its info file, before it goes. */
static void learn_record(watcher *w, uint64_t clientid) {
        char dir[16], *buf;
        ssize_t len = -ENOENT;

        w->st.info_reads++;
        buf = malloc(NSID_NFSD_INFO_MAX);
        if (!buf)
                return;
        if (w->base_known) {
                snprintf(dir, sizeof(dir), "%u", cl_id_of(clientid) - w->base);
                len = read_info(w->clients_fd, dir, buf);
        }
        if (len <= 0 || nsid_nfsd_takeovers_learn_info(w->t, buf, (size_t) len) < 0) {
                /* not found where the numbering says: nfsd restarted (a new base), or gone */
                scan_clients(w);
        }
        free(buf);
}

static int on_event(struct tep_event *event, struct tep_record *record, int cpu, void *data) {
        watcher *w = data;
        nsid_nfsd_event ev = { .time_ns = record->ts };
        nsid_nfsd_change c;
        unsigned long long boot, id;
        size_t k;
        int len, r;

        (void) cpu;
        if (record->missed_events)
                w->st.lost += record->missed_events > 0 ? (uint64_t) record->missed_events : 1;
        for (k = 0; k < N_EVENTS; k++)
                if (w->ids[k] == event->id)
                        break;
        if (k == N_EVENTS)
                return 0;
        w->st.events++;
        ev.kind = events[k].kind;
        if (tep_get_field_val(NULL, event, "cl_boot", record, &boot, 0) < 0 ||
            tep_get_field_val(NULL, event, "cl_id", record, &id, 0) < 0) {
                w->st.bad++;
                return 0;
        }
        ev.clientid = clientid_of((uint32_t) boot, (uint32_t) id);
        if (ev.kind == NSID_NFSD_EVENT_FRESH || ev.kind == NSID_NFSD_EVENT_CONFIRMED_R) {
                const uint8_t *name = tep_get_field_raw(NULL, event, "name", record, &len, 0);
                if (!name || len < 0) {
                        w->st.bad++;
                        return 0;
                }
                /* (the trace stores the string with a NUL after it) */
                if (len > 0 && name[len - 1] == 0)
                        len--;
                ev.name = name;
                ev.name_len = (size_t) len;
        }
        if (ev.kind == NSID_NFSD_EVENT_FRESH || ev.kind == NSID_NFSD_EVENT_CONFIRMED_R ||
            ev.kind == NSID_NFSD_EVENT_VERF_MISMATCH || ev.kind == NSID_NFSD_EVENT_CRED_MISMATCH) {
                ev.address = tep_get_field_raw(NULL, event, "addr", record, &len, 0);
                if (!ev.address || len <= 0) {
                        w->st.bad++;
                        return 0;
                }
                ev.address_len = (size_t) len;
        }
        r = nsid_nfsd_takeovers_feed(w->t, &ev, &c);
        if (r == NSID_NFSD_TAKEOVERS_WANT_INFO) {
                learn_record(w, ev.clientid);
                if (nsid_nfsd_takeovers_feed(w->t, &ev, &c) == NSID_NFSD_TAKEOVERS_WANT_INFO)
                        w->st.info_misses++;
        } else if (r == NSID_NFSD_TAKEOVERS_CHANGE && w->o->on_change)
                w->o->on_change(&c, (double) record->ts / 1e9 + w->wall_offset, w->o->userdata);
        else if (r < 0)
                w->st.bad++;
        w->st.untracked = nsid_nfsd_takeovers_get_untracked(w->t);
        return 0;
}

static int setup(struct tracefs_instance *inst, const char **ret_error) {
        if (tracefs_instance_file_write(inst, "tracing_on", "0") < 0) {
                *ret_error = "cannot write to the tracefs instance (root needed)";
                return -EACCES;
        }
        (void) tracefs_event_disable(inst, NULL, NULL);
        if (tracefs_instance_file_write(inst, "trace_clock", "mono") < 0) {
                *ret_error = "the kernel's tracefs has no \"mono\" trace clock";
                return -EOPNOTSUPP;
        }
        if (tracefs_instance_file_write(inst, "buffer_size_kb", BUFFER_KB) < 0) {
                *ret_error = "cannot size the trace buffer";
                return -ENOMEM;
        }
        /* wake a reader at the first event, not when the buffer is half full */
        (void) tracefs_instance_file_write(inst, "buffer_percent", "0");
        for (size_t k = 0; k < N_EVENTS; k++)
                if (tracefs_event_enable(inst, "nfsd", events[k].name) < 0) {
                        *ret_error = "knfsd's client-id tracepoints are missing (load the nfsd "
                                     "module: start the NFS server; needs a kernel >= 5.14)";
                        return -ENOENT;
                }
        (void) tracefs_instance_file_write(inst, "trace", "");
        return 0;
}

/* Tracing off, the instance removed (its trace_pipe closed first), the rest freed. */
static void watcher_done(watcher *w) {
        if (w->inst) {
                (void) tracefs_instance_file_write(w->inst, "tracing_on", "0");
                (void) tracefs_event_disable(w->inst, NULL, NULL);
                w->pipe_fd = safe_close(w->pipe_fd);
                (void) tracefs_instance_destroy(w->inst);
                tracefs_instance_free(w->inst);
        }
        w->pipe_fd = safe_close(w->pipe_fd);
        w->clients_fd = safe_close(w->clients_fd);
        tep_free(w->tep);
        nsid_nfsd_takeovers_free(w->t);
}

/* r, with why for the caller */
static int refuse(const char **ret_error, const char *why, int r) {
        *ret_error = why;
        return r;
}

/* The tracing set up in an instance of its own, the records there now learnt, then every
 * batch of events until the duration ends or *o->stop is set. */
static int watch_run(watcher *w, const char **ret_error) {
        static const char *const systems[] = { "nfsd", NULL };
        const watch_options *o = w->o;
        double t0, end = 0;
        int r;

        r = nsid_nfsd_takeovers_new(&w->t);
        if (r < 0)
                return refuse(ret_error, "out of memory", r);
        if (!tracefs_tracing_dir())
                return refuse(ret_error, "tracefs is not mounted and cannot be (mount -t tracefs "
                              "nodev /sys/kernel/tracing; root needed)", -ENOENT);
        w->inst = tracefs_instance_create(INSTANCE);
        if (!w->inst)
                return refuse(ret_error, "cannot make the tracefs instance " INSTANCE
                              " (root needed)", errno ? -errno : -EIO);
        r = setup(w->inst, ret_error);
        if (r < 0)
                return r;
        w->tep = tracefs_local_events_system(NULL, (const char **) systems);
        if (!w->tep)
                return refuse(ret_error, "cannot read the nfsd events' formats from tracefs", -EIO);
        for (size_t k = 0; k < N_EVENTS; k++) {
                struct tep_event *e = tep_find_event_by_name(w->tep, "nfsd", events[k].name);
                w->ids[k] = e ? e->id : -1;
        }
        w->clients_fd = open(o->nfsd_clients, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (w->clients_fd < 0)
                return refuse(ret_error, "cannot open the NFS server's clients directory (nfsd "
                              "not started, or the nfsd filesystem not mounted on "
                              "/proc/fs/nfsd)", -errno);
        w->pipe_fd = tracefs_instance_file_open(w->inst, "trace_pipe", O_RDONLY | O_NONBLOCK);
        if (w->pipe_fd < 0)
                return refuse(ret_error, "cannot open the instance's trace_pipe", -EIO);
        if (tracefs_instance_file_write(w->inst, "tracing_on", "1") < 0)
                return refuse(ret_error, "cannot turn tracing on in the instance", -EIO);
        /* the records there now, after tracing started: nothing falls between the two */
        w->wall_offset = clock_s(CLOCK_REALTIME) - clock_s(CLOCK_MONOTONIC);
        scan_clients(w);
        if (o->on_ready)
                o->on_ready(o->userdata);
        t0 = clock_s(CLOCK_MONOTONIC);
        if (o->duration_s > 0)
                end = t0 + o->duration_s;
        for (;;) {
                struct pollfd p = { .fd = w->pipe_fd, .events = POLLIN };
                bool last = (o->stop && *o->stop) || (end > 0 && clock_s(CLOCK_MONOTONIC) >= end);
                int ms = 1000;

                if (!last) {
                        if (end > 0 && (end - clock_s(CLOCK_MONOTONIC)) * 1000 < ms)
                                ms = (int) ((end - clock_s(CLOCK_MONOTONIC)) * 1000) + 1;
                        (void) poll(&p, 1, ms);
                }
                if (tracefs_iterate_raw_events(w->tep, w->inst, NULL, 0, on_event, w) < 0 && !last)
                        return refuse(ret_error, "cannot read the instance's trace buffers", -EIO);
                w->st.untracked = nsid_nfsd_takeovers_get_untracked(w->t);
                if (o->on_batch)
                        o->on_batch(&w->st, o->userdata);
                if (last)
                        return 0;
        }
}

int watch_server(const watch_options *o, watch_stats *ret_stats, const char **ret_error) {
        _cleanup_(watcher_done) watcher w = { .o = o, .clients_fd = -EBADF, .pipe_fd = -EBADF };
        int r;

        *ret_error = NULL;
        r = watch_run(&w, ret_error);
        if (ret_stats)
                *ret_stats = w.st;
        return r;
}
