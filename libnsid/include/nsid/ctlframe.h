/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_CTLFRAME_H
#define NSID_CTLFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>
#include <nsid/ctlproto.h>
#include <nsid/keyring.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The request-key helper's lookup on nsid-idmapd's control socket, as fixed-size frames
 * instead of a text line (nsid/ctlproto.h): what nsid-idmap sends at every upcall.
 *
 * A client sends one request frame; its first byte is NUL, which no request line starts
 * with, so the daemon tells a frame from a line by it. The daemon answers with one reply
 * frame. The lookup is the text protocol's "lookup host KIND VALUE host-ids": the host's
 * context, ids as the initial user namespace sees them (what request-key keys carry). Both
 * ends run on one host: the integers are in its byte order. A frame the daemon cannot
 * accept gets a reply frame with status EINVAL, and the connection is closed.
 *
 * Why frames: every upcall execs the helper afresh, and where exec'd code is translated
 * afresh at every exec (qemu TCG, doc/benchmarks.md) the text line's formatting, escaping and
 * parsing is a measurable part of an upcall. A frame is filled and checked field by field.
 */

#define NSID_CTL_FRAME_MAGIC "\0NL1" /* 4 bytes: NUL, 'N', 'L', '1' */
#define NSID_CTL_FRAME_CACHED 1u     /* reply flags: the answer came from the cache */

typedef struct nsid_ctl_frame_request {
        char magic[4];                 /* NSID_CTL_FRAME_MAGIC */
        uint32_t kind;                 /* nsid_idmap_key_kind */
        uint32_t id;                   /* KEY_USER, KEY_GROUP: the id; else 0 */
        uint32_t flags;                /* 0 */
        char name[NSID_CTL_VALUE_MAX]; /* KEY_UID, KEY_GID: the name, NUL-padded; else 0 */
} nsid_ctl_frame_request;

typedef struct nsid_ctl_frame_reply {
        char magic[4];                  /* NSID_CTL_FRAME_MAGIC */
        uint32_t status;                /* 0: an answer; ENOENT: no mapping; else an errno */
        uint32_t ttl;                   /* seconds to cache the answer or its absence */
        uint32_t flags;                 /* NSID_CTL_FRAME_CACHED */
        uint32_t id;                    /* the answer of KEY_UID, KEY_GID; else 0 */
        char value[NSID_CTL_VALUE_MAX]; /* the answer of KEY_USER, KEY_GROUP, NUL-padded */
} nsid_ctl_frame_reply;

/* Fill a request frame for KIND: id for KEY_USER and KEY_GROUP, name (len bytes, no NUL
 * needed) for KEY_UID and KEY_GID. -ENAMETOOLONG for a name of NSID_CTL_VALUE_MAX bytes or
 * more, -EINVAL for an unknown kind, an empty name or the id 4294967295. */
NSID_API_WARN_UNUSED int nsid_ctl_frame_request_init(nsid_ctl_frame_request *ret,
                                                     nsid_idmap_key_kind kind, uint32_t id,
                                                     const char *name, size_t len);

/* Check a request frame received by the daemon (len bytes) and return it as the text
 * protocol's request (command LOOKUP, target HOST, view HOST_IDS). -EBADMSG unless len is
 * the frame's size and the magic matches; -EINVAL for anything else a client could not
 * have sent: flags, an unknown kind, a name not NUL-terminated, not NUL-padded or failing
 * nsid_idmap_name_check(), an id 4294967295, a name with an id kind or an id with a name. */
NSID_API_WARN_UNUSED int nsid_ctl_frame_request_parse(const void *buf, size_t len,
                                                      nsid_ctl_request *ret);

/* Fill the daemon's reply frame: status 0 with the answer (id for KEY_UID and KEY_GID, name
 * for KEY_USER and KEY_GROUP), ENOENT (no mapping) or another positive errno, with ttl and
 * cached. -EINVAL when the answer cannot be sent (a name not fitting, failing
 * nsid_idmap_name_check(), the id 4294967295, a status above 4095). */
NSID_API_WARN_UNUSED int nsid_ctl_frame_reply_init(nsid_ctl_frame_reply *ret,
                                                   nsid_idmap_key_kind kind, uint32_t status,
                                                   uint32_t id, const char *name, uint32_t ttl,
                                                   bool cached);

/* Check the reply frame to a request of KIND as strictly as the daemon checks a request:
 * len is the frame's size, the magic matches, flags are known, the status is at most
 * 4095; an answer (status 0) is an id other than 4294967295 with an empty value (KEY_UID,
 * KEY_GID) or a NUL-terminated, NUL-padded value passing nsid_idmap_name_check() with id 0
 * (KEY_USER, KEY_GROUP); anything but an answer has neither. 0 if so, else -EBADMSG. */
NSID_API_WARN_UNUSED int nsid_ctl_frame_reply_check(const void *buf, size_t len,
                                                    nsid_idmap_key_kind kind);

#ifdef __cplusplus
}
#endif
#endif
