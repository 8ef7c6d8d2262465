/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where nsid keeps things, one rule for every program: what the command line or the
 * environment names, else nsid.conf, else the build's default. */
#ifndef NSID_SHARED_PATHS_H
#define NSID_SHARED_PATHS_H

#include <stddef.h>

#include <nsid/conffile.h>

/* The state directory (registry, host secret, histories): given (--state-dir, or
 * NSID_STATE_DIR as the caller read it), else nsid.conf's [idmapd] state-dir (conf may be
 * NULL: not read or not usable), else NSID_STATE_DIR of the build. An empty given is none. */
const char *paths_state_dir(const char *given, const nsid_conf *conf);

/* The identity registry: given (--registry, NSID_REGISTRY), else STATE_DIR/registry.db,
 * formatted into buf. */
const char *paths_registry(const char *given, const char *state_dir, char *buf, size_t size);

/* nsid-idmapd's control socket: given (--socket), else NSID_RUN_DIR/idmapd.sock, into buf. */
const char *paths_ctl_socket(const char *given, char *buf, size_t size);

#endif
