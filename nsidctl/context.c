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
#include "paths.h"

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
        return paths_state_dir(arg.state_dir, arg.state_dir ? NULL : ctx_config(NULL));
}

const char *ctx_registry_path(void) {
        return paths_registry(arg.registry_path, ctx_state_dir(), registry_buf, sizeof(registry_buf));
}

const char *ctx_socket_path(void) {
        return paths_ctl_socket(arg.socket_path, socket_buf, sizeof(socket_buf));
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
