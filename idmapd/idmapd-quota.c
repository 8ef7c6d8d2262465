/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: bounds on the network namespaces it keeps, for namespaces any user can make.
 *
 * Any unprivileged user can create user and network namespaces in a loop. Each one the
 * daemon keeps costs it file descriptors (the netns, a pidfd and a /proc directory of a
 * process in it), memory and, while it works for it, a thread. A netns owned by a user
 * namespace other than the initial one is therefore *charged* to the host uid that owns that
 * user namespace (NS_GET_OWNER_UID: for a nested user namespace, still the host uid of its
 * creator, so nesting does not make a new owner), and kept only within two bounds:
 * max-netns-per-owner for one owner, max-netns-unprivileged for all of them together. A
 * netns owned by the initial user namespace (made by root: a rootful container, `ip netns
 * add`), or by a user namespace that host root made (owner uid 0: LXC's unprivileged
 * containers, podman --userns), is never charged nor refused: no unprivileged user can make
 * either.
 *
 * A refused netns is remembered by its id only (no fd), so the next scans skip it without
 * opening it again, and `route`/`register` requests for it are answered at once; it is
 * looked at again once its owner has room (one of its namespaces is forgotten). Its owner is
 * logged once when the first one is refused, and again only after all of its kept
 * namespaces have gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "idmapd.h"

typedef struct owner {
        uid_t uid;
        unsigned kept;    /* namespaces of it kept */
        unsigned refused; /* remembered refusals */
        bool logged;
} owner;

typedef struct refusal {
        nsid_ns_id id;
        uid_t uid;
        unsigned generation; /* last scan that saw it */
} refusal;

static owner *owners;
static size_t n_owners, owners_size;
static refusal *refusals;
static size_t n_refusals, refusals_size;
static unsigned kept_total;
static uint64_t refused_count;

static owner *owner_get(uid_t uid, bool create) {
        for (size_t i = 0; i < n_owners; i++)
                if (owners[i].uid == uid)
                        return &owners[i];
        if (!create)
                return NULL;
        if (n_owners == owners_size) {
                size_t n = owners_size ? owners_size * 2 : 16;
                owner *v = realloc(owners, n * sizeof(*v));
                if (!v)
                        return NULL;
                owners = v;
                owners_size = n;
        }
        owners[n_owners] = (owner) { .uid = uid };
        return &owners[n_owners++];
}

static void owner_maybe_drop(owner *o) {
        if (o->kept > 0 || o->refused > 0)
                return;
        *o = owners[--n_owners];
}

int dm_quota_classify(const nsid_ns *netns, bool *ret_charged, uid_t *ret_uid) {
        nsid_ns *u = NULL;
        int r = nsid_ns_get_userns(netns, &u);
        if (r < 0)
                return r;
        r = nsid_ns_is_initial(u);
        if (r == 1) {
                *ret_charged = false;
                *ret_uid = 0;
                r = 0;
        } else if (r == 0) {
                r = nsid_ns_get_owner_uid(u, ret_uid);
                /* a user namespace made by host root (LXC's unprivileged containers, podman
                 * --userns, ...) is root's: only root can make one owned by uid 0 */
                *ret_charged = r < 0 || *ret_uid != 0;
        }
        nsid_ns_unref(u);
        return r;
}

int dm_quota_admit(uid_t uid) {
        owner *o = owner_get(uid, true);
        if (!o)
                return -ENOMEM;
        int r = 0;
        if (o->kept >= dm_cfg.max_netns_per_owner)
                r = -EUSERS;
        else if (kept_total >= dm_cfg.max_netns_unprivileged)
                r = -ENOSPC;
        if (r == 0) {
                o->kept++;
                kept_total++;
                return 0;
        }
        if (!o->logged) {
                o->logged = true;
                if (r == -EUSERS)
                        dm_log(LOG_WARNING, NULL, "uid %u owns %u network namespaces in user "
                               "namespaces (max-netns-per-owner = %u): its further ones are not "
                               "served (logged once for this owner)", (unsigned) uid, o->kept,
                               dm_cfg.max_netns_per_owner);
                else
                        dm_log(LOG_WARNING, NULL, "%u network namespaces in user namespaces are "
                               "served (max-netns-unprivileged = %u): those of uid %u beyond "
                               "them are not (logged once for this owner)", kept_total,
                               dm_cfg.max_netns_unprivileged, (unsigned) uid);
        }
        return r; /* (the caller remembers the refusal: the owner stays known, and logged) */
}

void dm_quota_release(uid_t uid) {
        owner *o = owner_get(uid, false);
        if (!o || o->kept == 0)
                return;
        o->kept--;
        kept_total--;
        /* room again: its refused namespaces (and, when the total was full, everyone's) are
         * looked at again by the next scan */
        for (size_t i = 0; i < n_refusals;) {
                if (refusals[i].uid != uid && kept_total + 1 != dm_cfg.max_netns_unprivileged) {
                        i++;
                        continue;
                }
                owner *ro = owner_get(refusals[i].uid, false);
                if (ro && ro->refused)
                        ro->refused--;
                refusals[i] = refusals[--n_refusals];
        }
        if (o->kept == 0)
                o->logged = false;
        for (size_t i = 0; i < n_owners;) {
                size_t before = n_owners;
                owner_maybe_drop(&owners[i]);
                if (n_owners == before)
                        i++;
        }
}

static refusal *refusal_find(const nsid_ns_id *id) {
        for (size_t i = 0; i < n_refusals; i++)
                if (refusals[i].id.ino == id->ino && refusals[i].id.dev == id->dev)
                        return &refusals[i];
        return NULL;
}

bool dm_quota_is_refused(const nsid_ns_id *id, unsigned generation) {
        refusal *f = refusal_find(id);
        if (!f)
                return false;
        if (generation)
                f->generation = generation;
        return true;
}

void dm_quota_refuse(const nsid_ns_id *id, uid_t uid, unsigned generation) {
        refused_count++;
        if (refusal_find(id))
                return;
        if (n_refusals == refusals_size) {
                size_t n = refusals_size ? refusals_size * 2 : 64;
                refusal *v = realloc(refusals, n * sizeof(*v));
                if (!v)
                        return; /* looked at again by the next scan */
                refusals = v;
                refusals_size = n;
        }
        owner *o = owner_get(uid, true);
        if (!o)
                return;
        o->refused++;
        refusals[n_refusals++] = (refusal) { .id = *id, .uid = uid, .generation = generation };
}

void dm_quota_sweep(unsigned generation) {
        for (size_t i = 0; i < n_refusals;) {
                if (refusals[i].generation == generation) {
                        i++;
                        continue;
                }
                owner *o = owner_get(refusals[i].uid, false);
                if (o) {
                        if (o->refused)
                                o->refused--;
                        owner_maybe_drop(o);
                }
                refusals[i] = refusals[--n_refusals];
        }
}

void dm_quota_get_stats(dm_quota_stats *ret) {
        *ret = (dm_quota_stats) { .kept = kept_total, .refused_now = n_refusals,
                                  .refused_total = refused_count, .owners = n_owners };
}

void dm_quota_free_all(void) {
        free(owners);
        free(refusals);
        owners = NULL;
        refusals = NULL;
        n_owners = owners_size = n_refusals = refusals_size = 0;
        kept_total = 0;
}
