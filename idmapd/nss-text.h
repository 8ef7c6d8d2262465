/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The container text nsid-idmapd's name-service path reads, and what nsid-nss-query prints:
 * strict parsers, no I/O (fuzz targets: tests/fuzz/fuzz-nsswitch.c, fuzz-nss-reply.c).
 */
#ifndef NSID_IDMAPD_NSS_TEXT_H
#define NSID_IDMAPD_NSS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many services per database are kept; their names at most this long. */
#define NSS_SOURCES_MAX 8u
#define NSS_SOURCE_NAME_MAX 32u

typedef struct nss_sources {
        unsigned n;
        char name[NSS_SOURCES_MAX][NSS_SOURCE_NAME_MAX];
} nss_sources;

/* The services nsswitch.conf names for database db ("passwd", "group"), in order, as glibc
 * reads them: the first line for db counts (glibc ignores later ones), `[action]` items
 * skipped, `#` to end of line a comment. A file without a line for db gives glibc's
 * default, "files". Services whose names are not [A-Za-z0-9_-]+ or too long make the
 * database "unknown" (-EINVAL): the caller then takes the name-service path, never the
 * files-only one. 0 or -EINVAL; -E2BIG past NSS_SOURCES_MAX services. */
int nss_sources_parse(const char *text, size_t size, const char *db, nss_sources *ret);

/* 1 when every service is "files", or "systemd" where systemd_empty says nss-systemd has
 * nothing to add (the fast path answers), 0 otherwise. */
bool nss_sources_files_only(const nss_sources *s, bool systemd_empty);

/* "files systemd" (at most len bytes, always terminated). */
void nss_sources_format(const nss_sources *s, char *buf, size_t len);

/* Whether a container's idmapd.conf asks libnfsidmap for anything the files-only path does
 * not do: a [Translation] Method or GSS-Methods other than nsswitch, a [Static] or [REGEX] or
 * [UMICH_SCHEMA] section, [General] Local-Realms, No-Strip or Reformat-Group. 1 yes, 0 no. */
bool nss_idmapd_conf_needs_libnfsidmap(const char *text, size_t size);

/* Canonical decimal (digits only, no leading zero but "0") of at most max: 0 or -EBADMSG. */
int nss_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *ret);

/* What nsid-nss-query printed. */
typedef struct nss_reply {
        enum { NSS_REPLY_ID, NSS_REPLY_NAME, NSS_REPLY_NONE, NSS_REPLY_ERR } kind;
        bool via_libnfsidmap;
        uint32_t id;     /* NSS_REPLY_ID */
        int err;         /* NSS_REPLY_ERR: 1..4095 */
        char name[128];  /* NSS_REPLY_NAME: OWNER@DOMAIN, printable, no blanks */
} nss_reply;

/* Exactly "via libnfsidmap|nss\n" then one of "id N\n", "name OWNER@DOMAIN\n", "none\n",
 * "err N\n", and nothing else (no NUL, no second answer). want_id: the lookup was name->id
 * (only "id", "none", "err" fit), else id->name ("name", "none", "err"). The id is at
 * most 4294967294 (-1 is no id); the name a valid owner: 1..127 bytes, an '@' neither
 * first nor last, no control byte, blank or DEL. 0 or -EBADMSG. */
int nss_reply_parse(const char *buf, size_t size, bool want_id, nss_reply *ret);

#endif
