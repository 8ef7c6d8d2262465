/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The identity registry's counts of outcomes (nsid/registry.h): one row per (app, outcome),
 * added to in one transaction per program run. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "nsid/identity.h"
#include "registry-internal.h"

static const char table[] = "CREATE TABLE IF NOT EXISTS outcomes ("
                            " app TEXT NOT NULL,"
                            " outcome TEXT NOT NULL,"
                            " n INTEGER NOT NULL,"
                            " PRIMARY KEY (app, outcome))";

static bool word_ok(const char *w) {
        size_t n = strnlen(w, NSID_REGISTRY_OUTCOME_MAX + 1);

        if (n == 0 || n > NSID_REGISTRY_OUTCOME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((w[i] >= 'a' && w[i] <= 'z') || w[i] == '-'))
                        return false;
        return true;
}

_public_ int nsid_registry_count_outcomes(nsid_registry *r, const char *app,
                                          const nsid_registry_outcome *v, size_t n) {
        sqlite3_stmt *st = NULL;
        int e;

        if (!r || !app || nsid_app_validate(app) < 0 || (!v && n))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!word_ok(v[i].outcome))
                        return -EINVAL;
        if (n == 0)
                return 0;
        e = registry_exec(r, "BEGIN IMMEDIATE");
        if (e < 0)
                return e;
        e = registry_exec(r, table);
        if (e >= 0)
                e = registry_prepare(r,
                                     "INSERT INTO outcomes (app, outcome, n) VALUES (?, ?, ?) "
                                     "ON CONFLICT (app, outcome) DO UPDATE SET n = n + excluded.n",
                                     "counting outcomes", &st);
        for (size_t i = 0; e >= 0 && i < n; i++) {
                if (v[i].n == 0)
                        continue;
                sqlite3_bind_text(st, 1, app, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, v[i].outcome, -1, SQLITE_STATIC);
                sqlite3_bind_int64(st, 3, (sqlite3_int64) v[i].n);
                int rc = sqlite3_step(st);
                if (rc != SQLITE_DONE)
                        e = registry_fail(r, rc, "counting outcomes");
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        if (e >= 0)
                e = registry_exec(r, "COMMIT");
        if (e < 0)
                registry_rollback(r);
        return e < 0 ? e : 0;
}

_public_ int nsid_registry_get_outcomes(nsid_registry *r, nsid_registry_outcome **ret,
                                        size_t *ret_n) {
        nsid_registry_outcome *v = NULL;
        sqlite3_stmt *st = NULL;
        size_t n = 0;
        int rc, e;

        if (!r || !ret || !ret_n)
                return -EINVAL;
        /* a registry without the table has no counts (not an error) */
        rc = sqlite3_prepare_v2(r->db,
                                "SELECT outcome, sum(n) FROM outcomes GROUP BY outcome "
                                "ORDER BY outcome",
                                -1, &st, NULL);
        if (rc != SQLITE_OK) {
                if (sqlite3_errmsg(r->db) && strstr(sqlite3_errmsg(r->db), "no such table")) {
                        *ret = NULL;
                        *ret_n = 0;
                        return 0;
                }
                return registry_fail(r, rc, "reading the outcomes");
        }
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const unsigned char *w = sqlite3_column_text(st, 0);
                nsid_registry_outcome *nv;
                if (!w || !word_ok((const char *) w))
                        continue; /* not one this library wrote */
                nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv) {
                        e = -ENOMEM;
                        goto fail;
                }
                v = nv;
                memset(&v[n], 0, sizeof(v[n]));
                strncpy(v[n].outcome, (const char *) w, NSID_REGISTRY_OUTCOME_MAX);
                sqlite3_int64 k = sqlite3_column_int64(st, 1);
                v[n].n = k > 0 ? (uint64_t) k : 0;
                n++;
        }
        if (rc != SQLITE_DONE) {
                e = registry_fail(r, rc, "reading the outcomes");
                goto fail;
        }
        sqlite3_finalize(st);
        *ret = v;
        *ret_n = n;
        return 0;
fail:
        sqlite3_finalize(st);
        free(v);
        return e;
}
