/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl status: every network namespace at a glance. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsidctl.h"

/* What the identifier column says, and where it came from. */
const char *ns_ident_state(const ns_facts *f) {
        if (f->open_r < 0)
                return "gone";
        if (f->ident_r == -ENOENT)
                return f->reg_identity ? "recorded" : "no-nfs-client";
        if (f->ident_r < 0)
                return "error";
        return f->identifier[0] ? "set" : "unset";
}

static const char *ident_source(const ns_facts *f) {
        if (f->ident_r == 0 && f->identifier[0])
                return f->reg_identity && strcmp(f->reg_identity, f->identifier) == 0
                               ? f->reg_source
                               : "external";
        if (f->ident_r == -ENOENT && f->reg_identity)
                return f->reg_source;
        return NULL;
}

static const char *ident_shown(const ns_facts *f) {
        if (f->ident_r == 0)
                return f->identifier[0] ? f->identifier : "(unset)";
        if (f->ident_r == -ENOENT && f->reg_identity)
                return f->reg_identity;
        if (f->ident_r == -ENOENT)
                return "(no nfs client)";
        return "?";
}

static uint64_t dget(json_object *o, const char *k) {
        json_object *v;
        return o && json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) : 0;
}

static json_object *facts_json(const survey *s, const ns_facts *f) {
        json_object *o = json_object_new_object(), *reg = NULL;
        char *owner = nfs_owner_string(s, f);
        const nsid_netns_info *in = f->info;

        json_object_object_add(o, "netns", json_object_new_uint64(in->id.ino));
        json_object_object_add(o, "netns_dev", json_object_new_uint64(in->id.dev));
        json_object_object_add(o, "host", json_object_new_boolean(in->initial));
        json_object_object_add(o, "pid", json_object_new_int(in->pid));
        json_object_object_add(o, "comm", json_string_or_null(in->comm));
        json_object_object_add(o, "cgroup", json_string_or_null(in->cgroup));
        json_object_object_add(o, "path", json_string_or_null(in->path));
        json_object_object_add(o, "container", json_string_or_null(f->container));
        json_object_object_add(o, "engine", json_string_or_null(f->engine.engine));
        json_object_object_add(o, "engine_id",
                               f->engine.engine && f->engine.id[0]
                                       ? json_object_new_string(f->engine.id)
                                       : NULL);
        json_object_object_add(o, "hostname", json_string_or_null(f->hostname));
        json_object_object_add(o, "identifier",
                               f->ident_r == 0 && f->identifier[0]
                                       ? json_object_new_string(f->identifier)
                                       : NULL);
        json_object_object_add(o, "identifier_state", json_object_new_string(ns_ident_state(f)));
        if (f->ident_r < 0 && f->ident_r != -ENOENT)
                json_object_object_add(o, "identifier_error",
                                       json_object_new_string(strerror(-f->ident_r)));
        json_object_object_add(o, "source", json_string_or_null(ident_source(f)));
        if (f->reg_identity) {
                reg = json_object_new_object();
                json_object_object_add(reg, "identity", json_object_new_string(f->reg_identity));
                json_object_object_add(reg, "key_source", json_string_or_null(f->reg_source));
                json_object_object_add(reg, "name", json_string_or_null(f->reg_name));
        }
        json_object_object_add(o, "registry", reg);
        json_object_object_add(o, "nfs_mounted", json_object_new_boolean(in->nfs_mounted));
        json_object_object_add(o, "nfs_owner", json_string_or_null(owner));
        free(owner);
        json_object_object_add(o, "idmap_domain", json_string_or_null(f->domain));
        json_object_object_add(o, "idmap_domain_source", json_string_or_null(f->domain_source));
        json_object_object_add(o, "idmapd", f->daemon_ns ? json_object_get(f->daemon_ns) : NULL);
        return o;
}

static json_object *status_json(const survey *s) {
        json_object *root = json_object_new_object(), *k = json_object_new_object(),
                    *d = json_object_new_object(), *r = json_object_new_object(),
                    *arr = json_object_new_array();
        char buf[128];

        json_object_object_add(k, "release", json_object_new_string(s->uts.release));
        json_object_object_add(k, "nfs_client_sysfs", json_object_new_boolean(s->sysfs_nfs));
        json_object_object_add(k, "test_hook", json_object_new_boolean(s->test_hook));
        json_object_object_add(k, "nfs4_unique_id", json_string_or_null(s->nfs4_unique_id));
        json_object_object_add(k, "nfs_idkeys_tagged",
                               s->idkeys_r == 0 || s->idkeys_r == 1
                                       ? json_object_new_boolean(s->idkeys_r)
                                       : NULL);
        json_object_object_add(k, "nfs_idkeys_probe",
                               json_object_new_string(idkeys_state(s->idkeys_r, buf,
                                                                   sizeof(buf))));
        json_object_object_add(root, "kernel", k);

        json_object_object_add(d, "running", json_object_new_boolean(s->daemon != NULL));
        json_object_object_add(d, "socket", json_object_new_string(ctx_socket_path()));
        if (s->daemon) {
                json_object *v;
                if (json_object_object_get_ex(s->daemon, "version", &v))
                        json_object_object_add(d, "version", json_object_get(v));
                if (json_object_object_get_ex(s->daemon, "pid", &v))
                        json_object_object_add(d, "pid", json_object_get(v));
                if (json_object_object_get_ex(s->daemon, "uptime_s", &v))
                        json_object_object_add(d, "uptime_s", json_object_get(v));
                if (json_object_object_get_ex(s->daemon, "host_domain", &v))
                        json_object_object_add(d, "host_domain", json_object_get(v));
        } else
                json_object_object_add(d, "error", json_object_new_string(strerror(-s->daemon_r)));
        json_object_object_add(root, "idmapd", d);

        json_object_object_add(r, "path", json_object_new_string(ctx_registry_path()));
        json_object_object_add(r, "error", s->registry_r < 0
                                                   ? json_object_new_string(strerror(-s->registry_r))
                                                   : NULL);
        json_object_object_add(root, "registry", r);
        json_object_object_add(root, "host_idmap_domain", json_string_or_null(s->host_domain));
        json_object_object_add(root, "host_idmap_domain_source",
                               json_string_or_null(s->host_domain_source));
        for (size_t i = 0; i < s->n; i++)
                json_object_array_add(arr, facts_json(s, &s->f[i]));
        json_object_object_add(root, "namespaces", arr);
        return root;
}

static void print_header(const survey *s) {
        printf("%skernel%s %s: ", col(C_BOLD), col(C_RESET), s->uts.release);
        if (s->sysfs_nfs)
                printf("nfs client loaded\n");
        else if (s->test_hook)
                printf("nfs client not loaded; identifiers from the test hook "
                       "NSID_TEST_SYSFS_NFS_CLIENT_DIR\n");
        else
                printf("%snfs client not loaded%s (identifiers cannot be read yet)\n",
                       col(C_YELLOW), col(C_RESET));
        printf("%sidmap keys%s ", col(C_BOLD), col(C_RESET));
        if (s->idkeys_r == 1)
                printf("one ID cache per network namespace (tagged)\n");
        else if (s->idkeys_r == 0)
                printf("%sone ID cache for all network namespaces%s (untagged: see nsidctl "
                       "doctor)\n",
                       col(C_YELLOW), col(C_RESET));
        else if (s->idkeys_r == -ENODEV)
                printf("nfsv4 client not loaded (cannot tell yet)\n");
        else {
                char buf[128];
                printf("%sunknown%s (%s)\n", col(C_YELLOW), col(C_RESET),
                       idkeys_state(s->idkeys_r, buf, sizeof(buf)));
        }
        printf("%snsid-idmapd%s ", col(C_BOLD), col(C_RESET));
        if (s->daemon) {
                json_object *v;
                printf("%srunning%s", col(C_GREEN), col(C_RESET));
                if (json_object_object_get_ex(s->daemon, "pid", &v))
                        printf(", pid %d", json_object_get_int(v));
                if (json_object_object_get_ex(s->daemon, "uptime_s", &v))
                        printf(", up %" PRId64 " s", json_object_get_int64(v));
        } else
                printf("%snot reachable%s at %s (%s)", col(C_YELLOW), col(C_RESET),
                       ctx_socket_path(), strerror(-s->daemon_r));
        printf("\n%sregistry%s %s%s%s\n", col(C_BOLD), col(C_RESET), ctx_registry_path(),
               s->registry_r < 0 ? ": " : "",
               s->registry_r < 0 ? strerror(-s->registry_r) : "");
        printf("%shost idmap domain%s %s%s%s%s\n\n", col(C_BOLD), col(C_RESET),
               s->host_domain ? s->host_domain : "(unknown)",
               s->host_domain_source ? " (from " : "",
               s->host_domain_source ? s->host_domain_source : "",
               s->host_domain_source ? ")" : "");
}

int cmd_status(void) {
        survey s;
        int r;

        r = survey_run(&s);
        if (r < 0) {
                errorf("cannot enumerate network namespaces: %s", strerror(-r));
                survey_done(&s);
                return EXIT_FAIL;
        }
        if (arg.json) {
                json_object *o = status_json(&s);
                print_json(o);
                json_object_put(o);
                survey_done(&s);
                return EXIT_OK;
        }

        if (!arg.no_legend) {
                print_header(&s);
                printf("%s%-11s %-7s %-6s %-20s %-16s %-32s %-12s %-3s %-20s", col(C_BOLD),
                       "NETNS", "PID", "ENGINE", "CONTAINER", "HOSTNAME", "IDENTIFIER", "SOURCE",
                       "NFS", "IDMAP-DOMAIN");
                if (s.daemon)
                        printf(" %-20s %8s %8s %6s", "NAMES", "REQ", "HITS", "FAIL");
                printf("%s\n", col(C_RESET));
        }
        for (size_t i = 0; i < s.n; i++) {
                const ns_facts *f = &s.f[i];
                const char *st = ns_ident_state(f);
                char pid[16] = "-", host[4 * 64 + 1], dom[4 * 64 + 1], cont[4 * 64 + 1];
                color c = strcmp(st, "set") == 0 || strcmp(st, "recorded") == 0 ? C_RESET
                          : strcmp(st, "unset") == 0 && !f->info->initial ? C_YELLOW
                          : strcmp(st, "error") == 0                       ? C_RED
                                                                           : C_DIM;

                if (f->info->pid)
                        snprintf(pid, sizeof(pid), "%d", (int) f->info->pid);
                printf("%-11" PRIu64 " %-7s %-6s %-20.20s %-16.16s %s%-32.32s%s %-12s %-3s "
                       "%-20.20s",
                       f->info->id.ino, pid, f->engine.engine ? f->engine.engine : "-",
                       text_safe(f->container, cont, sizeof(cont)),
                       text_safe(f->hostname, host, sizeof(host)), col(c), ident_shown(f),
                       col(C_RESET), ident_source(f) ? ident_source(f) : "-",
                       f->info->nfs_mounted ? "yes" : "no", text_safe(f->domain, dom, sizeof(dom)));
                if (s.daemon) {
                        /* what answers its ID lookups: its files, or its own name service
                         * and the sources its nsswitch.conf names (nsid-idmapd's view) */
                        char names[4 * 64 + 8] = "-", esc[4 * 64 + 1];
                        json_object *by = NULL, *srcs = NULL;
                        if (f->daemon_ns && json_object_object_get_ex(f->daemon_ns, "answered_by", &by) &&
                            json_object_get_string_len(by) > 0) {
                                if (strcmp(json_object_get_string(by), "nss") == 0 &&
                                    json_object_object_get_ex(f->daemon_ns, "passwd_sources", &srcs))
                                        snprintf(names, sizeof(names), "nss:%s",
                                                 text_safe(json_object_get_string(srcs), esc, sizeof(esc)));
                                else
                                        text_safe(json_object_get_string(by), names, sizeof(names));
                        }
                        printf(" %-20.20s", names);
                        if (f->daemon_ns)
                                printf(" %8" PRIu64 " %8" PRIu64 " %6" PRIu64,
                                       dget(f->daemon_ns, "requests"),
                                       dget(f->daemon_ns, "hits"),
                                       dget(f->daemon_ns, "failures") +
                                               dget(f->daemon_ns, "timeouts"));
                        else
                                printf(" %8s %8s %6s", "-", "-", "-");
                }
                printf("\n");
        }
        survey_done(&s);
        return EXIT_OK;
}
