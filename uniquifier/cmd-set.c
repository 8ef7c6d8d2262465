/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-uniquifier: set: one namespace, by pid or path. */
#include "uniquifier.h"

int cmd_set(int argc, char **argv) {
        static const struct option opts[] = {
                { "pid", required_argument, NULL, 'p' },
                { "netns", required_argument, NULL, 'n' },
                { "key", required_argument, NULL, 'k' },
                { "container-id", required_argument, NULL, 'c' },
                { "name", required_argument, NULL, 'N' },
                { "force", no_argument, NULL, 'f' },
                { "dry-run", no_argument, NULL, 'd' },
                { "replace-key", no_argument, NULL, 'R' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *netns_path = NULL, *key = NULL, *name = NULL;
        nsid_key_source ks = NSID_KEY_AUTO;
        nsid_proc *proc = NULL;
        nsid_ns *netns = NULL;
        unsigned flags = 0;
        pid_t pid = 0;
        set_result res;
        nsid_ns_id nsid = {};
        ctx c;
        int o, r;

        optind = 1;
        while ((o = getopt_long(argc, argv, "+h", opts, NULL)) >= 0) {
                switch (o) {
                case 'p':
                        if (parse_pid_arg(optarg, &pid) < 0) {
                                errorf("invalid --pid '%s'", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'n':
                        netns_path = optarg;
                        break;
                case 'k':
                case 'c':
                        if (key) {
                                errorf("--key and --container-id are exclusive");
                                return EXIT_USAGE;
                        }
                        key = optarg;
                        ks = o == 'k' ? NSID_KEY_EXPLICIT : NSID_KEY_CONTAINER_ID;
                        if (nsid_key_validate(key) < 0) {
                                errorf("invalid key: 1..%d printable ASCII characters, no spaces",
                                       NSID_KEY_MAX);
                                return EXIT_USAGE;
                        }
                        break;
                case 'N':
                        name = optarg;
                        break;
                case 'f':
                        flags |= SET_FORCE;
                        break;
                case 'd':
                        flags |= SET_DRY_RUN;
                        break;
                case 'R':
                        flags |= SET_REPLACE_KEY;
                        break;
                case 'h':
                        command_help();
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                errorf("set: unexpected argument '%s'", argv[optind]);
                return EXIT_USAGE;
        }
        if (pid && netns_path) {
                errorf("--pid and --netns are exclusive");
                return EXIT_USAGE;
        }
        if (!name && ks == NSID_KEY_CONTAINER_ID)
                name = key;

        if (pid) {
                r = nsid_proc_open(pid, &proc);
                if (r >= 0)
                        r = nsid_proc_open_ns(proc, NSID_NS_NET, &netns);
                if (r < 0) {
                        errorf("pid %d: cannot open its network namespace: %s", (int) pid,
                               strerror(-r));
                        nsid_proc_unref(proc);
                        return EXIT_FAIL;
                }
        } else {
                const char *path = netns_path ? netns_path : "/proc/self/ns/net";
                r = nsid_ns_open_path(path, NSID_NS_NET, &netns);
                if (r < 0) {
                        errorf("%s: not a network namespace: %s", path, strerror(-r));
                        return EXIT_FAIL;
                }
                if (!netns_path) {
                        r = nsid_proc_open_self(&proc);
                        if (r < 0)
                                proc = NULL;
                }
        }
        (void) nsid_ns_get_id(netns, &nsid);

        r = ctx_init(&c, true, (flags & SET_DRY_RUN) != 0);
        if (r < 0) {
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return EXIT_FAIL;
        }
        set_one(&c, netns, proc, key, ks, name, flags, -1, &res);
        print_set_result(&nsid, pid, &res);
        ctx_done(&c);
        nsid_ns_unref(netns);
        nsid_proc_unref(proc);
        return exit_for(&res, false);
}
