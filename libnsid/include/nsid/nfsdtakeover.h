/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_NFSDTAKEOVER_H
#define NSID_NFSDTAKEOVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * knfsd's client-id tracepoints (the nfsd trace system), read as they happen and turned into
 * what an administrator asks: which client took an owner string's record from which, and
 * when (nsid_nfsd_takeovers(3)). A snapshot of /proc/fs/nfsd/clients between two takeovers
 * shows one client; the tracepoints show each one.
 *
 * The events carry less than that question needs: nfsd_clid_verf_mismatch names the record
 * being replaced (its client id) and the address asking, not the owner string; the record
 * confirmed afterwards (nfsd_clid_confirmed) carries only its client id. So this keeps a map
 * of client id -> (owner string, address), filled from the clients' info files at the start,
 * from the events that carry both (nfsd_clid_fresh, nfsd_clid_confirmed_r), and from the info
 * file of a newly confirmed record, which nsid_nfsd_takeovers_feed() asks the caller to read.
 *
 * Reading tracefs is the caller's (nsidctl watch --server): nothing here reads a file, prints
 * or exits. Owner strings are client-chosen bytes; they are handed back raw and escaped
 * (printable ASCII, everything else as \xHH).
 */

typedef struct nsid_nfsd_takeovers nsid_nfsd_takeovers;

typedef enum nsid_nfsd_event_kind {
        NSID_NFSD_EVENT_FRESH,         /* nfsd_clid_fresh: a new record (name, address) */
        NSID_NFSD_EVENT_CONFIRMED_R,   /* nfsd_clid_confirmed_r: a client seen again (name, address) */
        NSID_NFSD_EVENT_CONFIRMED,     /* nfsd_clid_confirmed: a record confirmed (client id only) */
        NSID_NFSD_EVENT_VERF_MISMATCH, /* nfsd_clid_verf_mismatch: the holder's record, the
                                        * address asking with another verifier */
        NSID_NFSD_EVENT_CRED_MISMATCH, /* nfsd_clid_cred_mismatch: asked with other credentials:
                                        * refused (NFS4ERR_CLID_INUSE) */
        NSID_NFSD_EVENT_REPLACED,      /* nfsd_clid_replaced: the record expired for its successor */
        NSID_NFSD_EVENT_GONE,          /* nfsd_clid_destroyed, _expire_unconf, _admin_expired,
                                        * _purged: the record is no more */
        _NSID_NFSD_EVENT_KIND_MAX,
} nsid_nfsd_event_kind;

typedef struct nsid_nfsd_event {
        nsid_nfsd_event_kind kind;
        uint64_t clientid; /* cl_boot << 32 | cl_id */
        /* FRESH, CONFIRMED_R: the owner string (the trace's bytes; a trailing NUL is not part) */
        const uint8_t *name;
        size_t name_len;
        /* FRESH, CONFIRMED_R: the client's address; *_MISMATCH: the requester's. NULL: none */
        const struct sockaddr *address;
        size_t address_len;
        uint64_t time_ns; /* the trace's timestamp, handed back in changes */
} nsid_nfsd_event;

typedef enum nsid_nfsd_change_kind {
        /* another client (another address, or the one the holder took it from) took the
         * owner string's record: lease stealing */
        NSID_NFSD_CHANGE_TAKEOVER,
        /* a new verifier from the holder's own IP address: a client restart */
        NSID_NFSD_CHANGE_RESTART,
        /* a record replaced whose holder is not known (it predates the watch and was gone
         * before its info file was read), or replaced without a traced requester */
        NSID_NFSD_CHANGE_REPLACED,
        /* a client asked for a record in use with other credentials and was refused */
        NSID_NFSD_CHANGE_REFUSED,
        _NSID_NFSD_CHANGE_KIND_MAX,
} nsid_nfsd_change_kind;

/* The longest owner string (NFS4_OPAQUE_LIMIT) and its escaped form. */
#define NSID_NFSD_OWNER_MAX 1024
#define NSID_NFSD_OWNER_ESCAPED_MAX (NSID_NFSD_OWNER_MAX * 4 + 1)
/* "[ipv6]:port" */
#define NSID_NFSD_ADDRESS_MAX 64

typedef struct nsid_nfsd_change {
        nsid_nfsd_change_kind kind;
        uint64_t time_ns;
        uint64_t clientid; /* the record replaced or asked for */
        /* the owner string: raw (owner_len 0 when not known) and escaped ("" when not known) */
        const uint8_t *owner;
        size_t owner_len;
        const char *owner_escaped;
        const char *from; /* the holder's address, "ip:port" / "[ip6]:port"; "" not known */
        const char *to;   /* the requester's address; "" not known */
} nsid_nfsd_change;

/* What nsid_nfsd_takeovers_feed() returns besides 0 and -errno. */
#define NSID_NFSD_TAKEOVERS_CHANGE 1    /* *ret is filled in (valid until the next call) */
#define NSID_NFSD_TAKEOVERS_WANT_INFO 2 /* read that client id's info file, pass it to learn */

/* At most this many records are followed; more are counted (get_untracked) and ignored. */
#define NSID_NFSD_TAKEOVERS_MAX_CLIENTS 262144

NSID_API_WARN_UNUSED int nsid_nfsd_takeovers_new(nsid_nfsd_takeovers **ret);
nsid_nfsd_takeovers *nsid_nfsd_takeovers_free(nsid_nfsd_takeovers *t);

/* Learn a record from the text of its info file (/proc/fs/nfsd/clients/<n>/info; size bytes,
 * need not be NUL-terminated). 0, -EBADMSG when it does not parse (or has no client id),
 * -ENOMEM, -E2BIG when NSID_NFSD_TAKEOVERS_MAX_CLIENTS are followed. */
NSID_API_WARN_UNUSED int nsid_nfsd_takeovers_learn_info(nsid_nfsd_takeovers *t,
                                                        const char *data, size_t size);

/* One event, in the order the trace gives them. Returns NSID_NFSD_TAKEOVERS_CHANGE with *ret
 * filled in, NSID_NFSD_TAKEOVERS_WANT_INFO for a confirmed record not yet known, 0, or
 * -EINVAL (a malformed event), -ENOMEM. */
NSID_API_WARN_UNUSED int nsid_nfsd_takeovers_feed(nsid_nfsd_takeovers *t,
                                                  const nsid_nfsd_event *e,
                                                  nsid_nfsd_change *ret);

/* Records followed now; records not followed because of the bound. */
size_t nsid_nfsd_takeovers_get_clients(const nsid_nfsd_takeovers *t);
uint64_t nsid_nfsd_takeovers_get_untracked(const nsid_nfsd_takeovers *t);

/* "takeover", "restart", "replaced", "refused"; NULL if invalid */
const char *nsid_nfsd_change_kind_to_string(nsid_nfsd_change_kind k);
/* A sockaddr as "ip:port" ("[ip6]:port"), as the kernel's %pISpc prints it. -EAFNOSUPPORT,
 * -EINVAL when too short, -ENOBUFS. */
NSID_API_WARN_UNUSED int nsid_nfsd_format_address(const struct sockaddr *sa, size_t len,
                                                  char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
