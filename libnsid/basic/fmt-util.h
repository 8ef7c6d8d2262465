/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text building without printf: numbers and joined strings for the few lines a short-lived
 * program (the request-key helper, run once per upcall) builds on its fast path, where the
 * printf machinery is the largest code it would run. Internal. */
#ifndef NSID_FMT_UTIL_H
#define NSID_FMT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* v in decimal into buf (at least 21 bytes), NUL-terminated; returns its length. */
size_t fmt_u64(char *buf, uint64_t v);
/* v in lowercase hexadecimal, zero-padded to at least width digits (at most 16), into buf
 * (at least 17 bytes), NUL-terminated; returns its length. */
size_t fmt_hex(char *buf, uint64_t v, unsigned width);
/* The NUL-terminated strings up to a NULL argument, joined into buf (size bytes, NUL
 * included). Returns the length, or -ENOBUFS when they do not fit (buf then holds "" ). */
int fmt_join(char *buf, size_t size, ...) __attribute__((sentinel));

#endif
