/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict parsing shared by every parser of untrusted text: numbers with no sign, no spaces,
 * no trailing garbage, range-checked; fields split at single blanks. Internal. */
#ifndef NSID_PARSE_UTIL_H
#define NSID_PARSE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal digits only (at least one, at most 20), value <= max. -EINVAL for anything else,
 * -ERANGE when too large. */
int parse_u64_max(const char *s, uint64_t max, uint64_t *ret);
int parse_u32(const char *s, uint32_t *ret);
/* The same for a field that is not NUL-terminated: exactly len bytes (never reads past len,
 * whatever len is). */
int parse_u64_n(const char *s, size_t len, uint64_t max, uint64_t *ret);
/* parse_u64_n(), and also -EINVAL for a leading zero ("0" itself is fine): the form the
 * kernel prints with %u/%llu, so there is one spelling per value. */
int parse_u64_n_canonical(const char *s, size_t len, uint64_t max, uint64_t *ret);
/* A pid: 1 .. 2^22 (PID_MAX_LIMIT). */
int parse_pid(const char *s, int *ret);
/* parse_u64_max(), and -ERANGE below min: a command-line value within min..max. */
int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* Split a line of len bytes into fields separated by single blanks, at most max of them; one
 * trailing '\n' is dropped. f[i]/fl[i] point into line (not NUL-terminated). Returns the
 * number of fields, or -EINVAL for an empty line, an empty field (a blank at either end or
 * two in a row), more than max fields, or a '\n' or NUL inside. */
int split_fields(const char *line, size_t len, const char **f, size_t *fl, size_t max);

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF; len
 * bytes (NUL is a valid character here: callers check for it themselves). */
bool utf8_valid(const void *s, size_t len);

/* The value of one hex digit (either case), or -1. */
int unhexchar(char c);

/* Escape len bytes for a log line or a report as the kernel's seq_escape_mem() does:
 * printable ASCII as is, but '"', '\\' and everything else as \xHH. out must hold 4 * len + 1
 * bytes. */
void escape_bytes(const void *p, size_t len, char *out);

#endif
