/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "fmt-util.h"

size_t fmt_u64(char *buf, uint64_t v) {
        char t[20];
        size_t n = 0;

        do {
                t[n++] = (char) ('0' + v % 10);
                v /= 10;
        } while (v);
        for (size_t i = 0; i < n; i++)
                buf[i] = t[n - 1 - i];
        buf[n] = '\0';
        return n;
}

size_t fmt_hex(char *buf, uint64_t v, unsigned width) {
        static const char digits[] = "0123456789abcdef";
        char t[16];
        size_t n = 0;

        if (width > 16)
                width = 16;
        do {
                t[n++] = digits[v & 0xf];
                v >>= 4;
        } while (v);
        while (n < width)
                t[n++] = '0';
        for (size_t i = 0; i < n; i++)
                buf[i] = t[n - 1 - i];
        buf[n] = '\0';
        return n;
}

int fmt_join(char *buf, size_t size, ...) {
        va_list ap;
        size_t len = 0;
        const char *s;
        int r = 0;

        if (size == 0)
                return -ENOBUFS;
        va_start(ap, size);
        while ((s = va_arg(ap, const char *))) {
                size_t l = strlen(s);
                if (l >= size - len) {
                        r = -ENOBUFS;
                        break;
                }
                memcpy(buf + len, s, l);
                len += l;
        }
        va_end(ap);
        if (r < 0) {
                buf[0] = '\0';
                return r;
        }
        buf[len] = '\0';
        return (int) len;
}
