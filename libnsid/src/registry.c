/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The identity registry (SQLite). See nsid/registry.h for the contract. */
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include "log-internal.h"
#include "macro.h"
#include "nsid/identity.h"
#include "nsid/netns.h"
#include "nsid/registry.h"
#include "registry-internal.h"

#define BUSY_TIMEOUT_MS 30000



static const char schema_v1[] =
        "CREATE TABLE IF NOT EXISTS bindings ("
        " app TEXT NOT NULL,"
        " identity TEXT NOT NULL,"
        " key TEXT NOT NULL,"
        " source TEXT NOT NULL,"
        " netns_dev INTEGER NOT NULL,"
        " netns_ino INTEGER NOT NULL,"
        " boot_id TEXT NOT NULL,"
        " netns_cookie INTEGER NOT NULL,"
        " pid INTEGER NOT NULL DEFAULT 0,"
        " name TEXT,"
        " first_seen INTEGER NOT NULL,"
        " last_seen INTEGER NOT NULL,"
        " PRIMARY KEY (app, netns_dev, netns_ino),"
        " UNIQUE (app, identity));"
        "CREATE TABLE IF NOT EXISTS keys ("
        " app TEXT NOT NULL,"
        " key TEXT NOT NULL,"
        " source TEXT NOT NULL,"
        " identity TEXT NOT NULL,"
        " name TEXT,"
        " first_seen INTEGER NOT NULL,"
        " last_seen INTEGER NOT NULL,"
        " PRIMARY KEY (app, key));";

static int errno_from_sqlite(sqlite3 *db, int rc) {
        int sys = db ? sqlite3_system_errno(db) : 0;

        switch (rc & 0xff) {
        case SQLITE_OK:
        case SQLITE_ROW:
        case SQLITE_DONE:
                return 0;
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
                return -EBADMSG;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_READONLY:
                return -EROFS;
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_CONSTRAINT:
                return -EADDRINUSE;
        case SQLITE_CANTOPEN:
                return sys > 0 ? -sys : -EACCES;
        case SQLITE_IOERR:
                return sys > 0 ? -sys : -EIO;
        default:
                return -EIO;
        }
}

/* Remember SQLite's message for this failure and turn it into -errno. */
int registry_fail(nsid_registry *r, int rc, const char *what) {
        int e = errno_from_sqlite(r->db, rc);

        snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", what,
                 r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
        log_debug("registry %s: %s", r->path, r->errmsg);
        return e < 0 ? e : -EIO;
}

int registry_exec(nsid_registry *r, const char *sql) {
        int rc = sqlite3_exec(r->db, sql, NULL, NULL, NULL);
        return rc == SQLITE_OK ? 0 : registry_fail(r, rc, sql);
}

void registry_rollback(nsid_registry *r) {
        (void) sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Prepare sql into *ret, or -errno (logged as what). */
int registry_prepare(nsid_registry *r, const char *sql, const char *what, sqlite3_stmt **ret) {
        int rc = sqlite3_prepare_v2(r->db, sql, -1, ret, NULL);
        return rc == SQLITE_OK ? 0 : registry_fail(r, rc, what);
}

/* Step a statement that returns no rows and finalize it: 0, or -errno (logged as what). */
int registry_step_done(nsid_registry *r, sqlite3_stmt *st, const char *what) {
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : registry_fail(r, rc, what);
}

/* Bind app, netns dev and netns ino to the parameters i, i+1, i+2. */
static void bind_app_netns(sqlite3_stmt *st, int i, const char *app, const nsid_ns_id *netns) {
        sqlite3_bind_text(st, i, app, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, i + 1, (sqlite3_int64) netns->dev);
        sqlite3_bind_int64(st, i + 2, (sqlite3_int64) netns->ino);
}

/* Bind a string that may be NULL (then SQL NULL). */
static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s) {
        if (s)
                sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
        else
                sqlite3_bind_null(st, i);
}

_public_ nsid_registry *nsid_registry_ref(nsid_registry *r) {
        if (r)
                r->n_ref++;
        return r;
}

_public_ nsid_registry *nsid_registry_unref(nsid_registry *r) {
        if (!r)
                return NULL;
        if (--r->n_ref > 0)
                return NULL;
        if (r->db)
                (void) sqlite3_close_v2(r->db);
        free(r->path);
        free(r);
        return NULL;
}

DEFINE_UNREF_CLEANUP(nsid_registry, nsid_registry_unref)

_public_ const char *nsid_registry_get_path(const nsid_registry *r) {
        return r ? r->path : NULL;
}

_public_ const char *nsid_registry_last_error(const nsid_registry *r) {
        return r ? r->errmsg : "";
}

static int mkdir_parent(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        char *dir;

        if (!copy)
                return -ENOMEM;
        dir = dirname(copy);
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

static int read_user_version(nsid_registry *r, int *ret) {
        sqlite3_stmt *st = NULL;
        int rc, e;

        e = registry_prepare(r, "PRAGMA user_version", "reading the schema version", &st);
        if (e < 0)
                return e;
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                e = registry_fail(r, rc, "reading the schema version");
                sqlite3_finalize(st);
                return e;
        }
        *ret = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        return 0;
}

static int schema_setup(nsid_registry *r) {
        int version = 0, e;

        /* The common case, an existing database of our version: no write lock needed. */
        e = read_user_version(r, &version);
        if (e < 0)
                return e;
        if (version == NSID_REGISTRY_SCHEMA_VERSION)
                return registry_exec(r, "SELECT count(*) FROM bindings WHERE 0");

        if (!(r->flags & NSID_REGISTRY_READONLY)) {
                e = registry_exec(r, "BEGIN IMMEDIATE");
                if (e < 0)
                        return e;
        }
        /* Again, under the write lock (unless read-only): another process may have set up the
         * schema meanwhile. */
        e = read_user_version(r, &version);
        if (e < 0)
                goto fail;

        if (version > NSID_REGISTRY_SCHEMA_VERSION) {
                snprintf(r->errmsg, sizeof(r->errmsg),
                         "schema version %d is newer than this program knows (%d)", version,
                         NSID_REGISTRY_SCHEMA_VERSION);
                e = -EPROTO;
                goto fail;
        }
        if (r->flags & NSID_REGISTRY_READONLY) {
                if (version == 0) {
                        snprintf(r->errmsg, sizeof(r->errmsg), "no nsid schema");
                        return -ENOMEDIUM;
                }
                /* Touch the tables so that a damaged schema shows up now. */
                return registry_exec(r, "SELECT count(*) FROM bindings");
        }
        if (version == 0) {
                e = registry_exec(r, schema_v1);
                if (e < 0)
                        goto fail;
                e = registry_exec(r, "PRAGMA user_version = 1");
                if (e < 0)
                        goto fail;
        } else {
                e = registry_exec(r, "SELECT count(*) FROM bindings");
                if (e < 0)
                        goto fail;
        }
        return registry_exec(r, "COMMIT");
fail:
        if (!(r->flags & NSID_REGISTRY_READONLY))
                registry_rollback(r);
        return e;
}

_public_ int nsid_registry_open(const char *path, unsigned flags, nsid_registry **ret) {
        _cleanup_(nsid_registry_unrefp) nsid_registry *r = NULL;
        _cleanup_free_ char *defpath = NULL;
        int rc, e;

        assert_return(ret, -EINVAL);
        assert_return((flags & ~NSID_REGISTRY_READONLY) == 0, -EINVAL);

        if (!path) {
                if (asprintf(&defpath, "%s/%s", NSID_STATE_DIR, NSID_REGISTRY_FILE) < 0)
                        return -ENOMEM;
                path = defpath;
        }
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->n_ref = 1;
        r->flags = flags;
        r->path = strdup(path);
        if (!r->path)
                return -ENOMEM;

        if (!(flags & NSID_REGISTRY_READONLY)) {
                _cleanup_close_ int fd = -EBADF;

                e = mkdir_parent(path);
                if (e < 0) {
                        snprintf(r->errmsg, sizeof(r->errmsg), "cannot create its directory: %s",
                                 strerror(-e));
                        return log_error_errno(e, "registry %s: %s", r->path, r->errmsg);
                }
                /* Created here so that it is 0600 from the start; SQLite gives its -wal and
                 * -shm files the same mode. */
                fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
                if (fd < 0) {
                        e = negative_errno();
                        snprintf(r->errmsg, sizeof(r->errmsg), "cannot open: %s", strerror(-e));
                        return log_error_errno(e, "registry %s: %s", r->path, r->errmsg);
                }
        }

        rc = sqlite3_open_v2(path, &r->db,
                             (flags & NSID_REGISTRY_READONLY)
                                     ? SQLITE_OPEN_READONLY
                                     : SQLITE_OPEN_READWRITE,
                             NULL);
        if (rc != SQLITE_OK) {
                e = registry_fail(r, rc, "open");
                if ((flags & NSID_REGISTRY_READONLY) && e == -ENOENT)
                        return e; /* nothing recorded yet: not an error to shout about */
                return log_error_errno(e, "registry %s: %s", r->path, r->errmsg);
        }
        (void) sqlite3_extended_result_codes(r->db, 1);
        /* Every short-lived process would otherwise checkpoint (and fsync twice) on close;
         * WAL auto-checkpoints keep the log bounded instead. Committed data is in the WAL. */
        (void) sqlite3_db_config(r->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
        (void) sqlite3_busy_timeout(r->db, BUSY_TIMEOUT_MS);

        /* A new database opened by several processes at once (hooks of containers started
         * together, seen with 8 in the lab): switching a fresh file to WAL while another
         * connection has it open in rollback mode can fail with SQLITE_BUSY without the
         * busy handler being asked, so the setup is retried, bounded, before giving up. */
        for (unsigned attempt = 0;; attempt++) {
                e = 0;
                if (!(flags & NSID_REGISTRY_READONLY)) {
                        /* WAL is persistent; setting it needs a moment of exclusive access,
                         * so only when it is not already on. */
                        sqlite3_stmt *st = NULL;
                        bool wal = false;

                        rc = sqlite3_prepare_v2(r->db, "PRAGMA journal_mode", -1, &st, NULL);
                        if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
                                const char *m = (const char *) sqlite3_column_text(st, 0);
                                wal = m && strcmp(m, "wal") == 0;
                        }
                        sqlite3_finalize(st);
                        if (!wal)
                                e = registry_exec(r, "PRAGMA journal_mode=WAL");
                }
                if (e >= 0)
                        e = registry_exec(r, "PRAGMA synchronous=NORMAL");
                if (e >= 0)
                        e = schema_setup(r);
                if (e != -EBUSY || attempt >= 100)
                        break;
                (void) sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
                (void) usleep(10000 + 1000 * (attempt % 20)); /* about 2 s in all */
        }
        if (e < 0)
                return log_error_errno(e, "registry %s: %s", r->path, r->errmsg);

        *ret = TAKE_PTR(r);
        return 0;
}

_public_ int nsid_registry_check_integrity(nsid_registry *r) {
        sqlite3_stmt *st = NULL;
        int rc, e = 0;

        assert_return(r, -EINVAL);
        e = registry_prepare(r, "PRAGMA integrity_check", "integrity_check", &st);
        if (e < 0)
                return e;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *t = (const char *) sqlite3_column_text(st, 0);
                if (!t || strcmp(t, "ok") != 0) {
                        snprintf(r->errmsg, sizeof(r->errmsg), "integrity_check: %s",
                                 t ? t : "(null)");
                        e = -EBADMSG;
                        break;
                }
        }
        if (e == 0 && rc != SQLITE_DONE)
                e = registry_fail(r, rc, "integrity_check");
        sqlite3_finalize(st);
        return e;
}

/* ---- verification ---- */

typedef struct problem_list {
        nsid_registry_problem *v;
        size_t n, cap;
} problem_list;

_public_ void nsid_registry_problems_free(nsid_registry_problem *v, size_t n) {
        if (!v)
                return;
        for (size_t i = 0; i < n; i++) {
                free(v[i].app);
                free(v[i].key);
                free(v[i].identity);
                free(v[i].what);
        }
        free(v);
}

/* A text column as a copy (SQLite's text form of whatever is stored), NULL for SQL NULL;
 * *ret_oom set when a copy failed. */
static char *col_copy(sqlite3_stmt *st, int i, bool *ret_oom) {
        const unsigned char *t;
        char *c;

        if (i < 0 || sqlite3_column_type(st, i) == SQLITE_NULL)
                return NULL;
        t = sqlite3_column_text(st, i);
        c = t ? strdup((const char *) t) : NULL;
        if (!c)
                *ret_oom = true;
        return c;
}

/* Add a problem with the fields of row st (columns rowid, app, key, identity, ino at
 * 0, 1, 2, 4, 5; ino_col < 0 when there is none); st NULL: none. */
static int problem_add(problem_list *p, nsid_registry_problem_kind kind, const char *table,
                       sqlite3_stmt *st, int ino_col, const char *fmt, ...)
        _printf_(6, 7);
static int problem_add(problem_list *p, nsid_registry_problem_kind kind, const char *table,
                       sqlite3_stmt *st, int ino_col, const char *fmt, ...) {
        nsid_registry_problem x = { .kind = kind, .table = table };
        bool oom = false;
        va_list ap;
        int k;

        if (p->n == p->cap) {
                size_t ncap = p->cap ? p->cap * 2 : 8;
                nsid_registry_problem *nv = reallocarray(p->v, ncap, sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                p->v = nv;
                p->cap = ncap;
        }
        if (st) {
                x.rowid = sqlite3_column_int64(st, 0);
                x.app = col_copy(st, 1, &oom);
                x.key = col_copy(st, 2, &oom);
                x.identity = col_copy(st, 4, &oom);
                if (ino_col >= 0)
                        x.netns_ino = (uint64_t) sqlite3_column_int64(st, ino_col);
        }
        va_start(ap, fmt);
        k = vasprintf(&x.what, fmt, ap);
        va_end(ap);
        if (k < 0 || oom) {
                if (k >= 0)
                        free(x.what);
                free(x.app);
                free(x.key);
                free(x.identity);
                return -ENOMEM;
        }
        p->v[p->n++] = x;
        return 0;
}

/* Column i of st as text that nsid could have written: a TEXT value, or NULL. */
static const char *col_text(sqlite3_stmt *st, int i) {
        if (sqlite3_column_type(st, i) != SQLITE_TEXT)
                return NULL;
        return (const char *) sqlite3_column_text(st, i);
}

static bool identity_well_formed(const char *s) {
        if (!s || strlen(s) != 32)
                return false;
        for (size_t i = 0; i < 32; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* The columns of index idx of this database, in order, joined by ',' into buf. */
static int index_columns(nsid_registry *r, const char *idx, char *buf, size_t size) {
        static const char what[] = "reading the schema";
        sqlite3_stmt *st = NULL;
        size_t len = 0;
        int rc, e;

        e = registry_prepare(r, "SELECT name FROM pragma_index_info(?1) ORDER BY seqno", what, &st);
        if (e < 0)
                return e;
        sqlite3_bind_text(st, 1, idx, -1, SQLITE_STATIC);
        buf[0] = '\0';
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *c = (const char *) sqlite3_column_text(st, 0);
                int k = snprintf(buf + len, size - len, "%s%s", len ? "," : "", c ? c : "?");
                if (k < 0 || (size_t) k >= size - len)
                        break; /* longer than any index of ours: it cannot match */
                len += (size_t) k;
        }
        e = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : registry_fail(r, rc, what);
        sqlite3_finalize(st);
        return e;
}

/* Whether table has a UNIQUE index (a UNIQUE or PRIMARY KEY constraint) on exactly cols. */
static int has_unique(nsid_registry *r, const char *table, const char *cols) {
        static const char what[] = "reading the schema";
        sqlite3_stmt *st = NULL;
        char have[128];
        int rc = SQLITE_DONE, e, found = 0;

        e = registry_prepare(r, "SELECT name FROM pragma_index_list(?1) WHERE \"unique\" = 1", what,
                    &st);
        if (e < 0)
                return e;
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *idx = (const char *) sqlite3_column_text(st, 0);
                if (!idx)
                        continue;
                e = index_columns(r, idx, have, sizeof(have));
                if (e < 0)
                        break;
                found = strcmp(have, cols) == 0;
        }
        if (e >= 0 && !found && rc != SQLITE_DONE)
                e = registry_fail(r, rc, what);
        sqlite3_finalize(st);
        return e < 0 ? e : found;
}

/* Every (app, identity) of bindings held by more than one row. */
static int find_duplicates(nsid_registry *r, problem_list *p) {
        static const char what[] = "looking for duplicate identities";
        sqlite3_stmt *st = NULL;
        int rc, e;

        e = registry_prepare(r,
                    "SELECT 0, app, NULL, NULL, identity, count(*) FROM bindings"
                    " GROUP BY app, identity HAVING count(*) > 1",
                    what, &st);
        if (e < 0)
                return e;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                e = problem_add(p, NSID_REGISTRY_PROBLEM_DUPLICATE, "bindings", st, -1,
                                "identity bound to %lld network namespaces",
                                (long long) sqlite3_column_int64(st, 5));
                if (e < 0)
                        break;
        }
        if (e >= 0 && rc != SQLITE_DONE)
                e = registry_fail(r, rc, what);
        sqlite3_finalize(st);
        return e;
}

/* Every row of table: well-formed, and its identity derived from its app and key. Returns
 * the number of rows. */
static int verify_rows(nsid_registry *r, const char *table, const uint8_t *secret,
                       problem_list *p) {
        char what[64], derived[NSID_IDENTITY_STRING_SIZE];
        sqlite3_stmt *st = NULL;
        bool bindings = strcmp(table, "bindings") == 0;
        int rc, e, rows = 0;

        snprintf(what, sizeof(what), "reading %s", table);
        e = registry_prepare(r,
                    bindings ? "SELECT rowid, app, key, source, identity, netns_ino"
                               " FROM bindings ORDER BY rowid"
                             : "SELECT rowid, app, key, source, identity FROM keys"
                               " ORDER BY rowid",
                    what, &st);
        if (e < 0)
                return e;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *app = col_text(st, 1), *key = col_text(st, 2),
                           *src = col_text(st, 3), *id = col_text(st, 4);
                const char *bad = NULL;
                int ino = bindings ? 5 : -1;

                rows++;
                if (!app || nsid_app_validate(app) < 0)
                        bad = "app is not 1..64 characters of [a-z0-9._-]";
                else if (!key || nsid_key_validate(key) < 0)
                        bad = "key is not 1..1024 printable ASCII characters without spaces";
                else if (!src || nsid_key_source_from_string(src) < 0)
                        bad = "key source is not explicit, container-id, machine-id or random";
                else if (!identity_well_formed(id))
                        bad = "identity is not 32 lowercase hex characters";
                if (bad) {
                        e = problem_add(p, NSID_REGISTRY_PROBLEM_MALFORMED, table, st, ino,
                                        "%s", bad);
                        if (e < 0)
                                break;
                        continue;
                }
                if (!secret)
                        continue;
                e = nsid_identity_derive(secret, app, key, derived);
                if (e < 0)
                        break;
                if (strcmp(derived, id) != 0) {
                        e = problem_add(p, NSID_REGISTRY_PROBLEM_NOT_DERIVED, table, st, ino,
                                        "identity is not the one the host secret derives from "
                                        "app %s and its key",
                                        app);
                        if (e < 0)
                                break;
                }
        }
        if (e >= 0 && rc != SQLITE_DONE)
                e = registry_fail(r, rc, what);
        sqlite3_finalize(st);
        explicit_bzero(derived, sizeof(derived));
        return e < 0 ? e : rows;
}

_public_ int nsid_registry_verify(nsid_registry *r, const uint8_t secret[NSID_ID128_SIZE],
                                  nsid_registry_problem **ret, size_t *ret_n) {
        static const struct {
                const char *table, *cols, *constraint;
        } constraints[] = {
                { "bindings", "app,netns_dev,netns_ino",
                  "PRIMARY KEY (app, netns_dev, netns_ino)" },
                { "bindings", "app,identity", "UNIQUE (app, identity)" },
                { "keys", "app,key", "PRIMARY KEY (app, key)" },
        };
        problem_list p = {};
        bool unique_identity = true;
        int e = 0, rows = 0, k = 0;

        assert_return(r, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(ret_n, -EINVAL);

        for (size_t i = 0; i < ELEMENTSOF(constraints) && e >= 0; i++) {
                k = has_unique(r, constraints[i].table, constraints[i].cols);
                if (k < 0)
                        e = k;
                else if (k == 0) {
                        if (strcmp(constraints[i].cols, "app,identity") == 0)
                                unique_identity = false;
                        e = problem_add(&p, NSID_REGISTRY_PROBLEM_SCHEMA, constraints[i].table,
                                        NULL, -1, "table %s has no %s", constraints[i].table,
                                        constraints[i].constraint);
                }
        }
        if (e >= 0 && !unique_identity)
                e = find_duplicates(r, &p);
        for (size_t i = 0; i < 2 && e >= 0; i++) {
                k = verify_rows(r, i == 0 ? "bindings" : "keys", secret, &p);
                if (k < 0)
                        e = k;
                else
                        rows += k;
        }
        if (e < 0) {
                nsid_registry_problems_free(p.v, p.n);
                return e;
        }
        if (p.n == 0) {
                free(p.v);
                p.v = NULL;
        }
        *ret = p.v;
        *ret_n = p.n;
        return rows;
}

_public_ void nsid_registry_entry_done(nsid_registry_entry *e) {
        if (!e)
                return;
        free(e->app);
        free(e->identity);
        free(e->key);
        free(e->boot_id);
        free(e->name);
        *e = (nsid_registry_entry) {};
}

_public_ void nsid_registry_entries_free(nsid_registry_entry *v, size_t n) {
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                nsid_registry_entry_done(&v[i]);
        free(v);
}

#define ENTRY_COLUMNS                                                                         \
        "app, identity, key, source, netns_dev, netns_ino, boot_id, netns_cookie, pid, name, " \
        "first_seen, last_seen"

static char *col_strdup(sqlite3_stmt *st, int i) {
        const unsigned char *t = sqlite3_column_text(st, i);
        return t ? strdup((const char *) t) : NULL;
}

static int entry_from_row(sqlite3_stmt *st, nsid_registry_entry *ret) {
        nsid_registry_entry e = {};
        const unsigned char *src;
        int s;

        e.app = col_strdup(st, 0);
        e.identity = col_strdup(st, 1);
        e.key = col_strdup(st, 2);
        src = sqlite3_column_text(st, 3);
        s = src ? nsid_key_source_from_string((const char *) src) : -EINVAL;
        e.source = s >= 0 ? (nsid_key_source) s : NSID_KEY_AUTO;
        e.netns.dev = (uint64_t) sqlite3_column_int64(st, 4);
        e.netns.ino = (uint64_t) sqlite3_column_int64(st, 5);
        e.boot_id = col_strdup(st, 6);
        e.netns_cookie = (uint64_t) sqlite3_column_int64(st, 7);
        e.pid = (pid_t) sqlite3_column_int64(st, 8);
        e.name = col_strdup(st, 9);
        e.first_seen = sqlite3_column_int64(st, 10);
        e.last_seen = sqlite3_column_int64(st, 11);
        if (!e.app || !e.identity || !e.key || !e.boot_id) {
                nsid_registry_entry_done(&e);
                return -ENOMEM;
        }
        *ret = e;
        return 0;
}

_public_ int nsid_registry_list(nsid_registry *r, nsid_registry_entry **ret, size_t *ret_n) {
        nsid_registry_entry *v = NULL;
        size_t n = 0, cap = 0;
        sqlite3_stmt *st = NULL;
        int rc, e = 0;

        assert_return(r, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(ret_n, -EINVAL);

        e = registry_prepare(r, "SELECT " ENTRY_COLUMNS " FROM bindings ORDER BY netns_ino, app",
                    "listing bindings", &st);
        if (e < 0)
                return e;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 16;
                        nsid_registry_entry *nv = reallocarray(v, ncap, sizeof(*v));
                        if (!nv) {
                                e = -ENOMEM;
                                break;
                        }
                        v = nv;
                        cap = ncap;
                }
                e = entry_from_row(st, &v[n]);
                if (e < 0)
                        break;
                n++;
        }
        if (e == 0 && rc != SQLITE_DONE)
                e = registry_fail(r, rc, "listing bindings");
        sqlite3_finalize(st);
        if (e < 0) {
                nsid_registry_entries_free(v, n);
                return e;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* Step a prepared single-row SELECT of ENTRY_COLUMNS and finalize it: 1 and *ret for a
 * row, 0 for none, or -errno (logged as what). */
static int step_one_entry(nsid_registry *r, sqlite3_stmt *st, const char *what,
                          nsid_registry_entry *ret) {
        int rc = sqlite3_step(st), e;

        if (rc == SQLITE_ROW)
                e = entry_from_row(st, ret) < 0 ? -ENOMEM : 1;
        else if (rc == SQLITE_DONE)
                e = 0;
        else
                e = registry_fail(r, rc, what);
        sqlite3_finalize(st);
        return e;
}

/* The row of app and netns (dev, ino), or else of app and identity: 1 and *ret, 0 if none,
 * or -errno. */
static int select_entry(nsid_registry *r, const char *app, const nsid_ns_id *netns,
                        const char *identity, nsid_registry_entry *ret) {
        const char *what = netns ? "looking up a netns" : "looking up an identity";
        sqlite3_stmt *st = NULL;
        int e = registry_prepare(r,
                        netns ? "SELECT " ENTRY_COLUMNS " FROM bindings"
                                " WHERE app = ?1 AND netns_dev = ?2 AND netns_ino = ?3"
                              : "SELECT " ENTRY_COLUMNS " FROM bindings"
                                " WHERE app = ?1 AND identity = ?2",
                        what, &st);

        if (e < 0)
                return e;
        if (netns)
                bind_app_netns(st, 1, app, netns);
        else {
                sqlite3_bind_text(st, 1, app, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, identity, -1, SQLITE_STATIC);
        }
        return step_one_entry(r, st, what, ret);
}

static int select_netns(nsid_registry *r, const char *app, const nsid_ns_id *id,
                        nsid_registry_entry *ret) {
        return select_entry(r, app, id, NULL, ret);
}

static int select_identity(nsid_registry *r, const char *app, const char *identity,
                           nsid_registry_entry *ret) {
        return select_entry(r, app, NULL, identity, ret);
}

static bool same_marker(const nsid_registry_entry *a, const char *boot_id, uint64_t cookie) {
        return a->boot_id && boot_id && strcmp(a->boot_id, boot_id) == 0 &&
               a->netns_cookie == cookie;
}

_public_ int nsid_registry_lookup_netns(nsid_registry *r, const char *app,
                                        const nsid_ns_id *netns, const char *boot_id,
                                        uint64_t cookie, nsid_registry_entry *ret) {
        nsid_registry_entry e = {};
        int k;

        assert_return(r, -EINVAL);
        assert_return(app, -EINVAL);
        assert_return(netns, -EINVAL);
        assert_return(boot_id, -EINVAL);
        assert_return(ret, -EINVAL);

        k = select_netns(r, app, netns, &e);
        if (k < 0)
                return k;
        if (k == 0)
                return -ENOENT;
        if (!same_marker(&e, boot_id, cookie)) {
                nsid_registry_entry_done(&e);
                return -ENOENT;
        }
        *ret = e;
        return 0;
}

static int delete_netns(nsid_registry *r, const char *app, const nsid_ns_id *id) {
        static const char what[] = "deleting a binding";
        sqlite3_stmt *st = NULL;
        int e = registry_prepare(r, "DELETE FROM bindings"
                           " WHERE app = ?1 AND netns_dev = ?2 AND netns_ino = ?3", what, &st);

        if (e < 0)
                return e;
        bind_app_netns(st, 1, app, id);
        e = registry_step_done(r, st, what);
        return e < 0 ? e : sqlite3_changes(r->db);
}

static int refresh(nsid_registry *r, const nsid_registry_entry *e, int64_t now) {
        static const char what[] = "updating a binding";
        sqlite3_stmt *st = NULL;
        int k = registry_prepare(r,
                        "UPDATE bindings SET last_seen = ?1, pid = ?2, name = COALESCE(?3, name)"
                        " WHERE app = ?4 AND netns_dev = ?5 AND netns_ino = ?6",
                        what, &st);

        if (k < 0)
                return k;
        sqlite3_bind_int64(st, 1, now);
        sqlite3_bind_int64(st, 2, e->pid);
        bind_text_or_null(st, 3, e->name);
        bind_app_netns(st, 4, e->app, &e->netns);
        return registry_step_done(r, st, what);
}

static int insert(nsid_registry *r, const nsid_registry_entry *e, int64_t now) {
        const char *src = nsid_key_source_to_string(e->source);
        sqlite3_stmt *st = NULL;
        int k;

        k = registry_prepare(r,
                    "INSERT INTO bindings (" ENTRY_COLUMNS ")"
                    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
                    "inserting a binding", &st);
        if (k < 0)
                return k;
        sqlite3_bind_text(st, 1, e->app, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, e->identity, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, e->key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, src, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, (sqlite3_int64) e->netns.dev);
        sqlite3_bind_int64(st, 6, (sqlite3_int64) e->netns.ino);
        sqlite3_bind_text(st, 7, e->boot_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 8, (sqlite3_int64) e->netns_cookie);
        sqlite3_bind_int64(st, 9, e->pid);
        bind_text_or_null(st, 10, e->name);
        sqlite3_bind_int64(st, 11, now);
        k = registry_step_done(r, st, "inserting a binding");
        if (k < 0)
                return k;

        if (e->source == NSID_KEY_RANDOM)
                return 0; /* random keys live and die with their netns */
        k = registry_prepare(r,
                    "INSERT INTO keys (app, key, source, identity, name, first_seen, last_seen)"
                    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
                    " ON CONFLICT (app, key) DO UPDATE SET source = excluded.source,"
                    " identity = excluded.identity, last_seen = excluded.last_seen,"
                    " name = COALESCE(excluded.name, name)",
                    "recording a key", &st);
        if (k < 0)
                return k;
        sqlite3_bind_text(st, 1, e->app, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, e->key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, src, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, e->identity, -1, SQLITE_STATIC);
        bind_text_or_null(st, 5, e->name);
        sqlite3_bind_int64(st, 6, now);
        return registry_step_done(r, st, "recording a key");
}

static int entry_copy(const nsid_registry_entry *src, nsid_registry_entry *dst) {
        if (!dst)
                return 0;
        nsid_registry_entry_done(dst);
        *dst = *src;
        return 0;
}

_public_ int nsid_registry_bind(nsid_registry *r, const nsid_registry_entry *e, unsigned flags,
                                nsid_registry_live_fn live, void *userdata,
                                nsid_registry_entry *ret_conflict) {
        nsid_registry_entry old = {};
        int64_t now = (int64_t) time(NULL);
        int k, ret;

        assert_return(r, -EINVAL);
        assert_return(e, -EINVAL);
        assert_return(e->app && e->identity && e->key && e->boot_id, -EINVAL);
        assert_return(nsid_key_source_to_string(e->source), -EINVAL);
        assert_return((flags & ~NSID_REGISTRY_BIND_REPLACE) == 0, -EINVAL);
        assert_return(!(r->flags & NSID_REGISTRY_READONLY), -EROFS);
        if (!live)
                live = nsid_netns_entry_is_live;

        /* Fast path without the write lock: the very same binding, seen recently. */
        k = select_netns(r, e->app, &e->netns, &old);
        if (k < 0)
                return k;
        if (k > 0 && same_marker(&old, e->boot_id, e->netns_cookie) &&
            strcmp(old.identity, e->identity) == 0 && old.pid == e->pid &&
            (!e->name || (old.name && strcmp(old.name, e->name) == 0)) &&
            now - old.last_seen < NSID_REGISTRY_REFRESH_SEC && now >= old.last_seen) {
                nsid_registry_entry_done(&old);
                return 0;
        }
        nsid_registry_entry_done(&old);

        ret = registry_exec(r, "BEGIN IMMEDIATE");
        if (ret < 0)
                return ret;

        /* 1. this netns's own row */
        k = select_netns(r, e->app, &e->netns, &old);
        if (k < 0) {
                ret = k;
                goto fail;
        }
        if (k > 0) {
                if (same_marker(&old, e->boot_id, e->netns_cookie)) {
                        if (strcmp(old.identity, e->identity) == 0) {
                                nsid_registry_entry_done(&old);
                                ret = refresh(r, e, now);
                                if (ret < 0)
                                        goto fail;
                                ret = registry_exec(r, "COMMIT");
                                if (ret < 0)
                                        goto fail;
                                return 0;
                        }
                        if (!(flags & NSID_REGISTRY_BIND_REPLACE)) {
                                if (ret_conflict) {
                                        entry_copy(&old, ret_conflict);
                                        old = (nsid_registry_entry) {};
                                }
                                nsid_registry_entry_done(&old);
                                registry_rollback(r);
                                return -EEXIST;
                        }
                } else
                        log_debug("registry: netns inode %" PRIu64 " was reused; dropping the "
                                  "binding of the dead one (%s)",
                                  e->netns.ino, old.identity);
                nsid_registry_entry_done(&old);
                k = delete_netns(r, e->app, &e->netns);
                if (k < 0) {
                        ret = k;
                        goto fail;
                }
        }

        /* 2. the identity bound elsewhere */
        k = select_identity(r, e->app, e->identity, &old);
        if (k < 0) {
                ret = k;
                goto fail;
        }
        if (k > 0) {
                int alive = live(&old, userdata);
                if (alive != 0) {
                        /* alive, or unknown: never hand the identity out twice */
                        if (alive < 0)
                                log_debug("registry: cannot tell whether netns %" PRIu64
                                          " is alive: %s",
                                          old.netns.ino, strerror(-alive));
                        if (ret_conflict) {
                                entry_copy(&old, ret_conflict);
                                old = (nsid_registry_entry) {};
                        }
                        nsid_registry_entry_done(&old);
                        registry_rollback(r);
                        snprintf(r->errmsg, sizeof(r->errmsg),
                                 "identity %s is bound to another live network namespace",
                                 e->identity);
                        return -EADDRINUSE;
                }
                log_debug("registry: netns %" PRIu64 " holding %s is gone; rebinding",
                          old.netns.ino, old.identity);
                k = delete_netns(r, old.app, &old.netns);
                nsid_registry_entry_done(&old);
                if (k < 0) {
                        ret = k;
                        goto fail;
                }
        }

        ret = insert(r, e, now);
        if (ret < 0)
                goto fail;
        ret = registry_exec(r, "COMMIT");
        if (ret < 0)
                goto fail;
        return 1;
fail:
        nsid_registry_entry_done(&old);
        registry_rollback(r);
        return ret;
}

_public_ int nsid_registry_unbind(nsid_registry *r, const char *app, const nsid_ns_id *netns,
                                  const char *identity) {
        sqlite3_stmt *st = NULL;
        int e;

        assert_return(r, -EINVAL);
        assert_return(app && netns && identity, -EINVAL);

        e = registry_prepare(r,
                    "DELETE FROM bindings WHERE app = ?1 AND netns_dev = ?2 AND netns_ino = ?3"
                    " AND identity = ?4",
                    "removing a binding", &st);
        if (e < 0)
                return e;
        bind_app_netns(st, 1, app, netns);
        sqlite3_bind_text(st, 4, identity, -1, SQLITE_STATIC);
        e = registry_step_done(r, st, "removing a binding"); /* autocommit: one statement, one transaction */
        if (e < 0)
                return e;
        return sqlite3_changes(r->db) > 0 ? 0 : -ENOENT;
}

_public_ int nsid_registry_prune(nsid_registry *r, nsid_registry_live_fn live, void *userdata) {
        nsid_registry_entry *v = NULL;
        size_t n = 0;
        int e, pruned = 0;

        assert_return(r, -EINVAL);
        if (!live)
                live = nsid_netns_entry_is_live;

        e = nsid_registry_list(r, &v, &n);
        if (e < 0)
                return e;
        for (size_t i = 0; i < n; i++) {
                if (live(&v[i], userdata) != 0)
                        continue;
                e = nsid_registry_unbind(r, v[i].app, &v[i].netns, v[i].identity);
                if (e >= 0)
                        pruned++;
                else if (e != -ENOENT)
                        break;
                e = 0;
        }
        nsid_registry_entries_free(v, n);
        if (e < 0)
                return e;
        /* keys: a key's identity is recorded while a binding uses it, and goes with the last
         * one. Nothing reads it back to hand out an identity (a key derives the same one
         * again); without this, every key ever seen stayed, one row per throwaway namespace. */
        e = registry_exec(r, "DELETE FROM keys WHERE NOT EXISTS (SELECT 1 FROM bindings b"
                    " WHERE b.app = keys.app AND b.key = keys.key)");
        return e < 0 ? e : pruned;
}
