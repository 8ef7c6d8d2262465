/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_NFSCLIENT_H
#define NSID_NFSCLIENT_H

#include <stddef.h>

#include <nsid/common.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The NFSv4 client uniquifier of a network namespace: /sys/fs/nfs/net/nfs_client/identifier
 * as seen by a sysfs mounted from inside that netns. A forked worker joins
 * only the netns, keeps its capabilities, mounts a fresh sysfs that nobody else sees (a
 * detached fsmount(); on kernels without it, over /sys in a private mount namespace), reads
 * (and writes, then reads back) the file, replies and exits. The host's mounts never change.
 *
 * The kernel keeps the identifier until the netns dies: it can be replaced, never cleared,
 * and it only matters for nfs_clients created after it is written (KERNEL-FACTS.md 1).
 *
 * Test hook: when the environment variable NSID_TEST_SYSFS_NFS_CLIENT_DIR is set (checked
 * with secure_getenv()), the worker still joins the netns and mounts sysfs, but then uses
 * the file DIR/<inode of the netns it joined> instead of the kernel's file, with the kernel's
 * semantics (absent reads "(null)", trailing "\n" stripped, 64 bytes kept). It exists only
 * because hosts without the nfs module have no identifier file; a warning is logged.
 */

#define NSID_NFS_IDENTIFIER_MAX 63

enum {
        NSID_NFS_SET_FORCE = 1u << 0,   /* replace a different identifier */
        NSID_NFS_SET_DRY_RUN = 1u << 1, /* read and decide, never write */
};

/* Identifier characters accepted for writing: 1..63 bytes of 0x21..0x7e. 0 or -EINVAL. */
int nsid_nfs_identifier_validate(const char *identifier);

/* The current identifier of netns: "" when unset ("(null)"). -ENOENT when the netns has no
 * nfs_client sysfs directory (the nfs module is not loaded). */
NSID_API_WARN_UNUSED int nsid_nfs_client_get_identifier(nsid_ns *netns, int timeout_ms,
                                                        char **ret);

/*
 * Set the identifier of netns. It is written when the current one is unset, equal to
 * replaceable (an identifier the caller knows it may replace, e.g. one nsid set earlier from
 * a lower-priority key), or with NSID_NFS_SET_FORCE; then read back and compared.
 * Returns 1 when written, 0 when it already was this identifier (or DRY_RUN would write),
 * -EEXIST when a different identifier is set and may not be replaced, -ENOENT when the nfs
 * module is not loaded, -EIO when the read-back differs, -ETIMEDOUT. ret_previous (may be
 * NULL) receives the identifier found before ("" if unset), also on -EEXIST.
 */
NSID_API_WARN_UNUSED int nsid_nfs_client_set_identifier(nsid_ns *netns, const char *identifier,
                                                        const char *replaceable,
                                                        unsigned flags, int timeout_ms,
                                                        char **ret_previous);

#ifdef __cplusplus
}
#endif
#endif
