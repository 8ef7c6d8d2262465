/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-uniquifier: give every network namespace its own stable NFSv4 client identity.
 *
 * Subcommands: set, oci-hook, lxc-hook, reconcile, list, check. See nsid-uniquifier(8).
 * The library (libnsid) derives, records and writes; this program chooses what to do, prints
 * and picks exit codes.
 */
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

static const char *program = "nsid-uniquifier";

static void *mfree(void *p) {
        free(p);
        return NULL;
}

static struct {
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
} arg = {
        .app = NSID_APP_NFS4,
        .timeout_ms = 10000,
};

/* A hook's stderr is the engine's to show or drop (Podman 4.3 reports only the hook's exit
 * status; udev keeps it at debug level), so in hook mode every line also goes to syslog
 * (facility daemon, tag nsid-uniquifier). Its text holds names the container's creator chose:
 * control bytes and backslashes are sent as \xHH, so one message stays one line. */
static void to_syslog(int priority, const char *message) {
        static bool opened;
        char esc[4 * 1024 + 1];
        size_t o = 0;

        if (!arg.syslog)
                return;
        if (!opened) {
                openlog("nsid-uniquifier", LOG_PID, LOG_DAEMON);
                opened = true;
        }
        for (const unsigned char *c = (const unsigned char *) message;
             *c && o + 5 < sizeof(esc); c++) {
                if (*c < 0x20 || *c == 0x7f || *c == '\\')
                        o += (size_t) snprintf(esc + o, sizeof(esc) - o, "\\x%02x", *c);
                else
                        esc[o++] = (char) *c;
        }
        esc[o] = '\0';
        syslog(priority, "%s", esc);
}

static void log_handler(int priority, const char *message, void *userdata) {
        (void) userdata;
        if (priority <= LOG_WARNING || arg.verbose)
                fprintf(stderr, "%s: %s\n", program, message);
        if (priority <= LOG_WARNING)
                to_syslog(priority, message);
}

static void vreport(int priority, const char *fmt, va_list ap) {
        char buf[1024];
        vsnprintf(buf, sizeof(buf), fmt, ap);
        fprintf(stderr, "%s: %s\n", program, buf);
        to_syslog(priority, buf);
}

/* an error (LOG_ERR in hook mode's syslog) */
static void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void errorf(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vreport(LOG_ERR, fmt, ap);
        va_end(ap);
}

/* a note on stderr, or a warning: what -q silences (LOG_NOTICE or LOG_WARNING) */
static void notef(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notef(int priority, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vreport(priority, fmt, ap);
        va_end(ap);
}

static int parse_pid_arg(const char *s, pid_t *ret) {
        char *end;
        long v;

        if (!s || !*s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v < 1 || v > 4194304)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

static int parse_timeout_arg(const char *s, int *ret) {
        char *end;
        long v;

        if (!s || !*s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v < 1 || v > 3600000)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

static char registry_default[4096];

/* The state directory of nsid.conf's "[idmapd] state-dir", as nsid-idmapd and nsidctl read
 * it (one registry for the three), unless --state-dir or NSID_STATE_DIR named one. A file
 * named with --config must exist; the default one may be absent (every key its default). A
 * file refused (not root's, writable by others) is reported and the default used: a hook
 * must still give the container its identity. */
static char config_state_dir_buf[4096];
static int config_state_dir(void) {
        nsid_conf *conf = NULL;
        int r;

        if (arg.config_path && access(arg.config_path, F_OK) < 0) {
                errorf("--config %s: %s", arg.config_path, strerror(errno));
                return -errno;
        }
        if (arg.state_dir)
                return 0;
        r = nsid_conf_load(arg.config_path, &conf);
        if (r < 0) {
                errorf("%s cannot be used (%s); state directory %s",
                       arg.config_path ? arg.config_path : NSID_SYSCONF_FILE, strerror(-r),
                       NSID_STATE_DIR);
                return 0;
        }
        const char *v = nsid_conf_get_value(conf, "idmapd", "state-dir");
        if (v && strcmp(v, NSID_STATE_DIR) != 0) {
                snprintf(config_state_dir_buf, sizeof(config_state_dir_buf), "%s", v);
                arg.state_dir = config_state_dir_buf;
        }
        nsid_conf_unref(conf);
        return 0;
}

static const char *registry_path(void) {
        if (arg.registry_path)
                return arg.registry_path;
        snprintf(registry_default, sizeof(registry_default), "%s/%s",
                 arg.state_dir ? arg.state_dir : NSID_STATE_DIR, NSID_REGISTRY_FILE);
        return registry_default;
}

/* ---- context shared by the subcommands ---- */

typedef struct ctx {
        uint8_t secret[NSID_ID128_SIZE];
        nsid_host_secret_source secret_source;
        nsid_registry *reg; /* NULL if it could not be opened */
        int reg_error;
        bool readonly;
        uint64_t outcomes[7]; /* per set_state: counted in the registry at ctx_done() */
} ctx;

static void outcomes_flush(ctx *c);

static int ctx_init(ctx *c, bool need_secret, bool readonly) {
        int r;

        *c = (ctx) { .readonly = readonly };
        if (need_secret) {
                r = nsid_host_secret_load(arg.machine_id, arg.state_dir, c->secret,
                                          &c->secret_source);
                if (r < 0) {
                        errorf("cannot load the host secret (machine-id %s, state directory %s): "
                               "%s",
                               arg.machine_id ? arg.machine_id : "/etc/machine-id",
                               arg.state_dir ? arg.state_dir : NSID_STATE_DIR, strerror(-r));
                        return r;
                }
        }
        r = nsid_registry_open(registry_path(), readonly ? NSID_REGISTRY_READONLY : 0, &c->reg);
        if (r < 0) {
                /* the library logged "registry PATH: sqlite message" already */
                c->reg_error = r;
                c->reg = NULL;
                if (!(readonly && r == -ENOENT))
                        errorf("registry %s unusable (%s); continuing without it, nothing is "
                               "recorded",
                               registry_path(), strerror(-r));
        }
        return 0;
}

static void ctx_done(ctx *c) {
        outcomes_flush(c);
        c->reg = nsid_registry_unref(c->reg);
        explicit_bzero(c->secret, sizeof(c->secret));
}

/* The registry's binding of netns in this boot (0 and *ret filled; -ENOENT if none). */
static int lookup_binding(nsid_registry *reg, nsid_ns *netns, nsid_registry_entry *ret) {
        char boot_id[37];
        uint64_t cookie;
        nsid_ns_id id;
        int r;

        if (!reg)
                return -ENOENT;
        r = nsid_boot_id(boot_id);
        if (r >= 0)
                r = nsid_netns_get_cookie(netns, &cookie);
        if (r >= 0)
                r = nsid_ns_get_id(netns, &id);
        if (r < 0)
                return r;
        return nsid_registry_lookup_netns(reg, arg.app, &id, boot_id, cookie, ret);
}

/* ---- set one netns ---- */

typedef enum set_state {
        ST_SET_NOW,
        ST_ALREADY_SET,
        ST_WOULD_SET,
        ST_TOO_LATE,
        ST_NOT_LOADED,
        ST_REFUSED,
        ST_FAILED,
} set_state;

static const char *const state_words[] = {
        [ST_SET_NOW] = "set",          [ST_ALREADY_SET] = "already-set",
        [ST_WOULD_SET] = "would-set",  [ST_TOO_LATE] = "too-late",
        [ST_NOT_LOADED] = "no-nfs-client", [ST_REFUSED] = "refused",
        [ST_FAILED] = "failed",
};

_Static_assert(ST_FAILED + 1 == sizeof(((ctx *) 0)->outcomes) / sizeof(uint64_t),
               "one count per state");

/* What this run's attempts ended in, added to the registry's counts (nsidctl metrics:
 * nsid_identity_outcomes_total) in one transaction; dry runs are not counted. */
static void outcomes_flush(ctx *c) {
        nsid_registry_outcome v[ST_FAILED + 1];
        size_t n = 0;
        int r;

        if (!c->reg || c->readonly)
                return;
        for (int k = 0; k <= ST_FAILED; k++)
                if (c->outcomes[k] && k != ST_WOULD_SET) {
                        v[n] = (nsid_registry_outcome) { .n = c->outcomes[k] };
                        snprintf(v[n].outcome, sizeof(v[n].outcome), "%s", state_words[k]);
                        n++;
                }
        r = nsid_registry_count_outcomes(c->reg, arg.app, v, n);
        if (r < 0)
                notef(LOG_WARNING, "cannot count the outcomes in the registry: %s",
                      strerror(-r));
        memset(c->outcomes, 0, sizeof(c->outcomes));
}

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
static bool set_prepare(ctx *c, nsid_ns *netns, const nsid_proc *proc, const char *key,
                        nsid_key_source key_source, const char *name, unsigned flags,
                        int known_nfs, int mid_error, const char *mid_hex, set_job *job,
                        set_result *res) {
        nsid_ns_id nsid = {};
        unsigned id_flags = 0;
        int r;

        *res = (set_result) { .state = ST_FAILED, .source = NSID_KEY_AUTO };
        *job = (set_job) { .netns = netns, .flags = flags, .r = -EINVAL };
        (void) nsid_ns_get_id(netns, &nsid);

        if (flags & SET_REPLACE_KEY)
                id_flags |= NSID_IDENTITY_FOR_NS_REPLACE;
        /* reconcile read the machine-id already (in parallel) and failed: not again */
        if (mid_error < 0)
                id_flags |= NSID_IDENTITY_FOR_NS_NO_MACHINE_ID;
        /* reconcile read the machine-id already (in parallel): handed over, not read again */
        if (!key && mid_hex && proc) {
                key = mid_hex;
                key_source = NSID_KEY_MACHINE_ID;
        } else if (!key)
                key_source = NSID_KEY_AUTO;
        r = nsid_identity_for_ns_timeout(c->secret, c->reg, netns, proc, arg.app, key,
                                         key_source, name, id_flags, arg.timeout_ms, &job->id);
        if (r < 0) {
                res->error = r;
                if (r == -EADDRINUSE)
                        snprintf(res->why, sizeof(res->why),
                                 "the %s key gives an identity already used by another live "
                                 "network namespace",
                                 nsid_key_source_to_string(key_source));
                else
                        snprintf(res->why, sizeof(res->why), "cannot derive: %s", strerror(-r));
                if (!(flags & SET_DRY_RUN))
                        c->outcomes[r == -EADDRINUSE ? ST_REFUSED : ST_FAILED]++;
                return false;
        }
        snprintf(res->identity, sizeof(res->identity), "%s", nsid_identity_get_string(job->id));
        res->source = nsid_identity_get_source(job->id);
        res->id_flags = nsid_identity_get_flags(job->id);
        res->mid_error = mid_error < 0 ? mid_error : nsid_identity_get_machine_id_error(job->id);
        /* A container whose machine-id cannot be read in time (its /etc on a mount that does
         * not answer) costs its own netns the bound, and gets a random key: unique, though
         * not stable across restarts. Said loudly; other failures (no file...) are normal. */
        if (res->mid_error == -ETIMEDOUT && res->source == NSID_KEY_RANDOM)
                snprintf(res->why, sizeof(res->why),
                         "the container's /etc/machine-id was not read within %d ms (a mount "
                         "that does not answer?); a random key is used",
                         arg.timeout_ms);

        /* The kernel's list of the netns's NFS volumes, through the process when there is
         * one (one file); else every process of the host is looked at. */
        job->has_nfs = known_nfs;
        if (job->has_nfs < 0 && proc)
                job->has_nfs = nsid_netns_nfs_volumes(proc, netns);
        if (job->has_nfs < 0)
                job->has_nfs = nsid_netns_has_nfs_mounts(&nsid);
        /* nsid may replace what it set itself from a lower-priority key, but not under
         * existing NFS mounts (it would not take effect) unless forced. */
        job->replaceable = nsid_identity_get_replaced(job->id);
        if (job->has_nfs > 0 && !(flags & SET_FORCE))
                job->replaceable = NULL;
        return true;
}

static void set_apply(set_job *job) {
        job->r = nsid_nfs_client_set_identifier(
                job->netns, nsid_identity_get_string(job->id), job->replaceable,
                ((job->flags & SET_FORCE) ? NSID_NFS_SET_FORCE : 0) |
                        ((job->flags & SET_DRY_RUN) ? NSID_NFS_SET_DRY_RUN : 0),
                arg.timeout_ms, &job->prev);
}

static void set_finish(ctx *c, set_job *job, set_result *res) {
        int r = job->r;

        if (job->prev)
                snprintf(res->previous, sizeof(res->previous), "%s", job->prev);
        job->prev = mfree(job->prev);
        res->error = r < 0 ? r : 0;
        /* only what was written says "recorded": not with the registry unusable (it was not
         * passed at all), nor under --dry-run (read-only: looked up, never written) */
        res->recorded = c->reg && !(job->flags & SET_DRY_RUN) && res->identity[0] &&
                        !(res->id_flags & NSID_IDENTITY_UNRECORDED);
        if (r == 1)
                res->state = job->has_nfs > 0 ? ST_TOO_LATE : ST_SET_NOW;
        else if (r == 0)
                res->state = (job->flags & SET_DRY_RUN) &&
                                             strcmp(res->previous, res->identity) != 0
                                     ? ST_WOULD_SET
                                     : ST_ALREADY_SET;
        else if (r == -ENOENT) {
                res->state = ST_NOT_LOADED;
                snprintf(res->why, sizeof(res->why),
                         "no NFS client sysfs in this netns (nfs module not loaded)%s",
                         res->recorded ? "; identity recorded, a later reconcile sets it" : "");
        } else if (r == -EEXIST) {
                res->state = ST_REFUSED;
                snprintf(res->why, sizeof(res->why),
                         "a different identifier (%s) is already set%s; use --force to replace it",
                         res->previous, job->has_nfs > 0 ? " and NFS is mounted" : "");
                /* do not leave a binding that claims what the kernel does not have */
                if (c->reg)
                        (void) nsid_identity_forget(job->id, c->reg);
                res->recorded = false;
        } else {
                res->state = ST_FAILED;
                snprintf(res->why, sizeof(res->why), "cannot set the identifier: %s",
                         strerror(-r));
                if (c->reg)
                        (void) nsid_identity_forget(job->id, c->reg);
                res->recorded = false;
        }
        if (!(job->flags & SET_DRY_RUN))
                c->outcomes[res->state]++;
        job->id = nsid_identity_unref(job->id);
}

static void set_one(ctx *c, nsid_ns *netns, const nsid_proc *proc, const char *key,
                    nsid_key_source key_source, const char *name, unsigned flags, int known_nfs,
                    set_result *res) {
        set_job job;

        if (!set_prepare(c, netns, proc, key, key_source, name, flags, known_nfs, 0, NULL, &job,
                         res))
                return;
        set_apply(&job);
        set_finish(c, &job, res);
}

static json_object *result_json(const nsid_ns_id *nsid, pid_t pid, const set_result *res) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "netns", json_object_new_uint64(nsid->ino));
        json_object_object_add(o, "netns_dev", json_object_new_uint64(nsid->dev));
        json_object_object_add(o, "pid", json_object_new_int(pid));
        json_object_object_add(o, "identifier",
                               res->identity[0] ? json_object_new_string(res->identity) : NULL);
        json_object_object_add(o, "source",
                               res->source != NSID_KEY_AUTO
                                       ? json_object_new_string(
                                                 nsid_key_source_to_string(res->source))
                                       : NULL);
        json_object_object_add(o, "state", json_object_new_string(state_words[res->state]));
        json_object_object_add(o, "previous", json_object_new_string(res->previous));
        json_object_object_add(o, "recorded", json_object_new_boolean(res->recorded));
        if (res->why[0])
                json_object_object_add(o, "why", json_object_new_string(res->why));
        return o;
}

static void print_set_result(const nsid_ns_id *nsid, pid_t pid, const set_result *res) {
        if (arg.json) {
                json_object *o = result_json(nsid, pid, res);
                json_envelope_add(o, program, arg.command);
                puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else if (res->identity[0])
                printf("%s %s %s\n", res->identity, nsid_key_source_to_string(res->source),
                       state_words[res->state]);
        if (res->why[0] && !arg.quiet)
                notef(res->state == ST_FAILED ? LOG_ERR
                      : res->state == ST_TOO_LATE || res->state == ST_REFUSED ? LOG_WARNING
                                                                               : LOG_NOTICE,
                      "netns %" PRIu64 ": %s", nsid->ino, res->why);
        if (res->id_flags & NSID_IDENTITY_KEPT_EXISTING && res->state != ST_FAILED && !arg.quiet)
                notef(LOG_NOTICE, "netns %" PRIu64 ": kept the identity recorded for this netns "
                      "(its key ranks the same or higher); --replace-key to change it",
                      nsid->ino);
}

static int exit_for(const set_result *res, bool hook) {
        switch (res->state) {
        case ST_SET_NOW:
        case ST_ALREADY_SET:
        case ST_WOULD_SET:
        case ST_NOT_LOADED:
                return EXIT_OK;
        case ST_TOO_LATE:
                return hook ? EXIT_OK : EXIT_TOO_LATE;
        case ST_REFUSED:
                /* a hook leaves an identifier someone else set alone and lets the container
                 * start: that netns already has a unique identity */
                return hook ? EXIT_OK : EXIT_REFUSED;
        default:
                return EXIT_FAIL;
        }
}

/* ---- subcommands ---- */

static void help(void) {
        printf("Usage: %s [OPTIONS] COMMAND [ARGS]\n"
               "\n"
               "Give each network namespace its own stable NFSv4 client identity.\n"
               "\n"
               "Commands:\n"
               "  set [--pid PID | --netns PATH] [--key K | --container-id ID] [--force]\n"
               "      [--dry-run] [--replace-key]   set one netns (default: our own)\n"
               "  oci-hook [--no-annotation-key]    OCI createRuntime hook (state JSON on stdin)\n"
               "  lxc-hook [--no-name-key]          LXC start-host hook (LXC_PID, LXC_NAME)\n"
               "  reconcile [--include-host]        set every netns whose identifier is unset\n"
               "  list                              show every netns, change nothing\n"
               "  check                             like list; exit %d on duplicates or unset\n"
               "                                    identifiers under NFS mounts\n"
               "\n"
               "Options:\n"
               "  --app APP          identity app id (default nfs4)\n"
               "  --config PATH      nsid.conf, for its [idmapd] state-dir (default "
               "/etc/nsid.conf)\n"
               "  --state-dir DIR    state directory (default: nsid.conf's state-dir, else %s;\n"
               "                     env NSID_STATE_DIR)\n"
               "  --registry PATH    registry database (default STATE_DIR/%s; env "
               "NSID_REGISTRY)\n"
               "  --machine-id PATH  host machine-id file (default /etc/machine-id; env "
               "NSID_MACHINE_ID_FILE)\n"
               "  --timeout MS       per-namespace worker / stdin timeout (default 10000)\n"
               "  --json             machine-readable output\n"
               "  -q, --quiet        no notes on stderr\n"
               "      --no-legend    tables without their header line (list, check, reconcile)\n"
               "  -v, --verbose      debug messages\n"
               "  -h, --help         this help (COMMAND --help: that command's)\n"
               "      --version      version\n"
               "Options may come before or after the command.\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage, 3 refused (different identifier set),\n"
               "4 too late (NFS already mounted), 5 check found problems.\n",
               program, EXIT_PROBLEMS, NSID_STATE_DIR, NSID_REGISTRY_FILE);
}

/* `nsid-uniquifier COMMAND --help`: that command's arguments and exit status; the common
 * options are the global help's. */
static void command_help(void) {
        static const struct {
                const char *name, *text;
        } cmds[] = {
                { "set", "set [--pid PID | --netns PATH] [--key K | --container-id ID] [--name N]\n"
                         "    [--force] [--dry-run] [--replace-key]\n"
                         "Set one network namespace's identifier (default: this process's).\n"
                         "  --pid PID, --netns PATH   the namespace\n"
                         "  --key K, --container-id ID  the container key (default: its\n"
                         "                            /etc/machine-id, else random)\n"
                         "  --force                   replace a different identifier\n"
                         "  --dry-run                 change nothing, record nothing\n"
                         "  --replace-key             replace the key recorded for the namespace\n"
                         "Exit status: 0 set or already set, 3 refused, 4 too late, 1 failure.\n" },
                { "oci-hook", "oci-hook [--no-annotation-key]\n"
                              "The OCI createRuntime hook: the container's state JSON on stdin.\n"
                              "Exit status: 0 (a foreign identifier is left alone), 1 failure.\n" },
                { "lxc-hook", "lxc-hook [--no-name-key] [NAME lxc start-host]\n"
                              "LXC's start-host hook: LXC_PID and LXC_NAME from the environment.\n"
                              "Exit status: 0, 1 failure.\n" },
                { "reconcile", "reconcile [--include-host] [--dry-run]\n"
                               "Set every network namespace whose identifier is unset.\n"
                               "Exit status: 0, 1 failure.\n" },
                { "list", "list [--include-host]\nShow every network namespace; change nothing.\n"
                          "Exit status: 0, 1 failure.\n" },
                { "check", "check [--include-host]\nLike list; exit 5 on duplicate identifiers, or\n"
                           "unset ones under NFS mounts.\n" },
        };
        for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
                if (arg.command && strcmp(arg.command, cmds[i].name) == 0) {
                        printf("Usage: %s [OPTIONS] %s\nOPTIONS: the common ones (%s --help).\n",
                               program, cmds[i].text, program);
                        return;
                }
        help();
}

static int cmd_set(int argc, char **argv) {
        static const struct option opts[] = {
                { "pid", required_argument, NULL, 'p' },
                { "netns", required_argument, NULL, 'n' },
                { "key", required_argument, NULL, 'k' },
                { "container-id", required_argument, NULL, 'c' },
                { "name", required_argument, NULL, 'N' },
                { "force", no_argument, NULL, 'f' },
                { "dry-run", no_argument, NULL, 'd' },
                { "replace-key", no_argument, NULL, 'R' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *netns_path = NULL, *key = NULL, *name = NULL;
        nsid_key_source ks = NSID_KEY_AUTO;
        nsid_proc *proc = NULL;
        nsid_ns *netns = NULL;
        unsigned flags = 0;
        pid_t pid = 0;
        set_result res;
        nsid_ns_id nsid = {};
        ctx c;
        int o, r;

        optind = 1;
        while ((o = getopt_long(argc, argv, "+h", opts, NULL)) >= 0) {
                switch (o) {
                case 'p':
                        if (parse_pid_arg(optarg, &pid) < 0) {
                                errorf("invalid --pid '%s'", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'n':
                        netns_path = optarg;
                        break;
                case 'k':
                case 'c':
                        if (key) {
                                errorf("--key and --container-id are exclusive");
                                return EXIT_USAGE;
                        }
                        key = optarg;
                        ks = o == 'k' ? NSID_KEY_EXPLICIT : NSID_KEY_CONTAINER_ID;
                        if (nsid_key_validate(key) < 0) {
                                errorf("invalid key: 1..%d printable ASCII characters, no spaces",
                                       NSID_KEY_MAX);
                                return EXIT_USAGE;
                        }
                        break;
                case 'N':
                        name = optarg;
                        break;
                case 'f':
                        flags |= SET_FORCE;
                        break;
                case 'd':
                        flags |= SET_DRY_RUN;
                        break;
                case 'R':
                        flags |= SET_REPLACE_KEY;
                        break;
                case 'h':
                        command_help();
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                errorf("set: unexpected argument '%s'", argv[optind]);
                return EXIT_USAGE;
        }
        if (pid && netns_path) {
                errorf("--pid and --netns are exclusive");
                return EXIT_USAGE;
        }
        if (!name && ks == NSID_KEY_CONTAINER_ID)
                name = key;

        if (pid) {
                r = nsid_proc_open(pid, &proc);
                if (r >= 0)
                        r = nsid_proc_open_ns(proc, NSID_NS_NET, &netns);
                if (r < 0) {
                        errorf("pid %d: cannot open its network namespace: %s", (int) pid,
                               strerror(-r));
                        nsid_proc_unref(proc);
                        return EXIT_FAIL;
                }
        } else {
                const char *path = netns_path ? netns_path : "/proc/self/ns/net";
                r = nsid_ns_open_path(path, NSID_NS_NET, &netns);
                if (r < 0) {
                        errorf("%s: not a network namespace: %s", path, strerror(-r));
                        return EXIT_FAIL;
                }
                if (!netns_path) {
                        r = nsid_proc_open_self(&proc);
                        if (r < 0)
                                proc = NULL;
                }
        }
        (void) nsid_ns_get_id(netns, &nsid);

        r = ctx_init(&c, true, (flags & SET_DRY_RUN) != 0);
        if (r < 0) {
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return EXIT_FAIL;
        }
        set_one(&c, netns, proc, key, ks, name, flags, -1, &res);
        print_set_result(&nsid, pid, &res);
        ctx_done(&c);
        nsid_ns_unref(netns);
        nsid_proc_unref(proc);
        return exit_for(&res, false);
}

/* Set the netns of a container process handed to us by a runtime hook. */
static int hook_set(pid_t pid, const char *key, nsid_key_source ks, const char *name,
                    const char *what) {
        nsid_proc *proc = NULL;
        nsid_ns *netns = NULL;
        nsid_ns_id nsid = {}, init;
        set_result res;
        set_job job;
        ctx c;
        int r;

        r = nsid_proc_open(pid, &proc);
        if (r >= 0)
                r = nsid_proc_open_ns(proc, NSID_NS_NET, &netns);
        if (r < 0) {
                errorf("%s %s: pid %d: cannot open its network namespace: %s", what, name,
                       (int) pid, strerror(-r));
                nsid_proc_unref(proc);
                return EXIT_FAIL;
        }
        (void) nsid_ns_get_id(netns, &nsid);
        if (nsid_netns_initial_id(&init) >= 0 && init.dev == nsid.dev && init.ino == nsid.ino) {
                if (!arg.quiet)
                        notef(LOG_NOTICE, "%s %s: shares the host network namespace; left alone",
                              what, name);
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return EXIT_OK;
        }
        r = ctx_init(&c, true, false);
        if (r < 0) {
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return EXIT_FAIL;
        }
        if (set_prepare(&c, netns, proc, key, ks, name, 0, -1, 0, NULL, &job, &res)) {
                /* The given key lost to the one recorded for this netns. A pod's second
                 * container (its own process in the pod's netns) is fine: it shares the pod's
                 * identity. But when the pid is the very process recorded for the other
                 * container's key, the runtime handed us another container's pid: this
                 * container's own netns would get nothing and it would start sharing the
                 * host's NFS identity. Refuse, so the runtime does not start it. */
                nsid_registry_entry e = {};
                if ((res.id_flags & NSID_IDENTITY_KEPT_EXISTING) &&
                    lookup_binding(c.reg, netns, &e) >= 0 && e.pid == pid && e.key && key &&
                    strcmp(e.key, key) != 0) {
                        res.state = ST_FAILED;
                        res.error = -EADDRINUSE;
                        res.identity[0] = '\0';
                        res.source = NSID_KEY_AUTO;
                        snprintf(res.why, sizeof(res.why),
                                 "pid %d is the process of container %s, recorded when its %s "
                                 "key was bound to this network namespace: the runtime handed "
                                 "this hook another container's pid",
                                 (int) pid, e.name ? e.name : "(unnamed)",
                                 nsid_key_source_to_string(e.source) ?: "recorded");
                        job.id = nsid_identity_unref(job.id);
                } else {
                        set_apply(&job);
                        set_finish(&c, &job, &res);
                }
                nsid_registry_entry_done(&e);
        }
        print_set_result(&nsid, pid, &res);
        if (res.state == ST_FAILED)
                errorf("%s %s: failed; the container must not start with a shared NFS identity",
                       what, name);
        else if (arg.syslog && res.identity[0]) {
                /* what a hook's stdout would have said, for the log */
                char line[512];
                snprintf(line, sizeof(line), "%s %s: netns %" PRIu64 " (pid %d): %s %s %s", what,
                         name, nsid.ino, (int) pid, res.identity,
                         nsid_key_source_to_string(res.source), state_words[res.state]);
                to_syslog(res.state == ST_TOO_LATE || res.state == ST_REFUSED ? LOG_WARNING
                                                                              : LOG_INFO,
                          line);
        }
        ctx_done(&c);
        nsid_ns_unref(netns);
        nsid_proc_unref(proc);
        return exit_for(&res, true);
}

/* Whether we run in a user namespace other than the initial one: a rootless engine (Podman
 * run by a user) runs its hooks in the user namespace it made. NFS cannot be mounted from
 * there whatever its ids map to: the kernel asks for CAP_SYS_ADMIN in the initial user
 * namespace, whose inode number is reserved. 1 yes, 0 no, negative errno. */
static int in_child_userns(void) {
        struct stat st;

        if (stat("/proc/self/ns/user", &st) < 0)
                return -errno;
        return (uint64_t) st.st_ino != nsid_ns_type_initial_ino(NSID_NS_USER);
}

static int cmd_oci_hook(int argc, char **argv) {
        char *data = NULL;
        size_t size = 0;
        const char *err = NULL;
        oci_state st = {};
        int r;

        bool use_annotation = true;

        arg.syslog = true;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        command_help();
                        return EXIT_OK;
                } else if (strcmp(argv[i], "--no-annotation-key") == 0)
                        use_annotation = false;
                else {
                        errorf("oci-hook: unknown argument '%s'", argv[i]);
                        return EXIT_USAGE;
                }
        }
        r = nsid_fd_read_timeout(STDIN_FILENO, OCI_STATE_MAX,
                                 arg.timeout_ms > 0 ? (unsigned) arg.timeout_ms : 0, &data, &size);
        if (r < 0) {
                errorf("oci-hook: reading the state from stdin: %s",
                       r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
                return EXIT_FAIL;
        }
        r = oci_state_parse(data, size, &st, &err);
        free(data);
        if (r < 0) {
                errorf("oci-hook: invalid OCI state on stdin: %s", err);
                return EXIT_FAIL;
        }
        /* A rootless engine: its containers' network namespaces belong to its user namespace,
         * from which the kernel refuses NFS mounts (nfs is not FS_USERNS_MOUNT), and from
         * where no identifier can be written or recorded. Failing would stop every rootless
         * container from starting; there is nothing to protect. */
        if (in_child_userns() == 1) {
                if (!arg.quiet)
                        notef(LOG_NOTICE, "oci-hook: container %s: run from a user namespace "
                              "(rootless engine), where NFS cannot be mounted; left alone",
                              st.id);
                oci_state_done(&st);
                return EXIT_OK;
        }
        if (!use_annotation && (st.nsid_key || st.nsid_app)) {
                if (!arg.quiet)
                        notef(LOG_NOTICE, "oci-hook: container %s: org.nsid.* annotations "
                              "ignored (--no-annotation-key)",
                              st.id);
                st.nsid_key = mfree(st.nsid_key);
                st.nsid_app = mfree(st.nsid_app);
        }
        if (st.nsid_app) {
                if (nsid_app_validate(st.nsid_app) < 0) {
                        errorf("oci-hook: container %s: invalid annotation org.nsid.app", st.id);
                        oci_state_done(&st);
                        return EXIT_FAIL;
                }
                arg.app = st.nsid_app;
        }
        r = hook_set(st.pid, st.nsid_key ? st.nsid_key : st.id,
                     st.nsid_key ? NSID_KEY_EXPLICIT : NSID_KEY_CONTAINER_ID, st.id, "container");
        arg.app = NSID_APP_NFS4;
        oci_state_done(&st);
        return r;
}

static int cmd_lxc_hook(int argc, char **argv) {
        const char *spid = getenv("LXC_PID"), *name = getenv("LXC_NAME");
        bool name_key = true;
        pid_t pid;

        arg.syslog = true;
        /* Options come first: they are the ones written after the hook's path in the
         * container's config (LXC runs the line through a shell). LXC then appends "NAME lxc
         * start-host" (lxc.hook.version 0) or nothing (1); the environment is what counts. */
        for (int i = 1; i < argc && argv[i][0] == '-'; i++) {
                if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        command_help();
                        return EXIT_OK;
                } else if (strcmp(argv[i], "--no-name-key") == 0)
                        name_key = false;
                else {
                        errorf("lxc-hook: unknown option '%s'", argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (!name || nsid_key_validate(name) < 0) {
                errorf("lxc-hook: LXC_NAME missing or invalid (run as lxc.hook.start-host)");
                return EXIT_FAIL;
        }
        if (parse_pid_arg(spid, &pid) < 0 || pid <= 1) {
                errorf("lxc-hook: container %s: LXC_PID missing or invalid", name);
                return EXIT_FAIL;
        }
        /* --no-name-key: the name is whoever created the container's choice, as an
         * annotation is; ignored, the key is the one `set` picks without --key (the
         * container's own /etc/machine-id, else random for the namespace's lifetime). */
        if (!name_key)
                return hook_set(pid, NULL, NSID_KEY_AUTO, name, "container");
        return hook_set(pid, name, NSID_KEY_CONTAINER_ID, name, "container");
}

/* ---- reconcile / list / check ---- */

typedef struct row {
        nsid_netns_info *info;
        char identifier[NSID_NFS_IDENTIFIER_MAX + 2];
        bool have_identifier; /* read ok (maybe "" = unset) */
        bool no_nfs_client;
        const char *source;   /* from the registry, or "-" */
        char state[300];
        bool problem;
        /* work for the parallel phase */
        nsid_ns *netns;
        nsid_proc *proc;
        enum { JOB_NONE, JOB_GET, JOB_SET } job_kind;
        set_job job;
        set_result res;
        int get_r;
        char *get_ident;
        bool want_set; /* reconcile: this netns is to be set */
        bool need_mid; /* no key recorded: its /etc/machine-id is read first (in parallel) */
        int mid_r;
        char mid_hex[NSID_IDENTITY_STRING_SIZE];
} row;

/* The parallel phases: each thread takes the next row and runs its worker. */
enum { PHASE_MACHINE_ID, PHASE_APPLY };

typedef struct pool {
        row *rows;
        size_t n;
        int phase;
        size_t next; /* atomic */
} pool;

static void *pool_thread(void *userdata) {
        pool *p = userdata;

        for (;;) {
                size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
                row *w;

                if (i >= p->n)
                        return NULL;
                w = &p->rows[i];
                if (p->phase == PHASE_MACHINE_ID) {
                        /* Bounded (a worker, killed after --timeout): a container whose /etc
                         * never answers costs its own row the bound, not the others. The
                         * result (or the failure) is handed to set_prepare. */
                        static const char hex[] = "0123456789abcdef";
                        uint8_t mid[NSID_ID128_SIZE];
                        if (w->need_mid)
                                w->mid_r = nsid_proc_read_machine_id(w->proc, arg.timeout_ms,
                                                                     mid);
                        if (w->need_mid && w->mid_r == 0) {
                                for (size_t k = 0; k < NSID_ID128_SIZE; k++) {
                                        w->mid_hex[2 * k] = hex[mid[k] >> 4];
                                        w->mid_hex[2 * k + 1] = hex[mid[k] & 15];
                                }
                                w->mid_hex[32] = '\0';
                        }
                        explicit_bzero(mid, sizeof(mid));
                } else if (w->job_kind == JOB_SET)
                        set_apply(&w->job);
                else if (w->job_kind == JOB_GET)
                        w->get_r = nsid_nfs_client_get_identifier(w->netns, arg.timeout_ms,
                                                                  &w->get_ident);
        }
}

/* Up to 4 workers per CPU in flight (they mostly wait on the kernel), at most 32. */
static void pool_run(row *rows, size_t n, int phase) {
        pool p = { .rows = rows, .n = n, .phase = phase };
        pthread_t t[32];
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t k = (size_t) (cpus > 0 ? cpus : 1) * 4, started = 0;

        if (k > 32)
                k = 32;
        if (k > n)
                k = n;
        for (size_t i = 1; i < k; i++)
                if (pthread_create(&t[started], NULL, pool_thread, &p) == 0)
                        started++;
        (void) pool_thread(&p);
        for (size_t i = 0; i < started; i++)
                (void) pthread_join(t[i], NULL);
}

/* Liveness from this scan: a binding from another boot, or for an inode no live netns has, is
 * gone. (A reused inode is caught by the netns cookie when that netns is next bound.) */
typedef struct scan_view {
        const nsid_netns_info *v;
        size_t n;
        char boot_id[37];
} scan_view;

static int scan_live(const nsid_registry_entry *e, void *userdata) {
        const scan_view *sv = userdata;

        if (!e->boot_id || strcmp(e->boot_id, sv->boot_id) != 0)
                return 0;
        for (size_t i = 0; i < sv->n; i++)
                if (sv->v[i].id.dev == e->netns.dev && sv->v[i].id.ino == e->netns.ino)
                        return 1;
        return 0;
}

static const char *registry_source_of(nsid_registry *reg, nsid_ns *netns, const char *identifier,
                                      nsid_key_source *ret) {
        nsid_registry_entry e = {};
        const char *s = NULL;

        if (!reg || !identifier[0])
                return NULL;
        if (lookup_binding(reg, netns, &e) < 0)
                return NULL;
        if (strcmp(e.identity, identifier) == 0) {
                s = nsid_key_source_to_string(e.source);
                *ret = e.source;
        }
        nsid_registry_entry_done(&e);
        return s;
}

/* A container chooses its processes' comm (PR_SET_NAME) and, with a delegated cgroup, names in
 * its cgroup path: shown in the table with control and non-ASCII bytes as '?', so they cannot
 * move the cursor or rewrite an admin's terminal. (JSON output escapes them itself.) */
static const char *shown(const char *s, char *buf, size_t size) {
        size_t i = 0;

        if (!s)
                return "-";
        for (; s[i] && i + 1 < size; i++)
                buf[i] = (unsigned char) s[i] < 0x20 || (unsigned char) s[i] > 0x7e ? '?' : s[i];
        buf[i] = '\0';
        return buf;
}

/* The one vocabulary of states (state_words, nsid-uniquifier(8)): a table's STATE is one of
 * its words, then what qualifies it (" (host)", ": why", "; note"); the word alone. */
static const char *state_token(const char *text) {
        static const char *const words[] = { "set", "would-set", "already-set", "too-late",
                                             "no-nfs-client", "unset", "failed", "gone",
                                             "refused" };
        size_t n = strcspn(text, " :;,(");
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
                if (strlen(words[i]) == n && strncmp(text, words[i], n) == 0)
                        return words[i];
        return text;
}

static void print_table(row *rows, size_t n) {
        if (arg.json) {
                json_object *a = json_object_new_array();
                for (size_t i = 0; i < n; i++) {
                        row *w = &rows[i];
                        json_object *o = json_object_new_object();
                        json_object_object_add(o, "netns", json_object_new_uint64(w->info->id.ino));
                        json_object_object_add(o, "netns_dev",
                                               json_object_new_uint64(w->info->id.dev));
                        json_object_object_add(o, "pid", json_object_new_int(w->info->pid));
                        json_object_object_add(o, "comm", w->info->comm
                                                                  ? json_object_new_string(w->info->comm)
                                                                  : NULL);
                        json_object_object_add(o, "cgroup",
                                               w->info->cgroup
                                                       ? json_object_new_string(w->info->cgroup)
                                                       : NULL);
                        json_object_object_add(o, "path", w->info->path
                                                                  ? json_object_new_string(w->info->path)
                                                                  : NULL);
                        json_object_object_add(o, "host", json_object_new_boolean(w->info->initial));
                        json_object_object_add(o, "nfs_mounted",
                                               json_object_new_boolean(w->info->nfs_mounted));
                        json_object_object_add(o, "identifier",
                                               w->have_identifier && w->identifier[0]
                                                       ? json_object_new_string(w->identifier)
                                                       : NULL);
                        json_object_object_add(o, "source",
                                               w->source ? json_object_new_string(w->source) : NULL);
                        /* the same words as `set --json` (state_words), the table's phrase
                         * beside them */
                        json_object_object_add(o, "state",
                                               json_object_new_string(state_token(w->state)));
                        json_object_object_add(o, "state_text", json_object_new_string(w->state));
                        json_object_object_add(o, "problem", json_object_new_boolean(w->problem));
                        json_object_array_add(a, o);
                }
                /* one document: what produced it, and the namespaces */
                json_object *doc = json_object_new_object();
                json_object_object_add(doc, "nsid", json_envelope_new(program, arg.command));
                json_object_object_add(doc, "namespaces", a);
                puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                                 JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(doc);
                return;
        }
        if (!arg.no_legend)
                printf("%-11s %-8s %-16s %-32s %-32s %-12s %s\n", "NETNS", "PID", "COMM", "CGROUP",
                       "IDENTIFIER", "SOURCE", "STATE");
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];
                char pid[16], comm[64], cgb[4096];
                const char *cg = shown(w->info->cgroup ? w->info->cgroup : w->info->path,
                                       cgb, sizeof(cgb));
                snprintf(pid, sizeof(pid), "%d", (int) w->info->pid);
                printf("%-11" PRIu64 " %-8s %-16s %-32s %-32s %-12s %s\n", w->info->id.ino,
                       w->info->pid ? pid : "-", shown(w->info->comm, comm, sizeof(comm)), cg,
                       !w->have_identifier   ? "?"
                       : w->identifier[0] ? w->identifier
                                          : "(unset)", /* as nsidctl status says it */
                       w->source ? w->source : "-", w->state);
        }
}

enum { MODE_RECONCILE, MODE_LIST, MODE_CHECK };

static int scan_once(int mode, bool dry_run);

/*
 * One reconcile at a time, and none lost: udev may start one per new netns. A reconcile that
 * finds another running leaves a "pending" mark and exits 0; the running one repeats its pass
 * while the mark is there, and checks it once more after letting go of the lock.
 */
static int reconcile_coalesced(void) {
        char lockp[4096], pendp[4096];
        const char *dir = arg.state_dir ? arg.state_dir : NSID_STATE_DIR;
        int fd, r = EXIT_OK;

        snprintf(lockp, sizeof(lockp), "%s/reconcile.lock", dir);
        snprintf(pendp, sizeof(pendp), "%s/reconcile.pending", dir);
        (void) mkdir(dir, 0700);
        fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                errorf("warning: %s: %s; reconciling without coordination", lockp,
                       strerror(errno));
                return scan_once(MODE_RECONCILE, false);
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int p = open(pendp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (p >= 0)
                        close(p);
                if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                        if (!arg.quiet)
                                errorf("another reconcile is running; it will make one more "
                                       "pass for this request");
                        close(fd);
                        return EXIT_OK;
                }
        }
        for (;;) {
                (void) unlink(pendp);
                r = scan_once(MODE_RECONCILE, false);
                if (access(pendp, F_OK) == 0)
                        continue;
                (void) flock(fd, LOCK_UN);
                if (access(pendp, F_OK) == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
                        continue;
                break;
        }
        close(fd);
        return r;
}

static int cmd_scan(int argc, char **argv, int mode) {
        static const struct option opts[] = {
                { "include-host", no_argument, NULL, 'H' },
                { "dry-run", no_argument, NULL, 'd' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        bool dry_run = false;
        int o;

        optind = 1;
        while ((o = getopt_long(argc, argv, "+h", opts, NULL)) >= 0) {
                switch (o) {
                case 'H':
                        arg.include_host = true;
                        break;
                case 'd':
                        dry_run = true;
                        break;
                case 'j':
                        arg.json = true;
                        break;
                case 'h':
                        command_help();
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                errorf("unexpected argument '%s'", argv[optind]);
                return EXIT_USAGE;
        }
        if (mode == MODE_RECONCILE && !dry_run)
                return reconcile_coalesced();
        return scan_once(mode, dry_run);
}

static int scan_once(int mode, bool dry_run) {
        nsid_netns_info *v = NULL;
        row *rows = NULL;
        size_t n = 0;
        bool failed = false, problems = false, need_mid = false;
        ctx c;
        int r;

        r = ctx_init(&c, mode == MODE_RECONCILE, mode != MODE_RECONCILE || dry_run);
        if (r < 0)
                return EXIT_FAIL;
        r = nsid_netns_scan(&v, &n);
        if (r < 0) {
                errorf("cannot enumerate network namespaces: %s", strerror(-r));
                ctx_done(&c);
                return EXIT_FAIL;
        }
        rows = calloc(n ? n : 1, sizeof(*rows));
        if (!rows) {
                errorf("out of memory");
                nsid_netns_info_free(v, n);
                ctx_done(&c);
                return EXIT_FAIL;
        }

        /* 1. open every netns; which ones have no key recorded yet */
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];
                nsid_registry_entry e = {};

                w->info = &v[i];
                r = nsid_netns_info_open(&v[i], &w->netns, &w->proc);
                if (r < 0) {
                        snprintf(w->state, sizeof(w->state), "gone (%s)", strerror(-r));
                        continue;
                }
                if (mode == MODE_RECONCILE && (!v[i].initial || arg.include_host)) {
                        w->want_set = true;
                        w->need_mid = w->proc && lookup_binding(c.reg, w->netns, &e) < 0;
                        if (w->need_mid)
                                need_mid = true;
                        nsid_registry_entry_done(&e);
                } else
                        w->job_kind = JOB_GET;
        }

        /* 2. their machine-ids, many at a time, each bounded */
        if (need_mid)
                pool_run(rows, n, PHASE_MACHINE_ID);

        /* 3. pick and record identities (sequential: the registry) */
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];

                if (w->want_set) {
                        if (set_prepare(&c, w->netns, w->proc, NULL, NSID_KEY_AUTO, NULL,
                                        dry_run ? SET_DRY_RUN : 0, v[i].nfs_mounted,
                                        w->need_mid && w->mid_r < 0 ? w->mid_r : 0,
                                        w->need_mid && w->mid_r == 0 ? w->mid_hex : NULL,
                                        &w->job, &w->res))
                                w->job_kind = JOB_SET;
                        else {
                                snprintf(w->state, sizeof(w->state), "failed: %s", w->res.why);
                                failed = true;
                        }
                }
        }

        /* 4. the identifier workers, many at a time */
        pool_run(rows, n, PHASE_APPLY);

        /* 5. results (sequential: the registry) */
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];
                nsid_key_source src;

                if (w->job_kind == JOB_SET) {
                        set_result *res = &w->res;

                        set_finish(&c, &w->job, res);
                        w->source = res->source != NSID_KEY_AUTO
                                            ? nsid_key_source_to_string(res->source)
                                            : NULL;
                        w->have_identifier = true;
                        snprintf(w->identifier, sizeof(w->identifier), "%s", res->identity);
                        switch (res->state) {
                        case ST_SET_NOW:
                                snprintf(w->state, sizeof(w->state), "set");
                                break;
                        case ST_WOULD_SET:
                                snprintf(w->state, sizeof(w->state), "would-set");
                                w->identifier[0] = '\0';
                                break;
                        case ST_ALREADY_SET:
                                snprintf(w->state, sizeof(w->state), "already-set");
                                break;
                        case ST_TOO_LATE:
                                snprintf(w->state, sizeof(w->state),
                                         "too-late: set, but NFS is already mounted");
                                break;
                        case ST_NOT_LOADED:
                                snprintf(w->state, sizeof(w->state),
                                         "no-nfs-client (module not loaded); recorded");
                                w->have_identifier = false;
                                break;
                        case ST_REFUSED:
                                snprintf(w->state, sizeof(w->state), "already-set (not by nsid)");
                                snprintf(w->identifier, sizeof(w->identifier), "%s",
                                         res->previous);
                                w->source = NULL;
                                break;
                        default:
                                snprintf(w->state, sizeof(w->state), "failed: %s", res->why);
                                w->have_identifier = false;
                                failed = true;
                        }
                        if (res->mid_error == -ETIMEDOUT && res->source == NSID_KEY_RANDOM &&
                            res->state != ST_FAILED) {
                                char note[96];
                                snprintf(note, sizeof(note),
                                         "; /etc/machine-id not read within %d ms: random key",
                                         arg.timeout_ms);
                                strncat(w->state, note,
                                        sizeof(w->state) - strlen(w->state) - 1);
                                if (!arg.quiet)
                                        errorf("netns %" PRIu64 " (pid %d): %s", w->info->id.ino,
                                               (int) w->info->pid, res->why);
                        }
                } else if (w->job_kind == JOB_GET) {
                        if (w->get_r == -ENOENT) {
                                w->no_nfs_client = true;
                                w->have_identifier = false;
                        } else if (w->get_r < 0) {
                                snprintf(w->state, sizeof(w->state), "failed: cannot read: %s",
                                         strerror(-w->get_r));
                                failed = true;
                                goto next;
                        } else {
                                w->have_identifier = true;
                                snprintf(w->identifier, sizeof(w->identifier), "%s",
                                         w->get_ident);
                        }
                        w->source = w->have_identifier ? registry_source_of(c.reg, w->netns,
                                                                            w->identifier, &src)
                                                       : NULL;
                        if (w->no_nfs_client)
                                snprintf(w->state, sizeof(w->state), "no-nfs-client");
                        else if (!w->identifier[0] && w->info->nfs_mounted) {
                                snprintf(w->state, sizeof(w->state), "unset, NFS mounted");
                                w->problem = !w->info->initial;
                        } else if (!w->identifier[0])
                                snprintf(w->state, sizeof(w->state),
                                         w->info->initial ? "unset (host)" : "unset");
                        else
                                snprintf(w->state, sizeof(w->state),
                                         w->info->initial ? "already-set (host)"
                                                          : "already-set");
                }
        next:
                w->get_ident = mfree(w->get_ident);
                w->netns = nsid_ns_unref(w->netns);
                w->proc = nsid_proc_unref(w->proc);
        }

        /* forget the bindings of namespaces that are gone (their random keys with them) */
        if (mode == MODE_RECONCILE && !dry_run && c.reg) {
                scan_view sv = { .v = v, .n = n };
                if (nsid_boot_id(sv.boot_id) >= 0) {
                        r = nsid_registry_prune(c.reg, scan_live, &sv);
                        if (r > 0 && arg.verbose)
                                errorf("forgot %d binding(s) of network namespaces that are gone", r);
                }
        }

        /* duplicates: two live netns presenting the same identifier */
        for (size_t i = 0; i < n; i++) {
                if (!rows[i].have_identifier || !rows[i].identifier[0])
                        continue;
                for (size_t j = i + 1; j < n; j++)
                        if (rows[j].have_identifier &&
                            strcmp(rows[i].identifier, rows[j].identifier) == 0) {
                                char note[80];
                                rows[i].problem = rows[j].problem = true;
                                snprintf(note, sizeof(note), "; DUPLICATE of netns %" PRIu64,
                                         rows[j].info->id.ino);
                                strncat(rows[i].state, note,
                                        sizeof(rows[i].state) - strlen(rows[i].state) - 1);
                                snprintf(note, sizeof(note), "; DUPLICATE of netns %" PRIu64,
                                         rows[i].info->id.ino);
                                strncat(rows[j].state, note,
                                        sizeof(rows[j].state) - strlen(rows[j].state) - 1);
                        }
        }

        print_table(rows, n);
        for (size_t i = 0; i < n; i++)
                if (rows[i].problem) {
                        problems = true;
                        if (mode == MODE_CHECK)
                                errorf("netns %" PRIu64 " (pid %d%s%s): %s", rows[i].info->id.ino,
                                       (int) rows[i].info->pid,
                                       rows[i].info->path ? ", " : "",
                                       rows[i].info->path ? rows[i].info->path : "",
                                       rows[i].state);
                }

        free(rows);
        nsid_netns_info_free(v, n);
        ctx_done(&c);
        if (mode == MODE_CHECK && problems)
                return EXIT_PROBLEMS;
        return failed ? EXIT_FAIL : EXIT_OK;
}

/*
 * The capabilities a command keeps; every other one is dropped before the command reads any
 * input (the OCI state on stdin included), see nsid-uniquifier(8), CAPABILITIES:
 *  CAP_SYS_ADMIN     setns() into other namespaces (workers, netns cookies), a private sysfs
 *                    of the target netns (fsopen/fsmount) to reach its identifier;
 *  CAP_SYS_PTRACE    /proc/PID/ns/net and /proc/PID/root of other users' processes;
 *  CAP_SYS_CHROOT    the machine-id worker joins a container's mount namespace and chroot()s
 *                    to its root (not needed by list/check, which read no container file).
 * No DAC override: the identifier file is owned by the host's root (the kernel's nfs_client
 * kobject has no per-namespace owner) and mode 0644, the state directory is ours, and
 * container files are read by the worker as the container's root.
 */
static int restrict_privileges(const char *cmd) {
        static const cap_value_t writer[] = { CAP_SYS_CHROOT, CAP_SYS_PTRACE, CAP_SYS_ADMIN };
        static const cap_value_t reader[] = { CAP_SYS_PTRACE, CAP_SYS_ADMIN };
        bool ro = strcmp(cmd, "list") == 0 || strcmp(cmd, "check") == 0;
        char *text = NULL;
        int r;

        r = caps_restrict(ro ? reader : writer, ro ? 2 : 3, &text);
        if (r < 0) {
                errorf("cannot drop capabilities: %s", strerror(-r));
                return r;
        }
        if (arg.verbose)
                errorf("capabilities kept: %s", text && *text && strcmp(text, "=") != 0
                                                        ? text
                                                        : "none");
        free(text);
        return 0;
}

/* Options anywhere (issue #32: one command-line convention with nsidctl's): the common
 * options written after the command (`nsid-uniquifier list --json`) are moved before it,
 * in order, so that main's parser, which stops at the command, takes them. A command's own
 * options stay where they are. */
static void hoist_common_options(int argc, char **argv, const struct option *opts) {
        int cmd = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (a[0] != '-' || a[1] == '\0') {
                        cmd = i;
                        break;
                }
                if (strcmp(a, "--") == 0)
                        return;
                /* a common option's separate value ("--state-dir DIR") */
                if (a[1] == '-' && !strchr(a, '='))
                        for (const struct option *o = opts; o->name; o++)
                                if (strcmp(a + 2, o->name) == 0 && o->has_arg == required_argument)
                                        i++;
        }
        if (cmd == 0)
                return;
        char **moved = calloc((size_t) argc, sizeof(char *)), **rest = calloc((size_t) argc, sizeof(char *));
        int nm = 0, nr = 0;
        if (!moved || !rest) {
                free(moved);
                free(rest);
                return;
        }
        for (int i = cmd + 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--") == 0) { /* the rest is the command's */
                        while (i < argc)
                                rest[nr++] = argv[i++];
                        break;
                }
                const struct option *hit = NULL;
                bool flag = strcmp(a, "-q") == 0 || strcmp(a, "-v") == 0;
                if (!flag && a[0] == '-' && a[1] == '-')
                        for (const struct option *o = opts; o->name; o++) {
                                size_t l = strlen(o->name);
                                if (strcmp(o->name, "help") == 0 || strcmp(o->name, "version") == 0)
                                        continue; /* the command's own help */
                                if (strncmp(a + 2, o->name, l) == 0 &&
                                    (a[2 + l] == '\0' || (a[2 + l] == '=' && o->has_arg))) {
                                        hit = o;
                                        break;
                                }
                        }
                if (!hit && !flag) {
                        rest[nr++] = argv[i];
                        continue;
                }
                moved[nm++] = argv[i];
                if (hit && hit->has_arg == required_argument && !strchr(a, '=') && i + 1 < argc)
                        moved[nm++] = argv[++i];
        }
        if (nm > 0) {
                char *command = argv[cmd];
                int k = cmd;
                for (int j = 0; j < nm; j++)
                        argv[k++] = moved[j];
                argv[k++] = command;
                for (int j = 0; j < nr; j++)
                        argv[k++] = rest[j];
        }
        free(moved);
        free(rest);
}

static int run(int argc, char **argv) {
        static const struct option opts[] = {
                { "app", required_argument, NULL, 'a' },
                { "state-dir", required_argument, NULL, 's' },
                { "config", required_argument, NULL, 'c' },
                { "registry", required_argument, NULL, 'r' },
                { "machine-id", required_argument, NULL, 'm' },
                { "timeout", required_argument, NULL, 't' },
                { "json", no_argument, NULL, 'j' },
                { "quiet", no_argument, NULL, 'q' },
                { "verbose", no_argument, NULL, 'v' },
                { "no-legend", no_argument, NULL, 'L' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *cmd;
        int o;

        (void) std_fds_ensure();
        hoist_common_options(argc, argv, opts);
        arg.state_dir = secure_getenv("NSID_STATE_DIR");
        arg.registry_path = secure_getenv("NSID_REGISTRY");
        arg.machine_id = secure_getenv("NSID_MACHINE_ID_FILE");

        while ((o = getopt_long(argc, argv, "+qvh", opts, NULL)) >= 0) {
                switch (o) {
                case 'a':
                        if (nsid_app_validate(optarg) < 0) {
                                errorf("invalid --app '%s': 1..%d of [a-z0-9._-]", optarg,
                                       NSID_APP_MAX);
                                return EXIT_USAGE;
                        }
                        arg.app = optarg;
                        break;
                case 's':
                        arg.state_dir = optarg;
                        break;
                case 'c':
                        arg.config_path = optarg;
                        break;
                case 'r':
                        arg.registry_path = optarg;
                        break;
                case 'm':
                        arg.machine_id = optarg;
                        break;
                case 't':
                        if (parse_timeout_arg(optarg, &arg.timeout_ms) < 0) {
                                errorf("invalid --timeout '%s' (milliseconds)", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'j':
                        arg.json = true;
                        break;
                case 'q':
                        arg.quiet = true;
                        break;
                case 'v':
                        arg.verbose = true;
                        break;
                case 'L':
                        arg.no_legend = true;
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case 'V':
                        printf("nsid-uniquifier %s\n", NSID_VERSION);
                        return EXIT_OK;
                default:
                        return EXIT_USAGE; /* (getopt named the option) */
                }
        }
        if (arg.state_dir && !*arg.state_dir)
                arg.state_dir = NULL;
        if (arg.registry_path && !*arg.registry_path)
                arg.registry_path = NULL;
        if (arg.machine_id && !*arg.machine_id)
                arg.machine_id = NULL;

        nsid_log_set_handler(log_handler, NULL);
        nsid_log_set_max_priority(arg.verbose ? LOG_DEBUG : LOG_WARNING);
        if (config_state_dir() < 0)
                return EXIT_FAIL;

        if (optind >= argc) {
                errorf("missing command");
                return EXIT_USAGE;
        }
        cmd = argv[optind];
        arg.command = cmd;
        argc -= optind;
        argv += optind;

        if (strcmp(cmd, "set") == 0 || strcmp(cmd, "oci-hook") == 0 ||
            strcmp(cmd, "lxc-hook") == 0 || strcmp(cmd, "reconcile") == 0 ||
            strcmp(cmd, "list") == 0 || strcmp(cmd, "check") == 0)
                if (restrict_privileges(cmd) < 0)
                        return EXIT_FAIL;

        if (strcmp(cmd, "set") == 0)
                return cmd_set(argc, argv);
        if (strcmp(cmd, "oci-hook") == 0)
                return cmd_oci_hook(argc, argv);
        if (strcmp(cmd, "lxc-hook") == 0)
                return cmd_lxc_hook(argc, argv);
        if (strcmp(cmd, "reconcile") == 0)
                return cmd_scan(argc, argv, MODE_RECONCILE);
        if (strcmp(cmd, "list") == 0)
                return cmd_scan(argc, argv, MODE_LIST);
        if (strcmp(cmd, "check") == 0)
                return cmd_scan(argc, argv, MODE_CHECK);
        if (strcmp(cmd, "help") == 0) {
                help();
                return EXIT_OK;
        }
        errorf("unknown command '%s' (commands: set, oci-hook, lxc-hook, reconcile, list, check)",
               cmd);
        return EXIT_USAGE;
}

/* Every usage error (exit 2) ends with the same pointer, whatever said what was wrong. */
int main(int argc, char **argv) {
        int r = run(argc, argv);
        if (r == EXIT_USAGE)
                fprintf(stderr, "Try '%s --help'.\n", program);
        return r;
}
