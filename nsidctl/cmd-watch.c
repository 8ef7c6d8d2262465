/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsidctl watch --server: on an NFS server, every change of a client owner string's record
 * as knfsd makes it (lease stealing between clients that present one owner string, client
 * restarts, refused requests), printed as it happens and kept in a history that `nsidctl
 * doctor --server` and `nsidctl metrics` read. nsid-server-watch.service runs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsidctl.h"
#include "watch.h"

#define LOCK_NAME "server-watch.lock"
#define STAT_EVERY_S 10
#define PRUNE_EVERY_S 3600
#define COMMIT_EVERY_S 1.0 /* changes reach the history within a second */

static volatile int stop;
static char history_buf[4096];

const char *watch_history_path(void) {
        if (arg.history)
                return *arg.history ? arg.history : NULL;
        snprintf(history_buf, sizeof(history_buf), "%s/%s", ctx_state_dir(), WATCH_HISTORY_FILE);
        return history_buf;
}

static int lock_open(void) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", NSID_RUN_DIR, LOCK_NAME);
        return open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int watch_running(void) {
        char path[4096];
        int fd, r;

        snprintf(path, sizeof(path), "%s/%s", NSID_RUN_DIR, LOCK_NAME);
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        r = flock(fd, LOCK_SH | LOCK_NB) < 0 ? (errno == EWOULDBLOCK ? 1 : -errno) : 0;
        close(fd);
        return r;
}

typedef struct session {
        watch_history *h;
        bool in_batch;
        int history_error;
        uint64_t counts[_NSID_NFSD_CHANGE_KIND_MAX];
        double last_stat, last_prune, last_commit;
        uint64_t warned_lost;
} session;

static void fmt_time(double t, char *buf, size_t size) {
        time_t s = (time_t) t;
        struct tm tm;
        gmtime_r(&s, &tm);
        size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + n, size - n, ".%03dZ", (int) ((t - (double) s) * 1000));
}

static void on_change(const nsid_nfsd_change *c, double wall, void *userdata) {
        session *s = userdata;
        const char *kind = nsid_nfsd_change_kind_to_string(c->kind);
        char when[40];

        s->counts[c->kind]++;
        if (s->h && !s->history_error) {
                if (!s->in_batch && history_begin(s->h) == 0)
                        s->in_batch = true;
                if (!s->in_batch || history_add(s->h, c, wall) < 0) {
                        s->history_error = -EIO;
                        errorf("cannot write the history %s: changes are printed only",
                               watch_history_path());
                }
        }
        if (arg.quiet)
                return;
        fmt_time(wall, when, sizeof(when));
        if (arg.json) {
                json_object *o = json_object_new_object();
                char clid[24];
                snprintf(clid, sizeof(clid), "0x%llx", (unsigned long long) c->clientid);
                json_object_object_add(o, "time", json_object_new_string(when));
                json_object_object_add(o, "kind", json_object_new_string(kind));
                json_object_object_add(o, "owner", c->owner_len || c->owner_escaped[0]
                                                           ? json_object_new_string(c->owner_escaped)
                                                           : NULL);
                json_object_object_add(o, "from", json_string_or_null(*c->from ? c->from : NULL));
                json_object_object_add(o, "to", json_string_or_null(*c->to ? c->to : NULL));
                json_object_object_add(o, "clientid", json_object_new_string(clid));
                printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else
                printf("%s %-8s owner \"%s\" %s -> %s (client 0x%llx)\n", when, kind,
                       c->owner_escaped[0] ? c->owner_escaped : "?", *c->from ? c->from : "?",
                       *c->to ? c->to : "?", (unsigned long long) c->clientid);
        fflush(stdout);
}

static void save_stats(session *s, const watch_stats *st, double now) {
        if (!s->h || s->history_error)
                return;
        (void) history_set_stat(s->h, "events", (double) st->events);
        (void) history_set_stat(s->h, "lost", (double) st->lost);
        (void) history_set_stat(s->h, "untracked", (double) st->untracked);
        (void) history_set_stat(s->h, "info_misses", (double) st->info_misses);
        (void) history_set_stat(s->h, "updated", now);
}

static void on_batch(const watch_stats *st, void *userdata) {
        session *s = userdata;
        struct timespec ts;
        double now;

        clock_gettime(CLOCK_REALTIME, &ts);
        now = (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
        if (s->h && !s->history_error && !s->in_batch && now - s->last_stat >= STAT_EVERY_S) {
                if (history_begin(s->h) == 0)
                        s->in_batch = true;
        }
        if (s->in_batch && now - s->last_commit >= COMMIT_EVERY_S) {
                if (now - s->last_stat >= STAT_EVERY_S) {
                        save_stats(s, st, now);
                        s->last_stat = now;
                }
                if (now - s->last_prune >= PRUNE_EVERY_S) {
                        (void) history_prune(s->h, now, WATCH_KEEP_SECONDS, WATCH_KEEP_ROWS);
                        s->last_prune = now;
                }
                if (history_commit(s->h) < 0 && !s->history_error) {
                        s->history_error = -EIO;
                        errorf("cannot write the history %s", watch_history_path());
                }
                s->in_batch = false;
                s->last_commit = now;
        }
        if (st->lost != s->warned_lost) {
                warnf("%llu events lost so far (the trace buffer overflowed)",
                      (unsigned long long) st->lost);
                s->warned_lost = st->lost;
        }
}

static void on_ready(void *userdata) {
        (void) userdata;
        if (!arg.quiet)
                fprintf(stderr, "%s: following knfsd's client-id tracepoints%s%s\n", program,
                        watch_history_path() ? "; history in " : "",
                        watch_history_path() ? watch_history_path() : "");
}

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

int cmd_watch(void) {
        const char *hp = watch_history_path(), *err = NULL;
        session s = { 0 };
        watch_stats st = { 0 };
        watch_options o = {
                .nfsd_clients = arg.nfsd_clients ? arg.nfsd_clients : "/proc/fs/nfsd/clients",
                .duration_s = arg.duration_s,
                .stop = &stop,
                .on_change = on_change,
                .on_batch = on_batch,
                .on_ready = on_ready,
                .userdata = &s,
        };
        struct sigaction sa = { .sa_handler = on_signal };
        struct timespec ts;
        int lock, r;

        if (!arg.server) {
                errorf("watch: say what to watch: --server (knfsd's clients, on the NFS server)");
                return EXIT_USAGE;
        }
        if (geteuid() != 0) {
                errorf("watch --server needs root (tracefs, /proc/fs/nfsd)");
                return EXIT_FAIL;
        }
        (void) mkdir(NSID_RUN_DIR, 0755);
        lock = lock_open();
        if (lock < 0) {
                errorf("cannot open the lock in %s: %s", NSID_RUN_DIR, strerror(errno));
                return EXIT_FAIL;
        }
        if (flock(lock, LOCK_EX | LOCK_NB) < 0) {
                errorf("another nsidctl watch --server runs (it holds %s/%s)", NSID_RUN_DIR,
                       LOCK_NAME);
                close(lock);
                return EXIT_FAIL;
        }
        if (hp) {
                (void) mkdir(ctx_state_dir(), 0755);
                r = history_open_write(hp, &s.h, &err);
                if (r < 0) {
                        errorf("cannot open the history %s: %s", hp, err);
                        close(lock);
                        return EXIT_FAIL;
                }
                clock_gettime(CLOCK_REALTIME, &ts);
                (void) history_set_stat(s.h, "started", (double) ts.tv_sec);
        }
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        r = watch_server(&o, &st, &err);
        if (s.in_batch)
                (void) history_commit(s.h);
        if (s.h) {
                clock_gettime(CLOCK_REALTIME, &ts);
                save_stats(&s, &st, (double) ts.tv_sec);
                (void) history_set_stat(s.h, "stopped", (double) ts.tv_sec);
        }
        s.h = history_close(s.h);
        close(lock);
        if (r < 0) {
                errorf("watch --server: %s (%s)", err ? err : "failed", strerror(-r));
                return EXIT_FAIL;
        }
        if (!arg.quiet || st.lost)
                fprintf(stderr,
                        "%s: %llu events: %llu takeovers, %llu restarts, %llu replaced "
                        "(holder unknown), %llu refused; %llu lost\n",
                        program, (unsigned long long) st.events,
                        (unsigned long long) s.counts[NSID_NFSD_CHANGE_TAKEOVER],
                        (unsigned long long) s.counts[NSID_NFSD_CHANGE_RESTART],
                        (unsigned long long) s.counts[NSID_NFSD_CHANGE_REPLACED],
                        (unsigned long long) s.counts[NSID_NFSD_CHANGE_REFUSED],
                        (unsigned long long) st.lost);
        return st.lost ? EXIT_WARNINGS : EXIT_OK;
}
