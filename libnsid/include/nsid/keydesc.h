/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_KEYDESC_H
#define NSID_KEYDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parsers of what the kernel's key upcalls hand a request-key helper (keydesc.c): id_resolver
 * key descriptions, KEYCTL_DESCRIBE texts, dns_resolver requests. Pure functions on text that
 * may come from a hostile requester: every field is checked strictly, nothing is guessed.
 */

/*
 * id_resolver key descriptions (fs/nfs/nfs4idmap.c): "uid:<name>", "gid:<name>" (name to id)
 * and "user:<id>", "group:<id>" (id to name).
 *
 * A name is 1 .. NSID_IDMAP_KEYDESC_NAME_MAX bytes, contains no control byte (0x00-0x1f,
 * 0x7f), no ':', no "@@", and neither starts nor ends with '@'. An id is plain decimal
 * (no sign, no blank, no leading zero except "0" itself) below 4294967295 ((u32)-1 is the
 * kernel's invalid id and is refused).
 */
#define NSID_IDMAP_KEYDESC_NAME_MAX 1024u

typedef enum nsid_idmap_key_kind {
        NSID_IDMAP_KEY_UID,   /* "uid:<name>" -> uid */
        NSID_IDMAP_KEY_GID,   /* "gid:<name>" -> gid */
        NSID_IDMAP_KEY_USER,  /* "user:<uid>" -> name */
        NSID_IDMAP_KEY_GROUP, /* "group:<gid>" -> name */
        _NSID_IDMAP_KEY_KIND_MAX,
} nsid_idmap_key_kind;

typedef struct nsid_idmap_keydesc {
        nsid_idmap_key_kind kind;
        uint32_t id;                                /* USER/GROUP */
        char name[NSID_IDMAP_KEYDESC_NAME_MAX + 1]; /* UID/GID, NUL-terminated */
} nsid_idmap_keydesc;

/* "uid", "gid", "user", "group"; NULL for an invalid kind. */
const char *nsid_idmap_key_kind_name(nsid_idmap_key_kind kind);
/* 1 for kinds whose answer is a name (USER, GROUP), 0 for ids, -EINVAL otherwise. */
int nsid_idmap_key_kind_answers_name(nsid_idmap_key_kind kind);

/* Parse exactly len bytes (no NUL needed). -EINVAL for an unknown prefix, a bad name or a bad
 * id; -ERANGE for an id out of range; -ENAMETOOLONG for an overlong name. */
NSID_API_WARN_UNUSED int nsid_idmap_keydesc_parse(const char *desc, size_t len,
                                                  nsid_idmap_keydesc *ret);
/* The name check alone (also used for names about to be returned to the kernel). */
int nsid_idmap_name_check(const char *name, size_t len);

/*
 * A key's KEYCTL_DESCRIBE text: "<type>;<uid>;<gid>;<perm hex>;<description>" (the
 * description may itself contain ';'). Pointers go into text.
 */
typedef struct nsid_key_describe {
        const char *type;
        size_t type_len;
        uint32_t uid;
        uint32_t gid;
        uint32_t perm;
        const char *description;
        size_t description_len;
} nsid_key_describe;

NSID_API_WARN_UNUSED int nsid_key_describe_parse(const char *text, size_t len,
                                                 nsid_key_describe *ret);

/*
 * dns_resolver requests: the key description "[<type>:]<name>" and the callout info, a
 * blank-separated list of options ("ipv4", "ipv6", "list", "key=value" forms ignored), as
 * keyutils' key.dns_resolver reads them. Types: none, "a" and "aaaa" (address lookups); any
 * other type is -EOPNOTSUPP. The name must be a valid DNS name (nsid/resolv.h). With empty
 * callout info the legacy behaviour applies: IPv4 only, first address only. With options,
 * the first address only unless "list"; neither "ipv4" nor "ipv6" means both. An option
 * containing ',' is -EINVAL (as in keyutils).
 */
typedef struct nsid_dns_request {
        char name[254];
        bool want_ipv4;
        bool want_ipv6;
        bool list; /* every address, not only the first */
} nsid_dns_request;

NSID_API_WARN_UNUSED int nsid_dns_request_parse(const char *desc, size_t desc_len,
                                                const char *callout, size_t callout_len,
                                                nsid_dns_request *ret);

#ifdef __cplusplus
}
#endif
#endif
