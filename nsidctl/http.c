/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The request a Prometheus scrape sends (RFC 9112: request line, header fields, a blank
 * line), judged without interpreting more of it than the verdict needs: the bytes come from
 * the network. */
#include <string.h>

#include "http.h"

static const char *find_crlf(const char *p, const char *end) {
        for (; p + 1 < end; p++)
                if (p[0] == '\r' && p[1] == '\n')
                        return p;
        return NULL;
}

/* the end of the head (the blank line), tolerating bare LF line ends as RFC 9112 allows */
static int head_complete(const char *buf, size_t len) {
        for (size_t i = 0; i + 1 < len; i++) {
                if (buf[i] == '\n' && buf[i + 1] == '\n')
                        return 1;
                if (i + 3 < len && memcmp(buf + i, "\r\n\r\n", 4) == 0)
                        return 1;
        }
        return 0;
}

http_verdict http_request_judge(const char *buf, size_t len, int *ret_head) {
        const char *end = buf + len, *eol, *sp1, *sp2, *target;
        size_t mlen, tlen, vlen;

        *ret_head = 0;
        eol = find_crlf(buf, end);
        if (!eol) {
                eol = memchr(buf, '\n', len);
                if (!eol)
                        return len >= HTTP_HEAD_MAX ? HTTP_BAD_REQUEST : HTTP_INCOMPLETE;
        }
        sp1 = memchr(buf, ' ', (size_t) (eol - buf));
        if (!sp1 || sp1 == buf)
                return HTTP_BAD_REQUEST;
        sp2 = memchr(sp1 + 1, ' ', (size_t) (eol - sp1 - 1));
        if (!sp2 || sp2 == sp1 + 1)
                return HTTP_BAD_REQUEST;
        vlen = (size_t) (eol - sp2 - 1);
        if (vlen != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || sp2[8] < '0' || sp2[8] > '9')
                return HTTP_BAD_REQUEST;
        for (const char *p = buf; p < eol; p++)
                if ((unsigned char) *p < 0x21 && *p != ' ')
                        return HTTP_BAD_REQUEST;
        if (!head_complete(buf, len))
                return len >= HTTP_HEAD_MAX ? HTTP_BAD_REQUEST : HTTP_INCOMPLETE;
        mlen = (size_t) (sp1 - buf);
        target = sp1 + 1;
        tlen = (size_t) (sp2 - target);
        if (!(mlen == 3 && memcmp(buf, "GET", 3) == 0) &&
            !(mlen == 4 && memcmp(buf, "HEAD", 4) == 0))
                return HTTP_BAD_METHOD;
        *ret_head = mlen == 4;
        /* the path, without a query */
        for (size_t i = 0; i < tlen; i++)
                if (target[i] == '?') {
                        tlen = i;
                        break;
                }
        if (tlen == 8 && memcmp(target, "/metrics", 8) == 0)
                return HTTP_METRICS;
        return HTTP_NOT_FOUND;
}

int http_status(http_verdict v, const char **ret_text) {
        switch (v) {
        case HTTP_METRICS:
                *ret_text = "OK";
                return 200;
        case HTTP_NOT_FOUND:
                *ret_text = "Not Found";
                return 404;
        case HTTP_BAD_METHOD:
                *ret_text = "Method Not Allowed";
                return 405;
        default:
                *ret_text = "Bad Request";
                return 400;
        }
}
