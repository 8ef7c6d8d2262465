/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: one front end to nsid for administrators (nsidctl(8)). Git-style subcommands;
 * options may come before or after the subcommand. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nsid/identity.h>

#include "nsidctl.h"
#include "parse-util.h"
#include "std-fds.h"

#ifndef NSID_VERSION
#define NSID_VERSION "unknown"
#endif

const char *program = "nsidctl";

nsidctl_args arg = {
        .app = NSID_APP_NFS4,
        .timeout_ms = 5000,
        .key_source = NSID_KEY_EXPLICIT,
        .window_ms = 2000,
};

static const struct command {
        const char *name;
        int (*run)(void);
        const char *summary;
        const char *usage; /* its own options and exit status, for `nsidctl CMD --help` */
} commands[] = {
        { "status", cmd_status, "every network namespace: container, identifier, NFS, idmap",
          "Options: the common ones (nsidctl --help); --json for one object.\n"
          "Exit status: 0, or 1 when the namespaces cannot be listed.\n" },
        { "doctor", cmd_doctor, "find the problems that break NFS in containers, and their fixes",
          "Options:\n"
          "      --server-domain=DOMAIN  the NFS server's idmap domain, to compare\n"
          "      --request-key-conf=PATH --request-key-dir=DIR  request-key files to read\n"
          "      --server                on the NFS server: its clients' owner strings\n"
          "      --window=SECONDS        read /proc/fs/nfsd/clients over that long (0..3600)\n"
          "      --nfsd-clients=DIR      a copy of /proc/fs/nfsd/clients to read instead\n"
          "      --history=PATH          the takeovers nsidctl watch --server recorded\n"
          "                              (default STATE-DIR/server-watch.db)\n"
          "Exit status: 0 nothing found, 3 warnings, 4 problems, 1 failure.\n" },
        { "identity", cmd_identity, "the identity nsid-uniquifier would give, without setting it",
          "Options:\n"
          "      --pid=PID | --netns=PATH           the network namespace (default: this one)\n"
          "      --key=KEY | --container-id=ID      the container key (default: found)\n"
          "      --app=APP                          the application id (default nfs4)\n"
          "Exit status: 0, 1 failure, 2 usage.\n" },
        { "metrics", cmd_metrics, "ID mapping and identities for Prometheus (text format)",
          "Options:\n"
          "      --output=PATH  write them to PATH atomically (a new file renamed over it,\n"
          "                     mode 0644), as node_exporter's textfile collector wants\n"
          "      --json         the same figures as one object\n"
          "      --http         answer one HTTP request (GET /metrics) read from stdin, on\n"
          "                     stdout: for nsid-metrics.socket (systemd, Accept=yes)\n"
          "Every metric: nsidctl(8), METRICS. nsid-metrics.timer writes them to\n"
          "/var/lib/prometheus/node-exporter/nsid.prom every 30 s when that directory exists.\n"
          "Exit status: 0 (also when nsid-idmapd does not run: nsid_idmapd_up 0), 1 failure.\n" },
        { "watch", cmd_watch, "on an NFS server: each takeover of a client's record, as it happens",
          "Options:\n"
          "      --server            follow knfsd's client-id tracepoints (tracefs; root)\n"
          "      --history=PATH      keep what happens there (default\n"
          "                          STATE-DIR/server-watch.db; \"\" keeps nothing)\n"
          "      --duration=SECONDS  stop after that long (default: at SIGINT/SIGTERM)\n"
          "      --nfsd-clients=DIR  the server's clients (default /proc/fs/nfsd/clients)\n"
          "      --json              one JSON object per line\n"
          "nsid-server-watch.service runs it; doctor --server and metrics read its history.\n"
          "Exit status: 0, 3 events were lost, 1 failure, 2 usage.\n" },
        { "config", cmd_config, "every key of nsid.conf: default, value in effect, where from",
          "Options: --config=PATH (default /etc/nsid.conf; named on purpose, it must exist).\n"
          "Its output is a valid nsid.conf.\n"
          "Exit status: 0 clean, 3 warnings, 4 errors (values refused), 1 unreadable.\n" },
        { "host-secret", cmd_host_secret,
          "the secret identities derive from: show, new (clones), accept (moved)",
          "Actions: show (default), new, accept.\n"
          "Options:\n"
          "      --yes               new, accept: really do it (every identity changes on new)\n"
          "      --if-shared         new: only when the secret is one clones share (the\n"
          "                          machine-id, or a generated one made on another platform);\n"
          "                          otherwise nothing, exit 0: safe to run on every host\n"
          "      --reason=TEXT       logged with the change\n"
          "      --platform-id=PATH  the platform identity file (test seam)\n"
          "Exit status: 0, 1 failure, 2 usage, 3 warnings (show).\n" },
};

static void command_names(char *buf, size_t size) {
        buf[0] = '\0';
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "",
                         commands[i].name);
}

static void help(void) {
        printf("Usage: %s [OPTIONS] COMMAND [OPTIONS]\n\nCommands:\n", program);
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                printf("  %-11s %s\n", commands[i].name, commands[i].summary);
        printf("\n"
               "Options:\n"
               "      --json             machine-readable output (every command)\n"
               "      --color=WHEN       auto (default: on a terminal, unless NO_COLOR is set),\n"
               "                         always, never\n"
               "      --config=PATH      configuration file (default %s)\n"
               "      --state-dir=DIR    state directory (env NSID_STATE_DIR; default from the\n"
               "                         configuration, else %s)\n"
               "      --registry=PATH    identity registry (env NSID_REGISTRY)\n"
               "      --machine-id=PATH  host machine-id (env NSID_MACHINE_ID_FILE)\n"
               "      --socket=PATH      nsid-idmapd's control socket\n"
               "      --timeout=MS       per-namespace and daemon timeout (default 5000)\n"
               "      --no-legend        tables without their header lines (status)\n"
               "  -q, --quiet            no informational messages; errors and warnings only\n"
               "  -v, --verbose          debug messages\n"
               "  -h, --help             this help\n"
               "      --version          print the version\n"
               "\n"
               "identity:  [--pid=PID | --netns=PATH] [--key=KEY | --container-id=ID] "
               "[--app=APP]\n"
               "doctor:    [--server-domain=DOMAIN] [--request-key-conf=PATH] "
               "[--request-key-dir=DIR]\n"
               "           [--server] [--window=SECONDS] [--nfsd-clients=DIR] [--history=PATH]\n"
               "watch:     --server [--history=PATH] [--duration=SECONDS] [--nfsd-clients=DIR]\n"
               "host-secret [show|new|accept]  [--yes] [--if-shared] [--reason=TEXT] "
               "[--platform-id=PATH]\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage, 3 warnings found, 4 problems found\n"
               "(doctor, config). See nsidctl(8).\n",
               NSID_SYSCONF_FILE, NSID_STATE_DIR);
}

enum {
        OPT_JSON = 0x100,
        OPT_COLOR,
        OPT_CONFIG,
        OPT_STATE_DIR,
        OPT_REGISTRY,
        OPT_MACHINE_ID,
        OPT_SOCKET,
        OPT_TIMEOUT,
        OPT_VERSION,
        OPT_APP,
        OPT_KEY,
        OPT_CONTAINER_ID,
        OPT_PID,
        OPT_NETNS,
        OPT_SERVER_DOMAIN,
        OPT_RK_CONF,
        OPT_RK_DIR,
        OPT_SERVER,
        OPT_WINDOW,
        OPT_NFSD_CLIENTS,
        OPT_PLATFORM_ID,
        OPT_YES,
        OPT_IF_SHARED,
        OPT_NO_LEGEND,
        OPT_REASON,
        OPT_OUTPUT,
        OPT_HISTORY,
        OPT_DURATION,
        OPT_HTTP,
};

/* Subcommand options: which command accepts them. */
static const struct {
        int opt;
        const char *name;
        const char *command; /* the commands that take it, blank-separated */
} sub_opts[] = {
        { OPT_APP, "--app", "identity" },
        { OPT_KEY, "--key", "identity" },
        { OPT_CONTAINER_ID, "--container-id", "identity" },
        { OPT_PID, "--pid", "identity" },
        { OPT_NETNS, "--netns", "identity" },
        { OPT_SERVER_DOMAIN, "--server-domain", "doctor" },
        { OPT_RK_CONF, "--request-key-conf", "doctor" },
        { OPT_RK_DIR, "--request-key-dir", "doctor" },
        { OPT_SERVER, "--server", "doctor watch" },
        { OPT_WINDOW, "--window", "doctor" },
        { OPT_NFSD_CLIENTS, "--nfsd-clients", "doctor watch" },
        { OPT_HISTORY, "--history", "doctor watch metrics" },
        { OPT_DURATION, "--duration", "watch" },
        { OPT_HTTP, "--http", "metrics" },
        { OPT_YES, "--yes", "host-secret" },
        { OPT_IF_SHARED, "--if-shared", "host-secret" },
        { OPT_REASON, "--reason", "host-secret" },
        { OPT_OUTPUT, "--output", "metrics" },
};

/* Is word one of the blank-separated words of list? */
static bool word_in(const char *list, const char *word) {
        size_t n = strlen(word);
        for (const char *p = list; *p;) {
                size_t k = strcspn(p, " ");
                if (k == n && strncmp(p, word, n) == 0)
                        return true;
                p += k;
                p += strspn(p, " ");
        }
        return false;
}

/* What the command line says beyond the arg structure (context.c). */
typedef struct parsed {
        const char *color_mode;
        bool used[sizeof(sub_opts) / sizeof(sub_opts[0])]; /* which commands' options */
        bool want_help;
} parsed;

/* The options into arg (and *pa), each value checked. Returns -1 to go on, or the exit
 * status (0 after --version; a usage error, reported). */
static int parse_argv(int argc, char **argv, parsed *pa) {
        static const struct option opts[] = {
                { "json", no_argument, NULL, OPT_JSON },
                { "color", required_argument, NULL, OPT_COLOR },
                { "colour", required_argument, NULL, OPT_COLOR },
                { "config", required_argument, NULL, OPT_CONFIG },
                { "state-dir", required_argument, NULL, OPT_STATE_DIR },
                { "registry", required_argument, NULL, OPT_REGISTRY },
                { "machine-id", required_argument, NULL, OPT_MACHINE_ID },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "timeout", required_argument, NULL, OPT_TIMEOUT },
                { "app", required_argument, NULL, OPT_APP },
                { "key", required_argument, NULL, OPT_KEY },
                { "container-id", required_argument, NULL, OPT_CONTAINER_ID },
                { "pid", required_argument, NULL, OPT_PID },
                { "netns", required_argument, NULL, OPT_NETNS },
                { "server-domain", required_argument, NULL, OPT_SERVER_DOMAIN },
                { "request-key-conf", required_argument, NULL, OPT_RK_CONF },
                { "request-key-dir", required_argument, NULL, OPT_RK_DIR },
                { "server", no_argument, NULL, OPT_SERVER },
                { "window", required_argument, NULL, OPT_WINDOW },
                { "nfsd-clients", required_argument, NULL, OPT_NFSD_CLIENTS },
                { "platform-id", required_argument, NULL, OPT_PLATFORM_ID },
                { "yes", no_argument, NULL, OPT_YES },
                { "if-shared", no_argument, NULL, OPT_IF_SHARED },
                { "output", required_argument, NULL, OPT_OUTPUT },
                { "history", required_argument, NULL, OPT_HISTORY },
                { "duration", required_argument, NULL, OPT_DURATION },
                { "http", no_argument, NULL, OPT_HTTP },
                { "reason", required_argument, NULL, OPT_REASON },
                { "verbose", no_argument, NULL, 'v' },
                { "quiet", no_argument, NULL, 'q' },
                { "no-legend", no_argument, NULL, OPT_NO_LEGEND },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {},
        };
        uint64_t v;
        int o;

        arg.state_dir = secure_getenv("NSID_STATE_DIR");
        arg.registry_path = secure_getenv("NSID_REGISTRY");
        arg.machine_id = secure_getenv("NSID_MACHINE_ID_FILE");
        arg.platform_id = secure_getenv("NSID_PLATFORM_ID_FILE");

        while ((o = getopt_long(argc, argv, "vqh", opts, NULL)) >= 0) {
                for (size_t i = 0; i < sizeof(sub_opts) / sizeof(sub_opts[0]); i++)
                        if (sub_opts[i].opt == o)
                                pa->used[i] = true;
                switch (o) {
                case OPT_JSON:
                        arg.json = true;
                        break;
                case OPT_COLOR:
                        pa->color_mode = optarg;
                        break;
                case OPT_CONFIG:
                        arg.config_path = optarg;
                        break;
                case OPT_STATE_DIR:
                        arg.state_dir = optarg;
                        break;
                case OPT_REGISTRY:
                        arg.registry_path = optarg;
                        break;
                case OPT_MACHINE_ID:
                        arg.machine_id = optarg;
                        break;
                case OPT_SOCKET:
                        arg.socket_path = optarg;
                        break;
                case OPT_TIMEOUT:
                        if (parse_u64_range(optarg, 1, 3600000, &v) < 0) {
                                errorf("invalid --timeout '%s' (milliseconds)", optarg);
                                return EXIT_USAGE;
                        }
                        arg.timeout_ms = (int) v;
                        break;
                case OPT_APP:
                        if (nsid_app_validate(optarg) < 0) {
                                errorf("invalid --app '%s': 1..%d of [a-z0-9._-]", optarg,
                                       NSID_APP_MAX);
                                return EXIT_USAGE;
                        }
                        arg.app = optarg;
                        break;
                case OPT_KEY:
                case OPT_CONTAINER_ID:
                        if (arg.key) {
                                errorf("--key and --container-id are exclusive");
                                return EXIT_USAGE;
                        }
                        if (nsid_key_validate(optarg) < 0) {
                                errorf("invalid key: 1..%d printable ASCII characters, no "
                                       "spaces",
                                       NSID_KEY_MAX);
                                return EXIT_USAGE;
                        }
                        arg.key = optarg;
                        arg.key_source = o == OPT_KEY ? NSID_KEY_EXPLICIT : NSID_KEY_CONTAINER_ID;
                        break;
                case OPT_PID:
                        if (parse_u64_range(optarg, 1, 4194304, &v) < 0) {
                                errorf("invalid --pid '%s'", optarg);
                                return EXIT_USAGE;
                        }
                        arg.pid = (pid_t) v;
                        break;
                case OPT_NETNS:
                        arg.netns_path = optarg;
                        break;
                case OPT_SERVER_DOMAIN:
                        arg.server_domain = optarg;
                        break;
                case OPT_RK_CONF:
                        arg.request_key_conf = optarg;
                        break;
                case OPT_RK_DIR:
                        arg.request_key_dir = optarg;
                        break;
                case OPT_SERVER:
                        arg.server = true;
                        break;
                case OPT_WINDOW:
                        if (parse_u64_range(optarg, 0, 3600, &v) < 0) {
                                errorf("invalid --window '%s' (seconds, 0..3600)", optarg);
                                return EXIT_USAGE;
                        }
                        arg.window_ms = (int) v * 1000;
                        break;
                case OPT_NFSD_CLIENTS:
                        arg.nfsd_clients = optarg;
                        break;
                case OPT_OUTPUT:
                        arg.output = optarg;
                        break;
                case OPT_HTTP:
                        arg.http = true;
                        break;
                case OPT_HISTORY:
                        arg.history = optarg;
                        break;
                case OPT_DURATION:
                        if (parse_u64_range(optarg, 1, 31536000, &v) < 0) {
                                errorf("invalid --duration '%s' (seconds, 1..31536000)", optarg);
                                return EXIT_USAGE;
                        }
                        arg.duration_s = (double) v;
                        break;
                case OPT_PLATFORM_ID:
                        arg.platform_id = optarg;
                        break;
                case OPT_YES:
                        arg.yes = true;
                        break;
                case OPT_IF_SHARED:
                        arg.if_shared = true;
                        break;
                case OPT_REASON:
                        arg.reason = optarg;
                        break;
                case 'v':
                        arg.verbose = true;
                        break;
                case 'q':
                        arg.quiet = true;
                        break;
                case OPT_NO_LEGEND:
                        arg.no_legend = true;
                        break;
                case 'h':
                        pa->want_help = true;
                        break;
                case OPT_VERSION:
                        printf("nsidctl %s\n", NSID_VERSION);
                        return EXIT_OK;
                default:
                        return EXIT_USAGE; /* (getopt named the option) */
                }
        }
        /* an empty value (of the environment, say) is no value */
        if (arg.state_dir && !*arg.state_dir)
                arg.state_dir = NULL;
        if (arg.registry_path && !*arg.registry_path)
                arg.registry_path = NULL;
        if (arg.machine_id && !*arg.machine_id)
                arg.machine_id = NULL;
        if (arg.platform_id && !*arg.platform_id)
                arg.platform_id = NULL;
        return -1;
}

/* --help: the program's, or `nsidctl CMD --help`: that command's */
static int show_help(int argc, char **argv) {
        if (optind < argc && strcmp(argv[optind], "help") != 0) {
                for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                        if (strcmp(argv[optind], commands[i].name) == 0) {
                                printf("Usage: %s [OPTIONS] %s%s\n%s.\n\n%s", program,
                                       commands[i].name,
                                       strcmp(commands[i].name, "host-secret") == 0
                                               ? " [show|new|accept]"
                                               : "",
                                       commands[i].summary, commands[i].usage);
                                return EXIT_OK;
                        }
                char names[256];
                command_names(names, sizeof(names));
                errorf("unknown command '%s' (commands: %s)", argv[optind], names);
                return EXIT_USAGE;
        }
        help();
        return EXIT_OK;
}

/* Each option given belongs to the command: 0, or -1 (reported). */
static int check_options_of(const char *cmd, const parsed *pa) {
        for (size_t i = 0; i < sizeof(sub_opts) / sizeof(sub_opts[0]); i++)
                if (pa->used[i] && !word_in(sub_opts[i].command, cmd)) {
                        if (strchr(sub_opts[i].command, ' '))
                                errorf("%s is an option of these commands: %s", sub_opts[i].name,
                                       sub_opts[i].command);
                        else
                                errorf("%s is an option of '%s %s'", sub_opts[i].name, program,
                                       sub_opts[i].command);
                        return -1;
                }
        if (arg.pid && arg.netns_path) {
                errorf("--pid and --netns are exclusive");
                return -1;
        }
        return 0;
}

static int run(int argc, char **argv) {
        parsed pa = {};
        const char *cmd;
        int ret;

        (void) std_fds_ensure();
        ret = parse_argv(argc, argv, &pa);
        if (ret >= 0)
                return ret;
        if (pa.want_help)
                return show_help(argc, argv);
        if (out_color_setup(pa.color_mode) < 0) {
                errorf("invalid --color '%s': auto, always or never", pa.color_mode);
                return EXIT_USAGE;
        }
        out_log_setup();
        /* a file named on purpose must be there: its absence is not "defaults apply" */
        if (arg.config_path && access(arg.config_path, F_OK) < 0) {
                errorf("--config %s: %s", arg.config_path, strerror(errno));
                return EXIT_FAIL;
        }

        if (optind >= argc) {
                errorf("missing command");
                return EXIT_USAGE;
        }
        cmd = argv[optind];
        json_command = cmd;
        if (strcmp(cmd, "help") == 0) {
                help();
                return EXIT_OK;
        }
        /* host-secret takes its action as an argument */
        if (strcmp(cmd, "host-secret") == 0 && optind + 1 < argc)
                arg.action = argv[++optind];
        if (optind + 1 < argc) {
                errorf("%s: unexpected argument '%s'", cmd, argv[optind + 1]);
                return EXIT_USAGE;
        }
        if (check_options_of(cmd, &pa) < 0)
                return EXIT_USAGE;

        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(cmd, commands[i].name) == 0) {
                        ret = commands[i].run();
                        ctx_done();
                        return ret;
                }
        char names[256];
        command_names(names, sizeof(names));
        errorf("unknown command '%s' (commands: %s)", cmd, names);
        return EXIT_USAGE;
}

/* Every usage error (exit 2) ends with the same pointer, whatever said what was wrong. */
int main(int argc, char **argv) {
        int r = run(argc, argv);
        if (r == EXIT_USAGE)
                fprintf(stderr, "Try '%s --help'.\n", program);
        return r;
}
