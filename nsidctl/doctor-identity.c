/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: NFS client identifiers, owner strings, hostnames. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor.h"

void check_identifiers(const survey *s) {
        char a[160], b[160];
        bool problems = false, any = false;

        for (size_t i = 0; i < s->n; i++) {
                const ns_facts *f = &s->f[i];

                if (f->info->initial || f->open_r < 0)
                        continue;
                if (f->ident_r < 0 && f->ident_r != -ENOENT) {
                        add_finding(SEV_WARNING, "uniquifier", NULL,
                                    "%s: cannot read its identifier: %s",
                                    ns_label(f, a, sizeof(a)), strerror(-f->ident_r));
                        problems = true;
                        continue;
                }
                if (f->ident_r < 0)
                        continue;
                any = true;
                if (f->identifier[0])
                        continue;
                problems = true;
                char msg[512];
                snprintf(msg, sizeof(msg),
                         f->info->nfs_mounted
                                 ? "%s has no NFS client identifier and NFS is mounted: it "
                                   "presents the owner of every namespace with its hostname"
                                 : "%s has no NFS client identifier yet",
                         ns_label(f, a, sizeof(a)));
                if (f->info->nfs_mounted)
                        add_finding_fixf(SEV_ERROR, "uniquifier-unset", msg,
                                         "nsid-uniquifier set --pid %d, then unmount and mount "
                                         "again (the identifier is read when the first mount "
                                         "to a server is made)",
                                         (int) f->info->pid);
                else
                        add_finding_fixf(SEV_WARNING, "uniquifier-unset", msg,
                                         "nsid-uniquifier reconcile (or set --pid %d); have new "
                                         "containers get one before their first mount: the "
                                         "OCI or LXC hook, or the udev rule",
                                         (int) f->info->pid);
        }

        for (size_t i = 0; i < s->n; i++) {
                const ns_facts *f = &s->f[i];
                if (f->ident_r != 0 || !f->identifier[0])
                        continue;
                for (size_t j = i + 1; j < s->n; j++) {
                        const ns_facts *g = &s->f[j];
                        char msg[512];
                        if (g->ident_r != 0 || strcmp(f->identifier, g->identifier) != 0)
                                continue;
                        problems = true;
                        snprintf(msg, sizeof(msg),
                                 "%s and %s present the same identifier %s: an NFS server may "
                                 "take them for one client",
                                 ns_label(f, a, sizeof(a)), ns_label(g, b, sizeof(b)),
                                 f->identifier);
                        add_finding_fixf(SEV_ERROR, "uniquifier-duplicate", msg,
                                         "give one of them its own key, e.g. nsid-uniquifier set "
                                         "--pid %d --force --replace-key --key <unique key>; "
                                         "check that the runtime hooks pass distinct container ids",
                                         (int) (g->info->pid ? g->info->pid : f->info->pid));
                }
        }
        if (any && !problems)
                add_finding(SEV_OK, "uniquifier", NULL,
                            "every container network namespace has its own identifier");
}

void check_owner_strings(const survey *s) {
        char **owner = calloc(s->n ? s->n : 1, sizeof(char *));
        bool *done = calloc(s->n ? s->n : 1, sizeof(bool));
        bool any = false, problems = false;

        if (!owner || !done) {
                free(owner);
                free(done);
                return;
        }
        for (size_t i = 0; i < s->n; i++)
                if (s->f[i].ident_r == 0 && s->f[i].hostname)
                        owner[i] = nfs_owner_string(s, &s->f[i]);

        for (size_t i = 0; i < s->n; i++) {
                char list[1024] = "", lab[160];
                unsigned members = 0, mounted = 0;
                bool all_set = true;

                if (!owner[i] || done[i])
                        continue;
                any = true;
                for (size_t j = i; j < s->n; j++) {
                        if (!owner[j] || strcmp(owner[i], owner[j]) != 0)
                                continue;
                        done[j] = true;
                        members++;
                        mounted += s->f[j].info->nfs_mounted;
                        all_set = all_set && s->f[j].identifier[0];
                        if (strlen(list) < sizeof(list) - 200) {
                                if (list[0])
                                        strcat(list, ", ");
                                strcat(list, ns_label(&s->f[j], lab, sizeof(lab)));
                        }
                }
                /* Namespaces that share an unset identifier and mount nothing are reported
                 * as unset above; a collision is one that a server sees (a mount), or one
                 * that no later mount can avoid (the same identifier and hostname). */
                if (members < 2 || (!all_set && mounted == 0))
                        continue;
                problems = true;
                add_finding(mounted >= 2 || all_set ? SEV_ERROR : SEV_WARNING, "owner-collision",
                            "give every network namespace its own identifier (nsid-uniquifier "
                            "reconcile; remount where NFS is already mounted), or distinct "
                            "hostnames",
                            "%s present the same NFSv4 owner \"%s\"%s: the server treats them as "
                            "one client (stolen leases, NFS4ERR_CLID_INUSE, hangs)",
                            list, owner[i],
                            mounted >= 2 ? "" : " (to the first server they both mount)");
        }
        if (any && !problems)
                add_finding(SEV_OK, "owner-collision", NULL,
                            "no two network namespaces present the same NFSv4 owner string");
        for (size_t i = 0; i < s->n; i++)
                free(owner[i]);
        free(owner);
        free(done);
}

void check_hostnames(const survey *s) {
        char a[160];
        bool problems = false;

        for (size_t i = 0; i < s->n; i++) {
                const ns_facts *f = &s->f[i];
                const char *h = f->hostname;

                if (!h)
                        continue;
                if (h[0] && strcmp(h, "(none)") != 0 && strcasecmp(h, "localhost") != 0 &&
                    strcasecmp(h, "localhost.localdomain") != 0)
                        continue;
                problems = true;
                add_finding(f->ident_r == 0 && f->identifier[0] ? SEV_INFO : SEV_WARNING,
                            "hostname",
                            "set a real hostname (hostname(1); podman --hostname, "
                            "lxc.uts.name, systemd-nspawn --hostname); an identifier keeps the "
                            "owner unique, but servers list such clients by hostname",
                            "%s has hostname \"%s\": it is part of the NFSv4 owner string, "
                            "and every container named so looks alike to the server",
                            ns_label(f, a, sizeof(a)), h[0] ? h : "");
        }
        if (!problems)
                add_finding(SEV_OK, "hostname", NULL, "no namespace runs with an unset or "
                                                      "localhost hostname");
}
