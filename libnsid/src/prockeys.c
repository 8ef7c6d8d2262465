/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/keys lines and the .request_key_auth description (nsid/keyring.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <nsid/prockeys.h>

#include "fmt-util.h"
#include "macro.h"
#include "parse-util.h"

/* One token of non-blank characters, after skipping blanks (the kernel pads with ' '). */
static int next_token(const char **p, const char *end, const char **ret, size_t *ret_len) {
        const char *s = *p;
        while (s < end && *s == ' ')
                s++;
        const char *t = s;
        while (s < end && *s != ' ')
                s++;
        if (s == t)
                return -EINVAL;
        *ret = t;
        *ret_len = (size_t) (s - t);
        *p = s;
        return 0;
}

static int parse_hex_u32(const char *s, size_t len, uint32_t *ret) {
        uint64_t v = 0;
        if (len == 0 || len > 8)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                unsigned d;
                if (c >= '0' && c <= '9')
                        d = (unsigned) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        d = (unsigned) (c - 'a' + 10);
                else
                        return -EINVAL;
                v = v * 16 + d;
        }
        *ret = (uint32_t) v;
        return 0;
}

static int parse_expiry(const char *s, size_t len) {
        if (len == 4 && (memcmp(s, "perm", 4) == 0 || memcmp(s, "expd", 4) == 0))
                return 0;
        if (len < 2 || !strchr("smhdw", s[len - 1]))
                return -EINVAL;
        uint64_t v;
        return parse_u64_n(s, len - 1, UINT64_MAX, &v);
}

_public_ int nsid_proc_keys_parse_line(const char *line, size_t len, nsid_proc_keys_entry *ret) {
        const char *p = line, *end, *t;
        size_t tl;
        uint64_t v;
        uint32_t serial;
        nsid_proc_keys_entry e = {};

        assert_return(line, -EINVAL);
        assert_return(ret, -EINVAL);

        end = line + len;
        if (end > line && end[-1] == '\n')
                end--;
        if (memchr(line, '\n', (size_t) (end - line)) || memchr(line, '\0', (size_t) (end - line)))
                return -EINVAL;

        /* serial: "%08x", no leading blank */
        if (p < end && *p == ' ')
                return -EINVAL;
        if (next_token(&p, end, &t, &tl) < 0 || tl < 8 || parse_hex_u32(t, tl, &serial) < 0 ||
            serial == 0 || serial > INT32_MAX)
                return -EINVAL;
        e.serial = (int32_t) serial;
        /* flags: exactly 7 characters */
        if (p >= end || *p != ' ')
                return -EINVAL;
        p++;
        if (end - p < 7)
                return -EINVAL;
        memcpy(e.flags, p, 7);
        e.flags[7] = '\0';
        for (unsigned i = 0; i < 7; i++)
                if (e.flags[i] == ' ' || (unsigned char) e.flags[i] < 0x21 ||
                    (unsigned char) e.flags[i] > 0x7e)
                        return -EINVAL;
        p += 7;
        if (p >= end || *p != ' ')
                return -EINVAL;
        /* usage */
        if (next_token(&p, end, &t, &tl) < 0 || parse_u64_n(t, tl, UINT32_MAX, &v) < 0)
                return -EINVAL;
        e.usage = (uint32_t) v;
        /* expiry */
        if (next_token(&p, end, &t, &tl) < 0 || tl >= sizeof(e.expiry) ||
            parse_expiry(t, tl) < 0)
                return -EINVAL;
        memcpy(e.expiry, t, tl);
        e.expiry[tl] = '\0';
        /* perm: "%08x" */
        if (next_token(&p, end, &t, &tl) < 0 || tl != 8 || parse_hex_u32(t, tl, &e.perm) < 0)
                return -EINVAL;
        /* uid, gid */
        if (next_token(&p, end, &t, &tl) < 0 || parse_u64_n(t, tl, UINT32_MAX, &v) < 0)
                return -EINVAL;
        e.uid = (uint32_t) v;
        if (next_token(&p, end, &t, &tl) < 0 || parse_u64_n(t, tl, UINT32_MAX, &v) < 0)
                return -EINVAL;
        e.gid = (uint32_t) v;
        /* type: one blank, then exactly 9 characters (padded with blanks or truncated), then
         * one blank, then the description. */
        if (p >= end || *p != ' ')
                return -EINVAL;
        p++;
        if (end - p < 10 || p[9] != ' ')
                return -EINVAL;
        tl = 9;
        while (tl > 0 && p[tl - 1] == ' ')
                tl--;
        if (tl == 0 || memchr(p, ' ', tl))
                return -EINVAL;
        memcpy(e.type, p, tl);
        e.type[tl] = '\0';
        p += 10;
        e.description = p;
        e.description_len = (size_t) (end - p);
        *ret = e;
        return 0;
}

_public_ int nsid_proc_keys_find(const char *text, size_t size, int32_t serial,
                                 nsid_proc_keys_entry *ret) {
        const char *p = text, *end = text + size;
        nsid_proc_keys_entry found;
        bool have = false;

        assert_return(text || size == 0, -EINVAL);
        assert_return(serial > 0, -EINVAL);
        assert_return(ret, -EINVAL);

        /* Every line is looked at: descriptions are printed raw, so a key whose description
         * holds a newline can forge a line that looks like another key's. Such a forged
         * line makes the serial appear twice, and the lookup fails instead of guessing. */
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t l = nl ? (size_t) (nl - p) : (size_t) (end - p);
                nsid_proc_keys_entry e;

                if (nsid_proc_keys_parse_line(p, l, &e) >= 0 && e.serial == serial) {
                        if (have)
                                return -ENOTUNIQ;
                        found = e;
                        have = true;
                }
                p += l + (nl ? 1 : 0);
        }
        if (!have)
                return -ENOENT;
        *ret = found;
        return 0;
}

_public_ int nsid_proc_keys_find_brief(const char *text, size_t size, int32_t serial,
                                       char ret_type[10], const char **ret_description,
                                       size_t *ret_description_len) {
        const char *end = text + size, *line = NULL, *line_end = NULL;
        char pat[9];

        assert_return(text || size == 0, -EINVAL);
        assert_return(serial > 0, -EINVAL);
        assert_return(ret_type, -EINVAL);

        (void) fmt_hex(pat, (uint32_t) serial, 8); /* "%08x" */
        pat[8] = ' ';
        /* Every line start is compared: a second line starting with the serial, however
         * malformed, can only be a forged one (a description with a newline). */
        for (const char *p = text; p < end;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *le = nl ? nl : end;
                if ((size_t) (le - p) >= sizeof(pat) && memcmp(p, pat, sizeof(pat)) == 0) {
                        if (line)
                                return -ENOTUNIQ;
                        line = p;
                        line_end = le;
                }
                p = nl ? nl + 1 : end;
        }
        if (!line)
                return -ENOENT;
        if (memchr(line, '\0', (size_t) (line_end - line)))
                return -EINVAL;

        /* six fields, each after at least one blank: the flags (exactly 7 characters, after
         * exactly one blank), the usage, expiry, perm, uid and gid */
        const char *p = line + sizeof(pat) - 1;
        for (unsigned field = 0; field < 6; field++) {
                const char *blanks = p;
                while (p < line_end && *p == ' ')
                        p++;
                const char *t = p;
                while (p < line_end && *p != ' ')
                        p++;
                if (t == blanks || p == t ||
                    (field == 0 && (t != blanks + 1 || p - t != 7)))
                        return -EINVAL;
        }
        /* one blank, the type in 9 columns, one blank, the description */
        if (line_end - p < 11 || p[0] != ' ' || p[10] != ' ')
                return -EINVAL;
        p++;
        size_t tl = 9;
        while (tl > 0 && p[tl - 1] == ' ')
                tl--;
        if (tl == 0 || memchr(p, ' ', tl))
                return -EINVAL;
        memcpy(ret_type, p, tl);
        ret_type[tl] = '\0';
        if (ret_description)
                *ret_description = p + 10;
        if (ret_description_len)
                *ret_description_len = (size_t) (line_end - (p + 10));
        return 0;
}

_public_ int nsid_reqkey_auth_parse(const char *desc, size_t len, int32_t *ret_target,
                                    pid_t *ret_pid, size_t *ret_callout_len) {
        const char *p = desc, *end, *sp;
        uint32_t target;
        uint64_t pid, ci;

        assert_return(desc, -EINVAL);

        end = desc + len;
        if (len < 4 || memcmp(p, "key:", 4) != 0)
                return -EINVAL;
        p += 4;
        sp = memchr(p, ' ', (size_t) (end - p));
        if (!sp || (sp - p > 1 && p[0] == '0') || parse_hex_u32(p, (size_t) (sp - p), &target) < 0 ||
            target == 0 || target > INT32_MAX)
                return -EINVAL;
        p = sp + 1;
        if (end - p < 4 || memcmp(p, "pid:", 4) != 0)
                return -EINVAL;
        p += 4;
        sp = memchr(p, ' ', (size_t) (end - p));
        if (!sp || parse_u64_n_canonical(p, (size_t) (sp - p), 4194304, &pid) < 0 || pid == 0)
                return -EINVAL;
        p = sp + 1;
        if (end - p < 3 || memcmp(p, "ci:", 3) != 0)
                return -EINVAL;
        p += 3;
        if (parse_u64_n_canonical(p, (size_t) (end - p), 1024 * 1024, &ci) < 0)
                return -EINVAL;

        if (ret_target)
                *ret_target = (int32_t) target;
        if (ret_pid)
                *ret_pid = (pid_t) pid;
        if (ret_callout_len)
                *ret_callout_len = (size_t) ci;
        return 0;
}
