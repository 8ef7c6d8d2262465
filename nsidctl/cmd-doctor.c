/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: the problems users actually hit, each explained with its fix. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "doctor.h"
#include "nsidctl.h"

static finding *findings;
static size_t n_findings, cap_findings;

void add_finding(severity sev, const char *check, const char *fix, const char *fmt, ...) {
        finding *f;
        va_list ap;

        if (n_findings == cap_findings) {
                finding *nv = reallocarray(findings, cap_findings = cap_findings ? cap_findings * 2
                                                                                : 32,
                                           sizeof(*nv));
                if (!nv) {
                        errorf("out of memory");
                        exit(EXIT_FAIL);
                }
                findings = nv;
        }
        f = &findings[n_findings++];
        *f = (finding) { .sev = sev, .check = check };
        va_start(ap, fmt);
        if (vasprintf(&f->message, fmt, ap) < 0)
                f->message = NULL;
        va_end(ap);
        f->fix = fix ? strdup(fix) : NULL;
}

void finding_attach(json_object *o) {
        if (n_findings == 0) {
                json_object_put(o);
                return;
        }
        json_object_put(findings[n_findings - 1].data);
        findings[n_findings - 1].data = o;
}

void add_finding_fixf(severity sev, const char *check, const char *message, const char *fmt,
                      ...) {
        char *fix = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&fix, fmt, ap) < 0)
                fix = NULL;
        va_end(ap);
        add_finding(sev, check, fix, "%s", message);
        free(fix);
}

const char *ns_label(const ns_facts *f, char *buf, size_t size) {
        if (f->info->initial)
                snprintf(buf, size, "the host netns %" PRIu64, f->info->id.ino);
        else if (f->container)
                snprintf(buf, size, "netns %" PRIu64 " (%s, pid %d)", f->info->id.ino,
                         f->container, (int) f->info->pid);
        else if (f->info->pid)
                snprintf(buf, size, "netns %" PRIu64 " (pid %d %s)", f->info->id.ino,
                         (int) f->info->pid, f->info->comm ? f->info->comm : "");
        else
                snprintf(buf, size, "netns %" PRIu64, f->info->id.ino);
        return buf;
}

static const char *const sev_word[] = {
        [SEV_OK] = "ok", [SEV_INFO] = "info", [SEV_WARNING] = "warning", [SEV_ERROR] = "error",
};

static void print_findings(void) {
        unsigned errors = 0, warnings = 0;

        for (size_t i = 0; i < n_findings; i++) {
                const finding *f = &findings[i];
                color c = f->sev == SEV_ERROR     ? C_RED
                          : f->sev == SEV_WARNING ? C_YELLOW
                          : f->sev == SEV_OK      ? C_GREEN
                                                  : C_BLUE;
                errors += f->sev == SEV_ERROR;
                warnings += f->sev == SEV_WARNING;
                printf("%s%-7s%s %s%s%s: %s\n", col(c), sev_word[f->sev], col(C_RESET),
                       col(C_BOLD), f->check, col(C_RESET), f->message ? f->message : "?");
                if (f->fix)
                        printf("        %sfix:%s %s\n", col(C_BOLD), col(C_RESET), f->fix);
        }
        printf("\n%u error%s, %u warning%s\n", errors, errors == 1 ? "" : "s", warnings,
               warnings == 1 ? "" : "s");
}

static void print_findings_json(void) {
        json_object *root = json_object_new_object(), *arr = json_object_new_array();
        unsigned errors = 0, warnings = 0;

        for (size_t i = 0; i < n_findings; i++) {
                const finding *f = &findings[i];
                json_object *o = json_object_new_object();
                errors += f->sev == SEV_ERROR;
                warnings += f->sev == SEV_WARNING;
                json_object_object_add(o, "severity", json_object_new_string(sev_word[f->sev]));
                json_object_object_add(o, "check", json_object_new_string(f->check));
                json_object_object_add(o, "message", json_string_or_null(f->message));
                json_object_object_add(o, "fix", json_string_or_null(f->fix));
                if (f->data) {
                        json_object_object_foreach(f->data, k, v)
                                json_object_object_add(o, k, json_object_get(v));
                }
                json_object_array_add(arr, o);
        }
        json_object_object_add(root, "findings", arr);
        json_object_object_add(root, "errors", json_object_new_int((int) errors));
        json_object_object_add(root, "warnings", json_object_new_int((int) warnings));
        print_json(root);
        json_object_put(root);
}

int cmd_doctor(void) {
        unsigned errors = 0, warnings = 0;
        survey s;
        bool surveyed = false;
        int r;

        memset(&s, 0, sizeof(s));
        if (check_userns())
                /* from a user namespace nothing else can be seen, and nothing would help */
                goto print;
        if (arg.server) {
                /* only the NFS server's view: no namespaces of this host are looked at */
                check_nfsd_clients();
                check_server_history();
                goto print;
        }
        r = survey_run(&s);
        if (r < 0) {
                errorf("cannot enumerate network namespaces: %s", strerror(-r));
                survey_done(&s);
                return EXIT_FAIL;
        }
        surveyed = true;
        check_kernel(&s);
        check_idmap_keys(&s);
        check_config();
        check_registry();
        check_identifiers(&s);
        check_owner_strings(&s);
        check_hostnames(&s);
        check_domains(&s);
        check_request_key();
        check_daemons(&s);
        check_name_services(&s);
        check_host_secret();
        check_nfsd_clients();
        check_server_history();
print:
        if (arg.json)
                print_findings_json();
        else
                print_findings();
        for (size_t i = 0; i < n_findings; i++) {
                errors += findings[i].sev == SEV_ERROR;
                warnings += findings[i].sev == SEV_WARNING;
                free(findings[i].message);
                free(findings[i].fix);
                json_object_put(findings[i].data);
        }
        free(findings);
        findings = NULL;
        n_findings = cap_findings = 0;
        if (surveyed)
                survey_done(&s);
        return errors ? EXIT_PROBLEMS : warnings ? EXIT_WARNINGS : EXIT_OK;
}
