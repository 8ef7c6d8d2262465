/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-uniquifier: give every network namespace its own stable NFSv4 client identity.
 *
 * Subcommands: set, oci-hook, lxc-hook, reconcile, list, check. See nsid-uniquifier(8).
 * The library (libnsid) derives, records and writes; this program chooses what to do, prints
 * and picks exit codes. This file: the command line, privileges dropped, a subcommand run.
 */
#include <sys/capability.h> /* cap_value_t, cap_to_name(): the kept set named */

#include "uniquifier.h"

uniquifier_args arg = {
        .app = NSID_APP_NFS4,
        .timeout_ms = 10000,
};

const char *program = "nsid-uniquifier";

/* ---- subcommands ---- */

static void help(void) {
        printf("Usage: %s [OPTIONS] COMMAND [ARGS]\n"
               "\n"
               "Give each network namespace its own stable NFSv4 client identity.\n"
               "\n"
               "Commands:\n"
               "  set [--pid PID | --netns PATH] [--key K | --container-id ID] [--force]\n"
               "      [--dry-run] [--replace-key]   set one netns (default: our own)\n"
               "  oci-hook [--no-annotation-key]    OCI createRuntime hook (state JSON on stdin)\n"
               "  lxc-hook [--no-name-key]          LXC start-host hook (LXC_PID, LXC_NAME)\n"
               "  reconcile [--include-host]        set every netns whose identifier is unset\n"
               "  list                              show every netns, change nothing\n"
               "  check                             like list; exit %d on duplicates or unset\n"
               "                                    identifiers under NFS mounts\n"
               "\n"
               "Options:\n"
               "  --app APP          identity app id (default nfs4)\n"
               "  --config PATH      nsid.conf, for its [idmapd] state-dir (default "
               "/etc/nsid.conf)\n"
               "  --state-dir DIR    state directory (default: nsid.conf's state-dir, else %s;\n"
               "                     env NSID_STATE_DIR)\n"
               "  --registry PATH    registry database (default STATE_DIR/%s; env "
               "NSID_REGISTRY)\n"
               "  --machine-id PATH  host machine-id file (default /etc/machine-id; env "
               "NSID_MACHINE_ID_FILE)\n"
               "  --timeout MS       per-namespace worker / stdin timeout (default 10000)\n"
               "  --json             machine-readable output\n"
               "  -q, --quiet        no notes on stderr\n"
               "      --no-legend    tables without their header line (list, check, reconcile)\n"
               "  -v, --verbose      debug messages\n"
               "  -h, --help         this help (COMMAND --help: that command's)\n"
               "      --version      version\n"
               "Options may come before or after the command.\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage, 3 refused (different identifier set),\n"
               "4 too late (NFS already mounted), 5 check found problems.\n",
               program, EXIT_PROBLEMS, NSID_STATE_DIR, NSID_REGISTRY_FILE);
}

/* `nsid-uniquifier COMMAND --help`: that command's arguments and exit status; the common
 * options are the global help's. */
void command_help(void) {
        static const struct {
                const char *name, *text;
        } cmds[] = {
                { "set", "set [--pid PID | --netns PATH] [--key K | --container-id ID] [--name N]\n"
                         "    [--force] [--dry-run] [--replace-key]\n"
                         "Set one network namespace's identifier (default: this process's).\n"
                         "  --pid PID, --netns PATH   the namespace\n"
                         "  --key K, --container-id ID  the container key (default: its\n"
                         "                            /etc/machine-id, else random)\n"
                         "  --force                   replace a different identifier\n"
                         "  --dry-run                 change nothing, record nothing\n"
                         "  --replace-key             replace the key recorded for the namespace\n"
                         "Exit status: 0 set or already set, 3 refused, 4 too late, 1 failure.\n" },
                { "oci-hook", "oci-hook [--no-annotation-key]\n"
                              "The OCI createRuntime hook: the container's state JSON on stdin.\n"
                              "Exit status: 0 (a foreign identifier is left alone), 1 failure.\n" },
                { "lxc-hook", "lxc-hook [--no-name-key] [NAME lxc start-host]\n"
                              "LXC's start-host hook: LXC_PID and LXC_NAME from the environment.\n"
                              "Exit status: 0, 1 failure.\n" },
                { "reconcile", "reconcile [--include-host] [--dry-run]\n"
                               "Set every network namespace whose identifier is unset.\n"
                               "Exit status: 0, 1 failure.\n" },
                { "list", "list [--include-host]\nShow every network namespace; change nothing.\n"
                          "Exit status: 0, 1 failure.\n" },
                { "check", "check [--include-host]\nLike list; exit 5 on duplicate identifiers, or\n"
                           "unset ones under NFS mounts.\n" },
        };
        for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
                if (arg.command && strcmp(arg.command, cmds[i].name) == 0) {
                        printf("Usage: %s [OPTIONS] %s\nOPTIONS: the common ones (%s --help).\n",
                               program, cmds[i].text, program);
                        return;
                }
        help();
}

/*
 * The capabilities a command keeps; every other one is dropped before the command reads any
 * input (the OCI state on stdin included), see nsid-uniquifier(8), CAPABILITIES:
 *  CAP_SYS_ADMIN     setns() into other namespaces (workers, netns cookies), a private sysfs
 *                    of the target netns (fsopen/fsmount) to reach its identifier;
 *  CAP_SYS_PTRACE    /proc/PID/ns/net and /proc/PID/root of other users' processes;
 *  CAP_SYS_CHROOT    the machine-id worker joins a container's mount namespace and chroot()s
 *                    to its root (not needed by list/check, which read no container file).
 * No DAC override: the identifier file is owned by the host's root (the kernel's nfs_client
 * kobject has no per-namespace owner) and mode 0644, the state directory is ours, and
 * container files are read by the worker as the container's root.
 */
static int restrict_privileges(const char *cmd) {
        static const cap_value_t writer[] = { CAP_SYS_CHROOT, CAP_SYS_PTRACE, CAP_SYS_ADMIN };
        static const cap_value_t reader[] = { CAP_SYS_PTRACE, CAP_SYS_ADMIN };
        bool ro = strcmp(cmd, "list") == 0 || strcmp(cmd, "check") == 0;
        const cap_value_t *keep = ro ? reader : writer;
        size_t n = ro ? 2 : 3;
        uint64_t mask = 0, missing = 0;
        int r;

        for (size_t i = 0; i < n; i++)
                mask |= CAPBIT(keep[i]);
        r = caps_keep(mask, CAPS_BOUNDING, &missing);
        if (r < 0) {
                errorf("cannot drop capabilities: %s", strerror(-r));
                return r;
        }
        if (arg.verbose) {
                /* as libcap's cap_to_text() writes the set: "cap_a,cap_b=ep", by number */
                char text[256] = "";
                for (cap_value_t c = 0; c < 64; c++) {
                        if (!(mask & ~missing & CAPBIT(c)))
                                continue;
                        char *name = cap_to_name(c);
                        size_t l = strlen(text);
                        snprintf(text + l, sizeof(text) - l, "%s%s", l ? "," : "",
                                 name ? name : "?");
                        cap_free(name);
                }
                errorf("capabilities kept: %s%s", text[0] ? text : "none", text[0] ? "=ep" : "");
        }
        return 0;
}

/* Options anywhere (issue #32: one command-line convention with nsidctl's): the common
 * options written after the command (`nsid-uniquifier list --json`) are moved before it,
 * in order, so that main's parser, which stops at the command, takes them. A command's own
 * options stay where they are. */
static void hoist_common_options(int argc, char **argv, const struct option *opts) {
        int cmd = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (a[0] != '-' || a[1] == '\0') {
                        cmd = i;
                        break;
                }
                if (strcmp(a, "--") == 0)
                        return;
                /* a common option's separate value ("--state-dir DIR") */
                if (a[1] == '-' && !strchr(a, '='))
                        for (const struct option *o = opts; o->name; o++)
                                if (strcmp(a + 2, o->name) == 0 && o->has_arg == required_argument)
                                        i++;
        }
        if (cmd == 0)
                return;
        char **moved = calloc((size_t) argc, sizeof(char *)), **rest = calloc((size_t) argc, sizeof(char *));
        int nm = 0, nr = 0;
        if (!moved || !rest) {
                free(moved);
                free(rest);
                return;
        }
        for (int i = cmd + 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--") == 0) { /* the rest is the command's */
                        while (i < argc)
                                rest[nr++] = argv[i++];
                        break;
                }
                const struct option *hit = NULL;
                bool flag = strcmp(a, "-q") == 0 || strcmp(a, "-v") == 0;
                if (!flag && a[0] == '-' && a[1] == '-')
                        for (const struct option *o = opts; o->name; o++) {
                                size_t l = strlen(o->name);
                                if (strcmp(o->name, "help") == 0 || strcmp(o->name, "version") == 0)
                                        continue; /* the command's own help */
                                if (strncmp(a + 2, o->name, l) == 0 &&
                                    (a[2 + l] == '\0' || (a[2 + l] == '=' && o->has_arg))) {
                                        hit = o;
                                        break;
                                }
                        }
                if (!hit && !flag) {
                        rest[nr++] = argv[i];
                        continue;
                }
                moved[nm++] = argv[i];
                if (hit && hit->has_arg == required_argument && !strchr(a, '=') && i + 1 < argc)
                        moved[nm++] = argv[++i];
        }
        if (nm > 0) {
                char *command = argv[cmd];
                int k = cmd;
                for (int j = 0; j < nm; j++)
                        argv[k++] = moved[j];
                argv[k++] = command;
                for (int j = 0; j < nr; j++)
                        argv[k++] = rest[j];
        }
        free(moved);
        free(rest);
}

static int run(int argc, char **argv) {
        static const struct option opts[] = {
                { "app", required_argument, NULL, 'a' },
                { "state-dir", required_argument, NULL, 's' },
                { "config", required_argument, NULL, 'c' },
                { "registry", required_argument, NULL, 'r' },
                { "machine-id", required_argument, NULL, 'm' },
                { "timeout", required_argument, NULL, 't' },
                { "json", no_argument, NULL, 'j' },
                { "quiet", no_argument, NULL, 'q' },
                { "verbose", no_argument, NULL, 'v' },
                { "no-legend", no_argument, NULL, 'L' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *cmd;
        int o;

        (void) std_fds_ensure();
        hoist_common_options(argc, argv, opts);
        arg.state_dir = secure_getenv("NSID_STATE_DIR");
        arg.registry_path = secure_getenv("NSID_REGISTRY");
        arg.machine_id = secure_getenv("NSID_MACHINE_ID_FILE");

        while ((o = getopt_long(argc, argv, "+qvh", opts, NULL)) >= 0) {
                switch (o) {
                case 'a':
                        if (nsid_app_validate(optarg) < 0) {
                                errorf("invalid --app '%s': 1..%d of [a-z0-9._-]", optarg,
                                       NSID_APP_MAX);
                                return EXIT_USAGE;
                        }
                        arg.app = optarg;
                        break;
                case 's':
                        arg.state_dir = optarg;
                        break;
                case 'c':
                        arg.config_path = optarg;
                        break;
                case 'r':
                        arg.registry_path = optarg;
                        break;
                case 'm':
                        arg.machine_id = optarg;
                        break;
                case 't':
                        if (parse_timeout_arg(optarg, &arg.timeout_ms) < 0) {
                                errorf("invalid --timeout '%s' (milliseconds)", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'j':
                        arg.json = true;
                        break;
                case 'q':
                        arg.quiet = true;
                        break;
                case 'v':
                        arg.verbose = true;
                        break;
                case 'L':
                        arg.no_legend = true;
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case 'V':
                        printf("nsid-uniquifier %s\n", NSID_VERSION);
                        return EXIT_OK;
                default:
                        return EXIT_USAGE; /* (getopt named the option) */
                }
        }
        if (arg.state_dir && !*arg.state_dir)
                arg.state_dir = NULL;
        if (arg.registry_path && !*arg.registry_path)
                arg.registry_path = NULL;
        if (arg.machine_id && !*arg.machine_id)
                arg.machine_id = NULL;

        nsid_log_set_handler(log_handler, NULL);
        nsid_log_set_max_priority(arg.verbose ? LOG_DEBUG : LOG_WARNING);
        if (config_state_dir() < 0)
                return EXIT_FAIL;

        if (optind >= argc) {
                errorf("missing command");
                return EXIT_USAGE;
        }
        cmd = argv[optind];
        arg.command = cmd;
        argc -= optind;
        argv += optind;

        if (strcmp(cmd, "set") == 0 || strcmp(cmd, "oci-hook") == 0 ||
            strcmp(cmd, "lxc-hook") == 0 || strcmp(cmd, "reconcile") == 0 ||
            strcmp(cmd, "list") == 0 || strcmp(cmd, "check") == 0)
                if (restrict_privileges(cmd) < 0)
                        return EXIT_FAIL;

        if (strcmp(cmd, "set") == 0)
                return cmd_set(argc, argv);
        if (strcmp(cmd, "oci-hook") == 0)
                return cmd_oci_hook(argc, argv);
        if (strcmp(cmd, "lxc-hook") == 0)
                return cmd_lxc_hook(argc, argv);
        if (strcmp(cmd, "reconcile") == 0)
                return cmd_scan(argc, argv, MODE_RECONCILE);
        if (strcmp(cmd, "list") == 0)
                return cmd_scan(argc, argv, MODE_LIST);
        if (strcmp(cmd, "check") == 0)
                return cmd_scan(argc, argv, MODE_CHECK);
        if (strcmp(cmd, "help") == 0) {
                help();
                return EXIT_OK;
        }
        errorf("unknown command '%s' (commands: set, oci-hook, lxc-hook, reconcile, list, check)",
               cmd);
        return EXIT_USAGE;
}

/* Every usage error (exit 2) ends with the same pointer, whatever said what was wrong. */
int main(int argc, char **argv) {
        int r = run(argc, argv);
        if (r == EXIT_USAGE)
                fprintf(stderr, "Try '%s --help'.\n", program);
        return r;
}
