/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfsidmap, c-ares and json-c, loaded on first use (dlopen) instead of at exec: the kernel
 * starts nsid-idmap for every upcall, the fast path through nsid-idmapd needs neither library,
 * only "nsid-idmap dns" needs c-ares and only the administrator's --json needs json-c. Include this after <nfsidmap.h> / <ares.h>; calls to
 * the functions listed below then go through the loaded library (call lazy_*_load() first;
 * it returns 0, or -ELIBACC when the library or a symbol is missing, logged).
 */
#ifndef NSID_IDMAP_LAZYLIB_H
#define NSID_IDMAP_LAZYLIB_H

#define LAZY_NFSIDMAP_SONAME "libnfsidmap.so.1"
#define LAZY_CARES_SONAME "libcares.so.2"
#define LAZY_JSONC_SONAME "libjson-c.so.5"

#define LAZY_NFSIDMAP_FNS(X)                                                                   \
        X(nfs4_init_name_mapping)                                                              \
        X(nfs4_get_default_domain)                                                             \
        X(nfs4_owner_to_uid)                                                                   \
        X(nfs4_group_owner_to_gid)                                                             \
        X(nfs4_uid_to_name)                                                                    \
        X(nfs4_gid_to_name)                                                                    \
        X(nfs4_set_debug)

#define LAZY_CARES_FNS(X)                                                                      \
        X(ares_library_init)                                                                   \
        X(ares_library_cleanup)                                                                \
        X(ares_init_options)                                                                   \
        X(ares_set_servers_ports_csv)                                                          \
        X(ares_getaddrinfo)                                                                    \
        X(ares_freeaddrinfo)                                                                   \
        X(ares_cancel)                                                                         \
        X(ares_fds)                                                                            \
        X(ares_timeout)                                                                        \
        X(ares_process)                                                                        \
        X(ares_destroy)                                                                        \
        X(ares_strerror)

/* what nsid-idmap's --json and shared/json-envelope.c call */
#define LAZY_JSONC_FNS(X)                                                                      \
        X(json_object_new_object)                                                              \
        X(json_object_new_array)                                                               \
        X(json_object_new_string)                                                              \
        X(json_object_new_string_len)                                                          \
        X(json_object_new_int)                                                                 \
        X(json_object_new_int64)                                                               \
        X(json_object_new_boolean)                                                             \
        X(json_object_object_add)                                                              \
        X(json_object_object_get_ex)                                                           \
        X(json_object_array_add)                                                               \
        X(json_object_is_type)                                                                 \
        X(json_object_to_json_string_ext)                                                      \
        X(json_object_put)

#define LAZY_MEMBER(f) __typeof__(f) *f;


int lazy_nfsidmap_load(void);
int lazy_cares_load(void);
int lazy_jsonc_load(void);

#if defined(LAZY_WANT_NFSIDMAP)
struct lazy_nfsidmap {
        LAZY_NFSIDMAP_FNS(LAZY_MEMBER)
};
extern struct lazy_nfsidmap lazy_nfsidmap;
#ifndef LAZY_NO_REDIRECT
#define nfs4_init_name_mapping lazy_nfsidmap.nfs4_init_name_mapping
#define nfs4_get_default_domain lazy_nfsidmap.nfs4_get_default_domain
#define nfs4_owner_to_uid lazy_nfsidmap.nfs4_owner_to_uid
#define nfs4_group_owner_to_gid lazy_nfsidmap.nfs4_group_owner_to_gid
#define nfs4_uid_to_name lazy_nfsidmap.nfs4_uid_to_name
#define nfs4_gid_to_name lazy_nfsidmap.nfs4_gid_to_name
#define nfs4_set_debug lazy_nfsidmap.nfs4_set_debug
#endif
#endif

#if defined(LAZY_WANT_CARES)
struct lazy_cares {
        LAZY_CARES_FNS(LAZY_MEMBER)
};
extern struct lazy_cares lazy_cares;
#ifndef LAZY_NO_REDIRECT
#define ares_library_init lazy_cares.ares_library_init
#define ares_library_cleanup lazy_cares.ares_library_cleanup
#define ares_init_options lazy_cares.ares_init_options
#define ares_set_servers_ports_csv lazy_cares.ares_set_servers_ports_csv
#define ares_getaddrinfo lazy_cares.ares_getaddrinfo
#define ares_freeaddrinfo lazy_cares.ares_freeaddrinfo
#define ares_cancel lazy_cares.ares_cancel
#define ares_fds lazy_cares.ares_fds
#define ares_timeout lazy_cares.ares_timeout
#define ares_process lazy_cares.ares_process
#define ares_destroy lazy_cares.ares_destroy
#define ares_strerror lazy_cares.ares_strerror
#endif
#endif

#if defined(LAZY_WANT_JSONC)
struct lazy_jsonc {
        LAZY_JSONC_FNS(LAZY_MEMBER)
};
extern struct lazy_jsonc lazy_jsonc;
#ifndef LAZY_NO_REDIRECT
#define json_object_new_object lazy_jsonc.json_object_new_object
#define json_object_new_array lazy_jsonc.json_object_new_array
#define json_object_new_string lazy_jsonc.json_object_new_string
#define json_object_new_string_len lazy_jsonc.json_object_new_string_len
#define json_object_new_int lazy_jsonc.json_object_new_int
#define json_object_new_int64 lazy_jsonc.json_object_new_int64
#define json_object_new_boolean lazy_jsonc.json_object_new_boolean
#define json_object_object_add lazy_jsonc.json_object_object_add
#define json_object_object_get_ex lazy_jsonc.json_object_object_get_ex
#define json_object_array_add lazy_jsonc.json_object_array_add
#define json_object_is_type lazy_jsonc.json_object_is_type
#define json_object_to_json_string_ext lazy_jsonc.json_object_to_json_string_ext
#define json_object_put lazy_jsonc.json_object_put
#endif
#endif

#endif
