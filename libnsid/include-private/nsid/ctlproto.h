/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_CTLPROTO_H
#define NSID_CTLPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>
#include <nsid/keyring.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The nsid-idmapd control socket protocol (NSID_RUN_DIR/idmapd.sock, SOCK_STREAM, root
 * only). One request line, one reply line, any number of times per connection. Fields are
 * separated by one blank; a field that contains a blank, a backslash or a control byte is
 * escaped as "\ooo" (octal, like the knfsd channels: nsid/nfsdchan.h).
 *
 * Requests (at most NSID_CTL_LINE_MAX bytes with the '\n'):
 *   status                          per-namespace state and statistics (JSON)
 *   metrics                         totals per context, forgotten namespaces included, that
 *                                   never go down while the daemon runs (JSON; nsidctl
 *                                   metrics prints them for Prometheus)
 *   flush [TARGET]                  drop cached answers (all namespaces by default)
 *   lookup TARGET KIND VALUE [VIEW] answer like the kernel's upcall would be answered
 *   register PID                    (re)discover PID's network namespace now
 *   route TARGET                    whether the daemon answers that namespace's idmap pipes
 *                                   (it attaches the namespace first when it had not): a
 *                                   request-key helper hands the lookup to the pipe when so
 * TARGET: "host", "pid:<pid>" (the netns of that process), "netns:<inode>", "all" (flush).
 * KIND:   "uid" or "gid" (VALUE is an owner name "user@domain": answer an id), "user" or
 *         "group" (VALUE is an id: answer "name@domain"), as in id_resolver key descriptions.
 * VIEW:   "host-ids" (ids as the initial user namespace sees them: what request-key keys
 *         carry) or "ns-ids" (ids of the namespace's own user namespace); default: the view
 *         the kernel uses for that netns's pipes.
 *
 * Replies:
 *   ok [FIELD...]                   status, metrics: one JSON object; flush: the number of entries
 *                                   dropped; lookup: VALUE TTL SOURCE ("cache" or "resolved");
 *                                   route: the number of the namespace's idmap pipes it
 *                                   holds open (0: it does not serve them)
 *   negative TTL                    lookup: no such name or id (cache the failure TTL s)
 *   error ERRNO MESSAGE             ERRNO a positive errno number, MESSAGE escaped
 * A reply is one line too, status's JSON included, at most NSID_CTL_REPLY_MAX bytes with the
 * '\n' (the daemon closes a connection whose replies queue up beyond that).
 */

#define NSID_CTL_LINE_MAX 4096u
#define NSID_CTL_REPLY_MAX (8u * 1024u * 1024u)
#define NSID_CTL_SOCKET_NAME "idmapd.sock"
#define NSID_CTL_VALUE_MAX 128u /* names below IDMAP_NAMESZ, with the NUL */

typedef enum nsid_ctl_command {
        NSID_CTL_STATUS,
        NSID_CTL_FLUSH,
        NSID_CTL_LOOKUP,
        NSID_CTL_REGISTER,
        NSID_CTL_ROUTE,
        NSID_CTL_METRICS,
        _NSID_CTL_COMMAND_MAX,
} nsid_ctl_command;

typedef enum nsid_ctl_target {
        NSID_CTL_TARGET_ALL,
        NSID_CTL_TARGET_HOST,
        NSID_CTL_TARGET_PID,
        NSID_CTL_TARGET_NETNS,
        _NSID_CTL_TARGET_MAX,
} nsid_ctl_target;

typedef enum nsid_ctl_view {
        NSID_CTL_VIEW_DEFAULT,
        NSID_CTL_VIEW_HOST_IDS,
        NSID_CTL_VIEW_NS_IDS,
        _NSID_CTL_VIEW_MAX,
} nsid_ctl_view;

typedef struct nsid_ctl_request {
        nsid_ctl_command command;
        nsid_ctl_target target;
        pid_t pid;                    /* TARGET_PID, REGISTER */
        uint64_t netns_ino;           /* TARGET_NETNS */
        nsid_idmap_key_kind kind;     /* LOOKUP */
        uint32_t id;                  /* LOOKUP of KEY_USER / KEY_GROUP */
        char name[NSID_CTL_VALUE_MAX]; /* LOOKUP of KEY_UID / KEY_GID */
        nsid_ctl_view view;
} nsid_ctl_request;

typedef enum nsid_ctl_reply_kind {
        NSID_CTL_REPLY_OK,
        NSID_CTL_REPLY_NEGATIVE,
        NSID_CTL_REPLY_ERROR,
} nsid_ctl_reply_kind;

typedef struct nsid_ctl_reply {
        nsid_ctl_reply_kind kind;
        int error;               /* REPLY_ERROR: positive errno */
        char message[256];       /* REPLY_ERROR: unescaped, truncated */
        uint32_t ttl;            /* REPLY_NEGATIVE, and lookup answers */
        const char *rest;        /* REPLY_OK: everything after "ok " (not NUL-terminated) */
        size_t rest_len;
} nsid_ctl_reply;

/* Parse one request line (trailing '\n' optional). -EINVAL for anything malformed,
 * -EOPNOTSUPP for an unknown command, -ENAMETOOLONG for a value of 128 bytes or more. */
NSID_API_WARN_UNUSED int nsid_ctl_request_parse(const char *line, size_t len,
                                                nsid_ctl_request *ret);
/* Format a request (with '\n') into buf; returns its length or -EINVAL/-ENOBUFS. */
NSID_API_WARN_UNUSED int nsid_ctl_request_format(const nsid_ctl_request *req, char *buf,
                                                 size_t size);
/* Parse a reply line (trailing '\n' optional). -EINVAL if malformed. */
NSID_API_WARN_UNUSED int nsid_ctl_reply_parse(const char *line, size_t len,
                                              nsid_ctl_reply *ret);
/* Parse the fields of a lookup "ok" reply: VALUE (unescaped, < NSID_CTL_VALUE_MAX), TTL and
 * whether it came from the cache. */
NSID_API_WARN_UNUSED int nsid_ctl_lookup_reply_parse(const nsid_ctl_reply *reply,
                                                     char ret_value[NSID_CTL_VALUE_MAX],
                                                     uint32_t *ret_ttl, bool *ret_cached);

/*
 * Client: connect to the control socket at socket_path, send request (len bytes ending in
 * '\n': one line, or several pipelined) and read the first reply line, all within
 * timeout_ms (> 0) in total. Nothing blocks: connect, send and receive are bounded.
 * The reply line, its '\n' replaced by a NUL, goes into buf (size bytes, the caller's) if
 * buf is not NULL; else into a malloc'ed buffer of at most size bytes that grows with the
 * reply, returned in *ret_reply (free() it). With buf, ret_reply may be NULL or receives buf.
 * A line must fit with its '\n' in size - 1 bytes: lookups need NSID_CTL_LINE_MAX + 1, status
 * NSID_CTL_REPLY_MAX + 1. Bytes after the first line are dropped; the connection is closed.
 * Returns the reply line's length (without the '\n'), or -ENAMETOOLONG (socket_path too long
 * for sun_path), -ENOENT or -ECONNREFUSED (no daemon listening), -EAGAIN (its listen queue is
 * full), -ETIMEDOUT, -EMSGSIZE (reply line too long), -ECONNRESET (the daemon closed before a
 * whole line), -ENOMEM, -EINVAL, or another negative errno of socket(2), send(2), recv(2).
 * Parse the line with nsid_ctl_reply_parse().
 */
NSID_API_WARN_UNUSED int nsid_ctl_roundtrip(const char *socket_path, const char *request,
                                            size_t len, unsigned timeout_ms, char *buf,
                                            size_t size, char **ret_reply);

/*
 * The same round trip in two halves, for a client that has other work to do while the
 * daemon answers. nsid_ctl_send() connects to socket_path and sends request (as above),
 * within timeout_ms; it returns the connected socket (close it when done) or the errors of
 * nsid_ctl_roundtrip() before its receive. nsid_ctl_receive() reads the first reply line from
 * that socket within timeout_ms, into buf or *ret_reply as nsid_ctl_roundtrip() does, and
 * returns its length or the same errors; it does not close fd.
 */
NSID_API_WARN_UNUSED int nsid_ctl_send(const char *socket_path, const char *request,
                                       size_t len, unsigned timeout_ms);
NSID_API_WARN_UNUSED int nsid_ctl_receive(int fd, unsigned timeout_ms, char *buf, size_t size,
                                          char **ret_reply);
/*
 * nsid_ctl_send() itself in two steps, for a client that would rather not build its request
 * when no daemon listens: nsid_ctl_connect() returns the connected socket or its errors
 * (-ENOENT, -ECONNREFUSED: no daemon; -EAGAIN, -ENAMETOOLONG, -EINVAL...) at once, and
 * nsid_ctl_write() sends request on it within timeout_ms (0, or -ETIMEDOUT or a send(2)
 * error; a daemon that refused the client and closed is not an error here: its reason is
 * read by nsid_ctl_receive()).
 */
NSID_API_WARN_UNUSED int nsid_ctl_connect(const char *socket_path);
NSID_API_WARN_UNUSED int nsid_ctl_write(int fd, const char *request, size_t len,
                                        unsigned timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
