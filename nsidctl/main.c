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
} commands[] = {
        { "status", cmd_status, "every network namespace: container, identifier, NFS, idmap" },
        { "doctor", cmd_doctor, "find the problems that break NFS in containers, and their fixes" },
        { "identity", cmd_identity, "the identity nsid-uniquifier would give, without setting it" },
        { "config", cmd_config, "every key of nsid.conf: default, value in effect, where from" },
        { "host-secret", cmd_host_secret,
          "the secret identities derive from: show, new (clones), accept (moved)" },
};

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
               "  -v, --verbose          debug messages\n"
               "  -h, --help             this help\n"
               "      --version          print the version\n"
               "\n"
               "identity:  [--pid=PID | --netns=PATH] [--key=KEY | --container-id=ID] "
               "[--app=APP]\n"
               "doctor:    [--server-domain=DOMAIN] [--request-key-conf=PATH] "
               "[--request-key-dir=DIR]\n"
               "           [--server] [--window=SECONDS] [--nfsd-clients=DIR]\n"
               "host-secret [show|new|accept]  [--yes] [--reason=TEXT] "
               "[--platform-id=PATH]\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage, 3 warnings found, 4 problems found\n"
               "(doctor, config). See nsidctl(8).\n",
               NSID_SYSCONF_FILE, NSID_STATE_DIR);
}

static void open_std_fds(void) {
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
                        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
                        if (n >= 0 && n != fd) {
                                dup2(n, fd);
                                close(n);
                        }
                }
}

static int parse_number(const char *s, long min, long max, long *ret) {
        char *end;
        long v;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
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
        OPT_REASON,
};

/* Subcommand options: which command accepts them. */
static const struct {
        int opt;
        const char *name;
        const char *command;
} sub_opts[] = {
        { OPT_APP, "--app", "identity" },
        { OPT_KEY, "--key", "identity" },
        { OPT_CONTAINER_ID, "--container-id", "identity" },
        { OPT_PID, "--pid", "identity" },
        { OPT_NETNS, "--netns", "identity" },
        { OPT_SERVER_DOMAIN, "--server-domain", "doctor" },
        { OPT_RK_CONF, "--request-key-conf", "doctor" },
        { OPT_RK_DIR, "--request-key-dir", "doctor" },
        { OPT_SERVER, "--server", "doctor" },
        { OPT_WINDOW, "--window", "doctor" },
        { OPT_NFSD_CLIENTS, "--nfsd-clients", "doctor" },
        { OPT_YES, "--yes", "host-secret" },
        { OPT_REASON, "--reason", "host-secret" },
};

int main(int argc, char **argv) {
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
                { "reason", required_argument, NULL, OPT_REASON },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {},
        };
        const char *color_mode = NULL, *cmd = NULL;
        bool used[sizeof(sub_opts) / sizeof(sub_opts[0])] = {};
        bool want_help = false;
        long v;
        int o, ret;

        open_std_fds();
        arg.state_dir = secure_getenv("NSID_STATE_DIR");
        arg.registry_path = secure_getenv("NSID_REGISTRY");
        arg.machine_id = secure_getenv("NSID_MACHINE_ID_FILE");
        arg.platform_id = secure_getenv("NSID_PLATFORM_ID_FILE");

        while ((o = getopt_long(argc, argv, "vh", opts, NULL)) >= 0) {
                for (size_t i = 0; i < sizeof(sub_opts) / sizeof(sub_opts[0]); i++)
                        if (sub_opts[i].opt == o)
                                used[i] = true;
                switch (o) {
                case OPT_JSON:
                        arg.json = true;
                        break;
                case OPT_COLOR:
                        color_mode = optarg;
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
                        if (parse_number(optarg, 1, 3600000, &v) < 0) {
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
                        if (parse_number(optarg, 1, 4194304, &v) < 0) {
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
                        if (parse_number(optarg, 0, 3600, &v) < 0) {
                                errorf("invalid --window '%s' (seconds, 0..3600)", optarg);
                                return EXIT_USAGE;
                        }
                        arg.window_ms = (int) v * 1000;
                        break;
                case OPT_NFSD_CLIENTS:
                        arg.nfsd_clients = optarg;
                        break;
                case OPT_PLATFORM_ID:
                        arg.platform_id = optarg;
                        break;
                case OPT_YES:
                        arg.yes = true;
                        break;
                case OPT_REASON:
                        arg.reason = optarg;
                        break;
                case 'v':
                        arg.verbose = true;
                        break;
                case 'h':
                        want_help = true;
                        break;
                case OPT_VERSION:
                        printf("nsidctl %s\n", NSID_VERSION);
                        return EXIT_OK;
                default:
                        fprintf(stderr, "Try '%s --help'.\n", program);
                        return EXIT_USAGE;
                }
        }
        if (want_help) {
                help();
                return EXIT_OK;
        }
        if (out_color_setup(color_mode) < 0) {
                errorf("invalid --color '%s': auto, always or never", color_mode);
                return EXIT_USAGE;
        }
        if (arg.state_dir && !*arg.state_dir)
                arg.state_dir = NULL;
        if (arg.registry_path && !*arg.registry_path)
                arg.registry_path = NULL;
        if (arg.machine_id && !*arg.machine_id)
                arg.machine_id = NULL;
        if (arg.platform_id && !*arg.platform_id)
                arg.platform_id = NULL;
        out_log_setup();
        /* a file named on purpose must be there: its absence is not "defaults apply" */
        if (arg.config_path && access(arg.config_path, F_OK) < 0) {
                errorf("--config %s: %s", arg.config_path, strerror(errno));
                return EXIT_FAIL;
        }

        if (optind >= argc) {
                errorf("missing command; try '%s --help'", program);
                return EXIT_USAGE;
        }
        cmd = argv[optind];
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
        for (size_t i = 0; i < sizeof(sub_opts) / sizeof(sub_opts[0]); i++)
                if (used[i] && strcmp(sub_opts[i].command, cmd) != 0) {
                        errorf("%s is an option of '%s %s'", sub_opts[i].name, program,
                               sub_opts[i].command);
                        return EXIT_USAGE;
                }
        if (arg.pid && arg.netns_path) {
                errorf("--pid and --netns are exclusive");
                return EXIT_USAGE;
        }

        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(cmd, commands[i].name) == 0) {
                        ret = commands[i].run();
                        ctx_done();
                        return ret;
                }
        errorf("unknown command '%s'; try '%s --help'", cmd, program);
        return EXIT_USAGE;
}
