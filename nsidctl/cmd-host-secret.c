/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl host-secret [show|new|accept]: which secret the identities are derived from, and
 * the explicit, logged steps that change it (a clone) or confirm it (the same host moved). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <nsid/hostsecret.h>
#include <nsid/identity.h>

#include "nsidctl.h"

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

static int show(void) {
        nsid_host_secret_status st;
        int r;

        r = nsid_host_secret_inspect(arg.machine_id, ctx_state_dir(), arg.platform_id, &st);
        if (r < 0) {
                errorf("cannot inspect the host secret in %s: %s%s", ctx_state_dir(),
                       strerror(-r),
                       r == -ENOKEY ? " (its fingerprint is there, the secret is lost)" : "");
                return EXIT_FAIL;
        }
        if (arg.json) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "source", json_object_new_string(
                                               nsid_host_secret_source_to_string(st.source)));
                json_object_object_add(o, "state_dir", json_object_new_string(ctx_state_dir()));
                json_object_object_add(o, "platform_id_available",
                                       json_object_new_boolean(st.have_platform_id));
                json_object_object_add(o, "platform_id_recorded",
                                       json_object_new_boolean(st.platform_id_recorded));
                json_object_object_add(o, "platform_id_changed",
                                       json_object_new_boolean(st.platform_id_changed));
                json_object_object_add(o, "machine_id_recorded",
                                       json_object_new_boolean(st.machine_id_recorded));
                json_object_object_add(o, "machine_id_changed",
                                       json_object_new_boolean(st.machine_id_changed));
                print_json(o);
                json_object_put(o);
                return EXIT_OK;
        }
        printf("source:               %s\n", nsid_host_secret_source_to_string(st.source));
        printf("state dir:            %s\n", ctx_state_dir());
        printf("platform id now:      %s\n", st.have_platform_id ? "available" : "none");
        if (st.source == NSID_HOST_SECRET_GENERATED) {
                printf("platform id recorded: %s%s\n", yes_no(st.platform_id_recorded),
                       st.platform_id_changed ? " (CHANGED)" : "");
                printf("machine-id recorded:  %s%s\n", yes_no(st.machine_id_recorded),
                       st.machine_id_changed ? " (CHANGED)" : "");
        } else
                printf("clones of this host share this secret; see 'nsidctl host-secret new'\n");
        return EXIT_OK;
}

/* --if-shared: whether to make a new secret now. 1 yes (the machine-id or an old state file:
 * every clone of this host has it); 0 nothing to do (a generated secret made on this
 * platform); -1 cannot tell (a generated secret whose platform changed: a clone, or this
 * host moved), said with both fixes. */
static int shared_secret(void) {
        nsid_host_secret_status st;
        int r = nsid_host_secret_inspect(arg.machine_id, ctx_state_dir(), arg.platform_id, &st);
        if (r < 0) {
                errorf("cannot inspect the host secret in %s: %s", ctx_state_dir(), strerror(-r));
                return -2;
        }
        if (st.source != NSID_HOST_SECRET_GENERATED)
                return 1;
        if (st.platform_id_changed || st.machine_id_changed) {
                warnf("the generated host secret in %s was made on another platform (%s "
                      "changed): a clone of this host, or this host moved; nothing done. A "
                      "clone: 'nsidctl host-secret new --yes'; the same host: 'nsidctl "
                      "host-secret accept --yes'",
                      ctx_state_dir(), st.platform_id_changed ? "product UUID" : "machine-id");
                return -1;
        }
        return 0;
}

static int do_new(void) {
        nsid_host_secret_source prev;
        int r;

        if (arg.if_shared) {
                /* configuration management runs this on every host, every time */
                int s = shared_secret();
                if (s == -2)
                        return EXIT_FAIL;
                if (s < 0)
                        return EXIT_WARNINGS;
                if (s == 0) {
                        if (arg.json) {
                                json_object *o = json_object_new_object();
                                json_object_object_add(o, "source",
                                                       json_object_new_string("generated"));
                                json_object_object_add(o, "changed",
                                                       json_object_new_boolean(false));
                                print_json(o);
                                json_object_put(o);
                        } else if (!arg.quiet)
                                printf("the host secret is this host's own (generated here): "
                                       "nothing done\n");
                        return EXIT_OK;
                }
        } else if (!arg.yes) {
                errorf("'host-secret new' changes the identity of every container on this host "
                       "(their NFS mounts must be remounted to use it); add --yes to do it");
                return EXIT_USAGE;
        }
        r = nsid_host_secret_new(arg.machine_id, ctx_state_dir(), arg.platform_id, arg.reason,
                                 &prev);
        if (r < 0) {
                errorf("cannot make a new host secret in %s: %s", ctx_state_dir(), strerror(-r));
                return EXIT_FAIL;
        }
        openlog("nsidctl", LOG_PID, LOG_DAEMON);
        syslog(LOG_NOTICE, "host secret: a new generated secret in %s replaces the %s one%s%s",
               ctx_state_dir(), nsid_host_secret_source_to_string(prev),
               arg.reason ? "; reason: " : "", arg.reason ? arg.reason : "");
        closelog();
        if (arg.json) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "source", json_object_new_string("generated"));
                json_object_object_add(o, "replaced", json_object_new_string(
                                               nsid_host_secret_source_to_string(prev)));
                json_object_object_add(o, "changed", json_object_new_boolean(true));
                print_json(o);
                json_object_put(o);
        } else if (!arg.quiet)
                printf("new host secret generated in %s (it replaces the %s secret; logged in "
                       "%s/%s)\nidentities derived from now on differ from before: run "
                       "nsid-uniquifier again for each container (or restart them) and remount "
                       "their NFS exports\n",
                       ctx_state_dir(), nsid_host_secret_source_to_string(prev), ctx_state_dir(),
                       NSID_HOST_SECRET_LOG_FILE);
        return EXIT_OK;
}

static int do_accept(void) {
        int r;

        r = nsid_host_secret_accept(arg.machine_id, ctx_state_dir(), arg.platform_id, arg.reason);
        if (r == -ENOENT) {
                errorf("no generated host secret in %s: nothing to accept (see 'nsidctl "
                       "host-secret new')",
                       ctx_state_dir());
                return EXIT_FAIL;
        }
        if (r < 0) {
                errorf("cannot record this platform in %s: %s", ctx_state_dir(), strerror(-r));
                return EXIT_FAIL;
        }
        openlog("nsidctl", LOG_PID, LOG_DAEMON);
        syslog(LOG_NOTICE, "host secret: this platform recorded for the generated secret in %s%s%s",
               ctx_state_dir(), arg.reason ? "; reason: " : "", arg.reason ? arg.reason : "");
        closelog();
        if (!arg.json && !arg.quiet)
                printf("this platform is now the host secret's (the secret and every identity "
                       "stay)\n");
        return EXIT_OK;
}

int cmd_host_secret(void) {
        const char *a = arg.action ? arg.action : "show";

        if (strcmp(a, "show") == 0)
                return show();
        if (strcmp(a, "new") == 0)
                return do_new();
        if (strcmp(a, "accept") == 0)
                return do_accept();
        errorf("host-secret: unknown action '%s' (show, new, accept)", a);
        return EXIT_USAGE;
}
