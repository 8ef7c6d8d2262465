/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dns_resolver upcall: "nsid-idmap dns <key serial>".
 *
 * dns_resolver keys are tagged with the requester's network namespace, but request-key runs
 * its helpers in the initial namespaces. This helper finds the requester (the
 * .request_key_auth key and /proc/keys), reads ITS /etc/hosts and /etc/resolv.conf through
 * its root (nsid/file.h: openat2 RESOLVE_IN_ROOT, regular files, size caps), answers names of
 * that hosts file itself, and otherwise asks the DNS servers of that resolv.conf with c-ares
 * from inside the requester's network namespace (setns; this process is short-lived and
 * single-threaded). No NSS module is loaded and nothing of the container is executed.
 * The whole lookup is bounded in time; failures end in a negative key carrying the error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <ares.h>
#include <keyutils.h>
#include <nsid/file.h>
#include <nsid/keyring.h>
#include <nsid/ns.h>
#include <nsid/resolv.h>
#include <nsid/worker.h>

#include "dns-reply.h"
#include "macro.h"
#include "nsid-idmap.h"
#define LAZY_WANT_CARES
#include "lazylib.h"

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

static void gai_callback(void *arg, int status, int timeouts, struct ares_addrinfo *res) {
        dns_lookup *l = arg;

        l->done = true;
        l->status = status;
        l->ttl = UINT32_MAX;
        for (struct ares_addrinfo_node *n = status == ARES_SUCCESS && res ? res->nodes : NULL; n;
             n = n->ai_next) {
                nsid_resolv_addr a = { .family = n->ai_family };
                if (n->ai_family == AF_INET && n->ai_addrlen >= sizeof(struct sockaddr_in))
                        memcpy(a.addr, &((struct sockaddr_in *) n->ai_addr)->sin_addr, 4);
                else if (n->ai_family == AF_INET6 &&
                         n->ai_addrlen >= sizeof(struct sockaddr_in6))
                        memcpy(a.addr, &((struct sockaddr_in6 *) n->ai_addr)->sin6_addr, 16);
                else
                        continue;
                dns_lookup_add_addr(l, &a);
                if (n->ai_ttl >= 0 && (unsigned) n->ai_ttl < l->ttl)
                        l->ttl = (unsigned) n->ai_ttl;
        }
        if (res)
                ares_freeaddrinfo(res);
}

/* Resolve with c-ares configured only from the container's resolv.conf. */
static int resolve_dns(const nsid_resolvconf *rc, const nsid_dns_request *req,
                       unsigned total_ms, dns_lookup *l, char *err, size_t errsize) {
        struct ares_options opts = {};
        ares_channel ch = NULL;
        char csv[256];
        char *domains[NSID_RESOLV_MAX_SEARCH];
        int mask = 0, r;
        uint64_t deadline = now_ms() + total_ms;

        r = ares_library_init(ARES_LIB_INIT_ALL);
        if (r != ARES_SUCCESS) {
                snprintf(err, errsize, "c-ares init: %s", ares_strerror(r));
                return ARES_ENOMEM;
        }
        opts.lookups = (char *) "b"; /* DNS only: c-ares must not read the HOST's /etc/hosts */
        mask |= ARES_OPT_LOOKUPS;
        opts.ndots = (int) rc->ndots;
        mask |= ARES_OPT_NDOTS;
        opts.timeout = (int) (rc->timeout * 1000u < total_ms / 2 ? rc->timeout * 1000u
                                                                  : total_ms / 2);
        if (opts.timeout < 100)
                opts.timeout = 100;
        mask |= ARES_OPT_TIMEOUTMS;
        opts.tries = (int) rc->attempts;
        mask |= ARES_OPT_TRIES;
        for (unsigned i = 0; i < rc->n_search; i++)
                domains[i] = (char *) rc->search[i];
        opts.domains = domains;
        opts.ndomains = (int) rc->n_search;
        mask |= ARES_OPT_DOMAINS;
        if (rc->rotate)
                mask |= ARES_OPT_ROTATE;

        r = ares_init_options(&ch, &opts, mask);
        if (r != ARES_SUCCESS) {
                snprintf(err, errsize, "c-ares init: %s", ares_strerror(r));
                return r;
        }
        if (rc->n_servers > 0) {
                if (nsid_resolvconf_servers_csv(rc, csv, sizeof(csv)) < 0) {
                        snprintf(err, errsize, "cannot format the name servers");
                        ares_destroy(ch);
                        return ARES_EBADSTR;
                }
        } else
                strcpy(csv, "127.0.0.1"); /* resolv.conf(5): no nameserver line means local */
        r = ares_set_servers_ports_csv(ch, csv);
        if (r != ARES_SUCCESS) {
                snprintf(err, errsize, "c-ares servers \"%s\": %s", csv, ares_strerror(r));
                ares_destroy(ch);
                return r;
        }

        struct ares_addrinfo_hints hints = {
                .ai_family = req->want_ipv4 && req->want_ipv6 ? AF_UNSPEC
                             : req->want_ipv6                 ? AF_INET6
                                                              : AF_INET,
                .ai_flags = ARES_AI_NOSORT,
        };
        ares_getaddrinfo(ch, req->name, NULL, &hints, gai_callback, l);

        while (!l->done) {
                fd_set rfds, wfds;
                struct timeval maxtv, tv, *tvp;
                uint64_t now = now_ms();
                int nfds;

                if (now >= deadline) {
                        ares_cancel(ch); /* calls back with ARES_ECANCELLED */
                        snprintf(err, errsize, "no answer within %ums", total_ms);
                        break;
                }
                FD_ZERO(&rfds);
                FD_ZERO(&wfds);
                nfds = ares_fds(ch, &rfds, &wfds);
                if (nfds == 0)
                        break;
                maxtv.tv_sec = (time_t) ((deadline - now) / 1000u);
                maxtv.tv_usec = (suseconds_t) ((deadline - now) % 1000u) * 1000;
                tvp = ares_timeout(ch, &maxtv, &tv);
                if (select(nfds, &rfds, &wfds, NULL, tvp) < 0 && errno != EINTR)
                        break;
                ares_process(ch, &rfds, &wfds);
        }
        ares_destroy(ch); /* cancels anything left: the callback runs with ARES_EDESTRUCTION */
        ares_library_cleanup();
        if (!l->done)
                return ARES_ETIMEOUT;
        return l->status;
}

/* The error and negative timeout for a failed lookup, like keyutils' key.dns_resolver. */
static void dns_error(int status, int *ret_err, unsigned *ret_ttl) {
        switch (status) {
        case ARES_ENOTFOUND:
        case ARES_ENODATA:
        case ARES_ENONAME:
                *ret_err = ENODATA;
                *ret_ttl = 60;
                break;
        case ARES_ETIMEOUT:
        case ARES_ECANCELLED:
        case ARES_EDESTRUCTION:
        case ARES_ESERVFAIL:
                *ret_err = EAGAIN;
                *ret_ttl = 1;
                break;
        default:
                *ret_err = ECONNREFUSED;
                *ret_ttl = 10;
                break;
        }
}

/*
 * The lookup runs in a worker (nsid/worker.h, NSID_WORKER_DROP_IN_FN) that joins the
 * requester's mount namespace, root and network namespace through its pidfd, and:
 *  1. reads the raw bytes of its /etc/hosts and /etc/resolv.conf with openat2
 *     RESOLVE_IN_ROOT (nsid/file.h), as the host's root: nothing is parsed yet;
 *  2. drops (nsid_worker_drop_privileges()): an empty read-only root, the requester's user
 *     namespace, its nobody, no capability, no_new_privs;
 *  3. parses both files, answers from the hosts file, or asks the DNS servers of that
 *     resolv.conf with c-ares (loaded by this process before the fork: nothing can be
 *     loaded from the empty root), configured only from what was parsed: c-ares reads no
 *     file (every lookup in the empty root is ENOENT).
 * So the container's text is parsed, and its chosen DNS servers are talked to, by a process
 * that can reach nothing on the host: no file, no capability, no host uid 0.
 * The worker is killed after a hard limit, --dns-timeout + 1 s (c-ares itself gives up
 * within --dns-timeout from the worker's start: the limit is reached only by a container
 * whose files hang, FUSE or NFS, and cannot hold the upcall). This helper is single-threaded, so the worker may allocate
 * (c-ares does); the rule against it (doc/HACKING.md) is for threaded programs.
 *
 * Reply, lines parsed as untrusted by dns_parse_reply() (dns-reply.h, fuzz-dns-reply):
 *   files=<hosts errno> <resolv.conf errno>
 *   drop=<errno>                     the drop failed: nothing was parsed
 *   src=hosts|dns                    where the answer comes from
 *   servers=<csv>                    the servers asked (for the log)
 *   ares=<status> / err=<text>       the DNS lookup failed
 *   ttl=<seconds> / addr=<address>   the answer (up to DNS_MAX_ADDRS addresses)
 */
#define DNS_HOSTS_MAX (1024u * 1024u)
#define DNS_RESOLV_MAX (64u * 1024u)
#define DNS_REPLY_MAX 8192u

typedef struct dns_job {
        const nsid_dns_request *req;
        unsigned total_ms;
        bool have_cares; /* loaded: without it only the hosts file can answer */
} dns_job;

static int dns_worker(int fd, void *userdata) {
        const dns_job *job = userdata;
        const nsid_dns_request *req = job->req;
        uint64_t start = now_ms();
        _cleanup_free_ char *hosts = NULL, *resolv = NULL;
        char err[256] = "", cs[256] = "127.0.0.1 (default)";
        size_t hosts_size = 0, resolv_size = 0;
        nsid_resolvconf rc;
        dns_lookup l = {};
        int he, re, r;

        int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return -errno;
        he = -nsid_file_read_in_root(rootfd, "/etc/hosts", DNS_HOSTS_MAX, &hosts, &hosts_size,
                                     NULL);
        re = -nsid_file_read_in_root(rootfd, "/etc/resolv.conf", DNS_RESOLV_MAX, &resolv,
                                     &resolv_size, NULL);
        close(rootfd);
        dprintf(fd, "files=%d %d\n", he > 0 ? he : 0, re > 0 ? re : 0);

        /* Nothing of the container has been parsed yet. */
        r = nsid_worker_drop_privileges();
        if (r < 0) {
                dprintf(fd, "drop=%d\n", -r);
                return 0;
        }

        (void) nsid_resolvconf_parse(resolv ? resolv : "", resolv_size, &rc);
        /* "files" first, from the container's own hosts file. */
        if (hosts) {
                nsid_resolv_addr a[DNS_MAX_ADDRS];
                int fam = req->want_ipv4 && req->want_ipv6 ? AF_UNSPEC
                          : req->want_ipv6                 ? AF_INET6
                                                           : AF_INET;
                int n = nsid_hosts_lookup(hosts, hosts_size, req->name, fam, a, DNS_MAX_ADDRS);
                for (int i = 0; i < n; i++)
                        dns_lookup_add_addr(&l, &a[i]);
        }
        if (l.n > 0) {
                dprintf(fd, "src=hosts\nttl=%u\n", DNS_HOSTS_TTL);
        } else {
                uint64_t spent = now_ms() - start;
                unsigned left = spent >= job->total_ms ? 1u : job->total_ms - (unsigned) spent;
                unsigned seed = 0;

                if (rc.n_servers > 0)
                        (void) nsid_resolvconf_servers_csv(&rc, cs, sizeof(cs));
                dprintf(fd, "src=dns\nservers=%s\n", cs);
                if (!job->have_cares) {
                        dprintf(fd, "ares=%d\n", ARES_ENOTINITIALIZED);
                        return 0;
                }
                /* c-ares keys its query ids from /dev/urandom, which the empty root lacks;
                 * its fallback is rand(): seeded here from the kernel, not left at 1. */
                if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t) sizeof(seed))
                        srand(seed);
                r = resolve_dns(&rc, req, left, &l, err, sizeof(err));
                if (r != ARES_SUCCESS || l.n == 0) {
                        dprintf(fd, "ares=%d\n", r == ARES_SUCCESS ? ARES_ENODATA : r);
                        if (err[0])
                                dprintf(fd, "err=%s\n", err);
                        return 0;
                }
                dprintf(fd, "ttl=%u\n", l.ttl);
        }
        for (unsigned i = 0; i < l.n; i++) {
                char t[INET6_ADDRSTRLEN];
                if (inet_ntop(l.addrs[i].family, l.addrs[i].addr, t, sizeof(t)))
                        dprintf(fd, "addr=%s\n", t);
        }
        return 0;
}

int dns_upcall(const idmap_opts *o, const char *serial_s) {
        char esc[512], who[512];
        key_serial_t key;
        _cleanup_free_ char *d = NULL, *callout = NULL;
        nsid_key_describe kd;
        nsid_dns_request req;
        _cleanup_(requester_done) requester rq = { .pidfd = -1 };
        dns_lookup l = {};
        const char *source;
        int r, callout_len;

        r = parse_key_serial(serial_s, &key);
        if (r < 0) {
                logmsg(LOG_ERR, "dns: invalid key serial \"%s\": %s; no key to answer",
                       log_escape(serial_s, strlen(serial_s), esc, sizeof(esc)), strerror(-r));
                return 1;
        }
        /* c-ares is bounded by dns_total_ms; this catches anything else. */
        watchdog_arm(key, o->dns_total_ms / 1000u + 5u, 1, EAGAIN);
        if (keyctl_describe_alloc(key, &d) < 0) {
                logmsg(LOG_ERR, "dns: key %d: cannot describe it: %s", key, strerror(errno));
                key_reject(key, DNS_INVALID_TTL, EKEYREJECTED);
                return 1;
        }
        if (nsid_key_describe_parse(d, strlen(d), &kd) < 0 || kd.type_len != 12 ||
            memcmp(kd.type, "dns_resolver", 12) != 0) {
                logmsg(LOG_ERR, "dns: key %d: rejected: not a dns_resolver key (\"%s\")", key,
                       log_escape(d, strlen(d), esc, sizeof(esc)));
                key_reject(key, DNS_INVALID_TTL, EKEYREJECTED);
                return 1;
        }
        log_escape(kd.description, kd.description_len, esc, sizeof(esc));
        callout_len = keyctl_read_alloc(KEY_SPEC_REQKEY_AUTH_KEY, (void **) &callout);
        if (callout_len < 0) {
                logmsg(LOG_ERR, "dns: key %d (%s): cannot read the callout info: %s", key, esc,
                       strerror(errno));
                key_reject(key, DNS_INVALID_TTL, EKEYREJECTED);
                return 1;
        }
        r = nsid_dns_request_parse(kd.description, kd.description_len, callout,
                                   (size_t) callout_len, &req);
        if (r < 0) {
                char cesc[256];
                logmsg(LOG_ERR, "dns: key %d: rejected: %s request \"%s\" (options \"%s\")",
                       key, r == -EOPNOTSUPP ? "unsupported query type in" : "invalid", esc,
                       log_escape(callout, (size_t) callout_len, cesc, sizeof(cesc)));
                key_reject(key, r == -EOPNOTSUPP ? 60 : DNS_INVALID_TTL,
                           r == -EOPNOTSUPP ? EOPNOTSUPP : EKEYREJECTED);
                return 1;
        }

        r = requester_find(key, &rq);
        requester_describe(&rq, r, who, sizeof(who));
        if (r < 0) {
                /* Without the requester there is no namespace to resolve in. */
                logmsg(LOG_ERR, "dns: key %d: %s: %s; rejected", key, esc, who);
                key_reject(key, DNS_INVALID_TTL, ESRCH);
                return 1;
        }

        /* c-ares is loaded here: the worker that uses it stands in an empty root. */
        bool have_cares = lazy_cares_load() >= 0;
        unsigned mask = NSID_NS_MASK(NSID_NS_MNT);
        if (rq.net_initial != 1)
                mask |= NSID_NS_MASK(NSID_NS_NET);
        dns_job job = { .req = &req, .total_ms = o->dns_total_ms, .have_cares = have_cares };
        char *reply = NULL;
        size_t reply_size = 0;
        dns_result dr;
        r = requester_proc(&rq);
        if (r >= 0)
                r = nsid_worker_run(rq.proc, mask, NSID_WORKER_DROP_IN_FN,
                                    (int) o->dns_total_ms + 1000, dns_worker, &job,
                                    DNS_REPLY_MAX, &reply, &reply_size);
        if (r >= 0) {
                r = dns_parse_reply(reply, reply_size, &dr);
                free(reply);
                if (r == -EBADMSG)
                        logmsg(LOG_WARNING, "dns: key %d: malformed worker reply", key);
        }
        /* nothing privileged is left to do: the key is answered with none */
        (void) caps_keep(0, 0, NULL);
        /* an answer read for a process that has exited meanwhile is not used */
        if (r >= 0)
                r = nsid_proc_check_alive(rq.proc);
        if (r >= 0 && dr.drop_err)
                r = -dr.drop_err;
        if (r < 0) {
                logmsg(LOG_WARNING, "dns: key %d: %s: cannot look up in the requester's "
                       "context: %s; rejected for %us (EAGAIN); %s", key, esc,
                       r == -ETIMEDOUT ? "its files did not answer in time (worker killed)"
                       : r == -EPERM   ? "no unprivileged id to run as there"
                                       : strerror(-r),
                       DNS_INVALID_TTL, who);
                key_reject(key, DNS_INVALID_TTL, EAGAIN);
                return 1;
        }
        if (dr.hosts_err != 0 && dr.hosts_err != ENOENT)
                logmsg(LOG_WARNING, "dns: key %d: cannot read the requester's /etc/hosts: %s",
                       key, strerror(dr.hosts_err));
        if (dr.resolv_err != 0 && dr.resolv_err != ENOENT)
                logmsg(LOG_WARNING, "dns: key %d: cannot read the requester's "
                       "/etc/resolv.conf: %s", key, strerror(dr.resolv_err));
        source = dr.from_hosts ? "hosts file" : "DNS";
        if (dr.ares >= 0 && !have_cares) {
                logmsg(LOG_ERR, "dns: key %d: %s: no c-ares; rejected; %s", key, esc, who);
                key_reject(key, 1, EAGAIN);
                return 1;
        }
        if (dr.ares >= 0) {
                int e;
                unsigned ttl;
                dns_error(dr.ares, &e, &ttl);
                logmsg(LOG_WARNING, "dns: key %d: %s: %s%s%s (servers %s); negative key "
                       "(%s) for %us; %s", key, esc, ares_strerror(dr.ares),
                       dr.err[0] ? ": " : "", dr.err, dr.servers, strerror(e), ttl, who);
                key_reject(key, ttl, e);
                return 1;
        }
        l = dr.l;

        /* Payload as key.dns_resolver makes it: "ip1,ip2,..." with its NUL. IPv4 first. */
        char payload[DNS_MAX_ADDRS * (INET6_ADDRSTRLEN + 1) + 1];
        size_t off = 0;
        unsigned written = 0;
        for (int pass = 0; pass < 2; pass++)
                for (unsigned i = 0; i < l.n; i++) {
                        char s[INET6_ADDRSTRLEN];
                        if (l.addrs[i].family != (pass == 0 ? AF_INET : AF_INET6))
                                continue;
                        if (!req.list && written > 0)
                                continue;
                        if (!inet_ntop(l.addrs[i].family, l.addrs[i].addr, s, sizeof(s)))
                                continue;
                        off += (size_t) snprintf(payload + off, sizeof(payload) - off, "%s%s",
                                                 written ? "," : "", s);
                        written++;
                }
        if (written == 0) {
                logmsg(LOG_WARNING, "dns: key %d: %s: no address of the requested family; "
                       "negative key (%s) for 60s; %s", key, esc, strerror(ENODATA), who);
                key_reject(key, 60, ENODATA);
                return 1;
        }
        unsigned ttl = l.ttl < DNS_MIN_TTL ? DNS_MIN_TTL : l.ttl > DNS_MAX_TTL ? DNS_MAX_TTL : l.ttl;
        r = key_answer(key, payload, off + 1, ttl);
        if (r < 0) {
                logmsg(LOG_ERR, "dns: key %d: %s: cannot instantiate: %s; rejected; %s", key,
                       esc, strerror(-r), who);
                key_reject(key, 1, (unsigned) -r);
                return 1;
        }
        logmsg(LOG_INFO, "dns: key %d: %s -> %s (%s, timeout %us); %s", key, esc, payload,
               source, ttl, who);
        return 0;
}
