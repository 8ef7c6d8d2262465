/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The key type probe (nsid/kernel.h), for tests. Internal. */
#ifndef NSID_KERNEL_KEYS_INTERNAL_H
#define NSID_KERNEL_KEYS_INTERNAL_H

#include <stddef.h>

/* The probe with a given payload and timeout (nsid_key_type_netns_probe() picks both). */
int key_type_probe(const char *type, const void *payload, size_t payload_len, int timeout_ms,
                   unsigned *ret_flags);

/* nsid_kernel_nfs_idkeys_tagged() for any two key types. */
int idkeys_pair_tagged(const char *type_a, const char *type_b);

#endif
