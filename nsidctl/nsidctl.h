/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: shared declarations of the subcommands. */
#ifndef NSIDCTL_H
#define NSIDCTL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include <nsid/conffile.h>
#include <nsid/netns.h>
#include <nsid/ns.h>

#include "engine.h"

/* Exit codes (nsidctl(8), EXIT STATUS). */
enum {
        EXIT_OK = 0,
        EXIT_FAIL = 1,     /* could not do what was asked */
        EXIT_USAGE = 2,
        EXIT_WARNINGS = 3, /* doctor/config: warnings, no errors */
        EXIT_PROBLEMS = 4, /* doctor/config: errors */
};

typedef struct nsidctl_args {
        bool json;
        bool color;
        bool verbose;
        const char *config_path;
        const char *state_dir;     /* --state-dir or $NSID_STATE_DIR, NULL: configuration */
        const char *registry_path; /* --registry or $NSID_REGISTRY */
        const char *machine_id;    /* --machine-id or $NSID_MACHINE_ID_FILE */
        const char *socket_path;   /* --socket */
        const char *app;
        int timeout_ms;
        /* subcommand options */
        const char *key;
        int key_source;            /* nsid_key_source */
        pid_t pid;
        const char *netns_path;
        const char *server_domain;
        const char *request_key_conf; /* --request-key-conf */
        const char *request_key_dir;  /* --request-key-dir */
        const char *platform_id;   /* --platform-id or $NSID_PLATFORM_ID_FILE (product UUID) */
        bool server;               /* doctor --server: only the NFS server's checks */
        int window_ms;             /* doctor --window: how long to watch the server's clients */
        const char *nfsd_clients;  /* doctor --nfsd-clients: instead of /proc/fs/nfsd/clients */
        const char *action;        /* host-secret show|new|accept */
        bool yes;                  /* host-secret new --yes */
        bool if_shared;            /* host-secret new --if-shared */
        bool quiet;                /* -q: no informational messages */
        bool no_legend;            /* --no-legend: tables without header lines */
        const char *reason;        /* host-secret --reason */
        const char *output;        /* metrics --output: the file to replace atomically */
        const char *history;       /* watch/doctor/metrics --history: the server-watch history */
        double duration_s;         /* watch --duration: stop after that long (0: on a signal) */
        bool http;                 /* metrics --http: answer one HTTP request on stdin */
} nsidctl_args;

extern nsidctl_args arg;
extern const char *program;

/* ---- output.c ---- */
typedef enum color {
        C_RESET,
        C_BOLD,
        C_DIM,
        C_RED,
        C_GREEN,
        C_YELLOW,
        C_BLUE,
        _C_MAX,
} color;

/* Colour only when stdout is a terminal, $NO_COLOR is unset or empty and $TERM is not
 * "dumb"; mode "always"/"never" overrides. -EINVAL for another mode. */
int out_color_setup(const char *mode);
const char *col(color c);
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern const char *json_command; /* the command running, for the "nsid" member */
void print_json(json_object *o);
json_object *json_string_or_null(const char *s);
/* Text a container or a server chose, for a terminal: control bytes, DEL, bytes >= 0x80 and
 * backslashes as \xNN (so nothing it prints moves the cursor, changes colours or splits a
 * line); NULL as "-". Into buf (size bytes), which it returns. */
const char *text_safe(const char *s, char *buf, size_t size);
/* Install the log handler of libnsid (warnings and errors to stderr, debug with -v);
 * quiet drops everything (for calls whose failures the caller explains itself). */
void out_log_setup(void);
void out_log_quiet(bool quiet);

/* ---- context.c ---- */
/* The configuration, loaded once. NULL when it cannot be used (then *ret_error < 0). */
nsid_conf *ctx_config(int *ret_error);
const char *ctx_state_dir(void);
const char *ctx_registry_path(void);
const char *ctx_socket_path(void);
const char *ctx_idmapd_conf(void);
void ctx_done(void);

/* ---- daemon.c ---- */
/* nsid-idmapd's "status" over its control socket: the JSON object. -ENOENT/-ECONNREFUSED
 * when it does not run, -EACCES when we are not root, -EPROTO for a malformed reply. */
int daemon_status(const char *socket_path, int timeout_ms, json_object **ret);
/* Its "metrics": the totals per context that never go down while it runs. */
int daemon_metrics(const char *socket_path, int timeout_ms, json_object **ret);

/* ---- procs.c ---- */
typedef struct proc_hit {
        pid_t pid;
        nsid_ns_id netns;
        char comm[17];
} proc_hit;
/* Every process whose comm is one of names (NULL-terminated list). */
int procs_find(const char *const *names, proc_hit **ret, size_t *ret_n);

/* ---- requestkey.c ---- */
typedef struct rk_rule {
        char *file;
        unsigned line;
        char *op, *type, *description, *callout_info, *program;
        char *text;
} rk_rule;
/* The rules of request-key.conf(5): conf (NULL: /etc/request-key.conf) and dir/NAME.conf (NULL:
 * /etc/request-key.d), in the order request-key reads them. Missing files are no error. */
int requestkey_scan(const char *conf, const char *dir, rk_rule **ret, size_t *ret_n);
void rk_rules_free(rk_rule *v, size_t n);
/* Whether a rule's op/type fields match op and type (request-key's glob matching). */
bool rk_rule_matches(const rk_rule *r, const char *op, const char *type);
/* The program's basename ("nfsidmap", "nsid-idmap"). */
const char *rk_rule_program_name(const rk_rule *r);

/* ---- survey.c: what status and doctor look at ---- */
typedef struct ns_facts {
        const nsid_netns_info *info;
        int open_r;             /* opening the netns */
        int ident_r;            /* reading its identifier: 0, -ENOENT (no nfs client), ... */
        char *identifier;       /* "" when unset */
        char *reg_identity;     /* the registry's binding of this netns (NULL: none) */
        const char *reg_source; /* its key source */
        char *reg_name;
        int hostname_r;
        char *hostname;         /* the UTS nodename of its process */
        char *domain;           /* its idmap domain, NULL if unknown */
        const char *domain_source; /* "nsid-idmapd", "idmapd.conf", "hostname" */
        char *container;        /* a name: engine, registry, ip netns name, cgroup */
        engine_ref engine;      /* engine.engine NULL: no engine recognised */
        json_object *daemon_ns; /* nsid-idmapd's entry for it (borrowed) */
} ns_facts;

typedef struct survey {
        nsid_netns_info *v;
        size_t n;
        ns_facts *f;
        int scan_r;
        struct utsname uts;
        bool sysfs_nfs;         /* /sys/fs/nfs/net/nfs_client exists here */
        bool test_hook;         /* NSID_TEST_SYSFS_NFS_CLIENT_DIR */
        char *nfs4_unique_id;   /* nfs.nfs4_unique_id, NULL if unset or no module */
        int idkeys_r;           /* nsid_kernel_nfs_idkeys_tagged(): 1, 0 or a negative errno */
        char *host_domain;
        const char *host_domain_source;
        json_object *daemon;    /* nsid-idmapd status, NULL if not reachable */
        int daemon_r;
        int registry_r;
} survey;

int survey_run(survey *s);
/* The NFSv4.1+ owner string (co_ownerid) a netns presents, as fs/nfs/nfs4proc.c builds it
 * from its uniquifier (the netns's identifier, else nfs.nfs4_unique_id) and the nodename of
 * the mounting process: "Linux NFSv4.2 <uniquifier>/<nodename>" or "Linux NFSv4.2
 * <nodename>". NULL when the identifier or hostname is unknown. */
char *nfs_owner_string(const survey *s, const ns_facts *f);
void survey_done(survey *s);
/* The idmap domain of an idmapd.conf text: [General] Domain, else the DNS domain of
 * hostname (after its first dot); NULL if neither. *ret_source says which. */
char *idmap_domain_of(const char *conf, size_t size, const char *hostname,
                      const char **ret_source);
/* What survey.idkeys_r means, in a few words: "tagged", "untagged", "not-loaded", or a
 * reason why it is not known (buf). */
const char *idkeys_state(int r, char *buf, size_t size);

/* ---- subcommands ---- */
int cmd_status(void);
int cmd_metrics(void);
/* A namespace's identifier state word: set, unset, no-nfs-client, recorded, gone, error. */
const char *ns_ident_state(const ns_facts *f);
int cmd_doctor(void);
int cmd_identity(void);
int cmd_config(void);
int cmd_host_secret(void);
int cmd_watch(void);

#endif
