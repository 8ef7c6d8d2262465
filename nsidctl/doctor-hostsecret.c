/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: can this host be told apart from its clones? (doc/host-secret.md) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nsid/hostsecret.h>
#include <nsid/identity.h>

#include "doctor.h"

void check_host_secret(void) {
        nsid_host_secret_status st;
        int r;

        r = nsid_host_secret_inspect(arg.machine_id, ctx_state_dir(), arg.platform_id, &st);
        if (r < 0) {
                add_finding_fixf(SEV_ERROR, "host-secret",
                                 r == -ENOKEY ? "the generated host secret is lost (its "
                                                "fingerprint is there): no identity can be "
                                                "derived"
                                              : "the generated host secret cannot be used",
                                 "restore %s/host-secret from a backup of this host, or make a "
                                 "new one (every identity changes): nsidctl host-secret new --yes",
                                 ctx_state_dir());
                return;
        }
        switch (st.source) {
        case NSID_HOST_SECRET_MACHINE_ID:
                add_finding(SEV_WARNING, "host-secret",
                            "on this host and on every clone of it, once: nsidctl host-secret new "
                            "--yes (identities change: remount the containers' NFS exports)",
                            "the host secret is /etc/machine-id: hosts cloned from one image "
                            "share it, and then give containers with the same key the same NFS "
                            "identity (the server sees one client and they take each other's "
                            "lease)");
                return;
        case NSID_HOST_SECRET_STATE_FILE:
                add_finding(SEV_WARNING, "host-secret",
                            "nsidctl host-secret new --yes (on this host and on each clone)",
                            "the host secret is a random state file without a fingerprint (the "
                            "machine-id is unusable): a clone made from a copy of this host "
                            "keeps it and cannot be told apart");
                return;
        default:
                break;
        }
        if (st.platform_id_changed || st.machine_id_changed) {
                char msg[400];
                snprintf(msg, sizeof(msg),
                         "the host secret was generated on another platform (%s%s%s changed): "
                         "this host is a clone of the one that made it, or that host restored "
                         "or moved onto other hardware",
                         st.platform_id_changed ? "the product UUID" : "",
                         st.platform_id_changed && st.machine_id_changed ? " and " : "",
                         st.machine_id_changed ? "the machine-id" : "");
                add_finding(SEV_WARNING, "host-secret",
                            "a clone: nsidctl host-secret new --yes (its identities change); "
                            "the same host moved or restored: nsidctl host-secret accept (they "
                            "stay)",
                            "%s", msg);
                return;
        }
        if (!st.have_platform_id) {
                add_finding(SEV_WARNING, "host-secret",
                            "after cloning this host, run nsidctl host-secret new --yes on the "
                            "clone (or give each clone its own /etc/machine-id: then nsid "
                            "notices)",
                            "this platform has no product UUID (%s): a clone of this host that "
                            "keeps the machine-id cannot be told apart from it",
                            arg.platform_id ? arg.platform_id : "/sys/class/dmi/id/product_uuid");
                return;
        }
        add_finding(SEV_OK, "host-secret", NULL,
                    "generated host secret, made on this platform (product UUID%s unchanged)",
                    st.machine_id_recorded ? " and machine-id" : "");
}
