/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The key type probe and its cache file (nsid/kernel.h), for tests and the fuzzer. Internal. */
#ifndef NSID_KERNEL_KEYS_INTERNAL_H
#define NSID_KERNEL_KEYS_INTERNAL_H

#include <stddef.h>

#define IDKEYS_SRCVERSION_MAX 64

/*
 * The cache file, exactly these four lines, each ending in '\n', nothing else:
 *   nsid-nfs-idkeys 1
 *   boot-id <36 characters: lower-case hex digits, '-' at 8, 13, 18 and 23>
 *   nfsv4-srcversion <1..64 upper-case hex digits: the module's srcversion, or the inode of
 *                    its sysfs directory when it has none; "-" when neither exists>
 *   tagged <0 or 1>
 */
typedef struct idkeys_cache {
        char boot_id[37];
        char srcversion[IDKEYS_SRCVERSION_MAX + 1]; /* "" for none */
        int tagged;                                 /* 0 or 1 */
} idkeys_cache;

#define IDKEYS_CACHE_MAX 256 /* longer than any valid file */

/* -EINVAL for anything but the format above (size bytes, NULs included). */
int idkeys_cache_parse(const char *text, size_t size, idkeys_cache *ret);
/* The file's text into buf (IDKEYS_CACHE_MAX bytes); its length, or -EINVAL for a value
 * the parser would refuse. */
int idkeys_cache_format(const idkeys_cache *c, char *buf, size_t size);

/* A module's srcversion as sysfs shows it ("<hex>\n"): 0 and the digits in ret, -ENOENT
 * when path does not exist (a built-in module has none), -EBADMSG for other content. */
int idkeys_read_srcversion(const char *path, char ret[IDKEYS_SRCVERSION_MAX + 1]);

/* The probe with a given payload and timeout (nsid_key_type_netns_probe() picks both). */
int key_type_probe(const char *type, const void *payload, size_t payload_len, int timeout_ms,
                   unsigned *ret_flags);

/* nsid_kernel_nfs_idkeys_tagged() for any two key types. */
int idkeys_pair_tagged(const char *type_a, const char *type_b);
/* nsid_kernel_nfs_idkeys_tagged_cached() for any two key types and srcversion file. */
int idkeys_pair_tagged_cached(const char *cache_path, const char *type_a, const char *type_b,
                              const char *srcversion_path);

#endif
