/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl metrics --http: the one HTTP request a scrape makes, read from a socket systemd
 * accepted (nsid-metrics.socket), and the response. */
#ifndef NSIDCTL_HTTP_H
#define NSIDCTL_HTTP_H

#include <stddef.h>

/* The request head is read up to this many bytes; a longer one is refused (431). */
#define HTTP_HEAD_MAX 8192

typedef enum http_verdict {
        HTTP_METRICS,      /* GET or HEAD /metrics: 200 with the exposition */
        HTTP_NOT_FOUND,    /* another path: 404 */
        HTTP_BAD_METHOD,   /* not GET or HEAD: 405 */
        HTTP_BAD_REQUEST,  /* not an HTTP/1.x request line: 400 */
        HTTP_INCOMPLETE,   /* no end of the head yet: read more */
} http_verdict;

/* Judge a request head (len bytes, not NUL-terminated; anything after the blank line is
 * ignored). *ret_head is set for HEAD (no body in the response). */
http_verdict http_request_judge(const char *buf, size_t len, int *ret_head);
/* The status line's code and text for a verdict. */
int http_status(http_verdict v, const char **ret_text);

#endif
