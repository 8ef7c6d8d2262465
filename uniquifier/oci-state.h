/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OCI runtime state JSON a hook receives on stdin (runtime-spec, config.md "hooks" and
 * runtime.md "state"): untrusted input, parsed with json-c under size and depth limits. */
#ifndef NSID_OCI_STATE_H
#define NSID_OCI_STATE_H

#include <stddef.h>
#include <sys/types.h>

#define OCI_STATE_MAX (1024u * 1024u) /* bytes */
#define OCI_STATE_DEPTH 32            /* json-c nesting limit */
#define OCI_ID_MAX 1024

typedef struct oci_state {
        char *id;         /* container id: 1..1024 printable ASCII */
        pid_t pid;        /* > 1 */
        char *status;     /* may be NULL */
        char *bundle;     /* may be NULL */
        char *nsid_key;   /* annotation org.nsid.key, NULL if absent */
        char *nsid_app;   /* annotation org.nsid.app, NULL if absent */
} oci_state;

/* Parse data (size bytes, need not be NUL-terminated). On failure returns a negative errno
 * and, if ret_error is not NULL, a static message saying what was wrong. */
int oci_state_parse(const char *data, size_t size, oci_state *ret, const char **ret_error);
void oci_state_done(oci_state *s);

#endif
