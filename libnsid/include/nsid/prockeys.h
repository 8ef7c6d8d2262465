/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_PROCKEYS_H
#define NSID_PROCKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * /proc/keys and the .request_key_auth description it shows (prockeys.c): text any user's
 * key description can put lines into, parsed strictly.
 */

/*
 * /proc/keys lines, as proc_keys_show() prints them:
 *   "%08x %c%c%c%c%c%c%c %5d %4s %08x %5d %5d %-9.9s <description>"
 * i.e. serial (hex), 7 flag characters, usage count, expiry ("perm", "expd", or a number
 * with a unit s/m/h/d/w), permissions (hex), uid, gid, the key type padded or TRUNCATED to
 * 9 characters (".request_key_auth" reads ".request_"), one blank, then the type's own
 * description (to the end of the line, newline excluded).
 */
typedef struct nsid_proc_keys_entry {
        int32_t serial;
        char flags[8];
        uint32_t usage;
        char expiry[16];
        uint32_t perm;
        uint32_t uid;
        uint32_t gid;
        char type[10]; /* as printed: at most 9 characters, padding removed */
        const char *description; /* points into the parsed text, not NUL-terminated */
        size_t description_len;
} nsid_proc_keys_entry;

/* Parse one line (len bytes, without or with its trailing '\n'). -EINVAL if malformed. */
NSID_API_WARN_UNUSED int nsid_proc_keys_parse_line(const char *line, size_t len,
                                                   nsid_proc_keys_entry *ret);
/* Find the line of one key in the whole text of /proc/keys. Malformed lines are skipped.
 * -ENOENT when absent, -ENOTUNIQ when the serial heads more than one line (descriptions are
 * printed raw: a description with a newline can forge a line). */
NSID_API_WARN_UNUSED int nsid_proc_keys_find(const char *text, size_t size, int32_t serial,
                                             nsid_proc_keys_entry *ret);
/* The type and description of one key in the whole text of /proc/keys, for a caller that
 * needs nothing else (nsid-idmap, at every upcall): the one line that starts with the
 * serial ("%08x "), its flags and the five fields after them only counted, not converted.
 * -ENOENT when no line starts with the serial, -ENOTUNIQ when more than one does (even a
 * malformed one: a forged line), -EINVAL when that line is malformed before its
 * description. When this and nsid_proc_keys_find() both succeed, they give the same type
 * and description. ret_type gets the type as printed (at most 9 characters, NUL-terminated);
 * *ret_description points into text. */
NSID_API_WARN_UNUSED int nsid_proc_keys_find_brief(const char *text, size_t size,
                                                   int32_t serial, char ret_type[10],
                                                   const char **ret_description,
                                                   size_t *ret_description_len);

/*
 * The description a .request_key_auth key shows in /proc/keys (request_key_auth_describe):
 * "key:<target serial in lower-case hex, no padding> pid:<pid> ci:<callout length>".
 * Strict: exactly these three fields, single blanks, no leading zeros.
 */
NSID_API_WARN_UNUSED int nsid_reqkey_auth_parse(const char *desc, size_t len,
                                                int32_t *ret_target, pid_t *ret_pid,
                                                size_t *ret_callout_len);

#ifdef __cplusplus
}
#endif
#endif
