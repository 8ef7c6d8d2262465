/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl metrics --http: the request head any peer of nsid-metrics.socket sends. */
#include <stdint.h>
#include <string.h>

#include "nsidctl/http.h"

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text;
        int head = -1, code;
        http_verdict v;

        if (size > HTTP_HEAD_MAX)
                size = HTTP_HEAD_MAX;
        v = http_request_judge((const char *) data, size, &head);
        CHECK(v >= HTTP_METRICS && v <= HTTP_INCOMPLETE);
        CHECK(head == 0 || head == 1);
        CHECK(!head || v == HTTP_METRICS || v == HTTP_NOT_FOUND);
        /* a full-size head is never "read more" */
        CHECK(size < HTTP_HEAD_MAX || v != HTTP_INCOMPLETE);
        if (v == HTTP_METRICS)
                CHECK(size >= 16 && (memcmp(data, "GET /metrics", 12) == 0 ||
                                     memcmp(data, "HEAD /metrics", 13) == 0));
        code = http_status(v, &text);
        CHECK(code >= 200 && code < 500 && text && *text);
        return 0;
}
