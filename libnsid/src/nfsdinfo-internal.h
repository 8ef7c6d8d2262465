/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One knfsd client info file (/proc/fs/nfsd/clients/<n>/info), parsed. Internal. */
#ifndef NSID_NFSDINFO_INTERNAL_H
#define NSID_NFSDINFO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NFS4_OPAQUE_LIMIT: the longest owner string a client may send */
#define NFSD_OWNER_MAX 1024
/* INET6_ADDRSTRLEN */
#define NFSD_HOST_MAX 46

typedef enum nfsd_status {
        NFSD_STATUS_UNKNOWN,
        NFSD_STATUS_CONFIRMED,
        NFSD_STATUS_UNCONFIRMED,
        NFSD_STATUS_COURTESY,
        NFSD_STATUS_EXPIRABLE,
} nfsd_status;

typedef struct nfsd_info {
        uint64_t clientid;
        bool have_clientid;
        nfsd_status status;
        int minor; /* -1: not given */
        char host[NFSD_HOST_MAX]; /* the client's IP address, normalized, no port */
        int port;                 /* its port, -1 when the address has none */
        size_t name_len;
        uint8_t name[NFSD_OWNER_MAX]; /* decoded owner string (client-chosen bytes) */
} nfsd_info;

/*
 * Parse the text of an info file, as client_info_show() prints it on 6.1 and 6.12:
 *     clientid: 0x<hex>
 *     address: "<ip>:<port>"        ("[<ipv6>]:<port>")
 *     status: confirmed|unconfirmed|courtesy|expirable
 *     seconds from last renew: <n>  (or "time since last renew: h:mm:ss")
 *     name: "<owner string, seq_escape_mem: \xHH for anything not printable ASCII, '"', '\'>"
 *     minor version: <n>
 *     ... (Implementation *, callback *, admin-revoked states, session slots: ignored)
 * name and address are required, each at most once. Returns 0 or -EBADMSG.
 */
int nfsd_info_parse(const char *data, size_t size, nfsd_info *ret);

/* Does a status count as confirmed (confirmed, courtesy, expirable)? */
bool nfsd_status_confirmed(nfsd_status s);

/* Linux owner strings: 1 carries a uniquifier, 0 does not, -1 not a Linux client's string
 * (no judgement possible). */
int nfsd_owner_has_uniquifier(const uint8_t *name, size_t len);


#endif
