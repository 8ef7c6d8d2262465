/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfsidmap's administrative commands, same output: -l (list), -c (clear), -u/-g/-r NAME
 * (invalidate by exact name), -d (default domain).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <json-c/json.h>
#include <keyutils.h>
#include <nfsidmap.h>
#include <nsid/kernel.h>
#include <nsid/keyring.h>

#include "json-envelope.h"
#include "nsid-idmap.h"
#define LAZY_WANT_NFSIDMAP
#define LAZY_WANT_JSONC
#include "lazylib.h"

#ifndef KEYCTL_INVALIDATE
#define KEYCTL_INVALIDATE 21
#endif

/* A --json document: nsid's envelope, then the command's members; printed, and freed. */
static json_object *json_doc(const char *command) {
        if (lazy_jsonc_load() < 0)
                return NULL;
        json_object *o = json_object_new_object();
        if (o)
                json_envelope_add(o, "nsid-idmap", command);
        return o;
}

static int json_print(json_object *o) {
        if (!o) {
                logmsg(LOG_ERR, "out of memory");
                return 1;
        }
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        return fflush(stdout) == 0 ? 0 : 1;
}

/* The keyring named `name` that root owns: candidates from /proc/keys, each checked with
 * KEYCTL_DESCRIBE (a forged line naming another keyring is not taken). */
static key_serial_t find_keyring(const char *name) {
        return nsid_keyring_find(name, 0);
}

static key_serial_t open_ring(const idmap_opts *o) {
        key_serial_t ring = find_keyring(o->keyring);
        if (ring < 0)
                logmsg(LOG_ERR, "'%s' keyring was not found.", o->keyring);
        return ring;
}

int idmap_admin_list(const idmap_opts *o) {
        key_serial_t ring = open_ring(o);
        void *list = NULL;
        int n;

        if (ring < 0)
                return 1;
        n = keyctl_read_alloc(ring, &list);
        if (n < 0) {
                logmsg(LOG_ERR, "Failed to read keyring %s: %s", o->keyring, strerror(errno));
                return 1;
        }
        /* Keys invalidated or revoked but not yet garbage-collected still sit in the
         * keyring's list: they are not counted nor shown (nfsidmap prints an error for
         * each). */
        size_t total = (size_t) n / sizeof(key_serial_t), count = 0;
        char **descs = calloc(total ? total : 1, sizeof(char *));
        int *errs = calloc(total ? total : 1, sizeof(int));
        if (!descs || !errs) {
                free(descs);
                free(errs);
                free(list);
                logmsg(LOG_ERR, "out of memory");
                return 1;
        }
        for (size_t i = 0; i < total; i++) {
                if (keyctl_describe_alloc(((key_serial_t *) list)[i], &descs[i]) < 0) {
                        descs[i] = NULL;
                        errs[i] = errno;
                        if (errno == ENOKEY || errno == EKEYREVOKED)
                                continue;
                }
                count++;
        }
        json_object *doc = NULL, *keys = NULL;
        if (o->json) {
                doc = json_doc("list");
                if (!doc) {
                        for (size_t i = 0; i < total; i++)
                                free(descs[i]);
                        free(descs);
                        free(errs);
                        free(list);
                        return 1;
                }
                json_object_object_add(doc, "keyring", json_object_new_string(o->keyring));
                keys = json_object_new_array();
                json_object_object_add(doc, "keys", keys);
        } else if (o->no_legend)
                ;
        else if (count == 0)
                printf("No %s keys found.\n", o->keyring);
        else if (count == 1)
                printf("1 %s key found:\n", o->keyring);
        else
                printf("%zu %s keys found:\n", count, o->keyring);
        for (size_t i = 0; i < total; i++) {
                nsid_key_describe kd;
                key_serial_t serial = ((key_serial_t *) list)[i];
                if (!descs[i]) {
                        if (errs[i] == EKEYEXPIRED) {
                                if (keys) {
                                        json_object *k = json_object_new_object();
                                        json_object_object_add(k, "serial",
                                                               json_object_new_int64(serial));
                                        json_object_object_add(k, "state",
                                                               json_object_new_string("expired"));
                                        json_object_array_add(keys, k);
                                } else
                                        printf("Expired key not displayed\n");
                        } else if (errs[i] != ENOKEY && errs[i] != EKEYREVOKED)
                                logmsg(LOG_ERR, "Failed to describe key: %s", strerror(errs[i]));
                        continue;
                }
                if (nsid_key_describe_parse(descs[i], strlen(descs[i]), &kd) < 0)
                        logmsg(LOG_ERR, "Unparsable key not displayed");
                else if (keys) {
                        /* json-c escapes what the text form escapes by hand */
                        json_object *k = json_object_new_object();
                        json_object_object_add(k, "serial", json_object_new_int64(serial));
                        json_object_object_add(k, "type",
                                               json_object_new_string_len(kd.type,
                                                                          (int) kd.type_len));
                        json_object_object_add(k, "description",
                                               json_object_new_string_len(
                                                       kd.description, (int) kd.description_len));
                        json_object_object_add(k, "uid", json_object_new_int64(kd.uid));
                        json_object_object_add(k, "gid", json_object_new_int64(kd.gid));
                        json_object_object_add(k, "state", json_object_new_string("valid"));
                        json_object_array_add(keys, k);
                } else {
                        /* nfsidmap prints what follows the last ';', which cuts an owner
                         * name holding ';'; the description is the parsed one, whole, and
                         * escaped (a hostile server chose the name) */
                        char esc[1024];
                        printf("  %s\n", log_escape(kd.description, kd.description_len, esc,
                                                     sizeof(esc)));
                }
                free(descs[i]);
        }
        free(descs);
        free(errs);
        free(list);
        if (doc)
                return json_print(doc);
        return fflush(stdout) == 0 ? 0 : 1;
}

int idmap_admin_clear(const idmap_opts *o) {
        key_serial_t ring = find_keyring(o->keyring);
        /* Like nfsidmap: nothing to clear is success, said only with -v. */
        if (ring < 0) {
                if (o->verbose)
                        logmsg(LOG_ERR, "'%s' keyring was not found.", o->keyring);
                return 0;
        }
        if (keyctl_clear(ring) < 0) {
                logmsg(LOG_ERR, "keyctl_clear(0x%x) failed: %s", (unsigned) ring, strerror(errno));
                return 1;
        }
        if (o->verbose)
                logmsg(LOG_WARNING, "'%s' cleared", o->keyring);
        return 0;
}

/* "uid:alice@dom" matches -u alice@dom exactly, and -u alice (no '@' given) matches the
 * local part exactly: "alice@any" but never "alice2@any" or "alic". */
static bool name_matches(const char *v, size_t vlen, const char *name) {
        size_t nl = strlen(name);
        if (vlen == nl && memcmp(v, name, nl) == 0)
                return true;
        if (!strchr(name, '@') && vlen > nl && memcmp(v, name, nl) == 0 && v[nl] == '@')
                return true;
        return false;
}

int idmap_admin_invalidate(const idmap_opts *o, const char *name, bool uid, bool gid) {
        key_serial_t ring = open_ring(o);
        void *list = NULL;
        int n, done = 0;
        bool custom = strcmp(o->keyring, IDMAP_DEFAULT_KEYRING) != 0;

        if (ring < 0)
                return 1;
        n = keyctl_read_alloc(ring, &list);
        if (n < 0) {
                logmsg(LOG_ERR, "Failed to read keyring %s: %s", o->keyring, strerror(errno));
                return 1;
        }
        for (size_t i = 0; i < (size_t) n / sizeof(key_serial_t); i++) {
                key_serial_t k = ((key_serial_t *) list)[i];
                char *d = NULL;
                nsid_key_describe kd;
                bool m = false;

                if (keyctl_describe_alloc(k, &d) < 0)
                        continue;
                if (nsid_key_describe_parse(d, strlen(d), &kd) >= 0 &&
                    (custom || (kd.type_len == 11 && memcmp(kd.type, "id_resolver", 11) == 0) ||
                     (kd.type_len == 9 && memcmp(kd.type, "id_legacy", 9) == 0))) {
                        if (uid && kd.description_len > 4 && memcmp(kd.description, "uid:", 4) == 0)
                                m = name_matches(kd.description + 4, kd.description_len - 4, name);
                        if (gid && kd.description_len > 4 && memcmp(kd.description, "gid:", 4) == 0)
                                m = name_matches(kd.description + 4, kd.description_len - 4, name);
                }
                if (m) {
                        if (o->verbose)
                                logmsg(LOG_WARNING, "invalidating '%.*s'", (int) kd.description_len,
                                       kd.description);
                        if (keyctl(KEYCTL_INVALIDATE, k) < 0 &&
                            (errno != EOPNOTSUPP || keyctl_revoke(k) < 0)) {
                                logmsg(LOG_ERR, "keyctl_invalidate(0x%x) failed: %s", (unsigned) k,
                                       strerror(errno));
                                free(d);
                                free(list);
                                return 1;
                        }
                        done++;
                }
                free(d);
        }
        free(list);
        if (done == 0) {
                logmsg(LOG_ERR, "'%s' key was not found.", name);
                return 1;
        }
        return 0;
}

int idmap_admin_domain(const idmap_opts *o) {
        char domain[NFS4_MAX_DOMAIN_LEN];
        if (lazy_nfsidmap_load() < 0)
                return 1;
        int r = nfs4_init_name_mapping((char *) o->idmapd_conf);
        if (r != 0) {
                logmsg(LOG_ERR, "Unable to create name to user id mappings (%s): %s",
                       o->idmapd_conf, strerror(r < 0 ? -r : EINVAL));
                return 1;
        }
        r = nfs4_get_default_domain(NULL, domain, sizeof(domain));
        if (r != 0) {
                logmsg(LOG_ERR, "nfs4_get_default_domain failed: %s", strerror(r < 0 ? -r : EINVAL));
                return 1;
        }
        if (o->json) {
                json_object *doc = json_doc("domain");
                if (!doc)
                        return 1;
                json_object_object_add(doc, "domain", json_object_new_string(domain));
                json_object_object_add(doc, "idmapd_conf",
                                       json_object_new_string(o->idmapd_conf));
                return json_print(doc);
        }
        printf("%s\n", domain);
        return fflush(stdout) == 0 ? 0 : 1;
}
