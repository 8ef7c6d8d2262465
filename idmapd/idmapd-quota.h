/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: bounds on namespaces owned by user namespaces (idmapd-quota.c). */
#ifndef NSID_IDMAPD_QUOTA_H
#define NSID_IDMAPD_QUOTA_H

#include "idmapd.h"

/* Whether netns is owned by a user namespace other than the initial one (*ret_charged), and
 * who it is charged to: the host uid that made its top-level user namespace (the child of
 * the initial one), or, when host root made that one, the top-level user namespace itself.
 * 0 or -errno. */
int dm_quota_classify(const nsid_ns *netns, bool *ret_charged, dm_owner *ret_owner);
/* "uid 1000", "user namespace user:[N] (made by root)" */
const char *dm_owner_to_string(const dm_owner *o, char *buf, size_t size);
/* Count one more kept netns of owner: 0, or -EUSERS (max-netns-per-owner) / -ENOSPC
 * (max-netns-unprivileged) when it must not be kept (logged once per owner). */
int dm_quota_admit(const dm_owner *owner);
void dm_quota_release(const dm_owner *owner);
/* Remember a refused netns (no fd held: its id, owner and cookie); true when id is one
 * (generation: the scan that saw it again, 0 for none). Given the namespace found under that
 * id (netns, may be NULL), a refusal that is not it (another owner; another cookie while the
 * owner has room) is forgotten and false returned. dm_quota_sweep() forgets those the scan
 * did not see. */
void dm_quota_refuse(const nsid_ns_id *id, nsid_ns *netns, const dm_owner *owner,
                     unsigned generation);
bool dm_quota_is_refused(const nsid_ns_id *id, nsid_ns *netns, unsigned generation);
void dm_quota_sweep(unsigned generation);
typedef struct dm_quota_stats {
        unsigned kept;          /* namespaces of unprivileged owners kept */
        unsigned kept_all;      /* every charged namespace kept (root-made containers' too) */
        size_t refused_now;     /* remembered refusals */
        uint64_t refused_total; /* refusals since start */
        size_t owners;
} dm_quota_stats;
void dm_quota_get_stats(dm_quota_stats *ret);
void dm_quota_free_all(void);

#endif
