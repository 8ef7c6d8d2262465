/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_REGISTRY_H
#define NSID_REGISTRY_H

#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>
#include <nsid/identity.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The identity registry: a small SQLite database (default NSID_STATE_DIR/registry.db) that
 * records which identity was handed to which network namespace, from which key, and keeps the
 * random keys of namespaces that have no other key for their lifetime.
 *
 * A network namespace is recorded as (dev, ino) of its nsfs file plus a liveness marker:
 * the boot id and the netns cookie (SO_NETNS_COOKIE, never reused within a boot). Inode
 * numbers are reused after a netns dies; the marker tells a reused inode from the original.
 *
 * Journal mode WAL, a busy timeout, and one BEGIN IMMEDIATE transaction per change, so many
 * processes may write at once (containers starting together) and a process killed in the
 * middle of a write loses only its own uncommitted change. UNIQUE(app, identity) makes the
 * database itself refuse one identity bound to two namespaces; a binding whose namespace is
 * gone is replaced only after checking it is really gone.
 *
 * A database that cannot be opened or read (corrupt, not a database, permissions) is reported
 * with the file name and SQLite's message (LOG_ERR, and nsid_registry_last_error()); it is
 * never reset, rewritten or deleted by the library.
 */

#define NSID_REGISTRY_FILE "registry.db"
#define NSID_REGISTRY_SCHEMA_VERSION 1
/* last_seen is rewritten at most this often for an unchanged binding (seconds) */
#define NSID_REGISTRY_REFRESH_SEC 60

enum {
        NSID_REGISTRY_READONLY = 1u << 0, /* open read-only, never create */
};

/* Open (creating it and its directory, 0700/0600, unless READONLY) the database at path
 * (NULL: NSID_STATE_DIR "/" NSID_REGISTRY_FILE). -EBADMSG for a corrupt file or one that is
 * not an SQLite database, -EPROTO for a schema newer than this library knows, -EACCES/-EROFS
 * etc. as SQLite reports them. */
NSID_API_WARN_UNUSED int nsid_registry_open(const char *path, unsigned flags,
                                            nsid_registry **ret);
nsid_registry *nsid_registry_ref(nsid_registry *r);
nsid_registry *nsid_registry_unref(nsid_registry *r);
const char *nsid_registry_get_path(const nsid_registry *r);
/* The last SQLite error message of this handle ("" if none). Valid until the next call. */
const char *nsid_registry_last_error(const nsid_registry *r);
/* Run PRAGMA integrity_check: 0 if "ok", -EBADMSG otherwise (details in last_error). */
int nsid_registry_check_integrity(nsid_registry *r);

/*
 * What nsid_registry_verify() finds. One identity recorded for two namespaces is not
 * looked for as such: UNIQUE (app, identity) makes the database refuse it, so it can only
 * be there when the tables lack that constraint (SCHEMA, then DUPLICATE).
 */
typedef enum nsid_registry_problem_kind {
        /* the tables lack a constraint this schema version declares (made by hand, or by
         * something else than nsid, with user_version set to ours) */
        NSID_REGISTRY_PROBLEM_SCHEMA,
        /* one identity of one app in several bindings (only without UNIQUE (app, identity)) */
        NSID_REGISTRY_PROBLEM_DUPLICATE,
        /* a field no nsid program writes: an app, key or source nsid refuses, an identity
         * that is not 32 lowercase hex characters (edited by hand); nsid-uniquifier cannot
         * reuse such a binding's key for its netns */
        NSID_REGISTRY_PROBLEM_MALFORMED,
        /* a well-formed identity that the given host secret does not derive from the row's
         * app and key: every row so when the host secret changed (a new /etc/machine-id) or
         * the database comes from another machine, some rows only when they were edited */
        NSID_REGISTRY_PROBLEM_NOT_DERIVED,
} nsid_registry_problem_kind;

typedef struct nsid_registry_problem {
        nsid_registry_problem_kind kind;
        const char *table;      /* "bindings" or "keys" (static) */
        int64_t rowid;          /* the row (0 for SCHEMA and DUPLICATE) */
        char *app;              /* the row's fields as text, NULL if SQL NULL */
        char *key;
        char *identity;
        uint64_t netns_ino;     /* bindings: the recorded netns inode; 0 otherwise */
        char *what;             /* what is wrong, in words */
} nsid_registry_problem;

void nsid_registry_problems_free(nsid_registry_problem *v, size_t n);

/*
 * Check what can really be wrong with an open registry (read-only is enough): the
 * constraints of the schema, and every row of bindings and keys: well-formed, and its
 * identity the one nsid_identity_derive(secret, app, key) gives (not checked when secret is
 * NULL: a host without its secret yet). Returns the number of rows
 * checked (>= 0) with the problems in *ret (NULL and 0 if none), or a negative errno (SQLite's
 * message in nsid_registry_last_error()). Run nsid_registry_check_integrity() for the file.
 */
NSID_API_WARN_UNUSED int nsid_registry_verify(nsid_registry *r,
                                              const uint8_t secret[NSID_ID128_SIZE],
                                              nsid_registry_problem **ret, size_t *ret_n);

typedef struct nsid_registry_entry {
        char *app;
        char *identity;         /* 32 hex */
        char *key;              /* the container key */
        nsid_key_source source;
        nsid_ns_id netns;
        char *boot_id;          /* boot the netns lived in */
        uint64_t netns_cookie;  /* SO_NETNS_COOKIE of the netns */
        pid_t pid;              /* a process of the container when recorded, 0 if none */
        char *name;             /* container name/id if known, NULL otherwise */
        int64_t first_seen;     /* seconds since the epoch */
        int64_t last_seen;
} nsid_registry_entry;

void nsid_registry_entry_done(nsid_registry_entry *e);
void nsid_registry_entries_free(nsid_registry_entry *v, size_t n);

/* Every binding, ordered by netns inode. */
NSID_API_WARN_UNUSED int nsid_registry_list(nsid_registry *r, nsid_registry_entry **ret,
                                            size_t *ret_n);
/* The binding of (app, netns) if it has the same boot id and cookie: 0 and *ret filled,
 * -ENOENT if none or only a stale one (a reused inode). */
NSID_API_WARN_UNUSED int nsid_registry_lookup_netns(nsid_registry *r, const char *app,
                                                    const nsid_ns_id *netns,
                                                    const char *boot_id, uint64_t cookie,
                                                    nsid_registry_entry *ret);

/* Decides whether the netns of a recorded entry is still alive (1), gone (0), or negative
 * errno. nsid_netns_entry_is_live() (nsid/netns.h) is the real one; tests may pass their own. */
typedef int (*nsid_registry_live_fn)(const nsid_registry_entry *e, void *userdata);

enum {
        NSID_REGISTRY_BIND_REPLACE = 1u << 0, /* this netns may change its recorded identity */
};

/*
 * Record that e->identity (of e->app, from e->key/e->source) is used by e->netns, in one
 * BEGIN IMMEDIATE transaction:
 *  - an existing binding of this netns (same marker) with the same identity: only last_seen,
 *    pid and name are updated; returns 0;
 *  - one with a different identity: -EEXIST (ret_conflict filled) unless BIND_REPLACE;
 *  - a stale binding of a dead netns with the same inode: replaced;
 *  - the identity bound to another netns: live(other) decides; alive -> -EADDRINUSE and
 *    ret_conflict filled (nothing changed); gone -> the stale binding is replaced.
 * An unchanged binding (same pid and name) refreshed less than NSID_REGISTRY_REFRESH_SEC ago
 * is left as it is without taking the write lock (last_seen has that granularity).
 * Returns 1 when a new binding was inserted, 0 when an existing one was refreshed. live NULL
 * means nsid_netns_entry_is_live(). ret_conflict may be NULL; first_seen/last_seen of e are
 * ignored (now).
 */
NSID_API_WARN_UNUSED int nsid_registry_bind(nsid_registry *r, const nsid_registry_entry *e,
                                            unsigned flags, nsid_registry_live_fn live,
                                            void *userdata, nsid_registry_entry *ret_conflict);
/* Remove the binding of (app, netns) if it carries this identity. 0, or -ENOENT. */
int nsid_registry_unbind(nsid_registry *r, const char *app, const nsid_ns_id *netns,
                         const char *identity);
/* Remove every binding whose netns is gone (live decides as above), then every keys row no
 * binding uses any more. Returns how many bindings were removed. */
int nsid_registry_prune(nsid_registry *r, nsid_registry_live_fn live, void *userdata);

/*
 * What attempts to set identities ended in, counted per application and outcome word
 * (nsid-uniquifier's: "set", "already-set", "too-late", "no-nfs-client", "refused", "failed"),
 * for monitoring: totals that never go down, kept in the table "outcomes", which the first
 * count makes. The schema version stays 1: the table only adds, programs that do not know it
 * ignore it, and a registry without it reads as no counts.
 */
#define NSID_REGISTRY_OUTCOME_MAX 32
typedef struct nsid_registry_outcome {
        char outcome[NSID_REGISTRY_OUTCOME_MAX + 1]; /* 1..32 of [a-z-] */
        uint64_t n;
} nsid_registry_outcome;
/* Add v[i].n to the count of (app, v[i].outcome), for every i, in one transaction. -EINVAL
 * for an invalid app or outcome word (nothing is added). */
NSID_API_WARN_UNUSED int nsid_registry_count_outcomes(nsid_registry *r, const char *app,
                                                      const nsid_registry_outcome *v, size_t n);
/* The counts of every application summed per outcome word, in the words' order: *ret
 * (malloc'ed, free()) and *ret_n; none (0) for a registry without counts. */
NSID_API_WARN_UNUSED int nsid_registry_get_outcomes(nsid_registry *r,
                                                    nsid_registry_outcome **ret,
                                                    size_t *ret_n);

#ifdef __cplusplus
}
#endif
#endif
