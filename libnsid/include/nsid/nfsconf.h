/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_NFSCONF_H
#define NSID_NFSCONF_H

#include <stddef.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * idmapd.conf(5) read as libnfsidmap reads it: the configuration reader of nfs-utils
 * (support/nfs/conffile.c, as Debian 12's nfs-utils 2.6.2 ships it), which libnfsidmap,
 * rpc.idmapd, nfsidmap and nfsconf share. A container's idmapd.conf gives the answer
 * rpc.idmapd run inside it would take; tests/unit/test-conf-nfsutils.c compares every rule
 * with the real library on fixed and generated texts.
 *
 * The rules, all of them libnfsidmap's:
 *  - the text ends at its first NUL byte; a last line without its newline is ignored;
 *  - a backslash right before a newline joins the next line (both become blanks);
 *  - leading white space is skipped; '#' or ';' first: a comment;
 *  - "[name]" starts a section (everything after ']' ignored; names compare
 *    case-insensitively); "[name \"arg\"]" a subsection, which a plain lookup never sees;
 *    a '[' line without ']' leaves every line up to the next header in no section, and lines
 *    in no section are ignored;
 *  - "tag = value": the first '='; blanks around both removed; a value starting with '"' or
 *    '\'' ends at the same quote (what follows ignored; without it the line is ignored); any
 *    other value is cut at the first '#', then at the first ';', trailing white space
 *    trimmed; an empty value sets nothing; the last assignment wins, and it replaces the
 *    tag's value in every subsection of the section too;
 *  - a value "$name" stands for name's value in the [environment] section.
 * Two things libnfsidmap does are not done, because they would read what this text does
 * not hold: "include = FILE" lines are skipped (not followed), and "$name" is not looked up
 * in the process environment first (the environment of a container's rpc.idmapd is not
 * the caller's). A "$name" chain longer than 16 (libnfsidmap loops forever on a cycle) is
 * -ELOOP.
 *
 * Look up section/tag (case-insensitive) in size bytes of text. On success *ret_value is a
 * malloc'ed copy. -ENOENT when unset, -ELOOP, -EINVAL for bad arguments, -ENOMEM.
 */
NSID_API_WARN_UNUSED int nsid_nfsconf_get(const char *text, size_t size, const char *section,
                                          const char *tag, char **ret_value);

#ifdef __cplusplus
}
#endif

#endif
