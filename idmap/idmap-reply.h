/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The requester-context worker's reply (idmap-upcall.c), parsed as untrusted: the worker has
 * read and parsed a container's /etc/passwd, /etc/group and /etc/idmapd.conf, so the
 * privileged parent trusts nothing it says beyond these bounds. The parser never logs; the
 * caller logs what the result says.
 *
 * The reply is lines "key=value\n", every line ending with \n, no NUL:
 *   id=<id>          0..4294967294, at most once, and not with name=
 *   name=<name>      a name of at most NSID_IDMAP_KEYDESC_NAME_MAX bytes passing
 *                    nsid_idmap_name_check(), at most once, and not with id=
 *   err=<errno>      1..4095 (the last one counts)
 *   stage=load|lookup  where err= arose (the last one counts; lookup when none came)
 *   nobody=<text>    the nobody name the worker fell back to (for the log)
 *   creds=<text>     what the worker ran with (for the log)
 *   baddomain=<any>  the container's idmapd.conf Domain was invalid (for the log)
 * Any other line, or one of the above with another value, is refused. The last nobody= and
 * creds= count. A reply may say neither id= nor name=: the caller decides what that means.
 */
#ifndef NSID_IDMAP_IDMAP_REPLY_H
#define NSID_IDMAP_IDMAP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/keyring.h>

#define IDMAP_REPLY_NOTE_MAX 256 /* an escaped nobody= or creds= text, with its NUL */

typedef struct idmap_reply {
        bool have;    /* an id= or a name= */
        bool is_name; /* name= (else id=) */
        uint32_t id;  /* < UINT32_MAX */
        char name[NSID_IDMAP_KEYDESC_NAME_MAX + 1];
        int err;         /* 0, or 1..4095 */
        bool stage_load; /* stage=load (else lookup) */
        bool have_nobody, have_creds, baddomain;
        /* escaped (log_escape()): printable, NUL-terminated */
        char nobody[IDMAP_REPLY_NOTE_MAX], creds[IDMAP_REPLY_NOTE_MAX];
} idmap_reply;

/* Parses the size bytes of reply (a NUL after them; cut into lines in place). 0, or -EBADMSG
 * at the first refused line; either way *ret says what the lines before it said (the caller
 * logs their notes, then the refusal). */
int idmap_parse_reply(char *reply, size_t size, idmap_reply *ret);

#endif
