/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>

#include <nsid/ctlproto.h>
#include <nsid/registry.h>

#include "paths.h"

const char *paths_state_dir(const char *given, const nsid_conf *conf) {
        const char *v;

        if (given && *given)
                return given;
        v = conf ? nsid_conf_get_value(conf, "idmapd", "state-dir") : NULL;
        return v && *v ? v : NSID_STATE_DIR;
}

const char *paths_registry(const char *given, const char *state_dir, char *buf, size_t size) {
        if (given && *given)
                return given;
        snprintf(buf, size, "%s/%s", state_dir, NSID_REGISTRY_FILE);
        return buf;
}

const char *paths_ctl_socket(const char *given, char *buf, size_t size) {
        if (given && *given)
                return given;
        snprintf(buf, size, "%s/%s", NSID_RUN_DIR, NSID_CTL_SOCKET_NAME);
        return buf;
}
