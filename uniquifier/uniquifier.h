/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-uniquifier: what its files share (nsid-uniquifier(8)). main.c parses the command line
 * and runs a subcommand: cmd-set.c (set), cmd-hook.c (oci-hook, lxc-hook), cmd-scan.c
 * (reconcile, list, check); set.c sets one namespace in three steps; context.c holds the
 * secret, the registry and the counts of outcomes; log.c is where messages go. */
#ifndef NSID_UNIQUIFIER_H
#define NSID_UNIQUIFIER_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <nsid/conffile.h>
#include <nsid/fdio.h>
#include <nsid/identity.h>
#include <nsid/idmap.h>
#include <nsid/log.h>
#include <nsid/netns.h>
#include <nsid/nfsclient.h>
#include <nsid/ns.h>
#include <nsid/registry.h>

#include "caps.h"
#include "json-envelope.h"
#include "std-fds.h"
#include "oci-state.h"

#ifndef NSID_VERSION
#define NSID_VERSION "0"
#endif
#ifndef NSID_STATE_DIR
#define NSID_STATE_DIR "/var/lib/nsid"
#endif

/* Exit codes (nsid-uniquifier(8), EXIT STATUS). */
enum {
        EXIT_OK = 0,
        EXIT_FAIL = 1,
        EXIT_USAGE = 2,
        EXIT_REFUSED = 3,  /* a different identifier is set; --force not given */
        EXIT_TOO_LATE = 4, /* written, but the netns already has NFS mounts */
        EXIT_PROBLEMS = 5, /* check: duplicates or unset-with-NFS found */
};

extern const char *program;

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

typedef struct uniquifier_args {
        const char *state_dir;
        const char *registry_path;
        const char *config_path; /* --config: nsid.conf (default /etc/nsid.conf) */
        const char *command;     /* the command running: set, list... (JSON's "nsid" member) */
        bool no_legend;          /* --no-legend: tables without their header line */
        const char *machine_id;
        const char *app;
        bool json;
        bool verbose;
        bool quiet;
        bool include_host;
        bool syslog; /* hook mode: what goes to stderr goes to syslog too */
        int timeout_ms;
} uniquifier_args;

extern uniquifier_args arg;

/* ---- log.c ---- */
/* Every message to syslog too, in hook mode (facility daemon, tag nsid-uniquifier; control
 * bytes and backslashes as \xHH). */
void to_syslog(int priority, const char *message);
/* libnsid's log handler: warnings and errors to stderr (and syslog in hook mode), the rest
 * with -v. */
void log_handler(int priority, const char *message, void *userdata);
/* an error (LOG_ERR in hook mode's syslog) */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a note on stderr, or a warning: what -q silences (LOG_NOTICE or LOG_WARNING) */
void notef(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- context.c ---- */
typedef struct ctx {
        uint8_t secret[NSID_ID128_SIZE];
        nsid_host_secret_source secret_source;
        nsid_registry *reg; /* NULL if it could not be opened */
        int reg_error;
        bool readonly;
        uint64_t outcomes[7]; /* per set_state: counted in the registry at ctx_done() */
} ctx;

/* Numbers of the command line: 0, or -EINVAL for anything but plain decimal in range. */
int parse_pid_arg(const char *s, pid_t *ret);
int parse_timeout_arg(const char *s, int *ret);
/* nsid.conf's "[idmapd] state-dir" into arg.state_dir unless one was named (0, or -errno
 * when --config names a file that does not exist), and the registry's path. */
int config_state_dir(void);
const char *registry_path(void);
/* The secret (need_secret) and the registry (NULL in c->reg if it cannot be opened); 0 or
 * -errno. ctx_done() counts the outcomes in the registry and lets go of everything. */
int ctx_init(ctx *c, bool need_secret, bool readonly);
void ctx_done(ctx *c);
/* What this run's attempts ended in, added to the registry's counts in one transaction. */
void outcomes_flush(ctx *c);
/* The registry's binding of netns in this boot (0 and *ret filled; -ENOENT if none). */
int lookup_binding(nsid_registry *reg, nsid_ns *netns, nsid_registry_entry *ret);

/* ---- set.c ---- */
typedef enum set_state {
        ST_SET_NOW,
        ST_ALREADY_SET,
        ST_WOULD_SET,
        ST_TOO_LATE,
        ST_NOT_LOADED,
        ST_REFUSED,
        ST_FAILED,
} set_state;

extern const char *const state_words[];

typedef struct set_result {
        set_state state;
        char identity[NSID_IDENTITY_STRING_SIZE];
        char previous[NSID_NFS_IDENTIFIER_MAX + 2];
        nsid_key_source source;
        unsigned id_flags;
        bool recorded; /* the registry holds this binding now (not: no registry, dry run) */
        int error;
        int mid_error; /* reading the container's /etc/machine-id failed: -ETIMEDOUT... */
        char why[256];
} set_result;

enum { SET_FORCE = 1, SET_DRY_RUN = 2, SET_REPLACE_KEY = 4 };

/*
 * Setting one netns happens in three steps so that reconcile can run the middle one (a worker
 * process per netns, mostly waiting on the kernel) for many namespaces at once:
 *  prepare: pick the key, derive, record (registry: sequential, one transaction per change);
 *  apply:   the worker reads/writes the identifier (thread-safe, no registry);
 *  finish:  map the result to a state; drop a binding the kernel did not take.
 */
typedef struct set_job {
        nsid_ns *netns;            /* borrowed */
        nsid_identity *id;
        const char *replaceable;   /* points into id */
        unsigned flags;
        int has_nfs;
        int r;                     /* apply's result */
        char *prev;
} set_job;

/* known_nfs: whether the netns has NFS mounts if the caller already knows (a scan), or -1.
 * Returns false when there is nothing to apply (res says why). */
bool set_prepare(ctx *c, nsid_ns *netns, const nsid_proc *proc, const char *key,
                 nsid_key_source key_source, const char *name, unsigned flags, int known_nfs,
                 int mid_error, const char *mid_hex, set_job *job, set_result *res);
void set_apply(set_job *job);
void set_finish(ctx *c, set_job *job, set_result *res);
/* The three in a row, for one namespace. */
void set_one(ctx *c, nsid_ns *netns, const nsid_proc *proc, const char *key,
             nsid_key_source key_source, const char *name, unsigned flags, int known_nfs,
             set_result *res);
void print_set_result(const nsid_ns_id *nsid, pid_t pid, const set_result *res);
/* The exit status a result means (nsid-uniquifier(8), EXIT STATUS); hook: for a runtime. */
int exit_for(const set_result *res, bool hook);

/* ---- cmd-set.c, cmd-hook.c, cmd-scan.c: the subcommands ---- */
int cmd_set(int argc, char **argv);
int cmd_oci_hook(int argc, char **argv);
int cmd_lxc_hook(int argc, char **argv);
enum { MODE_RECONCILE, MODE_LIST, MODE_CHECK };
int cmd_scan(int argc, char **argv, int mode);

/* ---- main.c ---- */
/* `nsid-uniquifier COMMAND --help`: that command's arguments and exit status. */
void command_help(void);

#endif
