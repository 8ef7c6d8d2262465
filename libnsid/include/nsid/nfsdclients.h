/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_NFSDCLIENTS_H
#define NSID_NFSDCLIENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The NFS server's view of its NFSv4 clients (knfsd: /proc/fs/nfsd/clients/<n>/info), and
 * the checks that find clients presenting one owner string: cloned hosts, containers without
 * a uniquifier. For nsidctl doctor and for monitoring agents (nsid_nfsd_clients(3)).
 *
 * Owner strings are bytes the clients chose (up to 1024), escaped by the kernel; they are
 * decoded here and handed back re-escaped (printable ASCII, everything else as \xHH), never
 * raw, unless asked for. Nothing here prints.
 *
 * Use: nsid_nfsd_clients_new(); nsid_nfsd_clients_scan() once, or every few hundred
 * milliseconds over a window (flapping shows only over time: the server keeps one record per
 * owner string and the clients take it from each other); nsid_nfsd_clients_check(); then the
 * findings by index.
 */

typedef struct nsid_nfsd_clients nsid_nfsd_clients;

typedef enum nsid_nfsd_finding_kind {
        /* one owner string confirmed from more than one address within the window */
        NSID_NFSD_OWNER_MULTIPLE_ADDRESSES,
        /* a Linux NFSv4.x owner string with no uniquifier: only the nodename tells it apart */
        NSID_NFSD_OWNER_NO_UNIQUIFIER,
        /* an NFSv4.0 owner string used from more than one address (any state) */
        NSID_NFSD_V40_COLLISION,
        _NSID_NFSD_FINDING_KIND_MAX,
} nsid_nfsd_finding_kind;

/* The largest info file read (bigger ones are counted as unreadable). */
#define NSID_NFSD_INFO_MAX 16384

NSID_API_WARN_UNUSED int nsid_nfsd_clients_new(nsid_nfsd_clients **ret);
nsid_nfsd_clients *nsid_nfsd_clients_ref(nsid_nfsd_clients *c);
nsid_nfsd_clients *nsid_nfsd_clients_unref(nsid_nfsd_clients *c);

/*
 * Read every <n>/info under dir (NULL: /proc/fs/nfsd/clients) as one snapshot taken at
 * now_ms (any monotonic clock in milliseconds, the same for every call). Entries are opened
 * with openat2(RESOLVE_NO_SYMLINKS) (openat(O_NOFOLLOW) per component before 5.6): no
 * symlink is followed; a file that is not regular, larger than
 * NSID_NFSD_INFO_MAX, vanishes while read (a client that went away) or does not parse is
 * skipped and counted (nsid_nfsd_clients_get_skipped()). Returns the number of records added,
 * or -errno when dir cannot be opened (-ENOENT: no knfsd here, or nfsd fs not mounted).
 */
NSID_API_WARN_UNUSED int nsid_nfsd_clients_scan(nsid_nfsd_clients *c, const char *dir,
                                                uint64_t now_ms);
/* Add one record from the text of an info file (size bytes, need not be NUL-terminated).
 * 0, -EBADMSG when it does not parse, -ENOMEM. */
NSID_API_WARN_UNUSED int nsid_nfsd_clients_add_info(nsid_nfsd_clients *c, const char *data,
                                                    size_t size, uint64_t now_ms);
/* Records read (every scan, every add), and entries skipped. */
uint64_t nsid_nfsd_clients_get_records(const nsid_nfsd_clients *c);
uint64_t nsid_nfsd_clients_get_skipped(const nsid_nfsd_clients *c);
/* Distinct owner strings seen. */
size_t nsid_nfsd_clients_get_owners(const nsid_nfsd_clients *c);

/* Run the checks over what was seen within window_ms before the newest record (0: only the
 * newest snapshot). Replaces the findings of a previous call. Returns their number, -ENOMEM. */
NSID_API_WARN_UNUSED int nsid_nfsd_clients_check(nsid_nfsd_clients *c, uint64_t window_ms);

/* Finding i (0 <= i < the count check returned); -ERANGE for another index. */
NSID_API_WARN_UNUSED int nsid_nfsd_clients_get_finding(const nsid_nfsd_clients *c, size_t i,
                                                       nsid_nfsd_finding_kind *ret_kind,
                                                       const char **ret_owner,
                                                       size_t *ret_n_addresses);
/* The owner string's raw bytes (client-chosen: do not print them as they are). */
NSID_API_WARN_UNUSED int nsid_nfsd_clients_get_finding_owner_raw(const nsid_nfsd_clients *c,
                                                                 size_t i,
                                                                 const uint8_t **ret_data,
                                                                 size_t *ret_size);
/* Address j of finding i (the client's IP address, without the port), or NULL. */
const char *nsid_nfsd_clients_get_finding_address(const nsid_nfsd_clients *c, size_t i,
                                                  size_t j);

/* "owner-multiple-addresses", "owner-no-uniquifier", "v40-owner-collision"; NULL if invalid */
const char *nsid_nfsd_finding_kind_to_string(nsid_nfsd_finding_kind k);
/* One sentence: what to do on the clients. NULL if invalid. */
const char *nsid_nfsd_finding_kind_fix(nsid_nfsd_finding_kind k);

#ifdef __cplusplus
}
#endif
#endif
