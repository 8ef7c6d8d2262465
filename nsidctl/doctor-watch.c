/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor on an NFS server: what nsidctl watch --server recorded (every takeover of
 * an owner string's record as knfsd made it), where a reading of /proc/fs/nfsd/clients sees
 * one client at a time. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "doctor.h"
#include "watch.h"

#define WINDOW_S (24 * 3600)
#define OWNERS_SHOWN 20

static void fmt_utc(double t, char *buf, size_t size) {
        time_t s = (time_t) t;
        struct tm tm;
        gmtime_r(&s, &tm);
        strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static json_object *split_addresses(const char *list) {
        json_object *a = json_object_new_array();
        const char *p = list;

        while (*p) {
                size_t n = strcspn(p, ",");
                json_object_array_add(a, json_object_new_string_len(p, (int) n));
                p += n;
                p += strspn(p, ", ");
        }
        return a;
}

static void owners(watch_history *h, nsid_nfsd_change_kind kind, double since, size_t *ret_n) {
        history_owner *v = NULL;
        size_t n = 0;
        char last[40];

        *ret_n = 0;
        if (history_owners_since(h, kind, since, OWNERS_SHOWN, &v, &n) < 0) {
                add_finding(SEV_ERROR, "nfsd-takeovers", NULL, "cannot read the history %s",
                            watch_history_path());
                return;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_new_object();
                fmt_utc(v[i].last, last, sizeof(last));
                if (kind == NSID_NFSD_CHANGE_TAKEOVER)
                        add_finding(SEV_ERROR, "nfsd-takeovers",
                                    "give each client its own identity: nsid-uniquifier in each "
                                    "container, a unique nfs.nfs4_unique_id on each host",
                                    "owner string \"%s\" was taken over %llu time(s) in the last "
                                    "24 h, between %s (last at %s): clients presenting one owner "
                                    "string take each other's lease",
                                    v[i].owner, (unsigned long long) v[i].n, v[i].addresses, last);
                else
                        add_finding(SEV_WARNING, "nfsd-takeovers",
                                    "give each client its own identity (nsid-uniquifier)",
                                    "owner string \"%s\" was asked for %llu time(s) in the last "
                                    "24 h with other credentials while in use, and refused "
                                    "(NFS4ERR_CLID_INUSE), from %s (last at %s)",
                                    v[i].owner, (unsigned long long) v[i].n, v[i].addresses, last);
                json_object_object_add(o, "owner", json_object_new_string(v[i].owner));
                json_object_object_add(o, kind == NSID_NFSD_CHANGE_TAKEOVER ? "takeovers"
                                                                             : "refusals",
                                       json_object_new_uint64(v[i].n));
                json_object_object_add(o, "addresses", split_addresses(v[i].addresses));
                json_object_object_add(o, "first", json_object_new_double(v[i].first));
                json_object_object_add(o, "last", json_object_new_double(v[i].last));
                finding_attach(o);
        }
        *ret_n = n;
        history_owners_free(v, n);
}

void check_server_history(void) {
        const char *path = watch_history_path(), *err = NULL;
        watch_history *h = NULL;
        double now = (double) time(NULL), since = now - WINDOW_S, v = 0;
        size_t nt = 0, nr = 0;
        uint64_t restarts = 0;
        int r, running;

        /* a copy of another server's clients (--nfsd-clients) says nothing of this host's
         * history: read one only when named */
        if (!path || (arg.nfsd_clients && !arg.history))
                return;
        r = history_open_read(path, &h, &err);
        if (r == -ENOENT) {
                if (arg.server)
                        add_finding(SEV_INFO, "nfsd-takeovers",
                                    "systemctl enable --now nsid-server-watch.service",
                                    "no takeover history at %s: a reading of the clients sees "
                                    "one holder at a time; nsidctl watch --server records each "
                                    "takeover as it happens",
                                    path);
                return;
        }
        if (r < 0) {
                add_finding(SEV_ERROR, "nfsd-takeovers", NULL, "cannot read the history %s: %s",
                            path, err);
                return;
        }
        owners(h, NSID_NFSD_CHANGE_TAKEOVER, since, &nt);
        owners(h, NSID_NFSD_CHANGE_REFUSED, since, &nr);
        if (history_get_stat(h, "lost", &v) == 0 && v > 0)
                add_finding(SEV_WARNING, "nfsd-takeovers",
                            "a larger trace buffer, or fewer events: see nsidctl(8), WATCH",
                            "the watcher lost %.0f trace events (its buffer overflowed): the "
                            "history may miss takeovers",
                            v);
        running = watch_running();
        if (nt == 0 && nr == 0) {
                char started[40] = "?";
                if (history_get_stat(h, "started", &v) == 0)
                        fmt_utc(v, started, sizeof(started));
                add_finding(SEV_OK, "nfsd-takeovers", NULL,
                            "no owner string taken over in the last 24 h (history %s, watcher "
                            "last started %s%s)",
                            path, started, running == 1 ? ", running" : ", not running");
        } else if (running == 0)
                add_finding(SEV_INFO, "nfsd-takeovers", "systemctl start nsid-server-watch.service",
                            "the watcher is not running now: takeovers after it stopped are not "
                            "in the history");
        {
                history_owner *rv = NULL;
                size_t n = 0;
                if (history_owners_since(h, NSID_NFSD_CHANGE_RESTART, since, 1000000, &rv, &n) ==
                    0)
                        for (size_t i = 0; i < n; i++)
                                restarts += rv[i].n;
                history_owners_free(rv, n);
        }
        if (restarts)
                add_finding(SEV_INFO, "nfsd-takeovers", NULL,
                            "%llu client restart(s) in the last 24 h (a new verifier from the "
                            "holder's own address)",
                            (unsigned long long) restarts);
        history_close(h);
}
