/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: bounds on the network namespaces it keeps, for namespaces any user can make.
 *
 * Any unprivileged user can create user and network namespaces in a loop, and so can root
 * inside any container that has a user namespace. Each netns the daemon keeps costs it file
 * descriptors (the netns, a pidfd and a /proc directory of a process in it), memory and,
 * while it works for it, a thread. So every netns owned by a user namespace other than the
 * initial one is *charged* to an owner and kept only within max-netns-per-owner. Only a
 * netns owned by the initial user namespace (made by host root: a rootful container, `ip
 * netns add`) is never charged nor refused.
 *
 * The owner is found from the top: the user namespace's ancestor that is a child of the
 * initial one (NS_GET_PARENT up the chain). Made by an unprivileged host uid (its
 * NS_GET_OWNER_UID): that uid owns everything below it, whatever ids nested namespaces were
 * made under (a user with a subuid range nesting user namespaces as uids 1..N was charged to
 * N different subordinate uids, issue #29 item 3). Made by host root (LXC's unprivileged
 * containers, systemd-nspawn -U, podman --userns as root): that top-level user namespace is
 * the owner, one budget per container, so that root in a container cannot attach any number
 * of namespaces (issue #29 item 2), nor take another container's budget.
 *
 * max-netns-unprivileged bounds all namespaces of unprivileged owners together. It does not
 * count root-made containers': how many of those exist is host root's choice, each is bounded
 * by its own budget, and no number of users' namespaces may keep a container that root
 * starts later from being served.
 *
 * A refused netns is remembered without an fd, by its id, its owner and its netns cookie
 * (SO_NETNS_COOKIE, never reused within a boot), so the next scans skip it, and
 * `route`/`register` requests for it are answered at once; it is looked at again once its
 * owner has room (one of its namespaces is forgotten). Its inode number alone does not name
 * it: a dead namespace's number is handed to the next one made (6.1 gives the lowest free
 * one), which may be a root container's (issue #29, item 4). So a namespace whose id is a
 * refusal's is checked: another owner (or none: the initial user namespace's), or, while the
 * owner has room, another cookie, and the refusal is forgotten. Its owner is
 * logged once when the first one is refused, and again only after all of its kept
 * namespaces have gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <nsid/netns.h>

#include "idmapd.h"
#include "idmapd-quota.h"

typedef struct owner {
        dm_owner key;
        unsigned kept;    /* namespaces of it kept */
        unsigned refused; /* remembered refusals */
        bool logged;
} owner;

typedef struct refusal {
        nsid_ns_id id;
        dm_owner owner;
        uint64_t cookie;     /* 0: not known */
        unsigned generation; /* last scan that saw it */
} refusal;

static owner *owners;
static size_t n_owners, owners_size;
static refusal *refusals;
static size_t n_refusals, refusals_size;
static unsigned kept_total; /* of unprivileged owners */
static unsigned kept_all;   /* every charged namespace kept */
static uint64_t refused_count;

static bool owner_eq(const dm_owner *a, const dm_owner *b) {
        return a->by_userns == b->by_userns &&
               (a->by_userns ? a->userns_ino == b->userns_ino : a->uid == b->uid);
}

static owner *owner_get(const dm_owner *key, bool create) {
        for (size_t i = 0; i < n_owners; i++)
                if (owner_eq(&owners[i].key, key))
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
        owners[n_owners] = (owner) { .key = *key };
        return &owners[n_owners++];
}

static void owner_maybe_drop(owner *o) {
        if (o->kept > 0 || o->refused > 0)
                return;
        *o = owners[--n_owners];
}

const char *dm_owner_to_string(const dm_owner *o, char *buf, size_t size) {
        if (o->by_userns)
                snprintf(buf, size, "user namespace user:[%" PRIu64 "] (made by root)",
                         o->userns_ino);
        else if (o->uid == (uid_t) -1)
                snprintf(buf, size, "an owner not told apart");
        else
                snprintf(buf, size, "uid %u", (unsigned) o->uid);
        return buf;
}

/* Nesting is at most 32 deep (the kernel's limit); a longer chain is not believed. */
#define USERNS_MAX_DEPTH 33

int dm_quota_classify(const nsid_ns *netns, bool *ret_charged, dm_owner *ret_owner) {
        nsid_ns *top = NULL, *p = NULL;
        int r = nsid_ns_get_userns(netns, &top);
        if (r < 0)
                return r;
        r = nsid_ns_is_initial(top);
        if (r == 1) {
                *ret_charged = false;
                *ret_owner = (dm_owner) { .uid = 0 };
                nsid_ns_unref(top);
                return 0;
        }
        /* up to the child of the initial user namespace */
        for (int depth = 0; r == 0; depth++) {
                if (depth >= USERNS_MAX_DEPTH) {
                        r = -ELOOP;
                        break;
                }
                r = nsid_ns_get_parent(top, &p);
                if (r < 0)
                        break;
                r = nsid_ns_is_initial(p);
                if (r == 0) {
                        nsid_ns_unref(top);
                        top = p;
                        p = NULL;
                }
        }
        nsid_ns_unref(p);
        *ret_charged = true;
        if (r == 1) {
                uid_t uid;
                nsid_ns_id id = {};
                r = nsid_ns_get_owner_uid(top, &uid);
                if (r >= 0)
                        r = nsid_ns_get_id(top, &id);
                if (r >= 0)
                        *ret_owner = uid == 0 ? (dm_owner) { .by_userns = true, .userns_ino = id.ino }
                                              : (dm_owner) { .uid = uid };
        }
        nsid_ns_unref(top);
        return r < 0 ? r : 0;
}

int dm_quota_admit(const dm_owner *key) {
        char who[96];
        owner *o = owner_get(key, true);
        if (!o)
                return -ENOMEM;
        int r = 0;
        if (o->kept >= dm.cfg.max_netns_per_owner)
                r = -EUSERS;
        else if (!key->by_userns && kept_total >= dm.cfg.max_netns_unprivileged)
                r = -ENOSPC;
        if (r == 0) {
                o->kept++;
                kept_all++;
                if (!key->by_userns)
                        kept_total++;
                return 0;
        }
        if (!o->logged) {
                o->logged = true;
                dm_owner_to_string(key, who, sizeof(who));
                if (r == -EUSERS)
                        dm_log(LOG_WARNING, NULL, "%s owns %u network namespaces in user "
                               "namespaces (max-netns-per-owner = %u): its further ones are not "
                               "served (logged once for this owner)", who, o->kept,
                               dm.cfg.max_netns_per_owner);
                else
                        dm_log(LOG_WARNING, NULL, "%u network namespaces in user namespaces are "
                               "served (max-netns-unprivileged = %u): those of %s beyond "
                               "them are not (logged once for this owner)", kept_total,
                               dm.cfg.max_netns_unprivileged, who);
        }
        return r; /* (the caller remembers the refusal: the owner stays known, and logged) */
}

void dm_quota_release(const dm_owner *key) {
        owner *o = owner_get(key, false);
        if (!o || o->kept == 0)
                return;
        bool total_was_full = !key->by_userns && kept_total == dm.cfg.max_netns_unprivileged;
        o->kept--;
        kept_all--;
        if (!key->by_userns)
                kept_total--;
        /* room again: its refused namespaces (and, when the total was full, everyone's) are
         * looked at again by the next scan */
        for (size_t i = 0; i < n_refusals;) {
                if (!owner_eq(&refusals[i].owner, key) &&
                    !(total_was_full && !refusals[i].owner.by_userns)) {
                        i++;
                        continue;
                }
                owner *ro = owner_get(&refusals[i].owner, false);
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

static void refusal_drop(refusal *f) {
        owner *o = owner_get(&f->owner, false);
        if (o) {
                if (o->refused)
                        o->refused--;
                owner_maybe_drop(o);
        }
        *f = refusals[--n_refusals];
}

static bool owner_has_room(const dm_owner *key) {
        owner *o = owner_get(key, false);
        unsigned kept = o ? o->kept : 0;
        return kept < dm.cfg.max_netns_per_owner &&
               (key->by_userns || kept_total < dm.cfg.max_netns_unprivileged);
}

bool dm_quota_is_refused(const nsid_ns_id *id, nsid_ns *netns, unsigned generation) {
        refusal *f = refusal_find(id);
        if (!f)
                return false;
        if (netns) {
                /* the same namespace, or another under a reused inode number? */
                bool charged = false;
                dm_owner o = {};
                uint64_t cookie = 0;
                if (dm_quota_classify(netns, &charged, &o) < 0 || !charged ||
                    !owner_eq(&o, &f->owner) ||
                    (f->cookie && owner_has_room(&o) &&
                     nsid_netns_get_cookie(netns, &cookie) >= 0 && cookie != f->cookie)) {
                        dm_log(LOG_DEBUG, NULL, "netns:[%" PRIu64 "]: not the namespace refused "
                               "under that number before", id->ino);
                        refusal_drop(f);
                        return false;
                }
        }
        if (generation)
                f->generation = generation;
        return true;
}

void dm_quota_refuse(const nsid_ns_id *id, nsid_ns *netns, const dm_owner *key,
                     unsigned generation) {
        uint64_t cookie = 0;
        if (!netns || nsid_netns_get_cookie(netns, &cookie) < 0)
                cookie = 0;
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
        owner *o = owner_get(key, true);
        if (!o)
                return;
        o->refused++;
        refusals[n_refusals++] = (refusal) { .id = *id, .owner = *key, .cookie = cookie,
                                             .generation = generation };
}

void dm_quota_sweep(unsigned generation) {
        for (size_t i = 0; i < n_refusals;) {
                if (refusals[i].generation == generation) {
                        i++;
                        continue;
                }
                refusal_drop(&refusals[i]);
        }
}

void dm_quota_get_stats(dm_quota_stats *ret) {
        *ret = (dm_quota_stats) { .kept = kept_total, .kept_all = kept_all,
                                  .refused_now = n_refusals,
                                  .refused_total = refused_count, .owners = n_owners };
}

void dm_quota_free_all(void) {
        free(owners);
        free(refusals);
        owners = NULL;
        refusals = NULL;
        n_owners = owners_size = n_refusals = refusals_size = 0;
        kept_total = kept_all = 0;
}
