/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/keys text (descriptions in it are chosen by any process that adds a key) and the
 * .request_key_auth description; and what requester discovery reads of the pid found there:
 * /proc/PID/stat (the command name in it is the process's choice) and /proc/PID/status. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/keyring.h>

#include "fuzz-check.h"
#include "proc-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *s = (const char *) data, *end = s + size;
        nsid_proc_keys_entry e;
        int32_t target;
        pid_t pid;
        size_t ci;

        if (size > 1024 * 1024)
                return 0;
        for (const char *p = s; p < end;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t l = nl ? (size_t) (nl - p) : (size_t) (end - p);
                if (nsid_proc_keys_parse_line(p, l, &e) == 0) {
                        CHECK(e.serial > 0);
                        CHECK(strlen(e.type) > 0 && strlen(e.type) <= 9);
                        CHECK(e.description >= p && e.description + e.description_len <= p + l);
                        int32_t serial = e.serial;
                        int f = nsid_proc_keys_find(s, size, serial, &e);
                        CHECK(f == 0 || f == -ENOTUNIQ);
                        /* the brief lookup agrees wherever both succeed, and sees every
                         * duplicate the full one sees */
                        char type[10];
                        const char *d;
                        size_t dl;
                        int b = nsid_proc_keys_find_brief(s, size, serial, type, &d, &dl);
                        CHECK(b == 0 || b == -ENOTUNIQ);
                        CHECK(f != -ENOTUNIQ || b == -ENOTUNIQ);
                        if (f == 0 && b == 0)
                                CHECK(strcmp(type, e.type) == 0 && d == e.description &&
                                      dl == e.description_len);
                        if (nsid_reqkey_auth_parse(e.description, e.description_len, &target,
                                                   &pid, &ci) == 0)
                                CHECK(target > 0 && pid > 0);
                }
                p += l + (nl ? 1 : 0);
        }
        if (nsid_reqkey_auth_parse(s, size, &target, &pid, &ci) == 0)
                CHECK(target > 0 && pid > 0 && ci <= 1024 * 1024);
        uint64_t start;
        (void) proc_stat_parse_starttime(s, size, &start);
        if (proc_status_parse_tgid(s, size, &pid) == 0)
                CHECK(pid > 0 && pid <= 4194304);
        return 0;
}
