/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: nsid-idmapd's statistics over its control socket (nsid/ctlproto.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/ctlproto.h>

#include "nsidctl.h"

static int daemon_json(const char *socket_path, const char *request, int timeout_ms,
                       json_object **ret) {
        nsid_ctl_reply rp;
        char *line = NULL, *js;
        json_object *o;
        int r;

        if (timeout_ms <= 0)
                return -ETIMEDOUT;
        r = nsid_ctl_roundtrip(socket_path, request, strlen(request), (unsigned) timeout_ms,
                               NULL, NSID_CTL_REPLY_MAX + 1, &line);
        if (r < 0)
                return r;
        r = nsid_ctl_reply_parse(line, (size_t) r, &rp);
        if (r < 0) {
                free(line);
                return -EPROTO;
        }
        if (rp.kind == NSID_CTL_REPLY_ERROR) {
                free(line);
                return rp.error > 0 ? -rp.error : -EPROTO;
        }
        if (rp.kind != NSID_CTL_REPLY_OK) {
                free(line);
                return -EPROTO;
        }
        js = strndup(rp.rest, rp.rest_len);
        free(line);
        if (!js)
                return -ENOMEM;
        o = json_tokener_parse(js);
        free(js);
        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EPROTO;
        }
        *ret = o;
        return 0;
}

int daemon_status(const char *socket_path, int timeout_ms, json_object **ret) {
        return daemon_json(socket_path, "status\n", timeout_ms, ret);
}

int daemon_metrics(const char *socket_path, int timeout_ms, json_object **ret) {
        return daemon_json(socket_path, "metrics\n", timeout_ms, ret);
}
