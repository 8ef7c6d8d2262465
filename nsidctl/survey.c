/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: one look at every network namespace (for status and doctor): its container, its
 * NFS client identifier and where that came from, its hostname, its idmap domain, and what
 * nsid-idmapd says about it. Nothing is changed. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nsid/nfsconf.h>
#include <nsid/file.h>
#include <nsid/identity.h>
#include <nsid/kernel.h>
#include <nsid/nfsclient.h>
#include <nsid/registry.h>

#include "nsidctl.h"
#include "pool.h"

#define HOST_FILE_MAX (1024 * 1024)

static int read_small(const char *path, size_t max, char **ret, size_t *ret_size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        size_t len = 0;
        char *buf;

        if (fd < 0)
                return -errno;
        buf = malloc(max + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        for (;;) {
                ssize_t n = read(fd, buf + len, max - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        free(buf);
                        close(fd);
                        return r;
                }
                if (n == 0 || (len += (size_t) n) >= max)
                        break;
        }
        close(fd);
        buf[len] = '\0';
        *ret = buf;
        if (ret_size)
                *ret_size = len;
        return 0;
}

char *idmap_domain_of(const char *conf, size_t size, const char *hostname,
                      const char **ret_source) {
        char *d = NULL;
        const char *dot;

        if (conf && nsid_nfsconf_get(conf, size, "General", "Domain", &d) == 0 && d[0]) {
                *ret_source = "idmapd.conf";
                return d;
        }
        free(d);
        /* libnfsidmap's fallback: the DNS domain of the host's name */
        if (hostname && (dot = strchr(hostname, '.')) && dot[1]) {
                *ret_source = "hostname";
                return strdup(dot + 1);
        }
        *ret_source = NULL;
        return NULL;
}

/* The UTS nodename seen by a process: a short-lived thread joins its UTS namespace (setns
 * changes only the calling thread's namespaces) and calls uname(). */
typedef struct uts_job {
        int fd;
        int r;
        char name[sizeof(((struct utsname *) 0)->nodename)];
} uts_job;

static void *uts_thread(void *userdata) {
        uts_job *j = userdata;
        struct utsname u;

        if (setns(j->fd, CLONE_NEWUTS) < 0) {
                j->r = -errno;
                return NULL;
        }
        if (uname(&u) < 0) {
                j->r = -errno;
                return NULL;
        }
        snprintf(j->name, sizeof(j->name), "%s", u.nodename);
        j->r = 0;
        return NULL;
}

static int proc_hostname(const nsid_proc *proc, char **ret) {
        nsid_ns *uts = NULL;
        uts_job j = { .r = -EIO };
        pthread_t t;
        int r;

        r = nsid_proc_open_ns(proc, NSID_NS_UTS, &uts);
        if (r < 0)
                return r;
        j.fd = nsid_ns_get_fd(uts);
        r = pthread_create(&t, NULL, uts_thread, &j);
        if (r == 0)
                (void) pthread_join(t, NULL);
        nsid_ns_unref(uts);
        if (r != 0)
                return -r;
        if (j.r < 0)
                return j.r;
        *ret = strdup(j.name);
        return *ret ? 0 : -ENOMEM;
}

static json_object *daemon_ns_of(json_object *daemon, uint64_t ino) {
        json_object *arr, *o, *v;

        if (!daemon || !json_object_object_get_ex(daemon, "namespaces", &arr) ||
            !json_object_is_type(arr, json_type_array))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                o = json_object_array_get_idx(arr, i);
                if (json_object_object_get_ex(o, "netns", &v) && json_object_get_uint64(v) == ino)
                        return o;
        }
        return NULL;
}

static char *container_name(const ns_facts *f) {
        const char *s;

        if (f->info->initial)
                return strdup("(host)");
        if (f->engine.engine && f->engine.name[0])
                return strdup(f->engine.name);
        if (f->engine.engine && f->engine.id[0] && !(f->reg_name && f->reg_name[0]))
                return strndup(f->engine.id, 12);
        if (f->reg_name && f->reg_name[0])
                return strdup(f->reg_name);
        if (f->info->path) {
                s = strrchr(f->info->path, '/');
                return strdup(s ? s + 1 : f->info->path);
        }
        if (f->info->cgroup && strcmp(f->info->cgroup, "/") != 0) {
                s = strrchr(f->info->cgroup, '/');
                return strdup(s && s[1] ? s + 1 : f->info->cgroup);
        }
        return NULL;
}

static void survey_registry(ns_facts *f, nsid_registry *reg, nsid_ns *netns) {
        nsid_registry_entry e = {};
        char boot_id[37];
        uint64_t cookie;

        if (!reg || nsid_boot_id(boot_id) < 0 || nsid_netns_get_cookie(netns, &cookie) < 0)
                return;
        if (nsid_registry_lookup_netns(reg, arg.app, &f->info->id, boot_id, cookie, &e) < 0)
                return;
        f->reg_identity = strdup(e.identity);
        f->reg_source = nsid_key_source_to_string(e.source);
        f->reg_name = e.name ? strdup(e.name) : NULL;
        nsid_registry_entry_done(&e);
}

/* Reading identifiers forks a worker per namespace that mostly waits on the kernel: a few
 * threads read them at once (the registry and the rest stay sequential). */
typedef struct handles {
        nsid_ns *netns;
        nsid_proc *proc;
} handles;

typedef struct identifiers_job {
        survey *s;
        handles *h;
} identifiers_job;

static void read_identifier(size_t i, void *userdata) {
        identifiers_job *j = userdata;

        if (j->h[i].netns)
                j->s->f[i].ident_r = nsid_nfs_client_get_identifier(j->h[i].netns, arg.timeout_ms,
                                                                    &j->s->f[i].identifier);
}

static void read_identifiers(survey *s, handles *h) {
        identifiers_job j = { .s = s, .h = h };

        pool_for_each(s->n, 16, read_identifier, &j);
}

static void survey_rest(survey *s, ns_facts *f, nsid_registry *reg, handles *h) {
        char *conf = NULL, *daemon_domain = NULL;
        size_t conf_size = 0;
        json_object *v;

        if (f->open_r < 0)
                goto name;
        survey_registry(f, reg, h->netns);
        if (h->proc)
                f->hostname_r = proc_hostname(h->proc, &f->hostname);

        f->daemon_ns = daemon_ns_of(s->daemon, f->info->id.ino);
        if (f->daemon_ns && json_object_object_get_ex(f->daemon_ns, "domain", &v) &&
            json_object_get_string_len(v) > 0)
                daemon_domain = strdup(json_object_get_string(v));
        if (daemon_domain) {
                f->domain = daemon_domain;
                f->domain_source = "nsid-idmapd";
        } else if (f->info->initial) {
                f->domain = s->host_domain ? strdup(s->host_domain) : NULL;
                f->domain_source = s->host_domain_source;
        } else if (h->proc) {
                if (nsid_proc_read_root_file(h->proc, "/etc/idmapd.conf", HOST_FILE_MAX, &conf,
                                             &conf_size, NULL) < 0)
                        conf = NULL;
                f->domain = idmap_domain_of(conf, conf_size, f->hostname, &f->domain_source);
                free(conf);
        }
name:
        /* the engine from the cgroup of the namespace's first process; Podman's name from
         * its conmon (the cgroup holds only the id) */
        if (!f->info->initial && f->info->cgroup &&
            engine_from_cgroup(f->info->cgroup, &f->engine) == 0) {
                if (!f->engine.name[0] && f->info->pid)
                        (void) engine_name_podman("/proc", f->info->pid, &f->engine);
        } else if (!f->info->initial && f->info->pid &&
                   engine_from_nspawn_parent("/proc", f->info->pid, &f->engine) < 0)
                f->engine = (engine_ref) {};
        f->container = container_name(f);
}

int survey_run(survey *s) {
        nsid_registry *reg = NULL;
        handles *h = NULL;
        char *text = NULL;
        size_t size = 0;
        const char *hook;

        *s = (survey) { .daemon_r = -ENOENT };
        (void) uname(&s->uts);
        s->sysfs_nfs = access("/sys/fs/nfs/net/nfs_client", F_OK) == 0;
        hook = secure_getenv("NSID_TEST_SYSFS_NFS_CLIENT_DIR");
        s->test_hook = hook && hook[0];
        /* a network namespace is made and dropped for it: a few milliseconds */
        s->idkeys_r = nsid_kernel_nfs_idkeys_tagged();
        if (read_small("/sys/module/nfs/parameters/nfs4_unique_id", 256, &text, NULL) == 0) {
                text[strcspn(text, "\n")] = '\0';
                if (text[0])
                        s->nfs4_unique_id = text;
                else
                        free(text);
                text = NULL;
        }
        if (read_small(ctx_idmapd_conf(), HOST_FILE_MAX, &text, &size) < 0)
                text = NULL;
        s->host_domain = idmap_domain_of(text, size, s->uts.nodename, &s->host_domain_source);
        free(text);

        s->daemon_r = daemon_status(ctx_socket_path(), arg.timeout_ms, &s->daemon);
        if (s->daemon_r < 0)
                s->daemon = NULL;

        out_log_quiet(true); /* a missing registry is reported below, not as a log line */
        s->registry_r = nsid_registry_open(ctx_registry_path(), NSID_REGISTRY_READONLY, &reg);
        out_log_quiet(false);
        if (s->registry_r < 0)
                reg = NULL;

        s->scan_r = nsid_netns_scan(&s->v, &s->n);
        if (s->scan_r < 0) {
                nsid_registry_unref(reg);
                return s->scan_r;
        }
        s->f = calloc(s->n ? s->n : 1, sizeof(*s->f));
        if (!s->f) {
                nsid_registry_unref(reg);
                return -ENOMEM;
        }
        h = calloc(s->n ? s->n : 1, sizeof(*h));
        if (!h) {
                nsid_registry_unref(reg);
                return -ENOMEM;
        }
        for (size_t i = 0; i < s->n; i++) {
                ns_facts *f = &s->f[i];
                f->info = &s->v[i];
                f->ident_r = f->hostname_r = -ESRCH;
                f->open_r = nsid_netns_info_open(f->info, &h[i].netns, &h[i].proc);
                if (f->open_r < 0)
                        h[i] = (handles) {};
        }
        read_identifiers(s, h);
        for (size_t i = 0; i < s->n; i++) {
                survey_rest(s, &s->f[i], reg, &h[i]);
                nsid_ns_unref(h[i].netns);
                nsid_proc_unref(h[i].proc);
        }
        free(h);
        nsid_registry_unref(reg);
        return 0;
}

const char *idkeys_state(int r, char *buf, size_t size) {
        if (r == 1)
                return "tagged";
        if (r == 0)
                return "untagged";
        if (r == -ENODEV)
                return "not-loaded";
        if (r == -EPROTO)
                snprintf(buf, size, "error: the id_resolver and id_legacy key types disagree");
        else
                snprintf(buf, size, "error: %s", strerror(-r));
        return buf;
}

char *nfs_owner_string(const survey *s, const ns_facts *f) {
        const char *uniq;
        char *o = NULL;
        int r;

        if (f->ident_r != 0 || !f->hostname)
                return NULL;
        uniq = f->identifier[0] ? f->identifier : s->nfs4_unique_id ? s->nfs4_unique_id : "";
        r = uniq[0] ? asprintf(&o, "Linux NFSv4.2 %s/%s", uniq, f->hostname)
                    : asprintf(&o, "Linux NFSv4.2 %s", f->hostname);
        return r < 0 ? NULL : o;
}

void survey_done(survey *s) {
        for (size_t i = 0; s->f && i < s->n; i++) {
                ns_facts *f = &s->f[i];
                free(f->identifier);
                free(f->reg_identity);
                free(f->reg_name);
                free(f->hostname);
                free(f->domain);
                free(f->container);
        }
        free(s->f);
        nsid_netns_info_free(s->v, s->n);
        free(s->nfs4_unique_id);
        free(s->host_domain);
        json_object_put(s->daemon);
        *s = (survey) {};
}
