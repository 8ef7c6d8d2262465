/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl identity: the identity nsid-uniquifier would give, derived the same way (the host
 * secret, HMAC-SHA256, the same key choice for a namespace), without setting anything. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nsid/identity.h>
#include <nsid/nfsclient.h>
#include <nsid/registry.h>

#include "nsidctl.h"

static void row(const char *k, const char *v) {
        printf("%s%-12s%s %s\n", col(C_BOLD), k, col(C_RESET), v);
}

static int for_key(const uint8_t secret[NSID_ID128_SIZE], nsid_host_secret_source src) {
        char id[NSID_IDENTITY_STRING_SIZE];
        int r;

        r = nsid_identity_derive(secret, arg.app, arg.key, id);
        if (r < 0) {
                errorf("cannot derive the identity of key '%s': %s", arg.key, strerror(-r));
                return EXIT_FAIL;
        }
        if (arg.json) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "identity", json_object_new_string(id));
                json_object_object_add(o, "app", json_object_new_string(arg.app));
                json_object_object_add(o, "key", json_object_new_string(arg.key));
                json_object_object_add(o, "key_source", json_object_new_string(
                                               nsid_key_source_to_string(arg.key_source)));
                json_object_object_add(o, "host_secret", json_object_new_string(
                                               nsid_host_secret_source_to_string(src)));
                print_json(o);
                json_object_put(o);
        } else {
                row("identity", id);
                row("app", arg.app);
                row("key source", nsid_key_source_to_string(arg.key_source));
                row("host secret", nsid_host_secret_source_to_string(src));
        }
        return EXIT_OK;
}

static int open_target(nsid_ns **ret_ns, nsid_proc **ret_proc) {
        nsid_proc *proc = NULL;
        nsid_ns *netns = NULL;
        int r;

        if (arg.pid) {
                r = nsid_proc_open(arg.pid, &proc);
                if (r >= 0)
                        r = nsid_proc_open_ns(proc, NSID_NS_NET, &netns);
                if (r < 0) {
                        errorf("pid %d: cannot open its network namespace: %s", (int) arg.pid,
                               strerror(-r));
                        nsid_proc_unref(proc);
                        return r;
                }
        } else {
                const char *path = arg.netns_path ? arg.netns_path : "/proc/self/ns/net";
                r = nsid_ns_open_path(path, NSID_NS_NET, &netns);
                if (r < 0) {
                        errorf("%s: not a network namespace: %s", path, strerror(-r));
                        return r;
                }
                if (!arg.netns_path && nsid_proc_open_self(&proc) < 0)
                        proc = NULL;
        }
        *ret_ns = netns;
        *ret_proc = proc;
        return 0;
}

static int for_netns(const uint8_t secret[NSID_ID128_SIZE], nsid_host_secret_source src) {
        nsid_registry *reg = NULL;
        nsid_identity *id = NULL;
        nsid_proc *proc = NULL;
        nsid_ns *netns = NULL;
        nsid_ns_id nsid = {};
        char *current = NULL;
        const char *state, *kernel;
        unsigned flags;
        int r, cr;

        if (open_target(&netns, &proc) < 0)
                return EXIT_FAIL;
        (void) nsid_ns_get_id(netns, &nsid);

        /* the registry read-only: the same key choice as nsid-uniquifier, nothing recorded
         * (the library's "not recorded" error is expected here and not shown) */
        out_log_quiet(true);
        if (nsid_registry_open(ctx_registry_path(), NSID_REGISTRY_READONLY, &reg) < 0)
                reg = NULL;
        r = nsid_identity_for_ns(secret, reg, netns, proc, arg.app, arg.key,
                                 arg.key ? arg.key_source : NSID_KEY_AUTO, NULL, 0, &id);
        out_log_quiet(false);
        if (r < 0) {
                if (r == -EADDRINUSE)
                        errorf("netns %" PRIu64 ": the identity of this key is bound to another "
                               "live network namespace (two containers given one key)",
                               nsid.ino);
                else
                        errorf("netns %" PRIu64 ": cannot derive: %s", nsid.ino, strerror(-r));
                nsid_registry_unref(reg);
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return EXIT_FAIL;
        }
        flags = nsid_identity_get_flags(id);
        if (flags & NSID_IDENTITY_REUSED)
                state = "recorded in the registry for this netns";
        else if (nsid_identity_get_source(id) == NSID_KEY_RANDOM)
                state = "random: nothing recorded yet, a new one on each run until "
                        "nsid-uniquifier records one";
        else
                state = "not recorded yet: nsid-uniquifier set would record and set it";

        cr = nsid_nfs_client_get_identifier(netns, arg.timeout_ms, &current);
        if (cr == -ENOENT)
                kernel = "no nfs client in this netns (module not loaded)";
        else if (cr < 0)
                kernel = strerror(-cr);
        else if (!current[0])
                kernel = "unset";
        else if (strcmp(current, nsid_identity_get_string(id)) == 0)
                kernel = "set to this identity";
        else
                kernel = "set to a different identifier";

        if (arg.json) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "netns", json_object_new_uint64(nsid.ino));
                json_object_object_add(o, "netns_dev", json_object_new_uint64(nsid.dev));
                json_object_object_add(o, "pid", json_object_new_int(arg.pid));
                json_object_object_add(o, "identity",
                                       json_object_new_string(nsid_identity_get_string(id)));
                json_object_object_add(o, "app", json_object_new_string(arg.app));
                json_object_object_add(o, "key_source", json_object_new_string(
                                               nsid_key_source_to_string(nsid_identity_get_source(id))));
                json_object_object_add(o, "recorded",
                                       json_object_new_boolean(flags & NSID_IDENTITY_REUSED));
                json_object_object_add(o, "state", json_object_new_string(state));
                json_object_object_add(o, "kernel_identifier",
                                       cr == 0 && current[0] ? json_object_new_string(current)
                                                             : NULL);
                json_object_object_add(o, "kernel", json_object_new_string(kernel));
                json_object_object_add(o, "machine_id_skipped", json_object_new_boolean(
                                               flags & NSID_IDENTITY_MACHINE_ID_SHARED));
                json_object_object_add(o, "kept_existing", json_object_new_boolean(
                                               flags & NSID_IDENTITY_KEPT_EXISTING));
                json_object_object_add(o, "host_secret", json_object_new_string(
                                               nsid_host_secret_source_to_string(src)));
                print_json(o);
                json_object_put(o);
        } else {
                char buf[64];
                snprintf(buf, sizeof(buf), "%" PRIu64, nsid.ino);
                row("netns", buf);
                row("identity", nsid_identity_get_string(id));
                row("app", arg.app);
                row("key source", nsid_key_source_to_string(nsid_identity_get_source(id)));
                row("state", state);
                row("kernel", cr == 0 && current[0] && strcmp(kernel, "set to a different identifier") == 0
                                      ? current
                                      : kernel);
                row("host secret", nsid_host_secret_source_to_string(src));
                if (flags & NSID_IDENTITY_MACHINE_ID_SHARED)
                        printf("note: the container's machine-id is the host's or in use by "
                               "another namespace; not used as its key\n");
                if (flags & NSID_IDENTITY_KEPT_EXISTING)
                        printf("note: the key recorded for this netns ranks the same or higher "
                               "than the one given; nsid-uniquifier keeps it unless "
                               "--replace-key\n");
        }
        free(current);
        nsid_identity_unref(id);
        nsid_registry_unref(reg);
        nsid_ns_unref(netns);
        nsid_proc_unref(proc);
        return EXIT_OK;
}

int cmd_identity(void) {
        uint8_t secret[NSID_ID128_SIZE];
        nsid_host_secret_source src;
        int r, ret;

        r = nsid_host_secret_load(arg.machine_id, ctx_state_dir(), secret, &src);
        if (r < 0) {
                errorf("cannot load the host secret (machine-id %s, state directory %s): %s",
                       arg.machine_id ? arg.machine_id : "/etc/machine-id", ctx_state_dir(),
                       strerror(-r));
                return EXIT_FAIL;
        }
        if (arg.key && !arg.pid && !arg.netns_path)
                ret = for_key(secret, src);
        else
                ret = for_netns(secret, src);
        explicit_bzero(secret, sizeof(secret));
        return ret;
}
