/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmap's requester-context worker reply (idmap/idmap-reply.c): the worker parsed a
 * container's passwd, group and idmapd.conf, so its reply is hostile input to the privileged
 * helper. Invariants, accepted or refused (a refused reply's result holds the lines before
 * the refused one, whose notes are logged): an id is never (u32)-1, a name is one the kernel
 * may be given (nsid_idmap_name_check(), at most 1,024 bytes), err is 0..4095, the log texts
 * are printable and bounded. An accepted result written back as a reply parses to the same. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/keyring.h>

#include "idmap/idmap-reply.h"
#include "idmap/text-util.h"

#include "fuzz-check.h"

#define INPUT_MAX 8192 /* twice the worker's reply bound (4 KiB) */

static void check_text(const char *s, size_t size) {
        size_t len = strnlen(s, size);
        CHECK(len < size);
        for (size_t i = 0; i < len; i++)
                CHECK(s[i] >= 0x20 && s[i] <= 0x7e && s[i] != '"');
}

static void check_result(const idmap_reply *a) {
        CHECK(a->have || (!a->is_name && a->id == 0));
        if (a->is_name) {
                size_t len = strnlen(a->name, sizeof(a->name));
                CHECK(len > 0 && len <= NSID_IDMAP_KEYDESC_NAME_MAX);
                CHECK(nsid_idmap_name_check(a->name, len) == 0);
                CHECK(a->id == 0);
        } else {
                CHECK(a->id != UINT32_MAX && a->name[0] == '\0');
        }
        CHECK(a->err >= 0 && a->err <= 4095);
        check_text(a->nobody, sizeof(a->nobody));
        check_text(a->creds, sizeof(a->creds));
        CHECK(a->have_nobody || a->nobody[0] == '\0');
        CHECK(a->have_creds || a->creds[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char buf[INPUT_MAX + 1], out[4096];
        static idmap_reply a, b;
        char esc[IDMAP_REPLY_NOTE_MAX];
        size_t o = 0;

        if (size > INPUT_MAX)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        int r = idmap_parse_reply(buf, size, &a);
        CHECK(r == 0 || r == -EBADMSG);
        check_result(&a);
        if (r < 0)
                return 0;

#define OUT(...) o += (size_t) snprintf(out + o, sizeof(out) - o, __VA_ARGS__)
        if (a.have_creds)
                OUT("creds=%s\n", a.creds);
        if (a.baddomain)
                OUT("baddomain=1\n");
        if (a.have_nobody)
                OUT("nobody=%s\n", a.nobody);
        if (a.err)
                OUT("err=%d\n", a.err);
        OUT("stage=%s\n", a.stage_load ? "load" : "lookup");
        if (a.have && a.is_name)
                OUT("name=%s\n", a.name);
        else if (a.have)
                OUT("id=%u\n", (unsigned) a.id);
#undef OUT
        CHECK(o < sizeof(out));
        CHECK(idmap_parse_reply(out, o, &b) == 0);
        CHECK(b.have == a.have && b.is_name == a.is_name && b.id == a.id &&
              strcmp(b.name, a.name) == 0 && b.err == a.err && b.stage_load == a.stage_load &&
              b.have_nobody == a.have_nobody && b.have_creds == a.have_creds &&
              b.baddomain == a.baddomain);
        CHECK(strcmp(b.nobody, log_escape(a.nobody, strlen(a.nobody), esc, sizeof(esc))) == 0);
        CHECK(strcmp(b.creds, log_escape(a.creds, strlen(a.creds), esc, sizeof(esc))) == 0);
        return 0;
}
