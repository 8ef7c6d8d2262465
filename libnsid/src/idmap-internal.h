/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal entry points of idmap.c, for tests and fuzzers. */
#ifndef NSID_IDMAP_INTERNAL_H
#define NSID_IDMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "nsid/idmap.h"

/* nsid_idmap_parse() with a given overflow id instead of the sysctl's (no file access). */
int idmap_parse_with_overflow(nsid_idmap_kind kind, const char *text, size_t size,
                              uint32_t overflow_id, nsid_idmap **ret);

/* The overflow id of the running kernel for this kind (65534 when unreadable). */
uint32_t idmap_read_overflow_id(nsid_idmap_kind kind);

#endif
