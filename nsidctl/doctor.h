/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: findings and the checks that make them (doctor-*.c). */
#ifndef NSIDCTL_DOCTOR_H
#define NSIDCTL_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "nsidctl.h"

typedef enum severity {
        SEV_OK,
        SEV_INFO,
        SEV_WARNING,
        SEV_ERROR,
} severity;

typedef struct finding {
        severity sev;
        const char *check;
        char *message;
        char *fix;
        json_object *data; /* more fields for --json (owner, addresses), or NULL */
} finding;

void add_finding(severity sev, const char *check, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void add_finding_fixf(severity sev, const char *check, const char *message, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));
/* Hand o (its keys) to the last finding added, for --json. */
void finding_attach(json_object *o);
/* "netns 4026532 (c1, pid 42)", "the host netns 4026531840" */
const char *ns_label(const ns_facts *f, char *buf, size_t size);

/* doctor-userns.c */
/* 1 when uid_map (the text of /proc/self/uid_map) is the initial user namespace's, 0 for
 * another, -EINVAL if unreadable; first is its first line, normalised. */
int userns_map_state(const char *uid_map, char *first, size_t size);
/* A finding when nsidctl runs in a user namespace (true: nothing else can be checked from
 * there) or, in the initial one, without root. */
bool check_userns(void);
/* doctor-kernel.c */
void check_kernel(const survey *s);
void check_idmap_keys(const survey *s);
void check_config(void);
/* doctor-identity.c */
void check_identifiers(const survey *s);
void check_owner_strings(const survey *s);
void check_hostnames(const survey *s);
/* doctor-registry.c */
void check_registry(void);
/* doctor-hostsecret.c */
void check_host_secret(void);
/* doctor-server.c */
void check_nfsd_clients(void);
/* doctor-watch.c */
void check_server_history(void);
/* doctor-idmap.c */
void check_domains(const survey *s);
void check_request_key(void);
void check_daemons(const survey *s);
void check_name_services(const survey *s);

#endif
