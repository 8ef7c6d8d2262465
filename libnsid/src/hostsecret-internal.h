/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host's machine-id, for comparisons only (never printed, never stored). Internal. */
#ifndef NSID_HOSTSECRET_INTERNAL_H
#define NSID_HOSTSECRET_INTERNAL_H

#include <stdint.h>

/* The 16 bytes of the host's machine-id at path (NULL: /etc/machine-id). */
int nsid_host_machine_id(const char *path, uint8_t ret[16]);
/* NSID_STATE_DIR unless dir is given. */
const char *nsid_state_dir_or_default(const char *dir);

/* STATE_DIR/host-secret: read (regular, ours, 0600 or stricter, 16 bytes), or created
 * (O_TMPFILE + linkat: -EEXIST if it appeared meanwhile). dfd: the state directory. */
int host_secret_read_file(int dfd, uint8_t ret[16]);
int host_secret_create_file(int dfd, uint8_t ret[16]);
/* The generated secret (hostsecret-clone.c): -ENOENT when there is none (no fingerprint
 * file), another negative errno when there is one that cannot be used. */
int host_secret_load_generated(const char *state_dir, uint8_t ret[16]);

#endif
