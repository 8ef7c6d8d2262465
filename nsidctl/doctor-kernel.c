/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: the kernel and nsid's own configuration. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "doctor.h"

void check_kernel(const survey *s) {
        unsigned major = 0, minor = 0;

        if (sscanf(s->uts.release, "%u.%u", &major, &minor) != 2)
                add_finding(SEV_WARNING, "kernel", NULL,
                            "cannot tell the kernel version from \"%s\"", s->uts.release);
        else if (major < 5 || (major == 5 && minor < 3))
                add_finding(SEV_ERROR, "kernel",
                            "run Linux 5.3 or later; until then the nfs.nfs4_unique_id module "
                            "parameter sets one uniquifier for ALL namespaces, which does not "
                            "tell containers apart",
                            "kernel %s has no per-network-namespace NFS client identifier "
                            "(/sys/fs/nfs/net/nfs_client/identifier needs 5.3): every "
                            "container with the same hostname presents the same NFSv4 owner",
                            s->uts.release);
        else
                add_finding(SEV_OK, "kernel", NULL,
                            "kernel %s has per-network-namespace NFS client identifiers",
                            s->uts.release);

        if (s->sysfs_nfs && access("/sys/fs/nfs/net/nfs_client/identifier", F_OK) < 0)
                add_finding(SEV_ERROR, "kernel",
                            "run Linux 5.3 or later (or a distribution kernel with the "
                            "per-netns identifier backported)",
                            "the nfs module is loaded but /sys/fs/nfs/net/nfs_client/"
                            "identifier does not exist: this kernel cannot give network "
                            "namespaces their own NFS client identity");
        if (s->sysfs_nfs)
                return;
        if (s->test_hook)
                add_finding(SEV_INFO, "nfs-module", NULL,
                            "no /sys/fs/nfs/net/nfs_client here; identifiers are read through "
                            "the test hook NSID_TEST_SYSFS_NFS_CLIENT_DIR");
        else
                add_finding(SEV_INFO, "nfs-module",
                            "nothing to do until NFS is used; nsid-uniquifier records identities "
                            "and sets them once the module is loaded (udev rule, reconcile)",
                            "the nfs module is not loaded (no /sys/fs/nfs/net/nfs_client): "
                            "identifiers cannot be read or set yet");
}

/* The NFS client's ID-mapping cache: id_resolver/id_legacy keys in one kernel keyring, each
 * namespace's own only where the key types are tagged by network namespace (nsid/kernel.h). */
void check_idmap_keys(const survey *s) {
        switch (s->idkeys_r) {
        case 1:
                add_finding(SEV_OK, "idmap-keys", NULL,
                            "the NFS client tags its ID-mapping keys by network namespace: each "
                            "namespace has its own ID cache");
                break;
        case 0:
                add_finding(SEV_WARNING, "idmap-keys",
                            "install the nsid-nfs-keyns-dkms package (patched nfsv4 module, "
                            "taints the kernel) until the fix is upstream; see nsidctl(8)",
                            "the kernel keeps one ID-mapping cache for all network namespaces "
                            "(id_resolver and id_legacy keys are not tagged by namespace, "
                            "fs/nfs/nfs4idmap.c): one container's answer for a name or id "
                            "can reach another container for the key's lifetime");
                break;
        case -ENODEV:
                add_finding(SEV_INFO, "idmap-keys", NULL,
                            "the NFSv4 client is not loaded; cannot tell yet whether it keeps "
                            "one ID-mapping cache per network namespace");
                break;
        case -EPERM:
                add_finding(SEV_WARNING, "idmap-keys", "run nsidctl doctor as root",
                            "cannot tell whether the NFS client keeps one ID-mapping cache per "
                            "network namespace: the probe needs to create a network namespace "
                            "(%s)",
                            strerror(EPERM));
                break;
        case -EPROTO:
                add_finding(SEV_WARNING, "idmap-keys",
                            "use the nfsv4 module of the nsid-nfs-keyns-dkms package, which "
                            "tags both; see nsidctl(8)",
                            "the id_resolver and id_legacy key types disagree: one is tagged by "
                            "network namespace, the other is not (a partly patched kernel); "
                            "ID answers can still cross namespaces");
                break;
        default:
                add_finding(SEV_WARNING, "idmap-keys", NULL,
                            "cannot tell whether the NFS client keeps one ID-mapping cache per "
                            "network namespace: %s",
                            strerror(-s->idkeys_r));
        }
}

void check_config(void) {
        nsid_conf_diagnostic d;
        nsid_conf *c;
        int err = 0;

        c = ctx_config(&err);
        if (!c) {
                const char *path = arg.config_path ? arg.config_path : NSID_SYSCONF_FILE;
                if (err == -EPERM)
                        add_finding_fixf(SEV_ERROR, "config",
                                         "the configuration file may be changed by someone "
                                         "other than root; the programs refuse it",
                                         "chown root:root %s && chmod 644 %s", path, path);
                else
                        add_finding(SEV_ERROR, "config", NULL, "%s cannot be used: %s", path,
                                    strerror(-err));
                return;
        }
        if (nsid_conf_get_n_diagnostics(c) == 0) {
                add_finding(SEV_OK, "config", NULL, "%s %s", nsid_conf_get_path(c),
                            nsid_conf_file_found(c) ? "is valid" : "is absent: defaults apply");
                return;
        }
        for (size_t i = 0; nsid_conf_get_diagnostic(c, i, &d) == 0; i++)
                add_finding(d.priority <= LOG_ERR ? SEV_ERROR : SEV_WARNING, "config",
                            "see nsid.conf(5); `nsidctl config` shows every key, its default "
                            "and its value",
                            "%s", d.message);
}
