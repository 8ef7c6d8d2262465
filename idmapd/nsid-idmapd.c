/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: one daemon answering the NFSv4 id mapping upcalls of every network namespace
 * (the client's rpc_pipefs idmap pipes and knfsd's nfs4.nametoid/idtoname channels), each in
 * the context of the namespace that owns the netns. See nsid-idmapd(8).
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/inotify.h>
#include <linux/securebits.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <nsid/conffile.h>
#include <nsid/log.h>

#include "caps.h"
#include "idmapd.h"
#include "paths.h"
#include "idmapd-cache.h"
#include "idmapd-resolve.h"
#include "idmapd-kernel.h"
#include "idmapd-ns.h"
#include "idmapd-ctl.h"
#include "idmapd-loadsrv.h"
#include "idmapd-nss.h"
#include "std-fds.h"

#ifndef NSID_SYSCONF_FILE
#define NSID_SYSCONF_FILE "/etc/nsid.conf"
#endif
#ifndef NSID_RUN_DIR
#define NSID_RUN_DIR "/run/nsid"
#endif

dm_daemon dm = {
        .kernel_idkeys = -ENODATA,
        .results_fd = { -1, -1 },
        .key_timer_fd = -1,
        .netns_dir_wd = -1,
};
static int epfd = -1;
static bool foreground = false;
static int max_priority = LOG_INFO;
static const char *config_path = NSID_SYSCONF_FILE;
static const char *idmapd_conf_arg = NULL;

int64_t dm_now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void dm_log(int priority, const dm_ns *ns, const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        if (priority > max_priority)
                return;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        const char *who = ns ? ns->label : "daemon";
        if (foreground) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                fprintf(stderr, "%" PRId64 ".%03ld nsid-idmapd[%d]: [%s] %s\n", (int64_t) ts.tv_sec,
                        ts.tv_nsec / 1000000, (int) getpid(), who, msg);
        } else
                syslog(priority, "[%s] %s", who, msg);
}

__thread const char *dm_thread_label = NULL;

static void library_log(int priority, const char *message, void *userdata) {
        if (priority > max_priority)
                return;
        if (foreground)
                fprintf(stderr, "nsid-idmapd[%d]: [%s] libnsid: %s\n", (int) getpid(),
                        dm_thread_label ? dm_thread_label : "daemon", message);
        else
                syslog(priority, "[%s] libnsid: %s", dm_thread_label ? dm_thread_label : "daemon",
                       message);
}

int dm_epoll_add(int fd, uint32_t events, void *tag) {
        struct epoll_event ev = { .events = events, .data.ptr = tag };
        return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int dm_epoll_mod(int fd, uint32_t events, void *tag) {
        struct epoll_event ev = { .events = events, .data.ptr = tag };
        return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void dm_epoll_del(int fd) {
        (void) epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* ---- configuration: [idmapd] of /etc/nsid.conf ---- */

/* Read through nsid/conffile.h only: the file (root-owned, not writable by others, at most
 * NSID_CONF_FILE_MAX bytes), its key table (types, ranges, defaults) and its diagnostics.
 * A value that does not fit its key is reported and its default used. Returns 0, or -errno
 * when the file cannot be used at all (the caller keeps what it has, or exits at start). */
static int load_config(void) {
        dm_config c = {
                .cache_ttl = 600,
                .negative_ttl = 60,
                .request_timeout_ms = 2000,
                .rescan_interval = 10,
                .refresh_interval = 2,
                .isolate_keys = true,
                .set_identifier = true,
                .host_pipes = true,
                .max_netns_per_owner = 64,
                .max_netns_unprivileged = 1024,
                .idle_thread_timeout = 60,
                .idmapd_conf = "/etc/idmapd.conf",
                .state_dir = NSID_STATE_DIR,
        };
        const struct {
                const char *key;
                unsigned *v;
        } nums[] = {
                { "cache-ttl", &c.cache_ttl },
                { "negative-ttl", &c.negative_ttl },
                { "request-timeout-ms", &c.request_timeout_ms },
                { "rescan-interval", &c.rescan_interval },
                { "refresh-interval", &c.refresh_interval },
                { "max-netns-per-owner", &c.max_netns_per_owner },
                { "max-netns-unprivileged", &c.max_netns_unprivileged },
                { "idle-thread-timeout", &c.idle_thread_timeout },
        };
        const struct {
                const char *key;
                bool *v;
        } bools[] = {
                { "isolate-keys", &c.isolate_keys },
                { "set-identifier", &c.set_identifier },
                { "host-pipes", &c.host_pipes },
        };
        const struct {
                const char *key;
                char *v;
                size_t size;
        } paths[] = {
                { "idmapd-conf", c.idmapd_conf, sizeof(c.idmapd_conf) },
                { "state-dir", c.state_dir, sizeof(c.state_dir) },
        };
        nsid_conf *conf = NULL;
        int r;

        r = nsid_conf_load(config_path, &conf);
        if (r < 0) {
                dm_log(LOG_ERR, NULL, "%s: cannot be used: %s", config_path,
                       r == -EPERM ? "it must be owned by root and writable by root only"
                       : r == -EFBIG ? "larger than 1 MiB"
                       : r == -ENXIO ? "not a regular file"
                                     : strerror(-r));
                return r;
        }
        for (size_t i = 0; i < nsid_conf_get_n_diagnostics(conf); i++) {
                nsid_conf_diagnostic d;
                if (nsid_conf_get_diagnostic(conf, i, &d) == 0)
                        dm_log(d.priority, NULL, "%s", d.message);
        }
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
                uint32_t v;
                if (nsid_conf_get_uint(conf, "idmapd", nums[i].key, &v) == 0)
                        *nums[i].v = v;
        }
        for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
                bool v;
                if (nsid_conf_get_bool(conf, "idmapd", bools[i].key, &v) == 0)
                        *bools[i].v = v;
        }
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                const char *v = nsid_conf_get_value(conf, "idmapd", paths[i].key);
                if (!v)
                        continue;
                if (strlen(v) >= paths[i].size)
                        dm_log(LOG_WARNING, NULL, "%s: [idmapd] %s: longer than %zu bytes; "
                               "ignored", config_path, paths[i].key, paths[i].size - 1);
                else
                        snprintf(paths[i].v, paths[i].size, "%s", v);
        }
        nsid_conf_unref(conf);
        if (idmapd_conf_arg)
                snprintf(c.idmapd_conf, sizeof(c.idmapd_conf), "%s", idmapd_conf_arg);
        char sock[sizeof(c.socket_path)];
        snprintf(c.socket_path, sizeof(c.socket_path), "%s",
                 paths_ctl_socket(dm.cfg.socket_path, sock, sizeof(sock)));
        dm.cfg = c;
        return 0;
}

/* ---- capabilities ---- */

/*
 * The daemon runs as root but keeps only what its work needs (nsid-idmapd(8), CAPABILITIES;
 * the unit's CapabilityBoundingSet= is the same list):
 *  - CAP_SYS_ADMIN: setns() into each network namespace (its rpc_pipefs and knfsd channels are
 *    reached from inside it), fsopen()/fsmount() of that netns's private rpc_pipefs, the
 *    private sysfs that sets a new netns's NFS client identifier, KEYCTL_INVALIDATE on the
 *    kernel's id_legacy keys (which root may invalidate only with it);
 *  - CAP_SYS_PTRACE: /proc/PID/ns/net and /proc/PID/root of other processes (discovery, the
 *    container's files): the kernel asks for it whenever the target holds capabilities this
 *    daemon no longer has (every root process), or is not dumpable;
 *  - CAP_DAC_OVERRIDE: files owned by a container's own root (a user namespace maps it to
 *    e.g. uid 100000): its passwd, group and idmapd.conf when they are not world-readable,
 *    and the knfsd channels and sysfs files of a netns owned by a user namespace, which
 *    belong to that namespace's root;
 *  - CAP_SYS_CHROOT: libnsid's worker chroot()s into a container's root to read its
 *    /etc/machine-id when a new netns gets its identifier (nsid_identity_for_ns); without it
 *    the read fails and the netns gets a random, unstable key. The context workers
 *    (idmapd-load.c, idmapd-nss.c) chroot() the same way;
 *  - CAP_SETUID, CAP_SETGID: those workers become an unprivileged id (the container's
 *    nobody) before they parse a container's text or run its name service; without them
 *    they would have to parse as root.
 * Everything else goes from the effective, permitted, inheritable, ambient and bounding sets
 * of the process before its first thread exists (capabilities are per thread), and
 * no_new_privs plus the NOROOT securebits keep an exec() from gaining any back.
 */
static const cap_value_t kept_caps[] = { CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_DAC_OVERRIDE,
                                         CAP_SYS_CHROOT, CAP_SETUID, CAP_SETGID };

/* Only kept_caps from now on, in every set (the bounding set too: under systemd the unit's
 * CapabilityBoundingSet= has done that already), uid 0 gaining nothing by exec() (nothing
 * here execs; a plugin must not either), no_new_privs. A kept capability the daemon was not
 * given is named: some namespaces will not be served. */
static int drop_capabilities(void) {
        uint64_t keep = 0, missing = 0;
        int r;

        for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]); i++)
                keep |= CAPBIT(kept_caps[i]);
        r = caps_keep(keep, CAPS_BOUNDING | CAPS_SECUREBITS, &missing);
        for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]); i++)
                if (missing & CAPBIT(kept_caps[i])) {
                        char *name = cap_to_name(kept_caps[i]);
                        dm_log(LOG_WARNING, NULL, "%s is not permitted: some namespaces will "
                               "not be served (see nsid-idmapd(8), CAPABILITIES)",
                               name ? name : "?");
                        cap_free(name);
                }
        return r;
}

/* ---- systemd readiness (the sd_notify datagram protocol, without libsystemd) ---- */

static void notify(const char *msg) {
        const char *e = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (!e || (e[0] != '/' && e[0] != '@') || strlen(e) >= sizeof(sa.sun_path))
                return;
        size_t l = strlen(e);
        memcpy(sa.sun_path, e, l);
        if (sa.sun_path[0] == '@')
                sa.sun_path[0] = '\0';
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return;
        (void) sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *) &sa,
                      (socklen_t) (offsetof(struct sockaddr_un, sun_path) + l));
        close(fd);
}

static void watch_netns_dir(void) {
        int ifd = dm_inotify_fd();
        if (dm.netns_dir_wd >= 0)
                (void) inotify_rm_watch(ifd, dm.netns_dir_wd);
        dm.netns_dir_wd = inotify_add_watch(ifd, "/run/netns", IN_CREATE | IN_DELETE | IN_ONLYDIR);
        if (dm.netns_dir_wd < 0) /* not there yet: watch /run for it */
                dm.netns_dir_wd = inotify_add_watch(ifd, "/run", IN_CREATE | IN_ONLYDIR);
}

/* Descriptors: the soft limit raised to the hard one (the unit's LimitNOFILE=; a daemon
 * started by hand keeps the shell's hard limit), and a warning when the namespace bounds
 * could use more than that. A netns kept costs 3 (netns, pidfd, /proc dir), 3 more once
 * attached (rpc_pipefs, knfsd's 2 channels) and 1 per NFS client pipe. */
static void raise_nofile(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        if (rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
                (void) getrlimit(RLIMIT_NOFILE, &rl);
        }
        uint64_t need = (uint64_t) dm.cfg.max_netns_unprivileged * 3 + 256;
        if (rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur)
                dm_log(LOG_WARNING, NULL, "max-netns-unprivileged = %u may need %" PRIu64
                       " descriptors, more than the limit of %" PRIu64 " (LimitNOFILE=): lower "
                       "it, or raise the limit", dm.cfg.max_netns_unprivileged, need,
                       (uint64_t) rl.rlim_cur);
}

/* A usage error: what is wrong (getopt already said it for an unknown option), where to
 * look; exit 2. */
static int usage_fail(const char *what) {
        if (what)
                fprintf(stderr, "nsid-idmapd: %s\n", what);
        fprintf(stderr, "Try 'nsid-idmapd --help'.\n");
        return 2;
}

static void help(void) {
        printf("Usage: nsid-idmapd [-f] [-v|-q] [--config=PATH] [--socket=PATH]\n"
               "       nsid-idmapd --status [--json|--no-legend] [--socket=PATH]\n"
               "       nsid-idmapd --ctl='REQUEST' [--socket=PATH]\n"
               "\n"
               "  -f, --foreground      stay in the foreground, log to stderr\n"
               "  -v, --verbose         debug messages\n"
               "  -q, --quiet           warnings and errors only\n"
               "      --config=PATH     configuration ([idmapd] section; default %s)\n"
               "      --idmapd-conf=PATH  the host's libnfsidmap configuration\n"
               "      --socket=PATH     control socket (default %s/%s)\n"
               "      --status          print the daemon's namespaces and statistics\n"
               "      --json            ... as JSON (nsid-idmapd(8), JSON OUTPUT)\n"
               "      --no-legend       ... without the header lines\n"
               "      --ctl=REQUEST     send one control request, print the reply\n"
               "  -h, --help            this help\n"
               "      --version         print the version\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage. See nsid-idmapd(8).\n",
               NSID_SYSCONF_FILE, NSID_RUN_DIR, NSID_CTL_SOCKET_NAME);
}

/* ---- the command line ---- */

typedef struct args {
        bool status, json, legend;
        const char *ctl;
} args;

/* The options into *a and the daemon's settings. Returns -1 to go on, or the exit status
 * (0 after --help or --version, 2 for a usage error, reported). */
static int parse_argv(int argc, char **argv, args *a) {
        enum { OPT_VERSION = 0x100, OPT_CONFIG, OPT_SOCKET, OPT_STATUS, OPT_JSON, OPT_CTL,
               OPT_IDMAPD_CONF, OPT_NO_LEGEND };
        static const struct option longopts[] = {
                { "foreground", no_argument, NULL, 'f' },
                { "verbose", no_argument, NULL, 'v' },
                { "quiet", no_argument, NULL, 'q' },
                { "no-legend", no_argument, NULL, OPT_NO_LEGEND },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                { "config", required_argument, NULL, OPT_CONFIG },
                { "idmapd-conf", required_argument, NULL, OPT_IDMAPD_CONF },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "status", no_argument, NULL, OPT_STATUS },
                { "json", no_argument, NULL, OPT_JSON },
                { "ctl", required_argument, NULL, OPT_CTL },
                {}
        };
        int c;

        *a = (args) { .legend = true };
        while ((c = getopt_long(argc, argv, "fvqh", longopts, NULL)) != -1) {
                switch (c) {
                case 'f':
                        foreground = true;
                        break;
                case 'v':
                        max_priority = LOG_DEBUG;
                        break;
                case 'q':
                        max_priority = LOG_WARNING;
                        break;
                case OPT_NO_LEGEND:
                        a->legend = false;
                        break;
                case 'h':
                        help();
                        return 0;
                case OPT_VERSION:
                        printf("nsid-idmapd %s\n", NSID_VERSION);
                        return 0;
                case OPT_CONFIG:
                        config_path = optarg;
                        break;
                case OPT_IDMAPD_CONF:
                        idmapd_conf_arg = optarg;
                        break;
                case OPT_SOCKET:
                        if (strlen(optarg) >= sizeof(dm.cfg.socket_path))
                                return usage_fail("--socket: path too long");
                        snprintf(dm.cfg.socket_path, sizeof(dm.cfg.socket_path), "%s", optarg);
                        break;
                case OPT_STATUS:
                        a->status = true;
                        break;
                case OPT_JSON:
                        a->json = true;
                        break;
                case OPT_CTL:
                        a->ctl = optarg;
                        break;
                default:
                        return usage_fail(NULL); /* (getopt named the option) */
                }
        }
        if (optind != argc) {
                char why[160];
                snprintf(why, sizeof(why), "unexpected argument \"%.64s\"", argv[optind]);
                return usage_fail(why);
        }
        if (a->status + (a->ctl != NULL) > 1)
                return usage_fail("--status and --ctl: one at a time");
        if ((a->json || !a->legend) && !a->status)
                return usage_fail(a->json ? "--json applies to --status only"
                                          : "--no-legend applies to --status only");
        if (a->json && !a->legend)
                return usage_fail("--json and --no-legend: one at a time");
        return -1;
}

/* --status and --ctl: a client of the running daemon */
static int run_client(const args *a) {
        char buf[sizeof(dm.cfg.socket_path)];
        const char *sock = paths_ctl_socket(dm.cfg.socket_path, buf, sizeof(buf));
        return a->status ? dm_status_client(sock, a->json, a->legend) : dm_ctl_command(sock, a->ctl);
}

/* ---- the daemon ---- */

/* The event loop's own descriptors. */
typedef struct loop {
        int sfd; /* signals */
        int tfd; /* the 100 ms tick: rescans, idle namespaces */
        int lfd; /* the control socket */
        bool running;
} loop;

/* Everything before the first event: logging, capabilities, configuration, signals, the
 * load server (before any thread), the descriptors, OpenSSL's and the resolvers' global
 * set-up, the control socket, the first scan. 0, or -1 (logged). */
static int daemon_setup(loop *l) {
        int r;

        /* Connected now (LOG_NDELAY) and the time zone read now: nothing resolves /dev/log or
         * /etc/localtime later, when a thread's worker may stand in a container's root
         * (workers log nothing: the library is silent in them). */
        if (!foreground) {
                tzset();
                openlog("nsid-idmapd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
        }
        nsid_log_set_handler(library_log, NULL);
        nsid_log_set_max_priority(max_priority == LOG_DEBUG ? LOG_DEBUG : LOG_WARNING);
        dm.start_us = dm_now_us();
        r = drop_capabilities();
        if (r < 0) {
                dm_log(LOG_ERR, NULL, "cannot drop capabilities: %s", strerror(-r));
                return -1;
        }
        if (load_config() < 0)
                return -1;
        raise_nofile();

        /* signals through a signalfd; SIGCHLD stays default (the library's workers reap
         * their own children) */
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        signal(SIGPIPE, SIG_IGN);
        /* before any thread: the context-load workers are forked from there */
        r = dm_load_server_start();
        if (r < 0)
                dm_log(LOG_WARNING, NULL, "no load server (%s): context loads fork from the "
                       "daemon", strerror(-r));
        l->sfd = signalfd(-1, &ss, SFD_NONBLOCK | SFD_CLOEXEC);
        l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->sfd < 0 || l->tfd < 0 || epfd < 0 || pipe2(dm.results_fd, O_CLOEXEC) < 0 ||
            dm_inotify_fd() < 0) {
                dm_log(LOG_ERR, NULL, "cannot set up the event loop: %s", strerror(errno));
                return -1;
        }
        (void) fcntl(dm.results_fd[0], F_SETFL, O_NONBLOCK);
        struct itimerspec its = { .it_interval = { 0, 100000000 }, .it_value = { 0, 100000000 } };
        timerfd_settime(l->tfd, 0, &its, NULL);
        static dm_tag t_sig = { .kind = DM_TAG_SIGNAL }, t_timer = { .kind = DM_TAG_TIMER },
                      t_res = { .kind = DM_TAG_RESULTS }, t_ino = { .kind = DM_TAG_INOTIFY };
        dm_epoll_add(l->sfd, EPOLLIN, &t_sig);
        dm_epoll_add(l->tfd, EPOLLIN, &t_timer);
        dm_epoll_add(dm.results_fd[0], EPOLLIN, &t_res);
        dm_epoll_add(dm_inotify_fd(), EPOLLIN, &t_ino);
        static dm_tag t_key = { .kind = DM_TAG_KEYTIMER };
        dm.key_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (dm.key_timer_fd >= 0)
                dm_epoll_add(dm.key_timer_fd, EPOLLIN, &t_key);

        /* OpenSSL's global set-up (its configuration, the default provider, HMAC), done
         * here, before any thread: done lazily by the first resolver thread to derive an
         * NFS identifier, it could still be half done when SIGTERM ends the process, and
         * its allocations then showed up as leaks at exit (LeakSanitizer, ASan tier). */
        if (OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL) != 1)
                dm_log(LOG_WARNING, NULL, "OpenSSL initialisation failed; NFS identifiers "
                       "will be derived when a thread first needs them");
        EVP_MAC_free(EVP_MAC_fetch(NULL, "HMAC", NULL));
        EVP_MD_free(EVP_MD_fetch(NULL, "SHA256", NULL));

        char err[512];
        if (dm_resolve_global_init(err, sizeof(err)) < 0)
                dm_log(LOG_WARNING, NULL, "%s; the host context answers nothing until fixed "
                       "(SIGHUP reloads)", err);
        if (dm_nss_init(NULL, err, sizeof(err)) < 0)
                dm_log(LOG_WARNING, NULL, "%s; containers whose name service is more than "
                       "files get no answers", err);
        (void) mkdir(NSID_RUN_DIR, 0755);
        dm_kernel_idkeys_refresh();
        /* answers cached before this daemon served the pipes (nfsidmap's, an earlier run's
         * pipe markers) would reach every namespace */
        dm_keys_clear("nsid-idmapd starts: answers cached before it are dropped");
        l->lfd = dm_ctl_listen(dm.cfg.socket_path);
        if (l->lfd < 0) {
                dm_log(LOG_ERR, NULL, "control socket %s: %s", dm.cfg.socket_path,
                       strerror(-l->lfd));
                return -1;
        }
        watch_netns_dir();
        (void) dm_ns_rescan();
        size_t n = 0;
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                n++;
        dm_log(LOG_INFO, NULL, "ready: %zu network namespaces, host domain %s, control socket %s",
               n, dm_host_domain(), dm.cfg.socket_path);
        notify("READY=1\nSTATUS=serving");
        l->running = true;
        return 0;
}

/* SIGHUP: the configuration read again (the control socket stays where it is), the caches
 * flushed, the namespaces scanned again. */
static void daemon_reload(void) {
        char keep[256];

        notify("RELOADING=1");
        dm_log(LOG_INFO, NULL, "SIGHUP: reloading the configuration, flushing caches, rescanning");
        snprintf(keep, sizeof(keep), "%s", dm.cfg.socket_path);
        if (load_config() < 0)
                dm_log(LOG_ERR, NULL, "SIGHUP: keeping the configuration in use");
        snprintf(dm.cfg.socket_path, sizeof(dm.cfg.socket_path), "%s", keep);
        dm_resolve_global_reload();
        for (dm_ns *ns = dm.namespaces; ns; ns = ns->next)
                ns->stats.cache_flushed += dm_cache_flush(ns->cache);
        watch_netns_dir();
        (void) dm_ns_rescan();
        notify("READY=1");
}

static void on_signals(loop *l) {
        struct signalfd_siginfo si;

        while (read(l->sfd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                if (si.ssi_signo == SIGHUP)
                        daemon_reload();
                else
                        l->running = false;
        }
}

static void on_tick(loop *l) {
        uint64_t x;
        int64_t now;

        (void) !read(l->tfd, &x, sizeof(x));
        now = dm_now_us();
        if (dm.rescan_at_us && now >= dm.rescan_at_us) {
                dm.rescan_at_us = 0;
                watch_netns_dir();
                (void) dm_ns_rescan();
        }
        dm_ns_periodic(now);
}

/* One event, to the part of the daemon its tag names. */
static void dispatch(loop *l, const struct epoll_event *ev) {
        dm_tag *t = ev->data.ptr;
        uint64_t x;

        switch (t->kind) {
        case DM_TAG_SIGNAL:
                on_signals(l);
                break;
        case DM_TAG_TIMER:
                on_tick(l);
                break;
        case DM_TAG_KEYTIMER:
                (void) !read(dm.key_timer_fd, &x, sizeof(x));
                dm_keys_run(dm_now_us());
                break;
        case DM_TAG_RESULTS:
                dm_result_ready();
                break;
        case DM_TAG_INOTIFY:
                dm_kernel_inotify_event(dm_inotify_fd());
                break;
        case DM_TAG_LISTEN:
                dm_ctl_accept(l->lfd);
                break;
        case DM_TAG_CLIENT:
                dm_ctl_client_event(t->obj, ev->events);
                break;
        case DM_TAG_PIPE:
                dm_pipe_readable(t->obj);
                break;
        case DM_TAG_CHANNEL:
                dm_channel_readable(t->obj, t->which);
                break;
        }
}

/* Until SIGTERM or SIGINT: events, and the pending requests' deadlines. */
static void daemon_loop(loop *l) {
        while (l->running) {
                struct epoll_event evs[64];
                int64_t deadline = dm_pending_next_deadline_us(), wait_ms = -1;
                if (deadline > 0) {
                        int64_t left = deadline - dm_now_us();
                        wait_ms = left <= 0 ? 0 : (left + 999) / 1000;
                }
                int k = epoll_wait(epfd, evs, 64, (int) wait_ms);
                if (deadline > 0)
                        dm_pending_expire(dm_now_us());
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        dm_log(LOG_ERR, NULL, "epoll_wait: %s", strerror(errno));
                        break;
                }
                for (int i = 0; i < k; i++)
                        dispatch(l, &evs[i]);
                /* clients answered late resume their next lines here, where no namespace
                 * is in use by a caller (a line may rescan and free one) */
                dm_ctl_resume();
        }
}

static int daemon_shutdown(loop *l) {
        notify("STOPPING=1");
        dm_log(LOG_INFO, NULL, "exiting");
        dm_ctl_close_all();
        dm_ns_free_all();
        /* nsid-idmap's marker keys send lookups to the pipes, which nobody answers now */
        dm_keys_clear("nsid-idmapd stops: lookups go to the request-key helper again");
        dm_resolver_wait_all(2000); /* a thread stuck on a hung mount is left behind */
        close(l->lfd);
        (void) unlink(dm.cfg.socket_path);
        if (dm_resolver_live_threads() > 0) {
                /* exit() would run the libraries' exit handlers (libcrypto's, the C
                 * library's) under the feet of those threads, which may still be in them:
                 * leave without running any. Everything the daemon keeps on disk is
                 * committed already. */
                dm_log(LOG_WARNING, NULL, "%d resolver thread(s) still busy after 2 s (a "
                       "container's files on a mount that does not answer?); leaving them",
                       dm_resolver_live_threads());
                fflush(NULL);
                _exit(EXIT_SUCCESS);
        }
        return 0;
}

int main(int argc, char **argv) {
        loop l = { .sfd = -1, .tfd = -1, .lfd = -1 };
        args a;
        int r;

        if (std_fds_ensure() < 0)
                return 1;
        r = parse_argv(argc, argv, &a);
        if (r >= 0)
                return r;
        if (a.status || a.ctl)
                return run_client(&a);
        if (daemon_setup(&l) < 0)
                return 1;
        daemon_loop(&l);
        return daemon_shutdown(&l);
}
