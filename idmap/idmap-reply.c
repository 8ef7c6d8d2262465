/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The requester-context worker's reply, parsed as untrusted (idmap-reply.h). */
#include <errno.h>
#include <string.h>

#include <nsid/keyring.h>

#include "idmap-reply.h"
#include "text-util.h"

int idmap_parse_reply(char *reply, size_t size, idmap_reply *ret) {
        idmap_reply *a = ret;

        *a = (idmap_reply) {};
        if (strlen(reply) != size)
                return -EBADMSG;
        for (char *line = reply, *next; *line; line = next) {
                next = strchr(line, '\n');
                if (!next)
                        return -EBADMSG; /* every line ends with \n */
                *next++ = '\0';
                char *v = strchr(line, '=');
                if (!v)
                        return -EBADMSG;
                *v++ = '\0';
                uint64_t n;
                if (strcmp(line, "id") == 0 && !a->have &&
                    parse_uint_strict(v, UINT32_MAX - 1, &n) >= 0) {
                        a->id = (uint32_t) n;
                        a->have = true;
                } else if (strcmp(line, "name") == 0 && !a->have && strlen(v) < sizeof(a->name) &&
                           nsid_idmap_name_check(v, strlen(v)) >= 0) {
                        a->is_name = true;
                        memcpy(a->name, v, strlen(v) + 1);
                        a->have = true;
                } else if (strcmp(line, "err") == 0 && parse_uint_strict(v, 4095, &n) >= 0 &&
                           n > 0)
                        a->err = (int) n;
                else if (strcmp(line, "stage") == 0 &&
                         (strcmp(v, "load") == 0 || strcmp(v, "lookup") == 0))
                        a->stage_load = strcmp(v, "load") == 0;
                else if (strcmp(line, "nobody") == 0) {
                        (void) log_escape(v, strlen(v), a->nobody, sizeof(a->nobody));
                        a->have_nobody = true;
                } else if (strcmp(line, "creds") == 0) {
                        (void) log_escape(v, strlen(v), a->creds, sizeof(a->creds));
                        a->have_creds = true;
                } else if (strcmp(line, "baddomain") == 0)
                        a->baddomain = true;
                else
                        return -EBADMSG;
        }
        return 0;
}
