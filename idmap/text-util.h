/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmap's two pure text helpers, in a file of their own so that the parsers of worker
 * replies (dns-reply.c, idmap-reply.c) and their fuzz targets link them without the rest of
 * upcall-util.c (logging, keyctl, lazily loaded libraries). */
#ifndef NSID_IDMAP_TEXT_UTIL_H
#define NSID_IDMAP_TEXT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A printable, bounded copy of untrusted text for log lines (non-printable bytes as \xNN,
 * at most 160 bytes shown then "..."). */
const char *log_escape(const char *s, size_t len, char *buf, size_t size);

/* Strict decimal parsing: digits only, no leading zero (except "0"), <= max. */
int parse_uint_strict(const char *s, uint64_t max, uint64_t *ret);

#endif
