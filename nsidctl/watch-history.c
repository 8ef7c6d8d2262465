/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The history nsidctl watch --server keeps (SQLite, <state-dir>/server-watch.db): every change
 * of an owner string's record with its time, owner string and addresses (bounded: 30 days,
 * 100,000 rows), and totals per kind and owner string that never go down (bounded: 1,000
 * owner strings per kind, the rest summed), for doctor and metrics. One writer (the
 * watcher, a transaction a second at most), any number of readers; a rollback journal, not
 * WAL, so that a reader needs no write access (nsid-metrics.service sees /var/lib read-only).
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch.h"

struct watch_history {
        sqlite3 *db;
        sqlite3_stmt *ins, *tot_find, *tot_bump, *tot_new;
        size_t owners[_NSID_NFSD_CHANGE_KIND_MAX]; /* rows of their own per kind */
};

static const char schema[] =
        "CREATE TABLE IF NOT EXISTS change("
        "  id INTEGER PRIMARY KEY, time REAL NOT NULL, kind TEXT NOT NULL,"
        "  owner BLOB, owner_text TEXT NOT NULL, from_addr TEXT NOT NULL,"
        "  to_addr TEXT NOT NULL, clientid TEXT NOT NULL);"
        "CREATE INDEX IF NOT EXISTS change_time ON change(time);"
        "CREATE TABLE IF NOT EXISTS total("
        "  kind TEXT NOT NULL, owner_text TEXT NOT NULL, n INTEGER NOT NULL,"
        "  PRIMARY KEY(kind, owner_text));"
        "CREATE TABLE IF NOT EXISTS stat(key TEXT PRIMARY KEY, value REAL NOT NULL);";

watch_history *history_close(watch_history *h) {
        if (!h)
                return NULL;
        sqlite3_finalize(h->ins);
        sqlite3_finalize(h->tot_find);
        sqlite3_finalize(h->tot_bump);
        sqlite3_finalize(h->tot_new);
        sqlite3_close(h->db);
        free(h);
        return NULL;
}

static int open_db(const char *path, int flags, watch_history **ret, const char **ret_error) {
        watch_history *h = calloc(1, sizeof(*h));

        if (!h) {
                *ret_error = "out of memory";
                return -ENOMEM;
        }
        if (sqlite3_open_v2(path, &h->db, flags, NULL) != SQLITE_OK) {
                *ret_error = "cannot open the database";
                history_close(h);
                return -EIO;
        }
        sqlite3_busy_timeout(h->db, 5000);
        *ret = h;
        return 0;
}

int history_open_read(const char *path, watch_history **ret, const char **ret_error) {
        sqlite3_stmt *st = NULL;
        int r;

        *ret = NULL;
        if (access(path, F_OK) < 0) {
                *ret_error = "no history (nsidctl watch --server never ran here)";
                return -errno;
        }
        r = open_db(path, SQLITE_OPEN_READONLY, ret, ret_error);
        if (r < 0)
                return r;
        /* a file that is not our history reads as an error, not as "nothing happened" */
        if (sqlite3_prepare_v2((*ret)->db, "SELECT count(*) FROM change, total LIMIT 0", -1, &st,
                               NULL) != SQLITE_OK) {
                *ret_error = "not an nsid server-watch history";
                *ret = history_close(*ret);
                return -EBADMSG;
        }
        sqlite3_finalize(st);
        return 0;
}

static int prepare(watch_history *h, const char *sql, sqlite3_stmt **st) {
        return sqlite3_prepare_v2(h->db, sql, -1, st, NULL) == SQLITE_OK ? 0 : -EIO;
}

int history_open_write(const char *path, watch_history **ret, const char **ret_error) {
        watch_history *h;
        sqlite3_stmt *st = NULL;
        mode_t old;
        int r;

        old = umask(027);
        r = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW, &h,
                    ret_error);
        umask(old);
        if (r < 0)
                return r;
        if (sqlite3_exec(h->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(h->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
                *ret_error = "cannot make the history's tables (not an nsid server-watch history?)";
                history_close(h);
                return -EIO;
        }
        if (prepare(h, "INSERT INTO change(time, kind, owner, owner_text, from_addr, to_addr, "
                       "clientid) VALUES(?, ?, ?, ?, ?, ?, ?)", &h->ins) < 0 ||
            prepare(h, "SELECT 1 FROM total WHERE kind = ? AND owner_text = ?", &h->tot_find) < 0 ||
            prepare(h, "UPDATE total SET n = n + 1 WHERE kind = ? AND owner_text = ?",
                    &h->tot_bump) < 0 ||
            prepare(h, "INSERT INTO total(kind, owner_text, n) VALUES(?, ?, 1)", &h->tot_new) < 0 ||
            prepare(h, "SELECT kind, count(*) FROM total WHERE owner_text <> '' GROUP BY kind",
                    &st) < 0) {
                *ret_error = "cannot prepare the history's statements";
                history_close(h);
                return -EIO;
        }
        while (sqlite3_step(st) == SQLITE_ROW)
                for (int k = 0; k < _NSID_NFSD_CHANGE_KIND_MAX; k++)
                        if (strcmp((const char *) sqlite3_column_text(st, 0),
                                   nsid_nfsd_change_kind_to_string(k)) == 0)
                                h->owners[k] = (size_t) sqlite3_column_int64(st, 1);
        sqlite3_finalize(st);
        *ret = h;
        return 0;
}

static int exec(watch_history *h, const char *sql) {
        return sqlite3_exec(h->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

int history_begin(watch_history *h) {
        return exec(h, "BEGIN IMMEDIATE");
}

int history_commit(watch_history *h) {
        return exec(h, "COMMIT");
}

static int step_reset(sqlite3_stmt *st) {
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return rc;
}

static int bump_total(watch_history *h, const char *kind, size_t k, const char *owner) {
        int rc;

        sqlite3_bind_text(h->tot_find, 1, kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(h->tot_find, 2, owner, -1, SQLITE_STATIC);
        rc = step_reset(h->tot_find);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return -EIO;
        if (rc == SQLITE_DONE && *owner && h->owners[k] >= WATCH_OWNERS_MAX)
                return bump_total(h, kind, k, ""); /* past the bound: the sum of the others */
        if (rc == SQLITE_DONE) {
                sqlite3_bind_text(h->tot_new, 1, kind, -1, SQLITE_STATIC);
                sqlite3_bind_text(h->tot_new, 2, owner, -1, SQLITE_STATIC);
                if (step_reset(h->tot_new) != SQLITE_DONE)
                        return -EIO;
                if (*owner)
                        h->owners[k]++;
                return 0;
        }
        sqlite3_bind_text(h->tot_bump, 1, kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(h->tot_bump, 2, owner, -1, SQLITE_STATIC);
        return step_reset(h->tot_bump) == SQLITE_DONE ? 0 : -EIO;
}

int history_add(watch_history *h, const nsid_nfsd_change *c, double wall_time) {
        const char *kind = nsid_nfsd_change_kind_to_string(c->kind);
        char clid[24];

        if (!kind)
                return -EINVAL;
        snprintf(clid, sizeof(clid), "0x%llx", (unsigned long long) c->clientid);
        sqlite3_bind_double(h->ins, 1, wall_time);
        sqlite3_bind_text(h->ins, 2, kind, -1, SQLITE_STATIC);
        if (c->owner_len)
                sqlite3_bind_blob(h->ins, 3, c->owner, (int) c->owner_len, SQLITE_STATIC);
        else
                sqlite3_bind_null(h->ins, 3);
        sqlite3_bind_text(h->ins, 4, c->owner_escaped, -1, SQLITE_STATIC);
        sqlite3_bind_text(h->ins, 5, c->from, -1, SQLITE_STATIC);
        sqlite3_bind_text(h->ins, 6, c->to, -1, SQLITE_STATIC);
        sqlite3_bind_text(h->ins, 7, clid, -1, SQLITE_STATIC);
        if (step_reset(h->ins) != SQLITE_DONE)
                return -EIO;
        return bump_total(h, kind, (size_t) c->kind, c->owner_escaped);
}

int history_set_stat(watch_history *h, const char *key, double value) {
        sqlite3_stmt *st;
        int rc;

        if (prepare(h, "INSERT INTO stat(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE "
                       "SET value = excluded.value", &st) < 0)
                return -EIO;
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, value);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : -EIO;
}

int history_get_stat(watch_history *h, const char *key, double *ret) {
        sqlite3_stmt *st;
        int rc;

        if (prepare(h, "SELECT value FROM stat WHERE key = ?", &st) < 0)
                return -EIO;
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                *ret = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
        return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
}

int history_prune(watch_history *h, double now, double keep_seconds, long keep_rows) {
        sqlite3_stmt *st;
        int rc;

        if (prepare(h, "DELETE FROM change WHERE time < ?1 OR id <= (SELECT max(id) FROM change) "
                       "- ?2", &st) < 0)
                return -EIO;
        sqlite3_bind_double(st, 1, now - keep_seconds);
        sqlite3_bind_int64(st, 2, keep_rows);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : -EIO;
}

static char *dup_col(sqlite3_stmt *st, int i) {
        const unsigned char *t = sqlite3_column_text(st, i);
        return strdup(t ? (const char *) t : "");
}

int history_owners_since(watch_history *h, nsid_nfsd_change_kind kind, double since, size_t max,
                         history_owner **ret, size_t *ret_n) {
        /* the addresses: at most 8 distinct ones of either side, in the order first seen */
        static const char sql[] =
                "SELECT c.owner_text, count(*), min(c.time), max(c.time),"
                " (SELECT group_concat(a, ', ') FROM (SELECT a FROM ("
                "   SELECT from_addr AS a, time AS t FROM change WHERE kind = ?1 AND time >= ?2"
                "     AND owner_text = c.owner_text"
                "   UNION ALL SELECT to_addr, time FROM change WHERE kind = ?1 AND time >= ?2"
                "     AND owner_text = c.owner_text)"
                "  WHERE a <> '' GROUP BY a ORDER BY min(t) LIMIT 8))"
                " FROM change c WHERE c.kind = ?1 AND c.time >= ?2"
                " GROUP BY c.owner_text ORDER BY count(*) DESC, c.owner_text LIMIT ?3";
        history_owner *v = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        int rc;

        if (prepare(h, sql, &st) < 0)
                return -EIO;
        sqlite3_bind_text(st, 1, nsid_nfsd_change_kind_to_string(kind), -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, since);
        sqlite3_bind_int64(st, 3, (sqlite3_int64) max);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                history_owner *nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv)
                        break;
                v = nv;
                v[n] = (history_owner) {
                        .owner = dup_col(st, 0),
                        .n = (uint64_t) sqlite3_column_int64(st, 1),
                        .first = sqlite3_column_double(st, 2),
                        .last = sqlite3_column_double(st, 3),
                        .addresses = dup_col(st, 4),
                };
                n++;
                if (!v[n - 1].owner || !v[n - 1].addresses)
                        break;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) {
                history_owners_free(v, n);
                return rc == SQLITE_ROW ? -ENOMEM : -EIO;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

void history_owners_free(history_owner *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(v[i].owner);
                free(v[i].addresses);
        }
        free(v);
}

int history_sum(watch_history *h, nsid_nfsd_change_kind kind, uint64_t *ret) {
        sqlite3_stmt *st;
        int rc;

        if (prepare(h, "SELECT coalesce(sum(n), 0) FROM total WHERE kind = ?", &st) < 0)
                return -EIO;
        sqlite3_bind_text(st, 1, nsid_nfsd_change_kind_to_string(kind), -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                *ret = (uint64_t) sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return rc == SQLITE_ROW ? 0 : -EIO;
}

int history_owner_totals(watch_history *h, nsid_nfsd_change_kind kind, size_t max,
                         history_total **ret, size_t *ret_n) {
        history_total *v = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        int rc;

        if (prepare(h, "SELECT owner_text, n FROM total WHERE kind = ? AND owner_text <> '' "
                       "ORDER BY n DESC, owner_text LIMIT ?", &st) < 0)
                return -EIO;
        sqlite3_bind_text(st, 1, nsid_nfsd_change_kind_to_string(kind), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64) max);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                history_total *nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv)
                        break;
                v = nv;
                v[n].owner = dup_col(st, 0);
                v[n].n = (uint64_t) sqlite3_column_int64(st, 1);
                if (!v[n++].owner)
                        break;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) {
                history_totals_free(v, n);
                return rc == SQLITE_ROW ? -ENOMEM : -EIO;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

void history_totals_free(history_total *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].owner);
        free(v);
}
