/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: where things are. Command line first, then the environment the other nsid
 * programs honour, then /etc/nsid.conf, then the compiled-in defaults. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/ctlproto.h>
#include <nsid/registry.h>

#include "nsidctl.h"

static nsid_conf *conf;
static int conf_error;
static bool conf_loaded;
static char registry_buf[4096], socket_buf[4096];

nsid_conf *ctx_config(int *ret_error) {
        if (!conf_loaded) {
                conf_loaded = true;
                conf_error = nsid_conf_load(arg.config_path, &conf);
                if (conf_error < 0)
                        conf = NULL;
        }
        if (ret_error)
                *ret_error = conf_error;
        return conf;
}

const char *ctx_state_dir(void) {
        if (arg.state_dir)
                return arg.state_dir;
        nsid_conf *c = ctx_config(NULL);
        const char *v = c ? nsid_conf_get_value(c, "idmapd", "state-dir") : NULL;
        return v ? v : NSID_STATE_DIR;
}

const char *ctx_registry_path(void) {
        if (arg.registry_path)
                return arg.registry_path;
        snprintf(registry_buf, sizeof(registry_buf), "%s/%s", ctx_state_dir(), NSID_REGISTRY_FILE);
        return registry_buf;
}

const char *ctx_socket_path(void) {
        if (arg.socket_path)
                return arg.socket_path;
        snprintf(socket_buf, sizeof(socket_buf), "%s/%s", NSID_RUN_DIR, NSID_CTL_SOCKET_NAME);
        return socket_buf;
}

const char *ctx_idmapd_conf(void) {
        nsid_conf *c = ctx_config(NULL);
        const char *v = c ? nsid_conf_get_value(c, "idmapd", "idmapd-conf") : NULL;
        return v ? v : "/etc/idmapd.conf";
}

void ctx_done(void) {
        conf = nsid_conf_unref(conf);
        conf_loaded = false;
}
