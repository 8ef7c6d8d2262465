/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_USERDB_H
#define NSID_USERDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>
#include <nsid/file.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A namespace's user database: its passwd and group files, as the files in the container's
 * root say (no NSS modules, nothing of the container is executed).
 *
 * Parsing (one pass, line by line; the text is container-controlled):
 *  - passwd lines are "name:passwd:uid:gid:gecos:dir:shell" (exactly 7 fields), group lines
 *    "name:passwd:gid:members" (exactly 4 fields). Blanks before the name are skipped, like
 *    glibc's files module does. Lines that are empty, blank or start with '#' are ignored.
 *  - A line is skipped as invalid (and counted) when: it is longer than
 *    NSID_USERDB_LINE_MAX bytes; it contains a NUL byte; it has the wrong number of fields;
 *    its uid or gid is not a plain decimal number (no sign, no blank, no hex) or is
 *    4294967295 ((u32)-1) or more; its name is invalid.
 *  - A valid name is 1 .. NSID_USERDB_NAME_MAX bytes (the kernel's NFS idmap names hold 128
 *    bytes with the NUL), is valid UTF-8 (NFSv4 owner strings are UTF-8; invalid sequences,
 *    overlong forms and surrogates are refused), contains no control byte (0x00-0x1f, 0x7f),
 *    no blank, no ':' (impossible by format), no ',' (the group member separator), no '/'
 *    and no '@' (an NFSv4 owner is "name@domain": a local name with '@' cannot be told
 *    apart from a qualified one), does not start with '+' or '-' (NIS compat entries, which
 *    the files module does not resolve), is not "." or "..", and is not all digits (it would
 *    read as a numeric id).
 *  - A name seen again (with the same or another id) is a duplicate: the first line wins,
 *    like the files module, and the later line is counted. Several names may share one id;
 *    looking up the id gives the first of them.
 *  - After each file one warning names the file and the number of skipped lines (invalid
 *    and duplicate), if any; there is no log line per bad line.
 *
 * Loading from a container reads etc/passwd and etc/group through nsid/file.h (openat2
 * RESOLVE_IN_ROOT, regular files only, at most NSID_USERDB_FILE_MAX bytes each). A missing
 * passwd is an error (-ENOENT); a missing group file gives a database without groups.
 *
 * A database is immutable once created and may be shared between threads; strings it
 * returns live as long as the database. nsid_userdb_refresh() hands out a new database when
 * the files changed instead of changing the old one.
 */

/* Longest accepted line, newline excluded. */
#define NSID_USERDB_LINE_MAX (64u * 1024u)
/* Longest accepted name in bytes (IDMAP_NAMESZ 128 with its NUL). */
#define NSID_USERDB_NAME_MAX 127u
/* Size cap for each of passwd and group when loading (100,000 real-looking entries fit).
 * Memory stays within about 5x the text: a 16 MiB file of 1.1 million tiny lines costs about
 * 72 MiB while parsed and 250 ms; 100,000 ordinary entries (6 MiB) about 20 ms. */
#define NSID_USERDB_FILE_MAX (16u * 1024u * 1024u)

typedef enum nsid_userdb_file {
        NSID_USERDB_PASSWD,
        NSID_USERDB_GROUP,
        _NSID_USERDB_FILE_MAX,
} nsid_userdb_file;

/* What parsing one file gave. */
typedef struct nsid_userdb_counts {
        uint64_t entries;    /* names kept */
        uint64_t invalid;    /* lines skipped as invalid */
        uint64_t duplicates; /* lines skipped because their name came earlier */
} nsid_userdb_counts;

typedef struct nsid_userdb nsid_userdb;

/* Parse passwd and group text (group_text may be NULL: no group file). The texts need not be
 * NUL-terminated; -EFBIG for texts of 4 GiB or more. */
NSID_API_WARN_UNUSED int nsid_userdb_parse(const char *passwd_text, size_t passwd_size,
                                           const char *group_text, size_t group_size,
                                           nsid_userdb **ret);

/* Load etc/passwd and etc/group below a root directory fd (the fd is duplicated and kept for
 * nsid_userdb_refresh()). */
NSID_API_WARN_UNUSED int nsid_userdb_load_root(int rootfd, nsid_userdb **ret);
/* The same from a pinned process's root (/proc/PID/root); the process is kept referenced and
 * refresh fails with -ESRCH once it is gone. */
NSID_API_WARN_UNUSED int nsid_userdb_load_proc(const nsid_proc *p, nsid_userdb **ret);

/*
 * Check whether the files changed since db was loaded: (dev, ino, mtime, size) of passwd and
 * group, and whether group exists. Unchanged: returns 0 and a new reference to db. Changed:
 * reloads both files and returns 1 and the new database (db itself is not modified).
 * -EINVAL for a database made by nsid_userdb_parse(). On failure *ret is untouched.
 */
NSID_API_WARN_UNUSED int nsid_userdb_refresh(nsid_userdb *db, nsid_userdb **ret);

nsid_userdb *nsid_userdb_ref(nsid_userdb *db);
nsid_userdb *nsid_userdb_unref(nsid_userdb *db);

/* Lookups: 0 on success, -ENOENT when there is no such entry (or no group file), -EINVAL
 * for bad arguments. Names returned point into db. ret_gid (the primary group) may be NULL. */
int nsid_userdb_user_by_name(const nsid_userdb *db, const char *name, uint32_t *ret_uid,
                             uint32_t *ret_gid);
int nsid_userdb_user_by_uid(const nsid_userdb *db, uint32_t uid, const char **ret_name,
                            uint32_t *ret_gid);
int nsid_userdb_group_by_name(const nsid_userdb *db, const char *name, uint32_t *ret_gid);
int nsid_userdb_group_by_gid(const nsid_userdb *db, uint32_t gid, const char **ret_name);

/* 1 when the group file was present, 0 when not, -EINVAL for NULL. */
int nsid_userdb_has_groups(const nsid_userdb *db);
/* The parse counts of one file (all zero for a missing group file). */
int nsid_userdb_get_counts(const nsid_userdb *db, nsid_userdb_file which,
                           nsid_userdb_counts *ret);
/* The stat the file had when it was read: -ENOENT for a missing group file, -ENODATA for a
 * database made by nsid_userdb_parse(). */
int nsid_userdb_get_file_stat(const nsid_userdb *db, nsid_userdb_file which,
                              nsid_file_stat *ret);

#ifdef __cplusplus
}
#endif
#endif
