/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_NETNS_H
#define NSID_NETNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>
#include <nsid/ns.h>
#include <nsid/registry.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The host's network namespaces: found through /proc/PID/ns/net of every process, the nsfs
 * bind mounts of the caller's mount namespace (/proc/self/mountinfo) and the entries of /run/netns,
 * deduplicated by (dev, ino).
 */

typedef struct nsid_netns_info {
        nsid_ns_id id;
        pid_t pid;        /* the lowest pid in it, 0 if no process is in it */
        char *comm;       /* that process's comm, NULL if none */
        char *cgroup;     /* its cgroup v2 path ("0::" line), NULL if none */
        char *path;       /* a bind mount naming it (/run/netns/NAME...), NULL if none */
        unsigned n_procs; /* processes in it */
        bool initial;     /* the initial (host) network namespace */
        bool nfs_mounted; /* a process in it sees an nfs/nfs4 mount in its mount namespace */
} nsid_netns_info;

/* The id of the initial (host) network namespace: PID 1's, or kthreadd's when PID 1 cannot be
 * inspected. */
NSID_API_WARN_UNUSED int nsid_netns_initial_id(nsid_ns_id *ret);

/* Enumerate. The array is sorted by inode. */
NSID_API_WARN_UNUSED int nsid_netns_scan(nsid_netns_info **ret, size_t *ret_n);
void nsid_netns_info_free(nsid_netns_info *v, size_t n);

/* Open the namespace an info names: through its process (pidfd-pinned, *ret_proc set) or its
 * path (*ret_proc NULL); the opened namespace is checked to still be info->id (-ESTALE if
 * not). ret_proc may be NULL. */
NSID_API_WARN_UNUSED int nsid_netns_info_open(const nsid_netns_info *info, nsid_ns **ret_ns,
                                              nsid_proc **ret_proc);

/* 1 if some process whose network namespace is id sees an nfs or nfs4 mount (the "too late
 * to set the uniquifier" test), 0 if not. */
int nsid_netns_has_nfs_mounts(const nsid_ns_id *id);

/* 1 if the NFS client of netns has mounted volumes, 0 if not (or if no NFS client is loaded):
 * the kernel's own list for that netns, /proc/PID/net/nfsfs/volumes, read through proc, a
 * process in netns. It counts the mounts made from netns (whose client uses its identifier)
 * wherever they are visible, and costs one file however many processes the host has.
 * -ESTALE when proc is not (or no longer) in netns; then nsid_netns_has_nfs_mounts() is the
 * way. */
NSID_API_WARN_UNUSED int nsid_netns_nfs_volumes(const nsid_proc *proc, const nsid_ns *netns);

/* The netns cookie (SO_NETNS_COOKIE) of a network namespace: unique within a boot, unlike
 * its inode number. Obtained from a short-lived thread that joins the netns. */
NSID_API_WARN_UNUSED int nsid_netns_get_cookie(nsid_ns *netns, uint64_t *ret);
/* This boot's id (/proc/sys/kernel/random/boot_id), 36 characters + NUL. */
NSID_API_WARN_UNUSED int nsid_boot_id(char ret[37]);

/* Liveness of a registry entry's netns (nsid_registry_live_fn): 1 if a netns with that
 * (dev, ino) exists now, in the same boot, with the same cookie; 0 otherwise. */
int nsid_netns_entry_is_live(const nsid_registry_entry *e, void *userdata);

/* Internal parser, exported for the fuzzer: does this mountinfo text contain an nfs/nfs4
 * mount? 1/0. */
int nsid_mountinfo_has_nfs(const char *data, size_t size);

#ifdef __cplusplus
}
#endif
#endif
