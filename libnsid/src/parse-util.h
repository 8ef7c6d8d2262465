/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict number parsing shared by every parser: no sign, no spaces, no trailing garbage,
 * range-checked. Internal. */
#ifndef NSID_PARSE_UTIL_H
#define NSID_PARSE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Decimal digits only (at least one, at most 20), value <= max. -EINVAL for anything else,
 * -ERANGE when too large. */
int parse_u64_max(const char *s, uint64_t max, uint64_t *ret);
int parse_u32(const char *s, uint32_t *ret);
/* The same for a field that is not NUL-terminated: exactly len bytes. */
int parse_u64_n(const char *s, size_t len, uint64_t max, uint64_t *ret);
/* A pid: 1 .. 2^22 (PID_MAX_LIMIT). */
int parse_pid(const char *s, int *ret);

#endif
