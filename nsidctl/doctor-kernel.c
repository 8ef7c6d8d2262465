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
