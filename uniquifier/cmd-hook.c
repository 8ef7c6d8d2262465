/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-uniquifier: oci-hook and lxc-hook: a container runtime hands over its container. */
#include "uniquifier.h"

/* Set the netns of a container process handed to us by a runtime hook. */
static int hook_set(pid_t pid, const char *key, nsid_key_source ks, const char *name,
                    const char *what) {
        nsid_proc *proc = NULL;
        nsid_ns *netns = NULL;
        nsid_ns_id nsid = {}, init;
        set_result res;
        set_job job;
        ctx c;
        int r;

        r = nsid_proc_open(pid, &proc);
        if (r >= 0)
                r = nsid_proc_open_ns(proc, NSID_NS_NET, &netns);
        if (r < 0) {
                errorf("%s %s: pid %d: cannot open its network namespace: %s", what, name,
                       (int) pid, strerror(-r));
                nsid_proc_unref(proc);
                return EXIT_FAIL;
        }
        (void) nsid_ns_get_id(netns, &nsid);
        if (nsid_netns_initial_id(&init) >= 0 && init.dev == nsid.dev && init.ino == nsid.ino) {
                if (!arg.quiet)
                        notef(LOG_NOTICE, "%s %s: shares the host network namespace; left alone",
                              what, name);
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return EXIT_OK;
        }
        r = ctx_init(&c, true, false);
        if (r < 0) {
                nsid_ns_unref(netns);
                nsid_proc_unref(proc);
                return EXIT_FAIL;
        }
        if (set_prepare(&c, netns, proc, key, ks, name, 0, -1, 0, NULL, &job, &res)) {
                /* The given key lost to the one recorded for this netns. A pod's second
                 * container (its own process in the pod's netns) is fine: it shares the pod's
                 * identity. But when the pid is the very process recorded for the other
                 * container's key, the runtime handed us another container's pid: this
                 * container's own netns would get nothing and it would start sharing the
                 * host's NFS identity. Refuse, so the runtime does not start it. */
                nsid_registry_entry e = {};
                if ((res.id_flags & NSID_IDENTITY_KEPT_EXISTING) &&
                    lookup_binding(c.reg, netns, &e) >= 0 && e.pid == pid && e.key && key &&
                    strcmp(e.key, key) != 0) {
                        res.state = ST_FAILED;
                        res.error = -EADDRINUSE;
                        res.identity[0] = '\0';
                        res.source = NSID_KEY_AUTO;
                        snprintf(res.why, sizeof(res.why),
                                 "pid %d is the process of container %s, recorded when its %s "
                                 "key was bound to this network namespace: the runtime handed "
                                 "this hook another container's pid",
                                 (int) pid, e.name ? e.name : "(unnamed)",
                                 nsid_key_source_to_string(e.source) ?: "recorded");
                        job.id = nsid_identity_unref(job.id);
                } else {
                        set_apply(&job);
                        set_finish(&c, &job, &res);
                }
                nsid_registry_entry_done(&e);
        }
        print_set_result(&nsid, pid, &res);
        if (res.state == ST_FAILED)
                errorf("%s %s: failed; the container must not start with a shared NFS identity",
                       what, name);
        else if (arg.syslog && res.identity[0]) {
                /* what a hook's stdout would have said, for the log */
                char line[512];
                snprintf(line, sizeof(line), "%s %s: netns %" PRIu64 " (pid %d): %s %s %s", what,
                         name, nsid.ino, (int) pid, res.identity,
                         nsid_key_source_to_string(res.source), state_words[res.state]);
                to_syslog(res.state == ST_TOO_LATE || res.state == ST_REFUSED ? LOG_WARNING
                                                                              : LOG_INFO,
                          line);
        }
        ctx_done(&c);
        nsid_ns_unref(netns);
        nsid_proc_unref(proc);
        return exit_for(&res, true);
}

/* Whether we run in a user namespace other than the initial one: a rootless engine (Podman
 * run by a user) runs its hooks in the user namespace it made. NFS cannot be mounted from
 * there whatever its ids map to: the kernel asks for CAP_SYS_ADMIN in the initial user
 * namespace, whose inode number is reserved. 1 yes, 0 no, negative errno. */
static int in_child_userns(void) {
        struct stat st;

        if (stat("/proc/self/ns/user", &st) < 0)
                return -errno;
        return (uint64_t) st.st_ino != nsid_ns_type_initial_ino(NSID_NS_USER);
}

int cmd_oci_hook(int argc, char **argv) {
        char *data = NULL;
        size_t size = 0;
        const char *err = NULL;
        oci_state st = {};
        int r;

        bool use_annotation = true;

        arg.syslog = true;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        command_help();
                        return EXIT_OK;
                } else if (strcmp(argv[i], "--no-annotation-key") == 0)
                        use_annotation = false;
                else {
                        errorf("oci-hook: unknown argument '%s'", argv[i]);
                        return EXIT_USAGE;
                }
        }
        r = nsid_fd_read_timeout(STDIN_FILENO, OCI_STATE_MAX,
                                 arg.timeout_ms > 0 ? (unsigned) arg.timeout_ms : 0, &data, &size);
        if (r < 0) {
                errorf("oci-hook: reading the state from stdin: %s",
                       r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
                return EXIT_FAIL;
        }
        r = oci_state_parse(data, size, &st, &err);
        free(data);
        if (r < 0) {
                errorf("oci-hook: invalid OCI state on stdin: %s", err);
                return EXIT_FAIL;
        }
        /* A rootless engine: its containers' network namespaces belong to its user namespace,
         * from which the kernel refuses NFS mounts (nfs is not FS_USERNS_MOUNT), and from
         * where no identifier can be written or recorded. Failing would stop every rootless
         * container from starting; there is nothing to protect. */
        if (in_child_userns() == 1) {
                if (!arg.quiet)
                        notef(LOG_NOTICE, "oci-hook: container %s: run from a user namespace "
                              "(rootless engine), where NFS cannot be mounted; left alone",
                              st.id);
                oci_state_done(&st);
                return EXIT_OK;
        }
        if (!use_annotation && (st.nsid_key || st.nsid_app)) {
                if (!arg.quiet)
                        notef(LOG_NOTICE, "oci-hook: container %s: org.nsid.* annotations "
                              "ignored (--no-annotation-key)",
                              st.id);
                st.nsid_key = mfree(st.nsid_key);
                st.nsid_app = mfree(st.nsid_app);
        }
        if (st.nsid_app) {
                if (nsid_app_validate(st.nsid_app) < 0) {
                        errorf("oci-hook: container %s: invalid annotation org.nsid.app", st.id);
                        oci_state_done(&st);
                        return EXIT_FAIL;
                }
                arg.app = st.nsid_app;
        }
        r = hook_set(st.pid, st.nsid_key ? st.nsid_key : st.id,
                     st.nsid_key ? NSID_KEY_EXPLICIT : NSID_KEY_CONTAINER_ID, st.id, "container");
        arg.app = NSID_APP_NFS4;
        oci_state_done(&st);
        return r;
}

int cmd_lxc_hook(int argc, char **argv) {
        const char *spid = getenv("LXC_PID"), *name = getenv("LXC_NAME");
        bool name_key = true;
        pid_t pid;

        arg.syslog = true;
        /* Options come first: they are the ones written after the hook's path in the
         * container's config (LXC runs the line through a shell). LXC then appends "NAME lxc
         * start-host" (lxc.hook.version 0) or nothing (1); the environment is what counts. */
        for (int i = 1; i < argc && argv[i][0] == '-'; i++) {
                if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        command_help();
                        return EXIT_OK;
                } else if (strcmp(argv[i], "--no-name-key") == 0)
                        name_key = false;
                else {
                        errorf("lxc-hook: unknown option '%s'", argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (!name || nsid_key_validate(name) < 0) {
                errorf("lxc-hook: LXC_NAME missing or invalid (run as lxc.hook.start-host)");
                return EXIT_FAIL;
        }
        if (parse_pid_arg(spid, &pid) < 0 || pid <= 1) {
                errorf("lxc-hook: container %s: LXC_PID missing or invalid", name);
                return EXIT_FAIL;
        }
        /* --no-name-key: the name is whoever created the container's choice, as an
         * annotation is; ignored, the key is the one `set` picks without --key (the
         * container's own /etc/machine-id, else random for the namespace's lifetime). */
        if (!name_key)
                return hook_set(pid, NULL, NSID_KEY_AUTO, name, "container");
        return hook_set(pid, name, NSID_KEY_CONTAINER_ID, name, "container");
}
