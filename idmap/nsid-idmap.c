/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmap: a namespace-aware drop-in for nfs-utils' nfsidmap (the id_resolver
 * request-key helper), and the namespace-aware dns_resolver helper ("nsid-idmap dns").
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

int main(int argc, char **argv) {
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
        idmap_opts o = {
                .timeout = IDMAP_DEFAULT_TIMEOUT,
                .idmapd_conf = IDMAP_DEFAULT_CONF,
                .nsid_conf = NSID_SYSCONF_FILE,
                .keyring = IDMAP_DEFAULT_KEYRING,
                .dns_total_ms = DNS_DEFAULT_TOTAL_MS,
                .max_seconds = IDMAP_MAX_SECONDS,
                .daemon_socket = NSID_RUN_DIR "/" NSID_CTL_SOCKET_NAME,
                .daemon_timeout_ms = IDMAP_DAEMON_TIMEOUT_MS,
        };
        const char *prog, *log_file = NULL, *name = NULL, *bad_timeout = NULL;
        bool clear = false, domain = false, list = false, inval_uid = false, inval_gid = false;
        bool usage_error = false, quiet = false;
        char bad_option[160] = ""; /* what usage_error is about, when an option's value */
        int c, r;
        uint64_t v;

        if (std_fds_ensure() < 0)
                _exit(1);
        prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

        /* The arguments of the rules this package installs, "-t 600 %k %d" and "dns %k", the
         * same for every upcall: taken as getopt_long() takes them (-t and its value; the
         * first non-option ends the scan, "+"), without running it. Its option parsing is
         * about 210 distinct instructions of libc per exec (callgrind), which is what an
         * upcall costs where exec'd code is translated afresh every time (qemu TCG;
         * doc/benchmarks.md).
         * Anything else goes through getopt_long(). */
        bool rule_form = false;
        if (argc == 5 && strcmp(argv[1], "-t") == 0 && !is_option(argv[3])) {
                set_timeout(&o, argv[2], &bad_timeout);
                optind = 3;
                rule_form = true;
        } else if (argc == 3 && !is_option(argv[1])) {
                optind = 1;
                rule_form = true;
        }
        while (!rule_form &&
               (c = getopt_long(argc, argv, "vqt:cdlu:g:r:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'v':
                        o.verbose++;
                        break;
                case 'q':
                        quiet = true;
                        break;
                case OPT_JSON:
                        o.json = true;
                        break;
                case OPT_NO_LEGEND:
                        o.no_legend = true;
                        break;
                case 't':
                        set_timeout(&o, optarg, &bad_timeout);
                        break;
                case 'c':
                        clear = true;
                        break;
                case 'd':
                        domain = true;
                        break;
                case 'l':
                        list = true;
                        break;
                case 'u':
                        name = optarg, inval_uid = true, inval_gid = false;
                        break;
                case 'g':
                        name = optarg, inval_gid = true, inval_uid = false;
                        break;
                case 'r':
                        name = optarg, inval_uid = inval_gid = true;
                        break;
                case 'h':
                        help(prog);
                        return 0;
                case OPT_VERSION:
                        printf("%s %s\n", prog, NSID_VERSION);
                        return 0;
                case OPT_IDMAPD_CONF:
                        o.idmapd_conf = optarg;
                        break;
                case OPT_CONFIG:
                        o.nsid_conf = optarg;
                        break;
                case OPT_KEYRING:
                        o.keyring = optarg;
                        break;
                case OPT_LOG_FILE:
                        log_file = optarg;
                        break;
                case OPT_DNS_TIMEOUT:
                        if (parse_uint_strict(optarg, 60000, &v) < 0 || v < 100) {
                                usage_error = true;
                                snprintf(bad_option, sizeof(bad_option),
                                         "--dns-timeout=%.64s: expected milliseconds 100..60000",
                                         optarg);
                        }
                        else
                                o.dns_total_ms = (unsigned) v;
                        break;
                case OPT_MAX_TIME:
                        if (parse_uint_strict(optarg, 3600, &v) < 0 || v < 1) {
                                usage_error = true;
                                snprintf(bad_option, sizeof(bad_option),
                                         "--max-time=%.64s: expected seconds 1..3600", optarg);
                        }
                        else
                                o.max_seconds = (unsigned) v;
                        break;
                case OPT_DAEMON_SOCKET:
                        o.daemon_socket = optarg;
                        break;
                case OPT_DAEMON_TIMEOUT:
                        if (parse_uint_strict(optarg, 10000, &v) < 0) {
                                usage_error = true;
                                snprintf(bad_option, sizeof(bad_option),
                                         "--daemon-timeout=%.64s: expected milliseconds "
                                         "0..10000",
                                         optarg);
                        }
                        else
                                o.daemon_timeout_ms = (unsigned) v;
                        break;
                case OPT_TEST_PREFIX:
                        o.test_prefix = optarg;
                        break;
                case OPT_TEST_REQUESTER_PID_FILE:
                        requester_test_pid_file = optarg;
                        break;
                default:
                        usage_error = true;
                        break;
                }
        }

        if (requester_test_pid_file && !o.test_prefix)
                usage_error = true; /* a test seam only in test mode */
        bool admin = clear || domain || list || name;
        bool is_dns = !admin && optind < argc && strcmp(argv[optind], "dns") == 0;

        /* Admin commands talk to a terminal or a script; upcalls log to syslog unless -v or
         * a terminal. */
        log_setup(prog, admin || o.verbose > 0 || isatty(STDERR_FILENO), log_file,
                  o.verbose > 1 ? LOG_DEBUG : quiet ? LOG_ERR : LOG_INFO);
        nsid_log_set_handler(library_log, NULL);
        nsid_log_set_max_priority(o.verbose > 1 ? LOG_DEBUG : LOG_WARNING);

        if (admin) {
                char why[256] = "";
                if (bad_timeout)
                        snprintf(why, sizeof(why), "invalid timeout \"%.64s\": expected seconds "
                                 "0..2147483647", bad_timeout);
                else if (bad_option[0])
                        snprintf(why, sizeof(why), "invalid %s", bad_option);
                else if (optind != argc)
                        snprintf(why, sizeof(why), "unexpected argument \"%.64s\" with -c, -d, "
                                 "-l, -u, -g or -r", argv[optind]);
                else if ((clear + domain + list + (name != NULL)) != 1)
                        snprintf(why, sizeof(why), "one of -c, -d, -l, -u, -g, -r at a time");
                else if (o.json && !list && !domain)
                        snprintf(why, sizeof(why), "--json applies to -l and -d only");
                else if (o.no_legend && !list)
                        snprintf(why, sizeof(why), "--no-legend applies to -l only");
                if (usage_error || why[0])
                        return usage_fail(prog, why);
        }
        /* Not an upcall either: the kernel always passes a key (and its description) */
        if (!admin && optind == argc)
                return usage_fail(prog, usage_error ? NULL : "expected KEY DESC (an upcall from "
                                  "request-key), \"dns KEY\", or one of -c, -d, -l, -u, -g, -r");
        if (!admin && (o.json || o.no_legend) && !usage_error) {
                usage_error = true; /* an upcall: its key is still rejected below */
                snprintf(bad_option, sizeof(bad_option), "%s: for -l and -d only",
                         o.json ? "--json" : "--no-legend");
        }
        if (admin) {
                /* Privileges (see nsid-idmap(8), SECURITY): -c/-u/-g/-r need CAP_SYS_ADMIN
                 * (the kernel lets root clear .id_resolver and invalidate its keys); -l and
                 * -d need none. */
                r = caps_keep(clear || name ? CAPBIT(CAP_SYS_ADMIN) : 0);
                if (r < 0)
                        logmsg(LOG_WARNING, "cannot drop capabilities: %s", strerror(-r));
                if (domain)
                        return idmap_admin_domain(&o);
                if (list)
                        return idmap_admin_list(&o);
                if (clear)
                        return idmap_admin_clear(&o);
                return idmap_admin_invalidate(&o, name, inval_uid, inval_gid);
        }

        /* Upcalls: requester discovery opens /proc/keys as nobody (CAP_SETUID, dropped right
         * after) and reads /proc/PID/ns of any process (CAP_SYS_PTRACE);
         * the requester-context worker and the dns worker join its mount namespace and root
         * (CAP_SYS_ADMIN, CAP_SYS_CHROOT), the dns worker its network namespace, and read
         * the raw files; before parsing them each worker makes itself an empty root
         * (CAP_SYS_ADMIN), drops the host's groups and becomes an unprivileged id
         * (CAP_SETGID, CAP_SETUID) and empties its bounding set (CAP_SETPCAP): see
         * nsid_worker_drop_privileges(). Dropped as soon as each step is done. */
        r = caps_keep(CAPBIT(CAP_SYS_ADMIN) | CAPBIT(CAP_SYS_CHROOT) | CAPBIT(CAP_SYS_PTRACE) |
                      CAPBIT(CAP_SETUID) | CAPBIT(CAP_SETGID) | CAPBIT(CAP_SETPCAP));
        if (r < 0)
                logmsg(LOG_WARNING, "cannot drop capabilities: %s", strerror(-r));

        if (is_dns) {
                if (usage_error || argc - optind != 2) {
                        logmsg(LOG_ERR, "dns: bad arguments; expected \"dns <key serial>\" "
                               "(request-key rule: \"%s dns %%k\")", prog);
                        key_serial_t k;
                        if (argc - optind >= 2 && parse_key_serial(argv[optind + 1], &k) >= 0)
                                key_reject(k, 1, EKEYREJECTED);
                        return 2;
                }
                return upcall_exit(dns_upcall(&o, argv[optind + 1]));
        }

        if (usage_error || bad_timeout || argc - optind != 2) {
                key_serial_t k;
                if (bad_timeout)
                        logmsg(LOG_ERR, "invalid timeout \"%s\": expected seconds 0..2147483647",
                               bad_timeout);
                else if (bad_option[0])
                        logmsg(LOG_ERR, "invalid %s", bad_option);
                else
                        logmsg(LOG_ERR, "Bad arg count. Check /etc/request-key.conf: expected "
                               "\"%s [-v] [-t timeout] %%k %%d\"", prog);
                /* Still end the request when the key serial is there. */
                if (argc - optind >= 1 && parse_key_serial(argv[optind], &k) >= 0)
                        key_reject(k, IDMAP_NEGATIVE_TIMEOUT, EKEYREJECTED);
                return 2;
        }
        return upcall_exit(idmap_upcall(&o, argv[optind], argv[optind + 1]));
}
