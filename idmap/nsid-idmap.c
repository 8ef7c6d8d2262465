/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmap: a namespace-aware drop-in for nfs-utils' nfsidmap (the id_resolver
 * request-key helper), and the namespace-aware dns_resolver helper ("nsid-idmap dns").
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <linux/capability.h>

#include <nsid/ctlproto.h>
#include <nsid/log.h>

#include "nsid-idmap.h"
#include "std-fds.h"

#ifndef NSID_RUN_DIR
#define NSID_RUN_DIR "/run/nsid"
#endif
#ifndef NSID_SYSCONF_FILE
#define NSID_SYSCONF_FILE "/etc/nsid.conf"
#endif

static void library_log(int priority, const char *message, void *userdata) {
        logmsg(priority, "%s", message);
}

static void help(const char *prog) {
        printf("Usage: %s [-v] [-t timeout] key desc      (id_resolver upcall, from request-key)\n"
               "       %s [-v] dns key                    (dns_resolver upcall)\n"
               "       %s [-v] -c | -d | -l | -u NAME | -g NAME | -r NAME\n"
               "\n"
               "  -t, --timeout=SECONDS   key timeout of answers (default %u)\n"
               "  -c, --clear             clear the %s keyring\n"
               "  -d, --domain            print the default NFSv4 domain\n"
               "  -l, --list              list the keys of the %s keyring\n"
               "  -u, --uid=NAME          invalidate the uid:NAME key (exact name)\n"
               "  -g, --gid=NAME          invalidate the gid:NAME key (exact name)\n"
               "  -r, --revoke=NAME       invalidate both (exact name)\n"
               "      --json              -l and -d as JSON (nsid-idmap(8), JSON OUTPUT)\n"
               "      --no-legend         -l without its header line\n"
               "  -q, --quiet             errors only\n"
               "  -v, --verbose           log to stderr, and debug messages\n"
               "      --idmapd-conf=PATH  libnfsidmap configuration (default %s)\n"
               "      --config=PATH       nsid configuration (default %s)\n"
               "      --keyring=NAME      keyring for -c/-l/-u/-g/-r (default %s)\n"
               "      --log-file=PATH     also append log lines to PATH\n"
               "      --dns-timeout=MS    bound of a DNS lookup (default %u)\n"
               "      --max-time=SECONDS  reject an id_resolver key still unanswered after\n"
               "                          SECONDS (default %u)\n"
               "      --daemon-socket=PATH  nsid-idmapd's control socket (default %s)\n"
               "      --daemon-timeout=MS   bound of the fast path through nsid-idmapd\n"
               "                          (default %u, 0: never ask the daemon)\n"
               "  -h, --help              this help\n"
               "      --version           print the version\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage. See nsid-idmap(8).\n",
               prog, prog, prog, IDMAP_DEFAULT_TIMEOUT, IDMAP_DEFAULT_KEYRING,
               IDMAP_DEFAULT_KEYRING, IDMAP_DEFAULT_CONF, NSID_SYSCONF_FILE,
               IDMAP_DEFAULT_KEYRING, DNS_DEFAULT_TOTAL_MS, IDMAP_MAX_SECONDS,
               NSID_RUN_DIR "/" NSID_CTL_SOCKET_NAME, IDMAP_DAEMON_TIMEOUT_MS);
}

enum {
        OPT_VERSION = 0x100,
        OPT_IDMAPD_CONF,
        OPT_CONFIG,
        OPT_KEYRING,
        OPT_LOG_FILE,
        OPT_DNS_TIMEOUT,
        OPT_TEST_PREFIX,
        OPT_TEST_REQUESTER_PID_FILE,
        OPT_MAX_TIME,
        OPT_DAEMON_SOCKET,
        OPT_DAEMON_TIMEOUT,
        OPT_JSON,
        OPT_NO_LEGEND,
};

/* A usage error of an administrator's command: what is wrong, where to look; exit 2. */
static int usage_fail(const char *prog, const char *what) {
        if (what && *what)
                fprintf(stderr, "%s: %s\n", prog, what);
        fprintf(stderr, "Try '%s --help'.\n", prog);
        return 2;
}

/* The end of an upcall. Everything it wrote went out unbuffered (stderr, the log file's
 * fd, syslog's socket) and nothing it holds needs tearing down, so it leaves at once: the
 * kernel waits for this process to exit before the requester's request_key() returns, and
 * exit()'s handlers, stdio flush and the dynamic loader's finalizers were a measurable part
 * of an upcall in the lab (TCG). With sanitizers, exit() runs their leak check. */
static int upcall_exit(int status) {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_UNDEFINED__)
        _exit(status);
#endif
        return status;
}

/* What getopt_long() takes for an option (or "--"): "-" followed by anything. */
static bool is_option(const char *arg) {
        return arg[0] == '-' && arg[1] != '\0';
}

static void set_timeout(idmap_opts *o, const char *arg, const char **bad_timeout) {
        uint64_t v;

        if (parse_uint_strict(arg, INT32_MAX, &v) < 0)
                *bad_timeout = arg;
        else
                o->timeout = (unsigned) v;
}

/* What the command line asks. */
typedef struct args {
        idmap_opts o;
        const char *log_file, *name, *bad_timeout;
        bool clear, domain, list, inval_uid, inval_gid;
        bool help, version, quiet;
        bool usage_error;
        char bad_option[160]; /* what usage_error is about, when an option's value */
        int first;            /* the first operand (argv index) */
} args;

static void args_bad(args *a, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void args_bad(args *a, const char *format, ...) {
        va_list ap;

        a->usage_error = true;
        va_start(ap, format);
        vsnprintf(a->bad_option, sizeof(a->bad_option), format, ap);
        va_end(ap);
}

/* The command line into *a. Errors are recorded there, not reported: an upcall with bad
 * arguments still has its key to reject, which run_upcall() does. */
static void parse_argv(int argc, char **argv, args *a) {
        static const struct option longopts[] = {
                { "verbose", no_argument, NULL, 'v' },
                { "quiet", no_argument, NULL, 'q' },
                { "json", no_argument, NULL, OPT_JSON },
                { "no-legend", no_argument, NULL, OPT_NO_LEGEND },
                { "timeout", required_argument, NULL, 't' },
                { "clear", no_argument, NULL, 'c' },
                { "domain", no_argument, NULL, 'd' },
                { "list", no_argument, NULL, 'l' },
                { "uid", required_argument, NULL, 'u' },
                { "gid", required_argument, NULL, 'g' },
                { "revoke", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                { "idmapd-conf", required_argument, NULL, OPT_IDMAPD_CONF },
                { "config", required_argument, NULL, OPT_CONFIG },
                { "keyring", required_argument, NULL, OPT_KEYRING },
                { "log-file", required_argument, NULL, OPT_LOG_FILE },
                { "dns-timeout", required_argument, NULL, OPT_DNS_TIMEOUT },
                { "max-time", required_argument, NULL, OPT_MAX_TIME },
                { "daemon-socket", required_argument, NULL, OPT_DAEMON_SOCKET },
                { "daemon-timeout", required_argument, NULL, OPT_DAEMON_TIMEOUT },
                /* Test seam (see nsid-idmap(8), TESTING): answer `user` keys whose
                 * description is PREFIX followed by an id_resolver description. */
                { "test-user-prefix", required_argument, NULL, OPT_TEST_PREFIX },
                /* Test seam: the requester's pid is read from this file (waited for up to
                 * 3 s) instead of from /proc/keys; only with --test-user-prefix. */
                { "test-requester-pid-file", required_argument, NULL,
                  OPT_TEST_REQUESTER_PID_FILE },
                {}
        };
        int c;
        uint64_t v;

        /* The arguments of the rules this package installs, "-t 600 %k %d" and "dns %k", the
         * same for every upcall: taken as getopt_long() takes them (-t and its value; the
         * first non-option ends the scan, "+"), without running it. Its option parsing is
         * about 210 distinct instructions of libc per exec (callgrind), which is what an
         * upcall costs where exec'd code is translated afresh every time (qemu TCG;
         * doc/benchmarks.md).
         * Anything else goes through getopt_long(). */
        if (argc == 5 && strcmp(argv[1], "-t") == 0 && !is_option(argv[3])) {
                set_timeout(&a->o, argv[2], &a->bad_timeout);
                a->first = 3;
                return;
        }
        if (argc == 3 && !is_option(argv[1])) {
                a->first = 1;
                return;
        }
        while ((c = getopt_long(argc, argv, "vqt:cdlu:g:r:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'v':
                        a->o.verbose++;
                        break;
                case 'q':
                        a->quiet = true;
                        break;
                case OPT_JSON:
                        a->o.json = true;
                        break;
                case OPT_NO_LEGEND:
                        a->o.no_legend = true;
                        break;
                case 't':
                        set_timeout(&a->o, optarg, &a->bad_timeout);
                        break;
                case 'c':
                        a->clear = true;
                        break;
                case 'd':
                        a->domain = true;
                        break;
                case 'l':
                        a->list = true;
                        break;
                case 'u':
                        a->name = optarg, a->inval_uid = true, a->inval_gid = false;
                        break;
                case 'g':
                        a->name = optarg, a->inval_gid = true, a->inval_uid = false;
                        break;
                case 'r':
                        a->name = optarg, a->inval_uid = a->inval_gid = true;
                        break;
                case 'h':
                        a->help = true;
                        return;
                case OPT_VERSION:
                        a->version = true;
                        return;
                case OPT_IDMAPD_CONF:
                        a->o.idmapd_conf = optarg;
                        break;
                case OPT_CONFIG:
                        a->o.nsid_conf = optarg;
                        break;
                case OPT_KEYRING:
                        a->o.keyring = optarg;
                        break;
                case OPT_LOG_FILE:
                        a->log_file = optarg;
                        break;
                case OPT_DNS_TIMEOUT:
                        if (parse_uint_strict(optarg, 60000, &v) < 0 || v < 100)
                                args_bad(a, "--dns-timeout=%.64s: expected milliseconds "
                                         "100..60000", optarg);
                        else
                                a->o.dns_total_ms = (unsigned) v;
                        break;
                case OPT_MAX_TIME:
                        if (parse_uint_strict(optarg, 3600, &v) < 0 || v < 1)
                                args_bad(a, "--max-time=%.64s: expected seconds 1..3600", optarg);
                        else
                                a->o.max_seconds = (unsigned) v;
                        break;
                case OPT_DAEMON_SOCKET:
                        a->o.daemon_socket = optarg;
                        break;
                case OPT_DAEMON_TIMEOUT:
                        if (parse_uint_strict(optarg, 10000, &v) < 0)
                                args_bad(a, "--daemon-timeout=%.64s: expected milliseconds "
                                         "0..10000", optarg);
                        else
                                a->o.daemon_timeout_ms = (unsigned) v;
                        break;
                case OPT_TEST_PREFIX:
                        a->o.test_prefix = optarg;
                        break;
                case OPT_TEST_REQUESTER_PID_FILE:
                        requester_test_pid_file = optarg;
                        break;
                default:
                        a->usage_error = true;
                        break;
                }
        }
        a->first = optind;
        if (requester_test_pid_file && !a->o.test_prefix)
                a->usage_error = true; /* a test seam only in test mode */
}

static bool is_admin(const args *a) {
        return a->clear || a->domain || a->list || a->name;
}

/* nfsidmap's administrative commands (-c, -d, -l, -u, -g, -r): a terminal or a script. */
static int run_admin(const char *prog, const args *a, int argc, char **argv) {
        char why[256] = "";
        int r;

        if (a->bad_timeout)
                snprintf(why, sizeof(why), "invalid timeout \"%.64s\": expected seconds "
                         "0..2147483647", a->bad_timeout);
        else if (a->bad_option[0])
                snprintf(why, sizeof(why), "invalid %s", a->bad_option);
        else if (a->first != argc)
                snprintf(why, sizeof(why), "unexpected argument \"%.64s\" with -c, -d, -l, -u, "
                         "-g or -r", argv[a->first]);
        else if ((a->clear + a->domain + a->list + (a->name != NULL)) != 1)
                snprintf(why, sizeof(why), "one of -c, -d, -l, -u, -g, -r at a time");
        else if (a->o.json && !a->list && !a->domain)
                snprintf(why, sizeof(why), "--json applies to -l and -d only");
        else if (a->o.no_legend && !a->list)
                snprintf(why, sizeof(why), "--no-legend applies to -l only");
        if (a->usage_error || why[0])
                return usage_fail(prog, why);

        /* Privileges (see nsid-idmap(8), SECURITY): -c/-u/-g/-r need CAP_SYS_ADMIN (the
         * kernel lets root clear .id_resolver and invalidate its keys); -l and -d need none. */
        r = caps_keep(a->clear || a->name ? CAPBIT(CAP_SYS_ADMIN) : 0, 0, NULL);
        if (r < 0)
                logmsg(LOG_WARNING, "cannot drop capabilities: %s", strerror(-r));
        if (a->domain)
                return idmap_admin_domain(&a->o);
        if (a->list)
                return idmap_admin_list(&a->o);
        if (a->clear)
                return idmap_admin_clear(&a->o);
        return idmap_admin_invalidate(&a->o, a->name, a->inval_uid, a->inval_gid);
}

/* An upcall from request-key: "KEY DESC" (id_resolver) or "dns KEY". Every path ends the
 * request, even with bad arguments when the key serial is there. */
static int run_upcall(const char *prog, const args *a, int argc, char **argv) {
        int first = a->first; /* KEY DESC, or "dns" KEY */
        int r;

        /* Upcalls: requester discovery opens /proc/keys as nobody (CAP_SETUID, dropped right
         * after) and reads /proc/PID/ns of any process (CAP_SYS_PTRACE);
         * the requester-context worker and the dns worker join its mount namespace and root
         * (CAP_SYS_ADMIN, CAP_SYS_CHROOT), the dns worker its network namespace, and read
         * the raw files; before parsing them each worker makes itself an empty root
         * (CAP_SYS_ADMIN), drops the host's groups and becomes an unprivileged id
         * (CAP_SETGID, CAP_SETUID) and empties its bounding set (CAP_SETPCAP): see
         * nsid_worker_drop_privileges(). Dropped as soon as each step is done. */
        r = caps_keep(CAPBIT(CAP_SYS_ADMIN) | CAPBIT(CAP_SYS_CHROOT) | CAPBIT(CAP_SYS_PTRACE) |
                      CAPBIT(CAP_SETUID) | CAPBIT(CAP_SETGID) | CAPBIT(CAP_SETPCAP), 0, NULL);
        if (r < 0)
                logmsg(LOG_WARNING, "cannot drop capabilities: %s", strerror(-r));

        if (strcmp(argv[first], "dns") == 0) {
                if (a->usage_error || argc - first != 2) {
                        logmsg(LOG_ERR, "dns: bad arguments; expected \"dns <key serial>\" "
                               "(request-key rule: \"%s dns %%k\")", prog);
                        key_serial_t k;
                        if (argc - first >= 2 && parse_key_serial(argv[first + 1], &k) >= 0)
                                key_reject(k, 1, EKEYREJECTED);
                        return 2;
                }
                return upcall_exit(dns_upcall(&a->o, argv[first + 1]));
        }

        if (a->usage_error || a->bad_timeout || argc - first != 2) {
                key_serial_t k;
                if (a->bad_timeout)
                        logmsg(LOG_ERR, "invalid timeout \"%s\": expected seconds 0..2147483647",
                               a->bad_timeout);
                else if (a->bad_option[0])
                        logmsg(LOG_ERR, "invalid %s", a->bad_option);
                else
                        logmsg(LOG_ERR, "Bad arg count. Check /etc/request-key.conf: expected "
                               "\"%s [-v] [-t timeout] %%k %%d\"", prog);
                /* Still end the request when the key serial is there. */
                if (argc - first >= 1 && parse_key_serial(argv[first], &k) >= 0)
                        key_reject(k, IDMAP_NEGATIVE_TIMEOUT, EKEYREJECTED);
                return 2;
        }
        return upcall_exit(idmap_upcall(&a->o, argv[first], argv[first + 1]));
}

int main(int argc, char **argv) {
        args a = {
                .o = {
                        .timeout = IDMAP_DEFAULT_TIMEOUT,
                        .idmapd_conf = IDMAP_DEFAULT_CONF,
                        .nsid_conf = NSID_SYSCONF_FILE,
                        .keyring = IDMAP_DEFAULT_KEYRING,
                        .dns_total_ms = DNS_DEFAULT_TOTAL_MS,
                        .max_seconds = IDMAP_MAX_SECONDS,
                        .daemon_socket = NSID_RUN_DIR "/" NSID_CTL_SOCKET_NAME,
                        .daemon_timeout_ms = IDMAP_DAEMON_TIMEOUT_MS,
                },
        };
        const char *prog;
        bool admin;

        if (std_fds_ensure() < 0)
                _exit(1);
        prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

        parse_argv(argc, argv, &a);
        if (a.help) {
                help(prog);
                return 0;
        }
        if (a.version) {
                printf("%s %s\n", prog, NSID_VERSION);
                return 0;
        }
        admin = is_admin(&a);
        /* Admin commands talk to a terminal or a script; upcalls log to syslog unless -v or
         * a terminal. */
        log_setup(prog, admin || a.o.verbose > 0 || isatty(STDERR_FILENO), a.log_file,
                  a.o.verbose > 1 ? LOG_DEBUG : a.quiet ? LOG_ERR : LOG_INFO);
        nsid_log_set_handler(library_log, NULL);
        nsid_log_set_max_priority(a.o.verbose > 1 ? LOG_DEBUG : LOG_WARNING);

        if (admin)
                return run_admin(prog, &a, argc, argv);
        /* Not an upcall either: the kernel always passes a key (and its description) */
        if (a.first == argc)
                return usage_fail(prog, a.usage_error ? NULL : "expected KEY DESC (an upcall "
                                  "from request-key), \"dns KEY\", or one of -c, -d, -l, -u, -g, -r");
        if ((a.o.json || a.o.no_legend) && !a.usage_error) /* an upcall: its key is still rejected */
                args_bad(&a, "%s: for -l and -d only", a.o.json ? "--json" : "--no-legend");
        return run_upcall(prog, &a, argc, argv);
}
