/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "parse-util.h"

int parse_u64_n(const char *s, size_t len, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (!s || len == 0)
                return -EINVAL;
        if (len > 20) {
                /* Too many digits for 64 bits, or not a number at all; never look past len:
                 * the field need not be NUL-terminated. */
                for (size_t i = 0; i < len; i++)
                        if (s[i] < '0' || s[i] > '9')
                                return -EINVAL;
                return -ERANGE;
        }
        for (size_t i = 0; i < len; i++) {
                unsigned d;
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                d = (unsigned) (s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        if (v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int parse_u64_n_canonical(const char *s, size_t len, uint64_t max, uint64_t *ret) {
        if (s && len > 1 && s[0] == '0')
                return -EINVAL;
        return parse_u64_n(s, len, max, ret);
}

int parse_u64_max(const char *s, uint64_t max, uint64_t *ret) {
        if (!s)
                return -EINVAL;
        return parse_u64_n(s, strlen(s), max, ret);
}

int parse_u32(const char *s, uint32_t *ret) {
        uint64_t v;
        int r = parse_u64_max(s, UINT32_MAX, &v);
        if (r < 0)
                return r;
        *ret = (uint32_t) v;
        return 0;
}

int parse_pid(const char *s, int *ret) {
        uint64_t v;
        int r = parse_u64_max(s, 4194304, &v);
        if (r < 0)
                return r;
        if (v == 0)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v;
        int r = parse_u64_max(s, max, &v);
        if (r < 0)
                return r;
        if (v < min)
                return -ERANGE;
        *ret = v;
        return 0;
}

int split_fields(const char *line, size_t len, const char **f, size_t *fl, size_t max) {
        size_t k = 0, start = 0;

        if (len > 0 && line[len - 1] == '\n')
                len--;
        if (len == 0 || memchr(line, '\n', len) || memchr(line, '\0', len))
                return -EINVAL;
        for (size_t i = 0; i <= len; i++) {
                if (i == len || line[i] == ' ') {
                        if (i == start || k == max)
                                return -EINVAL; /* empty field, or too many */
                        f[k] = line + start;
                        fl[k] = i - start;
                        k++;
                        start = i + 1;
                }
        }
        return (int) k;
}

bool utf8_valid(const void *p, size_t len) {
        const unsigned char *s = p;
        size_t i = 0;
        while (i < len) {
                unsigned char c = s[i];
                size_t n;
                unsigned char lo = 0x80, hi = 0xbf;

                if (c < 0x80) {
                        i++;
                        continue;
                }
                if (c >= 0xc2 && c <= 0xdf)
                        n = 1;
                else if (c >= 0xe0 && c <= 0xef) {
                        n = 2;
                        if (c == 0xe0)
                                lo = 0xa0;
                        else if (c == 0xed)
                                hi = 0x9f;
                } else if (c >= 0xf0 && c <= 0xf4) {
                        n = 3;
                        if (c == 0xf0)
                                lo = 0x90;
                        else if (c == 0xf4)
                                hi = 0x8f;
                } else
                        return false;
                if (len - i <= n)
                        return false;
                if (s[i + 1] < lo || s[i + 1] > hi)
                        return false;
                for (size_t k = 2; k <= n; k++)
                        if (s[i + k] < 0x80 || s[i + k] > 0xbf)
                                return false;
                i += n + 1;
        }
        return true;
}

int unhexchar(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

void escape_bytes(const void *p, size_t len, char *out) {
        const uint8_t *name = p;
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        for (size_t i = 0; i < len; i++) {
                uint8_t c = name[i];
                if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                        out[o++] = (char) c;
                else {
                        out[o++] = '\\';
                        out[o++] = 'x';
                        out[o++] = hex[c >> 4];
                        out[o++] = hex[c & 15];
                }
        }
        out[o] = 0;
}
