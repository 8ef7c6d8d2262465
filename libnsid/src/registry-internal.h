/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The identity registry's handle and statement helpers, shared by registry*.c. Internal. */
#ifndef NSID_REGISTRY_INTERNAL_H
#define NSID_REGISTRY_INTERNAL_H

#include <sqlite3.h>

#include "nsid/registry.h"

struct nsid_registry {
        unsigned n_ref;
        sqlite3 *db;
        char *path;
        unsigned flags;
        char errmsg[512];
};

/* Remember SQLite's message for this failure (what: the step) and turn it into -errno. */
int registry_fail(nsid_registry *r, int rc, const char *what);
int registry_exec(nsid_registry *r, const char *sql);
void registry_rollback(nsid_registry *r);
/* Prepare sql into *ret, or -errno (logged as what). */
int registry_prepare(nsid_registry *r, const char *sql, const char *what, sqlite3_stmt **ret);
/* Step a statement that returns no rows and finalize it: 0, or -errno (logged as what). */
int registry_step_done(nsid_registry *r, sqlite3_stmt *st, const char *what);

#endif
