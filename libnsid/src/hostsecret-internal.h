/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host's machine-id, for comparisons only (never printed, never stored). Internal. */
#ifndef NSID_HOSTSECRET_INTERNAL_H
#define NSID_HOSTSECRET_INTERNAL_H

#include <stdint.h>

/* The 16 bytes of the host's machine-id at path (NULL: /etc/machine-id). */
int nsid_host_machine_id(const char *path, uint8_t ret[16]);
/* NSID_STATE_DIR unless dir is given. */
const char *nsid_state_dir_or_default(const char *dir);

#endif
