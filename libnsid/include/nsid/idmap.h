/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_IDMAP_H
#define NSID_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ID translation through a user namespace's uid_map or gid_map.
 *
 * A map is a list of extents "<ns-first> <host-first> <count>": ids ns-first ..
 * ns-first+count-1 inside the namespace are host-first .. host-first+count-1 outside it.
 * "Host" means the user namespace the map text was read from: for /proc/PID/uid_map that is
 * the reader's user namespace (the parent namespace when the reader is inside the target
 * namespace itself), which for a host daemon is the initial user namespace.
 *
 * Accepted text (nsid_idmap_parse()): what the kernel prints when the file is read (each
 * number right-aligned in 10 columns, "%10u %10u %10u\n") and what it accepts when the file
 * is written: one extent per '\n'-terminated line (the last '\n' is optional), three unsigned
 * decimal numbers separated by blanks (space, \t, \v, \f, \r), optional blanks before the
 * first and after the last number. Empty text is a valid map with no extent (a user
 * namespace whose map was not written yet: every id is unmapped).
 *
 * Refused with -EINVAL, like the kernel refuses to write them: anything else on a line
 * (signs, hex, comments, empty lines, missing or extra fields), a start id of 4294967295
 * ((u32)-1) on either side, a count of 0, an extent whose end passes 2^32-1 on either side
 * (the highest mappable id is 4294967294), extents overlapping on either side, more than
 * NSID_IDMAP_MAX_EXTENTS extents. Also refused, although the kernel's writer takes them by
 * accident: numbers above 2^32-1 (it truncates them), NUL bytes (it stops reading there) and
 * byte 0xa0 as a blank (its isspace() is Latin-1). tests/integration/itest-userns-idmap.c
 * checks this list against the running kernel.
 *
 * Maps are immutable once created and may be shared between threads.
 */

/* UID_GID_MAP_MAX_EXTENTS in the kernel. */
#define NSID_IDMAP_MAX_EXTENTS 340u

/* The id that is never valid: (uid_t) -1. */
#define NSID_IDMAP_INVALID_ID UINT32_MAX

typedef enum nsid_idmap_kind {
        NSID_IDMAP_UID,
        NSID_IDMAP_GID,
        _NSID_IDMAP_KIND_MAX,
} nsid_idmap_kind;

typedef struct nsid_idmap_extent {
        uint32_t ns_first;
        uint32_t host_first;
        uint32_t count;
} nsid_idmap_extent;

typedef struct nsid_idmap nsid_idmap;

/* Parse map text of size bytes (text need not be NUL-terminated). The overflow id is read
 * from /proc/sys/kernel/overflowuid (or overflowgid) now; 65534 when it cannot be read. */
NSID_API_WARN_UNUSED int nsid_idmap_parse(nsid_idmap_kind kind, const char *text, size_t size,
                                          nsid_idmap **ret);

/* The map of the initial user namespace, "0 0 4294967295": every valid id maps to itself. */
NSID_API_WARN_UNUSED int nsid_idmap_new_identity(nsid_idmap_kind kind, nsid_idmap **ret);

/* Read and parse /proc/PID/uid_map (NSID_IDMAP_UID) or gid_map (NSID_IDMAP_GID) of a pinned
 * process. -ESRCH when the process is gone or its pid was recycled, -EINVAL when the text is
 * malformed, other negative errno values from reading. */
NSID_API_WARN_UNUSED int nsid_idmap_load_proc(const nsid_proc *p, nsid_idmap_kind kind,
                                              nsid_idmap **ret);

nsid_idmap *nsid_idmap_ref(nsid_idmap *m);
nsid_idmap *nsid_idmap_unref(nsid_idmap *m);

/* The kind, or -EINVAL for NULL. */
int nsid_idmap_get_kind(const nsid_idmap *m);
/* The number of extents (0 .. NSID_IDMAP_MAX_EXTENTS), or -EINVAL for NULL. */
int nsid_idmap_get_n_extents(const nsid_idmap *m);
/* Extent i, in the order of the map text. -ERANGE when i >= the number of extents. */
int nsid_idmap_get_extent(const nsid_idmap *m, unsigned i, nsid_idmap_extent *ret);
/* The overflow id used by the _munged functions (read when the map was created). */
int nsid_idmap_get_overflow_id(const nsid_idmap *m, uint32_t *ret);
/* 1 when the map sends every id 0 .. 4294967294 to itself (the initial user namespace's map,
 * possibly split in several adjacent extents), 0 otherwise, -EINVAL for NULL. */
int nsid_idmap_is_identity(const nsid_idmap *m);

/*
 * Translation. The strict functions return 0 and the translated id, or -ENOENT when the id
 * is not mapped (NSID_IDMAP_INVALID_ID is never mapped); *ret is untouched then.
 * The _munged functions behave like the kernel's from_kuid_munged(): they return 0 and the
 * translated id, or 1 and the overflow id when the id is not mapped.
 */
int nsid_idmap_to_host(const nsid_idmap *m, uint32_t ns_id, uint32_t *ret_host_id);
int nsid_idmap_to_ns(const nsid_idmap *m, uint32_t host_id, uint32_t *ret_ns_id);
int nsid_idmap_to_host_munged(const nsid_idmap *m, uint32_t ns_id, uint32_t *ret_host_id);
int nsid_idmap_to_ns_munged(const nsid_idmap *m, uint32_t host_id, uint32_t *ret_ns_id);

/* The map in the kernel's read format ("%10u %10u %10u\n" per extent, in map order), a
 * NUL-terminated string to free(); parsing it gives the same map back. */
NSID_API_WARN_UNUSED int nsid_idmap_format(const nsid_idmap *m, char **ret);

#ifdef __cplusplus
}
#endif
#endif
