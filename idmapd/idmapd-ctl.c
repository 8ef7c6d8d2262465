/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: the control socket (root only, SO_PEERCRED) and its command-line client. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "idmapd.h"
#include "idmapd-cache.h"
#include "idmapd-resolve.h"
#include "idmapd-kernel.h"
#include "idmapd-ns.h"
#include "idmapd-metrics.h"
#include "idmapd-quota.h"
#include "idmapd-ctl.h"
#include "json-envelope.h"

#define OUT_MAX NSID_CTL_REPLY_MAX /* what clients read at most */

struct dm_client {
        dm_client *next;
        dm_tag tag;
        int fd;
        pid_t pid;
        bool busy, closing;
        bool in_event; /* inside dm_ctl_client_event(): answers must not re-enter it */
        bool resume;   /* answered while not in its event: its next lines wait for dm_ctl_resume() */
        char in[NSID_CTL_LINE_MAX + 1];
        size_t in_len;
        char *out;
        size_t out_len, out_off;
};

static dm_client *clients = NULL;
static dm_tag listen_tag = { .kind = DM_TAG_LISTEN };

int dm_ctl_listen(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* a stale socket of a previous run; never remove anything else */
        if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
                (void) unlink(path);
        mode_t old = umask(0077);
        int r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
        umask(old);
        if (r < 0 || chmod(path, 0600) < 0 || listen(fd, 64) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        listen_tag.obj = NULL;
        if (dm_epoll_add(fd, EPOLLIN, &listen_tag) < 0) {
                close(fd);
                return -errno;
        }
        return fd;
}

static void client_free(dm_client *c) {
        for (dm_client **pp = &clients; *pp; pp = &(*pp)->next)
                if (*pp == c) {
                        *pp = c->next;
                        break;
                }
        dm_pending_drop_client(c);
        dm_epoll_del(c->fd);
        close(c->fd);
        free(c->out);
        free(c);
}

static void flush_out(dm_client *c) {
        while (c->out_off < c->out_len) {
                ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        c->closing = true;
                        c->out_len = c->out_off = 0;
                        break;
                }
                c->out_off += (size_t) n;
        }
        if (c->out_off == c->out_len)
                c->out_len = c->out_off = 0;
        (void) dm_epoll_mod(c->fd, EPOLLIN | (c->out_len ? EPOLLOUT : 0), &c->tag);
}

static void reply(dm_client *c, const char *s, size_t len) {
        if (c->out_len + len > OUT_MAX) {
                c->closing = true;
                return;
        }
        char *n = realloc(c->out, c->out_len + len);
        if (!n) {
                c->closing = true;
                return;
        }
        c->out = n;
        memcpy(c->out + c->out_len, s, len);
        c->out_len += len;
        flush_out(c);
}

static void reply_error(dm_client *c, int error, const char *msg) {
        char esc[1024], line[1100];
        if (nsid_qword_escape(msg, strlen(msg) > 250 ? 250 : strlen(msg), esc, sizeof(esc)) < 0)
                strcpy(esc, "-");
        int n = snprintf(line, sizeof(line), "error %d %s\n", error < 0 ? -error : error, esc);
        reply(c, line, (size_t) n);
}

void dm_ctl_answer(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl) {
        dm_client *c = p->client;
        char line[700], esc[4 * DM_NAME_MAX + 1], v[DM_NAME_MAX];
        int n;
        if (!c)
                return;
        c->busy = false;
        if (a->error == 0) {
                if (p->q.kind == NSID_IDMAP_KEY_UID || p->q.kind == NSID_IDMAP_KEY_GID)
                        snprintf(v, sizeof(v), "%u", a->id);
                else
                        snprintf(v, sizeof(v), "%s", a->name);
                if (nsid_qword_escape(v, strlen(v), esc, sizeof(esc)) < 0)
                        reply_error(c, EINVAL, "unprintable answer");
                else {
                        n = snprintf(line, sizeof(line), "ok %s %u %s\n", esc, ttl,
                                     cached ? "cache" : "resolved");
                        reply(c, line, (size_t) n);
                }
        } else if (a->error == -ENOENT) {
                n = snprintf(line, sizeof(line), "negative %u\n", ttl ? ttl : dm.cfg.negative_ttl);
                reply(c, line, (size_t) n);
        } else
                reply_error(c, a->error, a->error == -ETIMEDOUT
                                                 ? "the namespace's resolver did not answer in time"
                                                 : strerror(-a->error));
        /* An answer that came later (from a resolver, or a deadline) resumes the lines
         * already received, but not from here: the caller is in the middle of its own work
         * on a namespace (dm_result_ready(), dm_pending_expire(), ns_free()) that a next
         * line (a register that rescans) could free under it (issue #29, item 8). The main
         * loop calls dm_ctl_resume() once that work is done. One given at once returns to the
         * loop in dm_ctl_client_event() instead (no recursion: a client may pipeline
         * thousands of lines). */
        if (!c->in_event && (c->in_len > 0 || c->closing))
                c->resume = true;
}

void dm_ctl_resume(void) {
        for (bool again = true; again;) {
                again = false;
                for (dm_client *c = clients; c; c = c->next)
                        if (c->resume) {
                                c->resume = false;
                                /* (it may free c, and its lines may complete other clients'
                                 * requests: start over) */
                                dm_ctl_client_event(c, EPOLLIN);
                                again = true;
                                break;
                        }
        }
}

static uint64_t percentile(const dm_stats *s, double q) {
        uint64_t total = 0, acc = 0;
        for (int i = 0; i < DM_LAT_BUCKETS; i++)
                total += s->lat[i];
        if (total == 0)
                return 0;
        for (int i = 0; i < DM_LAT_BUCKETS; i++) {
                acc += s->lat[i];
                if ((double) acc >= q * (double) total)
                        return 1ull << i; /* upper bound of the bucket, microseconds */
        }
        return 1ull << (DM_LAT_BUCKETS - 1);
}

static json_object *ns_json(dm_ns *ns) {
        json_object *o = json_object_new_object(), *lat = json_object_new_object();
        char domain[512] = "";
        uint64_t users = 0, groups = 0, checks = 0;
        int lerr = 0, pipes = 0;
        size_t pending = 0;
        dm_nss_info nss = {};

        if (ns->resolver)
                dm_resolver_get_info(ns->resolver, domain, sizeof(domain), &users, &groups, &checks,
                                     &lerr, &nss);
        else if (ns->is_host)
                snprintf(domain, sizeof(domain), "%s", dm_host_domain());
        for (dm_pipe *p = ns->pipes; p; p = p->next)
                pipes++;
        for (dm_pending *p = ns->pending; p; p = p->next)
                pending++;
        json_object_object_add(o, "netns", json_object_new_uint64(ns->id.ino));
        json_object_object_add(o, "label", json_object_new_string(ns->label));
        json_object_object_add(o, "context", json_object_new_string(ns->is_host ? "host" : "container"));
        json_object_object_add(o, "ids", json_object_new_string(ns->kernel_view == DM_VIEW_HOST ? "host" : "namespace"));
        json_object_object_add(o, "pid", json_object_new_int(ns->proc ? nsid_proc_get_pid(ns->proc) : 0));
        json_object_object_add(o, "domain", json_object_new_string(domain));
        if (!ns->is_host) {
                json_object_object_add(o, "users", json_object_new_uint64(users));
                json_object_object_add(o, "groups", json_object_new_uint64(groups));
                /* passwd/group/idmapd.conf checks made (every refresh-interval while in use) */
                json_object_object_add(o, "db_checks", json_object_new_uint64(checks));
                if (lerr)
                        json_object_object_add(o, "load_error", json_object_new_string(strerror(-lerr)));
                /* what answers it: "files" (its passwd and group, the fast path) or "nss"
                 * (its own name service, inside it); the sources its nsswitch.conf names */
                json_object_object_add(o, "answered_by", json_object_new_string(
                        !ns->resolver || (!nss.passwd[0] && !lerr) ? "" : nss.nss ? "nss" : "files"));
                json_object_object_add(o, "passwd_sources", json_object_new_string(nss.passwd));
                json_object_object_add(o, "group_sources", json_object_new_string(nss.group));
                json_object_object_add(o, "idmapd_conf_methods", json_object_new_boolean(nss.libnfsidmap_conf));
                if (nss.last_error[0])
                        json_object_object_add(o, "nss_error", json_object_new_string(nss.last_error));
        }
        json_object_object_add(o, "cache_entries", json_object_new_uint64(dm_cache_size(ns->cache)));
        json_object_object_add(o, "pending", json_object_new_uint64(pending));
        json_object_object_add(o, "rpc_pipefs", json_object_new_string(
                ns->pipefs_fd >= 0 ? "mounted" : ns->pipefs_error ? strerror(-ns->pipefs_error) : "not attached"));
        json_object_object_add(o, "pipes", json_object_new_int(pipes));
        json_object_object_add(o, "nfsd_channels", json_object_new_string(
                ns->chan_fd[0] >= 0 ? "open" : ns->chan_error ? strerror(-ns->chan_error) : "not attached"));
        json_object_object_add(o, "identifier", json_object_new_string(ns->identifier_state));
        /* who it is charged to (owned by a user namespace), absent otherwise: the host uid
         * that made its top-level user namespace, or that user namespace when root made it */
        if (ns->charged && ns->owner.by_userns)
                json_object_object_add(o, "owner_userns", json_object_new_uint64(ns->owner.userns_ino));
        else if (ns->charged)
                json_object_object_add(o, "owner_uid", json_object_new_int64(
                        ns->owner.uid == (uid_t) -1 ? -1 : (int64_t) ns->owner.uid));
        json_object_object_add(o, "resolver", json_object_new_boolean(ns->resolver != NULL));
        dm_stats_json_add(o, &ns->stats);
        json_object_object_add(lat, "p50", json_object_new_uint64(percentile(&ns->stats, 0.50)));
        json_object_object_add(lat, "p90", json_object_new_uint64(percentile(&ns->stats, 0.90)));
        json_object_object_add(lat, "p99", json_object_new_uint64(percentile(&ns->stats, 0.99)));
        json_object_object_add(o, "latency_us", lat);
        return o;
}

/* "ok {json}" (one line), and the object freed. */
static void reply_json(dm_client *c, json_object *root) {
        const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        size_t l = strlen(s);
        char *line = malloc(l + 5);
        if (line) {
                memcpy(line, "ok ", 3);
                memcpy(line + 3, s, l);
                line[l + 3] = '\n';
                reply(c, line, l + 4);
                free(line);
        } else
                reply_error(c, ENOMEM, "out of memory");
        json_object_put(root);
}

static void do_status(dm_client *c) {
        json_object *root = json_object_new_object(), *arr = json_object_new_array();
        json_object_object_add(root, "version", json_object_new_string(NSID_VERSION));
        json_object_object_add(root, "pid", json_object_new_int(getpid()));
        json_object_object_add(root, "uptime_s", json_object_new_int64((dm_now_us() - dm.start_us) / 1000000));
        json_object_object_add(root, "host_domain", json_object_new_string(dm_host_domain()));
        /* the kernel's ID key cache: per network namespace (a patched or fixed kernel), or
         * one for all, and whether this daemon invalidates namespace-specific answers */
        json_object_object_add(root, "kernel_idkeys_tagged",
                               dm.kernel_idkeys < 0 ? NULL : json_object_new_boolean(dm.kernel_idkeys));
        json_object_object_add(root, "key_isolation", json_object_new_string(
                !dm.cfg.isolate_keys    ? "off (isolate-keys = no)"
                : dm.kernel_idkeys == 1 ? "not needed (the kernel tags ID keys by namespace)"
                : dm.kernel_idkeys == 0 ? "on (the kernel keeps one ID key cache)"
                                        : "on (the kernel not known yet)"));
        /* namespaces owned by user namespaces: kept within max-netns-per-owner and
         * max-netns-unprivileged (idmapd-quota.c), the others remembered as refused */
        dm_quota_stats qs;
        dm_quota_get_stats(&qs);
        json_object *b = json_object_new_object();
        json_object_object_add(b, "max_netns_per_owner", json_object_new_uint64(dm.cfg.max_netns_per_owner));
        json_object_object_add(b, "max_netns_unprivileged", json_object_new_uint64(dm.cfg.max_netns_unprivileged));
        json_object_object_add(b, "unprivileged_served", json_object_new_uint64(qs.kept));
        json_object_object_add(b, "charged_served", json_object_new_uint64(qs.kept_all));
        json_object_object_add(b, "refused_now", json_object_new_uint64(qs.refused_now));
        json_object_object_add(b, "refused_total", json_object_new_uint64(qs.refused_total));
        json_object_object_add(b, "owners", json_object_new_uint64(qs.owners));
        json_object_object_add(b, "resolver_threads", json_object_new_int(dm_resolver_live_threads()));
        json_object_object_add(root, "bounds", b);
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                json_object_array_add(arr, ns_json(ns));
        json_object_object_add(root, "namespaces", arr);
        reply_json(c, root);
}

static int target_ns(const nsid_ctl_request *rq, dm_ns **ret) {
        dm_ns *ns = NULL;
        switch (rq->target) {
        case NSID_CTL_TARGET_HOST:
                ns = dm_ns_host();
                break;
        case NSID_CTL_TARGET_NETNS:
                ns = dm_ns_find_ino(rq->netns_ino);
                break;
        case NSID_CTL_TARGET_PID: {
                int r = dm_ns_register_pid(rq->pid, &ns);
                if (r < 0)
                        return r;
                break;
        }
        default:
                return -EINVAL;
        }
        if (!ns)
                return -ESRCH;
        *ret = ns;
        return 0;
}

/* Why a request naming a namespace failed, as the reply says it. */
static const char *ns_error(int r) {
        return r == -ESRCH    ? "no such namespace"
               : r == -EUSERS ? "namespace not served: its owner has max-netns-per-owner or "
                                "max-netns-unprivileged reached"
                              : strerror(-r);
}

static void process_line(dm_client *c, const char *line, size_t len) {
        nsid_ctl_request rq;
        dm_ns *ns = NULL;
        char out[128];
        int r;

        r = nsid_ctl_request_parse(line, len, &rq);
        if (r < 0) {
                reply_error(c, r == -EOPNOTSUPP ? EOPNOTSUPP : EINVAL,
                            r == -EOPNOTSUPP ? "unknown command" : "malformed request");
                return;
        }
        switch (rq.command) {
        case NSID_CTL_STATUS:
                do_status(c);
                return;
        case NSID_CTL_METRICS:
                reply_json(c, dm_metrics_json());
                return;
        case NSID_CTL_FLUSH: {
                size_t n = 0;
                if (rq.target == NSID_CTL_TARGET_ALL) {
                        for (dm_ns *x = dm.namespaces; x; x = x->next) {
                                size_t k = dm_cache_flush(x->cache);
                                x->stats.cache_flushed += k;
                                n += k;
                        }
                } else {
                        r = target_ns(&rq, &ns);
                        if (r < 0) {
                                reply_error(c, r, ns_error(r));
                                return;
                        }
                        n = dm_cache_flush(ns->cache);
                        ns->stats.cache_flushed += n;
                }
                dm_log(LOG_INFO, ns, "cache flushed on request (%zu entries)", n);
                snprintf(out, sizeof(out), "ok %zu\n", n);
                reply(c, out, strlen(out));
                return;
        }
        case NSID_CTL_REGISTER:
                r = dm_ns_register_pid(rq.pid, &ns);
                if (r < 0) {
                        reply_error(c, r, ns_error(r));
                        return;
                }
                snprintf(out, sizeof(out), "ok netns:%" PRIu64 "\n", ns->id.ino);
                reply(c, out, strlen(out));
                return;
        case NSID_CTL_ROUTE: {
                /* A request-key helper asks before it hands a lookup to the kernel's pipe
                 * path: the pipes of that namespace must be open by then, or the kernel
                 * fails the lookup (EPIPE) and caches the failure for everyone. */
                r = target_ns(&rq, &ns);
                if (r < 0) {
                        reply_error(c, r, ns_error(r));
                        return;
                }
                unsigned pipes = 0;
                if (!ns->initial || dm.cfg.host_pipes) {
                        if (ns->pipefs_fd < 0)
                                dm_kernel_attach(ns);
                        else
                                dm_kernel_sync_pipes(ns);
                        for (dm_pipe *p = ns->pipes; p; p = p->next)
                                pipes++;
                }
                /* "route host" (a requester in the initial netns, or none found) while the
                 * host has no NFS client at all (its pipes are served and there are none):
                 * the lookup is a container client's, asked from a kernel thread or by a
                 * process gone since (bench-idmapd-sssd: one owner of 1,000 got the host's
                 * answer). Its own client's pipe answers it in the right context: say the
                 * pipes served elsewhere, so that the helper hands it there. */
                if (ns->initial && dm.cfg.host_pipes && pipes == 0)
                        for (dm_ns *x = dm.namespaces; x; x = x->next)
                                if (!x->initial)
                                        for (dm_pipe *p = x->pipes; p; p = p->next)
                                                pipes++;
                snprintf(out, sizeof(out), "ok %u\n", pipes);
                reply(c, out, strlen(out));
                return;
        }
        case NSID_CTL_LOOKUP: {
                r = target_ns(&rq, &ns);
                if (r < 0) {
                        reply_error(c, r, ns_error(r));
                        return;
                }
                dm_query q = { .kind = rq.kind };
                q.view = rq.view == NSID_CTL_VIEW_HOST_IDS ? DM_VIEW_HOST
                         : rq.view == NSID_CTL_VIEW_NS_IDS ? DM_VIEW_NS
                                                           : ns->kernel_view;
                if (ns->initial)
                        q.view = DM_VIEW_HOST;
                q.id = rq.id;
                memcpy(q.name, rq.name, sizeof(q.name));
                ns->stats.ctl_lookups++;
                dm_pending t = { .complete = dm_ctl_answer, .client = c };
                c->busy = true;
                (void) dm_request(ns, &q, &t);
                return;
        }
        default:
                reply_error(c, EOPNOTSUPP, "unknown command");
        }
}

void dm_ctl_client_event(dm_client *c, uint32_t events) {
        c->in_event = true;
        if (events & EPOLLOUT)
                flush_out(c);
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                while (!c->busy && !c->closing) {
                        char *nl = memchr(c->in, '\n', c->in_len);
                        if (nl) {
                                size_t l = (size_t) (nl - c->in) + 1;
                                char line[NSID_CTL_LINE_MAX + 1];
                                memcpy(line, c->in, l);
                                memmove(c->in, c->in + l, c->in_len - l);
                                c->in_len -= l;
                                process_line(c, line, l);
                                continue;
                        }
                        if (c->in_len >= NSID_CTL_LINE_MAX) {
                                reply_error(c, EMSGSIZE, "line too long");
                                c->closing = true;
                                break;
                        }
                        ssize_t n = recv(c->fd, c->in + c->in_len, NSID_CTL_LINE_MAX - c->in_len,
                                         MSG_DONTWAIT);
                        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                                c->closing = true;
                                c->out_len = 0; /* peer gone */
                                break;
                        }
                        if (n < 0)
                                break;
                        c->in_len += (size_t) n;
                }
        }
        c->in_event = false;
        if (c->closing && c->out_len == 0)
                client_free(c);
}

void dm_ctl_accept(int lfd) {
        for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                struct ucred cr;
                socklen_t l = sizeof(cr);
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0 || cr.uid != 0) {
                        static const char msg[] = "error 13 permission\\040denied:\\040root\\040only\n";
                        (void) send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                        dm_log(LOG_WARNING, NULL, "control socket: refused pid %d uid %u (root only)",
                               l == sizeof(cr) ? (int) cr.pid : -1, l == sizeof(cr) ? cr.uid : 0);
                        close(fd);
                        continue;
                }
                dm_client *c = calloc(1, sizeof(*c));
                if (!c) {
                        close(fd);
                        continue;
                }
                c->fd = fd;
                c->pid = cr.pid;
                c->tag = (dm_tag) { .kind = DM_TAG_CLIENT, .obj = c };
                if (dm_epoll_add(fd, EPOLLIN, &c->tag) < 0) {
                        close(fd);
                        free(c);
                        continue;
                }
                c->next = clients;
                clients = c;
                /* nsid-idmap sends its lookup as it connects: read it now rather than after
                 * another epoll_wait() (recv() says EAGAIN when nothing is there yet) */
                dm_ctl_client_event(c, EPOLLIN);
        }
}

void dm_ctl_close_all(void) {
        while (clients)
                client_free(clients);
}

/* ---- client side: nsid-idmapd --status / --ctl ---- */

/* --status and --ctl wait this long for the daemon's answer */
#define CLIENT_TIMEOUT_MS 10000u

static int ctl_roundtrip(const char *path, const char *req, size_t len, char **ret_line) {
        return nsid_ctl_roundtrip(path, req, len, CLIENT_TIMEOUT_MS, NULL, NSID_CTL_REPLY_MAX + 1,
                                  ret_line);
}

int dm_ctl_command(const char *path, const char *request) {
        char *line = NULL, req[NSID_CTL_LINE_MAX + 2];
        int n = snprintf(req, sizeof(req), "%s\n", request);
        if (n < 0 || (size_t) n >= sizeof(req)) {
                fprintf(stderr, "nsid-idmapd: --ctl: request longer than %u bytes\n"
                        "Try 'nsid-idmapd --help'.\n", NSID_CTL_LINE_MAX);
                return 2;
        }
        int r = ctl_roundtrip(path, req, (size_t) n, &line);
        if (r < 0) {
                fprintf(stderr, "nsid-idmapd: cannot reach the daemon at %s: %s\n", path,
                        strerror(-r));
                return 1;
        }
        puts(line);
        r = strncmp(line, "ok", 2) == 0 ? 0 : strncmp(line, "negative", 8) == 0 ? 3 : 1;
        free(line);
        return r;
}

int dm_status_client(const char *path, bool json, bool legend) {
        char *line = NULL;
        nsid_ctl_reply rp;
        int r = ctl_roundtrip(path, "status\n", 7, &line);
        if (r < 0) {
                fprintf(stderr, "nsid-idmapd: cannot reach the daemon at %s: %s\n", path,
                        strerror(-r));
                return 1;
        }
        if (nsid_ctl_reply_parse(line, (size_t) r, &rp) < 0 || rp.kind != NSID_CTL_REPLY_OK) {
                fprintf(stderr, "nsid-idmapd: %s\n", line);
                free(line);
                return 1;
        }
        char *js = strndup(rp.rest, rp.rest_len);
        json_object *root = js ? json_tokener_parse(js) : NULL;
        if (!root) {
                fprintf(stderr, "nsid-idmapd: malformed status\n");
                free(js);
                free(line);
                return 1;
        }
        if (json) {
                json_envelope_add(root, "nsid-idmapd", "status");
                puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        } else {
                json_object *arr, *v;
                if (legend)
                printf("nsid-idmapd %s, pid %d, up %" PRId64 " s, host domain %s\n",
                       json_object_object_get_ex(root, "version", &v) ? json_object_get_string(v) : "?",
                       json_object_object_get_ex(root, "pid", &v) ? json_object_get_int(v) : 0,
                       json_object_object_get_ex(root, "uptime_s", &v) ? json_object_get_int64(v) : 0,
                       json_object_object_get_ex(root, "host_domain", &v) ? json_object_get_string(v) : "?");
                if (legend)
                printf("%-11s %-9s %-5s %-20s %7s %8s %8s %8s %6s %6s %8s %8s %-12s %-12s %s\n", "NETNS",
                       "CONTEXT", "IDS", "DOMAIN", "CACHED", "REQ", "HITS", "MISSES", "FAIL", "TMO",
                       "P50us", "P99us", "PIPEFS", "NFSD", "LABEL");
                if (json_object_object_get_ex(root, "namespaces", &arr))
                        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                                json_object *o = json_object_array_get_idx(arr, i), *lat = NULL;
#define G(k) (json_object_object_get_ex(o, k, &v) ? v : NULL)
                                json_object_object_get_ex(o, "latency_us", &lat);
                                json_object *p50 = NULL, *p99 = NULL;
                                if (lat) {
                                        json_object_object_get_ex(lat, "p50", &p50);
                                        json_object_object_get_ex(lat, "p99", &p99);
                                }
                                printf("%-11" PRIu64 " %-9s %-5s %-20.20s %7" PRIu64 " %8" PRIu64
                                       " %8" PRIu64 " %8" PRIu64 " %6" PRIu64 " %6" PRIu64 " %8" PRIu64
                                       " %8" PRIu64 " %-12.12s %-12.12s %s\n",
                                       json_object_get_uint64(G("netns")),
                                       json_object_get_string(G("context")),
                                       json_object_get_string(G("ids")),
                                       json_object_get_string(G("domain")),
                                       json_object_get_uint64(G("cache_entries")),
                                       json_object_get_uint64(G("requests")),
                                       json_object_get_uint64(G("hits")),
                                       json_object_get_uint64(G("misses")),
                                       json_object_get_uint64(G("failures")),
                                       json_object_get_uint64(G("timeouts")),
                                       json_object_get_uint64(p50), json_object_get_uint64(p99),
                                       json_object_get_string(G("rpc_pipefs")),
                                       json_object_get_string(G("nfsd_channels")),
                                       json_object_get_string(G("label")));
#undef G
                        }
        }
        json_object_put(root);
        free(js);
        free(line);
        return 0;
}
