/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_REQUESTER_H
#define NSID_REQUESTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The process whose request_key() a key under construction waits for, as a request-key
 * helper (or a daemon the helper handed its authority to) finds it: the .request_key_auth
 * key of the request (the thread's assumed authority, else a search of the caller's session
 * keyring), its line in /proc/keys (the only place the kernel shows the requester's pid:
 * "key:<target> pid:<pid> ci:<len>"), then the pid pinned with a pidfd and checked to be
 * alive once everything about it has been read. A forged /proc/keys line (a newline in
 * another key's description) makes the lookup fail with -ENOTUNIQ.
 */
typedef struct nsid_requester {
        pid_t pid;
        int pidfd;       /* pins the requester; -1 when not found */
        nsid_proc *proc; /* made from pidfd when first needed: nsid_requester_proc() */
        int32_t auth_key;
        char comm[64];   /* its name, printable (other bytes as \xNN) */
        uint64_t net_ino, user_ino, mnt_ino;
        int net_initial, user_initial, mnt_initial; /* 1, 0 or -errno */
        int mnt_owner_initial; /* its mount namespace's owning user namespace is the initial one */
} nsid_requester;

/*
 * Open /proc/keys for nsid_requester_find(). The kernel fixes what a /proc/keys descriptor
 * shows when it is opened (its opener's credentials): opened with the file-system uid of
 * nobody it shows the keys the opener possesses (among them the request's .request_key_auth
 * key) and hardly anything else, instead of every key root may view. That takes CAP_SETUID;
 * without it, or when nobody is refused, it is opened as the caller. The descriptor may be
 * kept and used for any number of lookups (each reads it from the start). -errno.
 */
NSID_API_WARN_UNUSED int nsid_proc_keys_open(void);

/*
 * Find the requester of key target. keys_fd: from nsid_proc_keys_open(). 0 with *ret filled
 * (close it with nsid_requester_done()), or -ENOKEY (the caller holds no authority for
 * target), -ENOTUNIQ (a forged line), -EBADMSG (the auth key's line is not what the kernel
 * prints), -ESRCH (the requester is gone), -EKEYREVOKED (the request ended meanwhile), or
 * another -errno. *ret is left with pidfd -1 on failure.
 */
NSID_API_WARN_UNUSED int nsid_requester_find(int32_t target, int keys_fd, nsid_requester *ret);
/* The requester as a libnsid process (its namespaces, a worker in them): 0, or -ESRCH. */
NSID_API_WARN_UNUSED int nsid_requester_proc(nsid_requester *r);
void nsid_requester_done(nsid_requester *r);
/* "requester pid 123 (comm) net:[...](host) user:[...] mnt:[...]" or, with find_error < 0,
 * "requester unknown (reason)": into buf, which is returned. */
const char *nsid_requester_describe(const nsid_requester *r, int find_error, char *buf,
                                    size_t size);

#ifdef __cplusplus
}
#endif
#endif
