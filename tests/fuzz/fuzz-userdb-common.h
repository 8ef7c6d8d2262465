/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared body of fuzz-passwd.c and fuzz-group.c: parse, then check that every name on a line
 * that was kept resolves consistently both ways. */
#ifndef FUZZ_USERDB_COMMON_H
#define FUZZ_USERDB_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nsid/userdb.h"
#include "userdb-internal.h"

#include "fuzz-check.h"

#define INPUT_MAX (1024 * 1024)

static int lookup_name(const nsid_userdb *db, int group, const char *name, uint32_t *ret) {
        return group ? nsid_userdb_group_by_name(db, name, ret)
                     : nsid_userdb_user_by_name(db, name, ret, NULL);
}

static int lookup_id(const nsid_userdb *db, int group, uint32_t id, const char **ret) {
        return group ? nsid_userdb_group_by_gid(db, id, ret)
                     : nsid_userdb_user_by_uid(db, id, ret, NULL);
}

static void fuzz_userdb(const uint8_t *data, size_t size, int group) {
        nsid_userdb *db = NULL;
        nsid_userdb_counts c;
        size_t lines = 0;

        if (size > INPUT_MAX)
                return;
        int r = group ? nsid_userdb_parse("", 0, (const char *) data, size, &db)
                      : nsid_userdb_parse((const char *) data, size, NULL, 0, &db);
        CHECK(r == 0);
        CHECK(nsid_userdb_get_counts(db, group ? NSID_USERDB_GROUP : NSID_USERDB_PASSWD, &c) ==
              0);
        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n';
        lines += size > 0 && data[size - 1] != '\n';
        CHECK(c.entries + c.invalid + c.duplicates <= lines);

        /* Every first field (after leading blanks) that resolves must round-trip. */
        size_t pos = 0, found = 0;
        while (pos < size) {
                const uint8_t *nl = memchr(data + pos, '\n', size - pos);
                size_t len = nl ? (size_t) (nl - (data + pos)) : size - pos;
                const char *s = (const char *) data + pos;
                size_t k = 0;
                while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r' || s[k] == '\v' ||
                                   s[k] == '\f'))
                        k++;
                const char *colon = memchr(s + k, ':', len - k);
                size_t nlen = colon ? (size_t) (colon - (s + k)) : 0;
                if (colon && nlen <= NSID_USERDB_NAME_MAX && !memchr(s + k, '\0', nlen)) {
                        char name[NSID_USERDB_NAME_MAX + 1];
                        uint32_t id, id2;
                        const char *n2;
                        memcpy(name, s + k, nlen);
                        name[nlen] = '\0';
                        if (lookup_name(db, group, name, &id) == 0) {
                                found++;
                                CHECK(userdb_name_valid(name, nlen));
                                CHECK(id != UINT32_MAX);
                                CHECK(lookup_id(db, group, id, &n2) == 0);
                                CHECK(lookup_name(db, group, n2, &id2) == 0 && id2 == id);
                        }
                }
                pos += len + (nl ? 1 : 0);
        }
        /* Each kept entry's own line resolves (duplicate and invalid lines may too). */
        CHECK(found >= c.entries);
        CHECK(lookup_id(db, group, UINT32_MAX, &(const char *) { NULL }) == -ENOENT);
        nsid_userdb_unref(db);
}

#endif
