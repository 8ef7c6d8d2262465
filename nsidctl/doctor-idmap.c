/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: ID mapping: domains, the request-key helper, the daemons. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nsid/netns.h>

#include "doctor.h"

void check_domains(const survey *s) {
        const char *host = s->host_domain;
        char a[160];
        bool problems = false;

        if (!host) {
                problems = true;
                add_finding_fixf(SEV_WARNING, "idmap-domain",
                                 "the host's idmap domain is unknown: no Domain in its "
                                 "idmapd.conf and no DNS domain in its hostname, so libnfsidmap "
                                 "guesses (DNS, else \"localdomain\")",
                                 "set Domain = <the NFS server's domain> in [General] of %s",
                                 ctx_idmapd_conf());
        } else if (arg.server_domain && strcasecmp(host, arg.server_domain) != 0) {
                problems = true;
                char msg[600];
                snprintf(msg, sizeof(msg),
                         "the host's idmap domain \"%s\" (%s) is not the server's \"%s\": "
                         "owners the server sends show up as nobody (4294967294)",
                         host, s->host_domain_source ? s->host_domain_source : "?",
                         arg.server_domain);
                add_finding_fixf(SEV_ERROR, "idmap-domain", msg,
                                 "set Domain = %s in [General] of %s", arg.server_domain,
                                 ctx_idmapd_conf());
        }
        for (size_t i = 0; i < s->n; i++) {
                const ns_facts *f = &s->f[i];
                const char *want = arg.server_domain ? arg.server_domain : host;

                if (f->info->initial || !f->domain || !want || strcasecmp(f->domain, want) == 0)
                        continue;
                /* a domain guessed from a container's hostname is what libnfsidmap would do
                 * inside it; only an explicit setting is a choice someone made */
                if (!arg.server_domain && f->domain_source &&
                    strcmp(f->domain_source, "hostname") == 0)
                        continue;
                problems = true;
                add_finding(arg.server_domain ? SEV_ERROR : SEV_WARNING, "idmap-domain",
                            "make the domains equal (Domain = in [General] of the container's "
                            "/etc/idmapd.conf, or of the host's), or leave the setting out in "
                            "the container",
                            "%s uses idmap domain \"%s\" (%s) but %s is \"%s\": owners "
                            "\"user@%s\" are not recognised and show up as nobody "
                            "(4294967294)",
                            ns_label(f, a, sizeof(a)), f->domain,
                            f->domain_source ? f->domain_source : "?",
                            arg.server_domain ? "the server's" : "the host's", want, f->domain);
        }
        if (!problems)
                add_finding(SEV_OK, "idmap-domain", NULL, "idmap domain %s everywhere%s",
                            host ? host : "?", arg.server_domain ? ", the server's too" : "");
}

static const char *jstr(json_object *o, const char *k) {
        json_object *v;
        return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

/* Per container, as nsid-idmapd reports it: what answers its ID lookups (its files, or its
 * own name service), and a name service that fails now, with what to look at (issue #28). */
void check_name_services(const survey *s) {
        char a[160], esc[4 * 200 + 1], src[4 * 128 + 1];
        unsigned nss = 0, failing = 0;

        if (!s->daemon)
                return; /* (check_daemons says why) */
        for (size_t i = 0; i < s->n; i++) {
                const ns_facts *f = &s->f[i];
                const char *by = jstr(f->daemon_ns, "answered_by");
                const char *err = jstr(f->daemon_ns, "nss_error");
                if (f->info->initial || !by || strcmp(by, "nss") != 0)
                        continue;
                nss++;
                text_safe(jstr(f->daemon_ns, "passwd_sources"), src, sizeof(src));
                if (err && *err) {
                        failing++;
                        add_finding(SEV_WARNING, "name-service",
                                    "look at the directory client inside it (sssd, nslcd, "
                                    "systemd-userdbd) and its configuration; nsid-nss-query "
                                    "needs glibc 2.34 or later there",
                                    "%s: its own name service (passwd: %s) fails: %s",
                                    ns_label(f, a, sizeof(a)), src, text_safe(err, esc, sizeof(esc)));
                } else
                        add_finding(SEV_INFO, "name-service", NULL,
                                    "%s: answered by its own name service (passwd: %s%s)",
                                    ns_label(f, a, sizeof(a)), src,
                                    json_object_get_boolean(json_object_object_get(f->daemon_ns,
                                                                                   "idmapd_conf_methods"))
                                            ? "; its idmapd.conf's methods"
                                            : "");
        }
        if (nss > 0 && failing == 0)
                add_finding(SEV_OK, "name-service", NULL,
                            "%u container%s answered by %s own name service, none failing", nss,
                            nss == 1 ? "" : "s", nss == 1 ? "its" : "their");
}

void check_request_key(void) {
        rk_rule *v = NULL;
        size_t n = 0, n_nfsidmap = 0, n_nsid = 0, first_nsid = 0;
        char where[4300];
        int r;

        r = requestkey_scan(arg.request_key_conf, arg.request_key_dir, &v, &n);
        if (r < 0) {
                add_finding(SEV_WARNING, "request-key", NULL,
                            "cannot read the request-key configuration: %s", strerror(-r));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (!rk_rule_matches(&v[i], "create", "id_resolver"))
                        continue;
                const char *p = rk_rule_program_name(&v[i]);
                if (strcmp(p, "nsid-idmap") == 0 && n_nsid++ == 0)
                        first_nsid = i;
                n_nfsidmap += strcmp(p, "nfsidmap") == 0;
        }
        for (size_t i = 0; i < n; i++) {
                if (!rk_rule_matches(&v[i], "create", "id_resolver") ||
                    strcmp(rk_rule_program_name(&v[i]), "nfsidmap") != 0)
                        continue;
                snprintf(where, sizeof(where), "%s:%u", v[i].file, v[i].line);
                if (n_nsid)
                        add_finding(SEV_ERROR, "request-key",
                                    "remove that line, or on Debian divert nfs-common's file: "
                                    "dpkg-divert --local --rename --divert "
                                    "/etc/request-key.d/id_resolver.conf.nfsidmap "
                                    "/etc/request-key.d/id_resolver.conf",
                                    "%s still hands id_resolver keys to nfsidmap next to "
                                    "nsid-idmap (%s:%u): request-key runs only one of them, "
                                    "and nfsidmap answers every namespace with the host's "
                                    "users",
                                    where, v[first_nsid].file, v[first_nsid].line);
                else
                        add_finding(SEV_WARNING, "request-key",
                                    "install nsid-idmap's rule (nsid-idmap.conf in "
                                    "/etc/request-key.d) and remove this one",
                                    "%s hands id_resolver keys to nfsidmap: containers get the "
                                    "host's answers, nsid-idmap is not used",
                                    where);
        }
        if (n_nsid && !n_nfsidmap)
                add_finding(SEV_OK, "request-key", NULL,
                            "id_resolver keys go to nsid-idmap (%s:%u)", v[first_nsid].file,
                            v[first_nsid].line);
        else if (!n_nsid && !n_nfsidmap)
                add_finding(SEV_INFO, "request-key", NULL,
                            "no request-key rule for id_resolver: the kernel falls back to "
                            "the idmap pipes (answered by nsid-idmapd when it runs)");
        rk_rules_free(v, n);
}

void check_daemons(const survey *s) {
        static const char *const names[] = { "rpc.idmapd", "nsid-idmapd", NULL };
        proc_hit *v = NULL;
        size_t n = 0;
        nsid_ns_id host = {};
        pid_t host_rpc = 0, host_nsid = 0;
        char rpc_pids[256] = "", nsid_pids[256] = "";
        bool host_pipes = true;
        nsid_conf *c = ctx_config(NULL);

        if (c && nsid_conf_get_bool(c, "idmapd", "host-pipes", &host_pipes) < 0)
                host_pipes = true;
        if (nsid_netns_initial_id(&host) < 0 || procs_find(names, &v, &n) < 0) {
                add_finding(SEV_WARNING, "idmapd", NULL, "cannot list the running daemons");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                bool in_host = v[i].netns.dev == host.dev && v[i].netns.ino == host.ino;
                bool rpc = strcmp(v[i].comm, "rpc.idmapd") == 0;

                if (in_host) {
                        char *list = rpc ? rpc_pids : nsid_pids;
                        size_t l = strlen(list);
                        if (rpc && !host_rpc)
                                host_rpc = v[i].pid;
                        if (!rpc && !host_nsid)
                                host_nsid = v[i].pid;
                        if (l < 200)
                                snprintf(list + l, 256 - l, "%s%d", l ? ", " : "", (int) v[i].pid);
                } else if (rpc) {
                        char label[160] = "";
                        for (size_t j = 0; j < s->n; j++)
                                if (s->f[j].info->id.ino == v[i].netns.ino &&
                                    s->f[j].info->id.dev == v[i].netns.dev)
                                        ns_label(&s->f[j], label, sizeof(label));
                        if (!label[0])
                                snprintf(label, sizeof(label), "netns %" PRIu64,
                                         v[i].netns.ino);
                        add_finding(SEV_WARNING, "idmapd",
                                    "stop rpc.idmapd in the container (disable nfs-idmapd "
                                    "there); nsid-idmapd answers its pipes in the container's "
                                    "own context and keeps the answers out of the shared cache",
                                    "%s runs its own rpc.idmapd (pid %d): its answers are cached "
                                    "in the kernel's single .id_resolver keyring and served to "
                                    "every other namespace, the host included",
                                    label, (int) v[i].pid);
                }
        }
        if (host_rpc && host_nsid && host_pipes)
                add_finding(SEV_ERROR, "idmapd",
                            "stop one of them: systemctl disable --now nfs-idmapd.service, or "
                            "keep rpc.idmapd for the host and set host-pipes = no in [idmapd] of "
                            "nsid.conf",
                            "rpc.idmapd (pid %s) and nsid-idmapd (pid %s) both answer the host's "
                            "idmap pipes",
                            rpc_pids, nsid_pids);
        if (host_nsid && !s->daemon) {
                add_finding(SEV_WARNING, "idmapd", NULL,
                            "nsid-idmapd runs (pid %s) but does not answer on %s: %s",
                            nsid_pids, ctx_socket_path(), strerror(-s->daemon_r));
        } else if (s->daemon)
                add_finding(SEV_OK, "idmapd", NULL, "nsid-idmapd answers on %s",
                            ctx_socket_path());
        else if (!host_nsid)
                add_finding(SEV_INFO, "idmapd",
                            "systemctl enable --now nsid-idmapd.service",
                            "nsid-idmapd does not run: the idmap pipes of containers are "
                            "answered by nobody (or by rpc.idmapd with the host's users)");
        free(v);
}
