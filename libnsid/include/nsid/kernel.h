/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_KERNEL_H
#define NSID_KERNEL_H

#include <stdint.h>

#include <nsid/common.h>
#include <nsid/keyring.h> /* nsid_keyring_*, declared here before */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What the running kernel does with keys of a type across network namespaces, found out by
 * trying it (no version table: distribution kernels backport, and nsid's patched nfsv4
 * module changes the answer without changing the kernel release).
 *
 * The NFS client caches ID-mapping answers as keys of the types "id_resolver" and
 * "id_legacy" (fs/nfs/nfs4idmap.c). A key type flagged KEY_TYPE_NET_DOMAIN gets the
 * network namespace of the task that adds a key as part of the key's index (type, domain
 * tag, description); on stock kernels the NFS types are not flagged, so one namespace's
 * cached answer is every namespace's.
 *
 * The probe runs in a forked child (with the caller's capabilities; the
 * child makes system calls only and allocates nothing, so a multithreaded caller is fine):
 * it joins a new anonymous session keyring, adds a key of the type with the description
 * "nsid-probe:<pid>" and checks that a search finds it; then it unshares a new network
 * namespace and
 *  - searches again (KEYCTL_SEARCH): not found means searches are isolated;
 *  - adds a key with the same description to the same keyring: a type without the tag
 *    updates the first key or displaces it from the keyring (same index), a tagged type
 *    keeps both keys side by side (different index);
 * then it returns to its network namespace (setns) and checks that it finds a key again,
 * and that adding once more there hits the first key's index, not the second's. Every key
 * is invalidated before the child exits.
 *
 * Tagged and isolated are not the same thing for every type: "dns_resolver" is tagged, but
 * it matches descriptions with its own comparison (KEYRING_SEARCH_LOOKUP_ITERATE), and the
 * keys core does not compare domain tags on that path, so a search from another namespace
 * still finds the key (seen on 6.18). Types matched by exact description ("user",
 * "id_resolver", "id_legacy") are searched through the index, tag included.
 *
 * Needs CAP_SYS_ADMIN (unshare(CLONE_NEWNET)). Each probe takes a few milliseconds (a
 * network namespace is created and destroyed) and at most NSID_KERNEL_PROBE_TIMEOUT_MS.
 *
 * Errors of every probe: -EINVAL (bad type: empty, 32 bytes or longer, or starting with
 * '.', which the kernel reserves), -ENODEV (no such key type registered in this kernel, e.g.
 * the module that provides it is not loaded), -EPERM (not privileged enough to create a
 * network namespace), -EIO (the probe contradicted itself: a control check failed, or the
 * child died), -ETIMEDOUT, -EDQUOT (key quota), another negative errno of a failed system
 * call (e.g. -EINVAL when the kernel refuses the probe's payload for this type).
 */

#define NSID_KERNEL_PROBE_TIMEOUT_MS 2000

/* Bits of *ret_flags of nsid_key_type_netns_probe(). */
enum {
        /* Keys are indexed by network namespace (KEY_TYPE_NET_DOMAIN): adds of one
         * description from two namespaces give two keys side by side in one keyring. */
        NSID_KEY_NETNS_TAGGED = 1u << 0,
        /* A search from another network namespace does not find the key. */
        NSID_KEY_NETNS_SEARCH_ISOLATED = 1u << 1,
};

/* Both observations for one key type. The payload is one the type accepts: "192.0.2.1" and
 * its NUL for "dns_resolver", "0" and its NUL (a decimal id) for every other type. */
NSID_API_WARN_UNUSED int nsid_key_type_netns_probe(const char *type, unsigned *ret_flags);

/* 1 if the kernel tags keys of this type with the network namespace
 * (NSID_KEY_NETNS_TAGGED), 0 if not, or a negative errno. */
NSID_API_WARN_UNUSED int nsid_key_type_netns_tagged(const char *type);

/*
 * Whether each network namespace has its own NFS ID-mapping cache: both "id_resolver" and
 * "id_legacy" tagged and searched in isolation. 1 if so for both, 0 if for neither,
 * -ENODEV if either key type is not registered (the NFSv4 client, module nfsv4, is not
 * loaded: nothing can be told yet), -EPROTO if the two types disagree (a partly patched
 * kernel), or another error of the probe (-EPERM, -EIO, ...).
 */
NSID_API_WARN_UNUSED int nsid_kernel_nfs_idkeys_tagged(void);

/*
 * The same, remembered in cache_path for programs that run often (once per upcall): the
 * file holds the answer together with this boot's id (/proc/sys/kernel/random/boot_id) and
 * the srcversion of the loaded nfsv4 module (/sys/module/nfsv4/srcversion; none for a
 * built-in client, then the boot id alone identifies it). When both match, the stored
 * answer is returned without a probe. Otherwise the kernel is probed and, for an answer of
 * 0 or 1, the file is replaced atomically (a temporary file in the same directory, mode
 * 0644, then rename(2)); errors, -ENODEV included, are never stored. A cache file that is
 * not a regular file, not owned by root, writable by group or others, or not exactly in the
 * format is ignored (and replaced after the probe). The directory is not created; failing
 * to write the file is logged at debug level and does not change the answer. The directory
 * must be one only root can write to (e.g. /run/nsid). Return values: as
 * nsid_kernel_nfs_idkeys_tagged(), and -EINVAL for an empty or relative cache_path.
 */
NSID_API_WARN_UNUSED int nsid_kernel_nfs_idkeys_tagged_cached(const char *cache_path);

#ifdef __cplusplus
}
#endif
#endif
