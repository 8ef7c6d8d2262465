/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_KEYRING_H
#define NSID_KEYRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>
/* the parsers once declared here */
#include <nsid/keydesc.h>
#include <nsid/prockeys.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Keyrings found and their keys invalidated without trusting /proc/keys (keyring.c): for the
 * NFS client's ID cache, which nsid-idmapd keeps namespace-specific answers out of.
 */

/*
 * The serial of the keyring named `name` that uid `uid` owns, found without trusting the
 * text of /proc/keys (it prints descriptions raw, and a user key's description may hold a
 * newline and forge lines): a "keyring" line naming it is only a candidate, kept when
 * KEYCTL_DESCRIBE of its serial gives type "keyring", that owner and exactly that
 * description. -ENOENT when there is none the caller may view, or -errno reading
 * /proc/keys.
 */
NSID_API_WARN_UNUSED int32_t nsid_keyring_find(const char *name, uint32_t uid);

/*
 * Invalidate (KEYCTL_INVALIDATE) the keys of type `type` whose description is exactly
 * `description`, linked in the keyring named `keyring` that uid `keyring_uid` owns: for the
 * NFS client's ID cache ".id_resolver", 0, "id_legacy" (pipe answers) or "id_resolver"
 * (request-key answers). nsid-idmapd drops a namespace-specific answer from that global
 * cache this way. The keyring is found by nsid_keyring_find(), its keys by KEYCTL_READ of
 * it and KEYCTL_DESCRIBE of each (type and whole description equal): nothing read from
 * /proc/keys chooses a key. Returns the number of keys invalidated (0: none matched), or -errno when
 * the keyring cannot be found (-ENOENT) or read. *ret_failed (may be NULL) gets the number
 * of matching keys the kernel refused to invalidate.
 */
NSID_API_WARN_UNUSED int nsid_keyring_invalidate_keys(const char *keyring, uint32_t keyring_uid,
                                                      const char *type,
                                                      const char *description,
                                                      unsigned *ret_failed);
/* The same in the keyring whose serial is ring (from nsid_keyring_find(), kept by a caller
 * that invalidates often: finding the keyring reads the whole of /proc/keys). -EKEYREVOKED,
 * -ENOKEY or -EACCES when that keyring is gone (the module that owned it was unloaded). */
NSID_API_WARN_UNUSED int nsid_keyring_invalidate_keys_in(int32_t ring, const char *type,
                                                         const char *description,
                                                         unsigned *ret_failed);

/*
 * An index of one keyring's keys by type and description, for a caller that invalidates
 * often (nsid-idmapd: every pipe answer on a kernel without the fix). Each call reads the
 * keyring's links (KEYCTL_READ) and describes only the keys it had not described before: a
 * key's type and description never change, and the kernel gives each key a random serial,
 * so a serial that stayed linked is the key it was. Without it every invalidation describes
 * every key the ring links (2,000 in a cold listing of 1,000 owners: 30 ms a pipe answer in
 * the TCG lab).
 */
typedef struct nsid_keyring_index nsid_keyring_index;
/* An empty index of the keyring whose serial is ring: 0 or -ENOMEM. */
NSID_API_WARN_UNUSED int nsid_keyring_index_new(int32_t ring, nsid_keyring_index **ret);
void nsid_keyring_index_free(nsid_keyring_index *idx);
/* The serial of the keyring it indexes. */
int32_t nsid_keyring_index_ring(const nsid_keyring_index *idx);
/* Read the keyring again: the number of keys it links, or -errno (as
 * nsid_keyring_invalidate_keys_in() when it is gone). */
NSID_API_WARN_UNUSED int nsid_keyring_index_refresh(nsid_keyring_index *idx);
/* nsid_keyring_invalidate_keys_in() through the index: refreshed, then every key of exactly
 * that type and description invalidated. */
NSID_API_WARN_UNUSED int nsid_keyring_index_invalidate(nsid_keyring_index *idx,
                                                       const char *type,
                                                       const char *description,
                                                       unsigned *ret_failed);

#ifdef __cplusplus
}
#endif
#endif
