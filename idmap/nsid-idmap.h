/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmap: internal declarations shared by the program's files. */
#ifndef NSID_IDMAP_PROGRAM_H
#define NSID_IDMAP_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <keyutils.h>
#include <nsid/ns.h>

#include "text-util.h"

#define IDMAP_DEFAULT_TIMEOUT 600u    /* -t default, like nfsidmap */
#define IDMAP_NEGATIVE_TIMEOUT 5u     /* seconds a rejected id_resolver key stays */
#define IDMAP_DEFAULT_KEYRING ".id_resolver"
#define IDMAP_DEFAULT_CONF "/etc/idmapd.conf"

#define DNS_DEFAULT_TOTAL_MS 5000u /* whole lookup */
#define DNS_MIN_TTL 5u             /* key timeout bounds (keyutils' default_ttl is 5) */
#define DNS_MAX_TTL 3600u
#define DNS_HOSTS_TTL 600u /* answers from the container's /etc/hosts */
/* Negative timeout of invalid requests. Not 1 s: the kernel reports ENOKEY instead of the
 * rejection error when the negative key has already expired as the helper exits. */
#define DNS_INVALID_TTL 5u

typedef struct idmap_opts {
        int verbose;
        unsigned timeout;         /* -t */
        const char *idmapd_conf;  /* --idmapd-conf */
        const char *nsid_conf;    /* --config */
        const char *keyring;      /* --keyring (admin commands) */
        const char *test_prefix;  /* --test-user-prefix: the `user` key test seam */
        unsigned dns_total_ms;    /* --dns-timeout */
        unsigned max_seconds;     /* --max-time: watchdog of the id_resolver upcall */
        const char *daemon_socket; /* --daemon-socket: nsid-idmapd's control socket */
        unsigned daemon_timeout_ms; /* --daemon-timeout: bound of the fast path, 0: off */
        bool json;                /* --json: -l and -d as JSON (nsid's envelope) */
        bool no_legend;           /* --no-legend: -l without its header line */
} idmap_opts;

/* Logging: syslog, or stderr when -v is given or stderr is a terminal; --log-file appends. */
void log_setup(const char *ident, bool to_stderr, const char *log_file, int max_priority);
void logmsg(int priority, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Whether a message of that priority goes anywhere (else logmsg() does not even format it,
 * and callers may skip building what only a log line would show). */
bool log_wanted(int priority);
/* The strings up to a NULL, joined into one line and logged: what logmsg() does, without
 * printf, for the lines of every upcall (a line longer than 2 KiB is cut). */
void log_join(int priority, ...) __attribute__((sentinel));
/* Every logmsg() statement checks log_wanted() before its arguments are evaluated: a
 * strerror() in a line that goes nowhere costs, at every upcall, glibc's message catalogue
 * lookup (dcgettext, locale locks), some 300 instructions of code run once. */
#define logmsg(priority, ...)                                                                  \
        do {                                                                                   \
                if (log_wanted(priority))                                                      \
                        (logmsg)(priority, __VA_ARGS__);                                       \
        } while (0)
/* log_escape(), parse_uint_strict(): text-util.h */
int parse_key_serial(const char *s, key_serial_t *ret);

/* Read a whole (small) file of the host into a NUL-terminated buffer; -EFBIG over max. */
int read_host_file(const char *path, size_t max, char **ret_data, size_t *ret_size);
/* The same into buf (size bytes, NUL appended): its length, or -EFBIG when it does not fit. */
int read_small_file(const char *path, char *buf, size_t size);
/* KEYCTL_DESCRIBE into buf: the length without the NUL, -ERANGE if it does not fit, -errno. */
int keyctl_describe_buf(key_serial_t id, char *buf, size_t size);

/* The process that called request_key(), found through the .request_key_auth key in the
 * helper's session keyring and /proc/keys, pinned with a pidfd. */
typedef struct requester {
        pid_t pid;       /* the process (thread group) */
        pid_t tid;       /* the thread that made the request (the pid /proc/keys shows) */
        int pidfd;       /* pins the requester (-1 when not found) */
        nsid_proc *proc; /* made from pidfd when first needed: requester_proc() */
        key_serial_t auth_key;
        char comm[32];
        uint64_t net_ino, user_ino, mnt_ino;
        int net_initial, user_initial, mnt_initial; /* 1, 0 or -errno */
        int mnt_owner_initial; /* the mount namespace's owning user namespace is the initial one */
} requester;

int requester_find(key_serial_t target, requester *ret);
/* Test seam (--test-requester-pid-file, with --test-user-prefix only): the requester's pid
 * is read from this file instead of from /proc/keys, then checked like any other. */
extern const char *requester_test_pid_file;
/* The requester as a libnsid process (its namespaces, a worker in them): 0, or -errno when
 * it was not found or has exited. */
int requester_proc(requester *r);
void requester_done(requester *r);
/* "pid 123 (comm) net:[...] user:[...] mnt:[...]" or "requester unknown (reason)" */
const char *requester_describe(const requester *r, int find_error, char *buf, size_t size);

/* Reject a key under construction (request_key() then fails with `error`); logs failures. */
int key_reject(key_serial_t key, unsigned timeout, int error);
/* Set the timeout (while we still hold the authority), then instantiate. -errno. */
int key_answer(key_serial_t key, const void *payload, size_t len, unsigned timeout);

/* Reject key with `error` (negative timeout neg_timeout) and exit 1 if the helper is still
 * running after `seconds` (SIGALRM). */
void watchdog_arm(key_serial_t key, unsigned seconds, unsigned neg_timeout, int error);
#define IDMAP_MAX_SECONDS 20u /* whole id_resolver upcall */

/* The fast path through nsid-idmapd (host context only). 0 with *ret filled (an answer or
 * a negative one), or -errno: daemon absent, slow, failing or answering garbage. */
#define IDMAP_DAEMON_TIMEOUT_MS 100u
/* The bound of "route": the daemon may have to attach the requester's namespace first (a
 * thread, an rpc_pipefs mount), and a lookup it cannot hand over is answered by a worker in
 * the requester's files, which costs more than waiting: at least 2 s, --daemon-timeout if
 * longer. */
#define IDMAP_ROUTE_TIMEOUT_MS 2000u
typedef struct fastpath_answer {
        bool negative;
        bool is_name;
        bool cached;
        uint32_t id;
        uint32_t ttl;
        char name[128];
} fastpath_answer;
struct nsid_idmap_keydesc;
/* In two steps: fastpath_start() sends the lookup (0, or -errno with nothing to finish;
 * -ECANCELED when timeout_ms is 0: the fast path is off), fastpath_finish() waits for the
 * reply until timeout_ms after the send and closes the connection; fastpath_cancel() closes
 * it unread. */
typedef struct fastpath_call {
        int fd;
        uint64_t deadline_ms;
        const struct nsid_idmap_keydesc *kd;
} fastpath_call;
/* pid 0: the host's context; otherwise that process's network namespace's. */
int fastpath_start(const char *socket_path, unsigned timeout_ms,
                   const struct nsid_idmap_keydesc *kd, pid_t pid, fastpath_call *ret);
int fastpath_finish(fastpath_call *c, fastpath_answer *ret);
void fastpath_cancel(fastpath_call *c);
/* "route TARGET" (nsid/ctlproto.h): the number of idmap pipes nsid-idmapd holds open in the
 * network namespace of pid (0: the host's), after attaching it if it had not; -errno when
 * there is no daemon or no usable reply within timeout_ms. */
int fastpath_route(const char *socket_path, unsigned timeout_ms, pid_t pid);

/* Privileges: caps_keep() of the shared layer (shared/caps.h), without its flags: this
 * program never execs, so the bounding set stays. */
#include "caps.h"

/* The three modes. Each returns the exit status. */
int idmap_upcall(const idmap_opts *o, const char *serial, const char *desc);
int dns_upcall(const idmap_opts *o, const char *serial);
int idmap_admin_list(const idmap_opts *o);
int idmap_admin_clear(const idmap_opts *o);
int idmap_admin_invalidate(const idmap_opts *o, const char *name, bool uid, bool gid);
int idmap_admin_domain(const idmap_opts *o);

#endif
