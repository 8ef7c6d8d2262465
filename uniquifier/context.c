/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-uniquifier: the command line's numbers, the state directory and registry, and the
 * context every subcommand sets namespaces with (secret, registry, outcome counts). */
#include "parse-util.h"
#include "paths.h"
#include "uniquifier.h"

int parse_pid_arg(const char *s, pid_t *ret) {
        uint64_t v;
        int r = parse_u64_range(s, 1, 4194304, &v);
        if (r >= 0)
                *ret = (pid_t) v;
        return r;
}

int parse_timeout_arg(const char *s, int *ret) {
        uint64_t v;
        int r = parse_u64_range(s, 1, 3600000, &v);
        if (r >= 0)
                *ret = (int) v;
        return r;
}

static char registry_default[4096];

/* The state directory of nsid.conf's "[idmapd] state-dir", as nsid-idmapd and nsidctl read
 * it (one registry for the three), unless --state-dir or NSID_STATE_DIR named one. A file
 * named with --config must exist; the default one may be absent (every key its default). A
 * file refused (not root's, writable by others) is reported and the default used: a hook
 * must still give the container its identity. */
static char config_state_dir_buf[4096];
int config_state_dir(void) {
        nsid_conf *conf = NULL;
        int r;

        if (arg.config_path && access(arg.config_path, F_OK) < 0) {
                errorf("--config %s: %s", arg.config_path, strerror(errno));
                return -errno;
        }
        if (arg.state_dir)
                return 0;
        r = nsid_conf_load(arg.config_path, &conf);
        if (r < 0) {
                errorf("%s cannot be used (%s); state directory %s",
                       arg.config_path ? arg.config_path : NSID_SYSCONF_FILE, strerror(-r),
                       NSID_STATE_DIR);
                return 0;
        }
        const char *v = paths_state_dir(NULL, conf);
        if (strcmp(v, NSID_STATE_DIR) != 0) {
                snprintf(config_state_dir_buf, sizeof(config_state_dir_buf), "%s", v);
                arg.state_dir = config_state_dir_buf;
        }
        nsid_conf_unref(conf);
        return 0;
}

const char *registry_path(void) {
        return paths_registry(arg.registry_path, paths_state_dir(arg.state_dir, NULL),
                              registry_default, sizeof(registry_default));
}

/* ---- context shared by the subcommands ---- */



int ctx_init(ctx *c, bool need_secret, bool readonly) {
        int r;

        *c = (ctx) { .readonly = readonly };
        if (need_secret) {
                r = nsid_host_secret_load(arg.machine_id, arg.state_dir, c->secret,
                                          &c->secret_source);
                if (r < 0) {
                        errorf("cannot load the host secret (machine-id %s, state directory %s): "
                               "%s",
                               arg.machine_id ? arg.machine_id : "/etc/machine-id",
                               arg.state_dir ? arg.state_dir : NSID_STATE_DIR, strerror(-r));
                        return r;
                }
        }
        r = nsid_registry_open(registry_path(), readonly ? NSID_REGISTRY_READONLY : 0, &c->reg);
        if (r < 0) {
                /* the library logged "registry PATH: sqlite message" already */
                c->reg_error = r;
                c->reg = NULL;
                if (!(readonly && r == -ENOENT))
                        errorf("registry %s unusable (%s); continuing without it, nothing is "
                               "recorded",
                               registry_path(), strerror(-r));
        }
        return 0;
}

void ctx_done(ctx *c) {
        outcomes_flush(c);
        c->reg = nsid_registry_unref(c->reg);
        explicit_bzero(c->secret, sizeof(c->secret));
}

/* The registry's binding of netns in this boot (0 and *ret filled; -ENOENT if none). */
int lookup_binding(nsid_registry *reg, nsid_ns *netns, nsid_registry_entry *ret) {
        char boot_id[37];
        uint64_t cookie;
        nsid_ns_id id;
        int r;

        if (!reg)
                return -ENOENT;
        r = nsid_boot_id(boot_id);
        if (r >= 0)
                r = nsid_netns_get_cookie(netns, &cookie);
        if (r >= 0)
                r = nsid_ns_get_id(netns, &id);
        if (r < 0)
                return r;
        return nsid_registry_lookup_netns(reg, arg.app, &id, boot_id, cookie, ret);
}


_Static_assert(ST_FAILED + 1 == sizeof(((ctx *) 0)->outcomes) / sizeof(uint64_t),
               "one count per state");

/* What this run's attempts ended in, added to the registry's counts (nsidctl metrics:
 * nsid_identity_outcomes_total) in one transaction; dry runs are not counted. */
void outcomes_flush(ctx *c) {
        nsid_registry_outcome v[ST_FAILED + 1];
        size_t n = 0;
        int r;

        if (!c->reg || c->readonly)
                return;
        for (int k = 0; k <= ST_FAILED; k++)
                if (c->outcomes[k] && k != ST_WOULD_SET) {
                        v[n] = (nsid_registry_outcome) { .n = c->outcomes[k] };
                        snprintf(v[n].outcome, sizeof(v[n].outcome), "%s", state_words[k]);
                        n++;
                }
        r = nsid_registry_count_outcomes(c->reg, arg.app, v, n);
        if (r < 0)
                notef(LOG_WARNING, "cannot count the outcomes in the registry: %s",
                      strerror(-r));
        memset(c->outcomes, 0, sizeof(c->outcomes));
}
