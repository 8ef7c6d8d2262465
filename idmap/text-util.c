/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Escaping untrusted text for the log, strict numbers (text-util.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parse-util.h"
#include "text-util.h"

const char *log_escape(const char *s, size_t len, char *buf, size_t size) {
        size_t o = 0, shown = 0;

        if (size < 8)
                return "";
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (shown >= 160 || o + 8 >= size) {
                        memcpy(buf + o, "...", 3);
                        o += 3;
                        break;
                }
                if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"')
                        o += (size_t) snprintf(buf + o, size - o, "\\x%02x", c);
                else
                        buf[o++] = (char) c;
                shown++;
        }
        buf[o] = '\0';
        return buf;
}

int parse_uint_strict(const char *s, uint64_t max, uint64_t *ret) {
        if (!s)
                return -EINVAL;
        return parse_u64_n_canonical(s, strlen(s), max, ret);
}
