/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_NFSDCHAN_H
#define NSID_NFSDCHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * knfsd's idmap cache channels, per network namespace (fs/nfsd/nfs4idmap.c, sunrpc cache):
 * /proc/net/rpc/nfs4.nametoid/channel and /proc/net/rpc/nfs4.idtoname/channel. One read()
 * returns one request line; one write() is one reply line.
 *
 * Fields are separated by one blank; the kernel escapes '\\', ' ', '\n' and '\t' in a field
 * as a backslash and three octal digits (string_escape_str(ESCAPE_OCTAL)) and sends every
 * other byte raw; it reads replies with qword_get() ("\ooo" with a first digit 0-3, or a
 * whole field "\x<hex>").
 *
 *   nametoid request  "<authname> <user|group> <name>\n"
 *            reply    "<authname> <user|group> <name> <expiry> [<id>]\n"   (no id: negative)
 *   idtoname request  "<authname> <user|group> <id>\n"
 *            reply    "<authname> <user|group> <id> <expiry> [<name>]\n"   (no name: negative)
 *
 * expiry is absolute wall-clock seconds (get_expiry()). The reply's id goes through
 * get_int() (kstrtoint): ids above 2147483647 are written as negative numbers, like nfs-utils'
 * qword_addint, and read back modulo 2^32. authname and name are below IDMAP_NAMESZ (128)
 * bytes after unescaping.
 */

#define NSID_NFSD_NAMESZ 128u
/* Longest line either way: three fields of 127 bytes fully escaped, two numbers, blanks. */
#define NSID_NFSD_LINE_MAX 1664u

typedef enum nsid_nfsd_channel {
        NSID_NFSD_NAMETOID,
        NSID_NFSD_IDTONAME,
        _NSID_NFSD_CHANNEL_MAX,
} nsid_nfsd_channel;

typedef struct nsid_nfsd_request {
        nsid_nfsd_channel channel;
        bool group;                         /* "group" (else "user") */
        char authname[NSID_NFSD_NAMESZ];    /* NUL-terminated, unescaped */
        char name[NSID_NFSD_NAMESZ];        /* NAMETOID: the owner name; IDTONAME: "" */
        uint32_t id;                        /* IDTONAME: the id; NAMETOID: 0 */
} nsid_nfsd_request;

/* A reply as the kernel reads it (for tests, fuzzing and the lab's fake kernel side). */
typedef struct nsid_nfsd_reply {
        nsid_nfsd_request key;   /* authname, type, and the name or id of the request */
        int64_t expiry;
        bool negative;
        uint32_t id;             /* NAMETOID answer */
        char name[NSID_NFSD_NAMESZ]; /* IDTONAME answer */
} nsid_nfsd_reply;

/* "nfs4.nametoid", "nfs4.idtoname"; NULL for an invalid value. */
const char *nsid_nfsd_channel_name(nsid_nfsd_channel ch);

/*
 * Escape len bytes for a channel field: '\\', blanks, control bytes and 0x7f as "\ooo",
 * everything else raw. Writes a NUL-terminated string into buf; returns its length,
 * -ENOBUFS when it does not fit (4*len+1 always fits), -EINVAL for an empty field.
 */
NSID_API_WARN_UNUSED int nsid_qword_escape(const char *s, size_t len, char *buf, size_t size);
/*
 * Unescape one field of exactly len bytes: "\ooo" (first digit 0-3) and nothing else after a
 * backslash; the field must not contain a blank or newline, and the result must not contain
 * a NUL byte. Writes a NUL-terminated string of less than size bytes; returns its length,
 * -EINVAL (malformed), -ENAMETOOLONG (does not fit).
 */
NSID_API_WARN_UNUSED int nsid_qword_unescape(const char *s, size_t len, char *buf, size_t size);

/*
 * Parse one request line of len bytes (the trailing '\n' optional) read from channel ch.
 * Exactly three fields separated by single blanks; type "user" or "group"; authname and
 * name 1..127 bytes unescaped with no NUL; the id plain decimal below 2^32. -EINVAL for
 * anything else, -ENAMETOOLONG for a field of 128 bytes or more.
 *
 * -ENODATA: a nametoid request whose name field is empty ("<authname> <type> \n", the
 * authname and type valid). knfsd sends that for an owner string that starts with a NUL
 * byte (a client chose it; qword_add() stops at the NUL), and it accepts no reply for that
 * key (nametoid_parse() refuses an empty name): there is nothing to answer. It is the only
 * request line knfsd writes that this parser refuses (tests/fuzz/fuzz-nfsd-channel.c).
 */
NSID_API_WARN_UNUSED int nsid_nfsd_request_parse(nsid_nfsd_channel ch, const char *line,
                                                 size_t len, nsid_nfsd_request *ret);

/*
 * Format the reply to req into buf (NUL-terminated, '\n' included): expiry is absolute
 * wall-clock seconds (> 0); negative means "no such name/id" (the id or name is omitted);
 * otherwise the answer is id (NAMETOID, not 4294967295) or name (IDTONAME, 1..127 bytes,
 * no NUL). Returns the line length, -EINVAL for a bad argument or answer, -ENOBUFS when buf
 * is too small (NSID_NFSD_LINE_MAX always suffices).
 */
NSID_API_WARN_UNUSED int nsid_nfsd_reply_format(const nsid_nfsd_request *req, int64_t expiry,
                                                bool negative, uint32_t id, const char *name,
                                                char *buf, size_t size);

/* Parse a reply line like the kernel's nametoid_parse()/idtoname_parse() (stricter: single
 * blanks, decimal numbers only). -EINVAL when the kernel would refuse it. */
NSID_API_WARN_UNUSED int nsid_nfsd_reply_parse(nsid_nfsd_channel ch, const char *line,
                                               size_t len, nsid_nfsd_reply *ret);

/* Format a request line as the kernel does (for tests and the lab's fake kernel side). */
NSID_API_WARN_UNUSED int nsid_nfsd_request_format(const nsid_nfsd_request *req, char *buf,
                                                  size_t size);

#ifdef __cplusplus
}
#endif
#endif
