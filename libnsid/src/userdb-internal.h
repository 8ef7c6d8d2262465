/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal entry points of userdb.c, for tests and fuzzers. */
#ifndef NSID_USERDB_INTERNAL_H
#define NSID_USERDB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Whether s (len bytes, not necessarily NUL-terminated) is a name nsid accepts (rules in
 * nsid/userdb.h). */
bool userdb_name_valid(const char *s, size_t len);

#endif
