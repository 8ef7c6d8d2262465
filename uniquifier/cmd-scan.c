/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-uniquifier: reconcile, list, check: every network namespace of the host. */
#include "pool.h"
#include "uniquifier.h"

/* ---- reconcile / list / check ---- */

typedef struct row {
        nsid_netns_info *info;
        char identifier[NSID_NFS_IDENTIFIER_MAX + 2];
        bool have_identifier; /* read ok (maybe "" = unset) */
        bool no_nfs_client;
        const char *source;   /* from the registry, or "-" */
        char state[300];
        bool problem;
        /* work for the parallel phase */
        nsid_ns *netns;
        nsid_proc *proc;
        enum { JOB_NONE, JOB_GET, JOB_SET } job_kind;
        set_job job;
        set_result res;
        int get_r;
        char *get_ident;
        bool want_set; /* reconcile: this netns is to be set */
        bool need_mid; /* no key recorded: its /etc/machine-id is read first (in parallel) */
        int mid_r;
        char mid_hex[NSID_IDENTITY_STRING_SIZE];
} row;

/* The parallel phases: each thread takes the next row and runs its worker. */
enum { PHASE_MACHINE_ID, PHASE_APPLY };

typedef struct phase_job {
        row *rows;
        int phase;
} phase_job;

static void phase_row(size_t i, void *userdata) {
        phase_job *j = userdata;
        row *w = &j->rows[i];

        if (j->phase == PHASE_MACHINE_ID) {
                /* Bounded (a worker, killed after --timeout): a container whose /etc never
                 * answers costs its own row the bound, not the others. The result (or the
                 * failure) is handed to set_prepare. */
                static const char hex[] = "0123456789abcdef";
                uint8_t mid[NSID_ID128_SIZE];
                if (w->need_mid)
                        w->mid_r = nsid_proc_read_machine_id(w->proc, arg.timeout_ms, mid);
                if (w->need_mid && w->mid_r == 0) {
                        for (size_t k = 0; k < NSID_ID128_SIZE; k++) {
                                w->mid_hex[2 * k] = hex[mid[k] >> 4];
                                w->mid_hex[2 * k + 1] = hex[mid[k] & 15];
                        }
                        w->mid_hex[32] = '\0';
                }
                explicit_bzero(mid, sizeof(mid));
        } else if (w->job_kind == JOB_SET)
                set_apply(&w->job);
        else if (w->job_kind == JOB_GET)
                w->get_r = nsid_nfs_client_get_identifier(w->netns, arg.timeout_ms, &w->get_ident);
}

/* Up to 4 workers per CPU in flight (they mostly wait on the kernel), at most 32. */
static void pool_run(row *rows, size_t n, int phase) {
        phase_job j = { .rows = rows, .phase = phase };

        pool_for_each(n, 32, phase_row, &j);
}

/* Liveness from this scan: a binding from another boot, or for an inode no live netns has, is
 * gone. (A reused inode is caught by the netns cookie when that netns is next bound.) */
typedef struct scan_view {
        const nsid_netns_info *v;
        size_t n;
        char boot_id[37];
} scan_view;

static int scan_live(const nsid_registry_entry *e, void *userdata) {
        const scan_view *sv = userdata;

        if (!e->boot_id || strcmp(e->boot_id, sv->boot_id) != 0)
                return 0;
        for (size_t i = 0; i < sv->n; i++)
                if (sv->v[i].id.dev == e->netns.dev && sv->v[i].id.ino == e->netns.ino)
                        return 1;
        return 0;
}

static const char *registry_source_of(nsid_registry *reg, nsid_ns *netns, const char *identifier,
                                      nsid_key_source *ret) {
        nsid_registry_entry e = {};
        const char *s = NULL;

        if (!reg || !identifier[0])
                return NULL;
        if (lookup_binding(reg, netns, &e) < 0)
                return NULL;
        if (strcmp(e.identity, identifier) == 0) {
                s = nsid_key_source_to_string(e.source);
                *ret = e.source;
        }
        nsid_registry_entry_done(&e);
        return s;
}

/* A container chooses its processes' comm (PR_SET_NAME) and, with a delegated cgroup, names in
 * its cgroup path: shown in the table with control and non-ASCII bytes as '?', so they cannot
 * move the cursor or rewrite an admin's terminal. (JSON output escapes them itself.) */
static const char *shown(const char *s, char *buf, size_t size) {
        size_t i = 0;

        if (!s)
                return "-";
        for (; s[i] && i + 1 < size; i++)
                buf[i] = (unsigned char) s[i] < 0x20 || (unsigned char) s[i] > 0x7e ? '?' : s[i];
        buf[i] = '\0';
        return buf;
}

/* The one vocabulary of states (state_words, nsid-uniquifier(8)): a table's STATE is one of
 * its words, then what qualifies it (" (host)", ": why", "; note"); the word alone. */
static const char *state_token(const char *text) {
        static const char *const words[] = { "set", "would-set", "already-set", "too-late",
                                             "no-nfs-client", "unset", "failed", "gone",
                                             "refused" };
        size_t n = strcspn(text, " :;,(");
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
                if (strlen(words[i]) == n && strncmp(text, words[i], n) == 0)
                        return words[i];
        return text;
}

static void print_table(row *rows, size_t n) {
        if (arg.json) {
                json_object *a = json_object_new_array();
                for (size_t i = 0; i < n; i++) {
                        row *w = &rows[i];
                        json_object *o = json_object_new_object();
                        json_object_object_add(o, "netns", json_object_new_uint64(w->info->id.ino));
                        json_object_object_add(o, "netns_dev",
                                               json_object_new_uint64(w->info->id.dev));
                        json_object_object_add(o, "pid", json_object_new_int(w->info->pid));
                        json_object_object_add(o, "comm", w->info->comm
                                                                  ? json_object_new_string(w->info->comm)
                                                                  : NULL);
                        json_object_object_add(o, "cgroup",
                                               w->info->cgroup
                                                       ? json_object_new_string(w->info->cgroup)
                                                       : NULL);
                        json_object_object_add(o, "path", w->info->path
                                                                  ? json_object_new_string(w->info->path)
                                                                  : NULL);
                        json_object_object_add(o, "host", json_object_new_boolean(w->info->initial));
                        json_object_object_add(o, "nfs_mounted",
                                               json_object_new_boolean(w->info->nfs_mounted));
                        json_object_object_add(o, "identifier",
                                               w->have_identifier && w->identifier[0]
                                                       ? json_object_new_string(w->identifier)
                                                       : NULL);
                        json_object_object_add(o, "source",
                                               w->source ? json_object_new_string(w->source) : NULL);
                        /* the same words as `set --json` (state_words), the table's phrase
                         * beside them */
                        json_object_object_add(o, "state",
                                               json_object_new_string(state_token(w->state)));
                        json_object_object_add(o, "state_text", json_object_new_string(w->state));
                        json_object_object_add(o, "problem", json_object_new_boolean(w->problem));
                        json_object_array_add(a, o);
                }
                /* one document: what produced it, and the namespaces */
                json_object *doc = json_object_new_object();
                json_object_object_add(doc, "nsid", json_envelope_new(program, arg.command));
                json_object_object_add(doc, "namespaces", a);
                puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                                 JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(doc);
                return;
        }
        if (!arg.no_legend)
                printf("%-11s %-8s %-16s %-32s %-32s %-12s %s\n", "NETNS", "PID", "COMM", "CGROUP",
                       "IDENTIFIER", "SOURCE", "STATE");
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];
                char pid[16], comm[64], cgb[4096];
                const char *cg = shown(w->info->cgroup ? w->info->cgroup : w->info->path,
                                       cgb, sizeof(cgb));
                snprintf(pid, sizeof(pid), "%d", (int) w->info->pid);
                printf("%-11" PRIu64 " %-8s %-16s %-32s %-32s %-12s %s\n", w->info->id.ino,
                       w->info->pid ? pid : "-", shown(w->info->comm, comm, sizeof(comm)), cg,
                       !w->have_identifier   ? "?"
                       : w->identifier[0] ? w->identifier
                                          : "(unset)", /* as nsidctl status says it */
                       w->source ? w->source : "-", w->state);
        }
}


static int scan_once(int mode, bool dry_run);

/*
 * One reconcile at a time, and none lost: udev may start one per new netns. A reconcile that
 * finds another running leaves a "pending" mark and exits 0; the running one repeats its pass
 * while the mark is there, and checks it once more after letting go of the lock.
 */
static int reconcile_coalesced(void) {
        char lockp[4096], pendp[4096];
        const char *dir = arg.state_dir ? arg.state_dir : NSID_STATE_DIR;
        int fd, r = EXIT_OK;

        snprintf(lockp, sizeof(lockp), "%s/reconcile.lock", dir);
        snprintf(pendp, sizeof(pendp), "%s/reconcile.pending", dir);
        (void) mkdir(dir, 0700);
        fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                errorf("warning: %s: %s; reconciling without coordination", lockp,
                       strerror(errno));
                return scan_once(MODE_RECONCILE, false);
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int p = open(pendp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (p >= 0)
                        close(p);
                if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                        if (!arg.quiet)
                                errorf("another reconcile is running; it will make one more "
                                       "pass for this request");
                        close(fd);
                        return EXIT_OK;
                }
        }
        for (;;) {
                (void) unlink(pendp);
                r = scan_once(MODE_RECONCILE, false);
                if (access(pendp, F_OK) == 0)
                        continue;
                (void) flock(fd, LOCK_UN);
                if (access(pendp, F_OK) == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
                        continue;
                break;
        }
        close(fd);
        return r;
}

int cmd_scan(int argc, char **argv, int mode) {
        static const struct option opts[] = {
                { "include-host", no_argument, NULL, 'H' },
                { "dry-run", no_argument, NULL, 'd' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        bool dry_run = false;
        int o;

        optind = 1;
        while ((o = getopt_long(argc, argv, "+h", opts, NULL)) >= 0) {
                switch (o) {
                case 'H':
                        arg.include_host = true;
                        break;
                case 'd':
                        dry_run = true;
                        break;
                case 'j':
                        arg.json = true;
                        break;
                case 'h':
                        command_help();
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                errorf("unexpected argument '%s'", argv[optind]);
                return EXIT_USAGE;
        }
        if (mode == MODE_RECONCILE && !dry_run)
                return reconcile_coalesced();
        return scan_once(mode, dry_run);
}

static int scan_once(int mode, bool dry_run) {
        nsid_netns_info *v = NULL;
        row *rows = NULL;
        size_t n = 0;
        bool failed = false, problems = false, need_mid = false;
        ctx c;
        int r;

        r = ctx_init(&c, mode == MODE_RECONCILE, mode != MODE_RECONCILE || dry_run);
        if (r < 0)
                return EXIT_FAIL;
        r = nsid_netns_scan(&v, &n);
        if (r < 0) {
                errorf("cannot enumerate network namespaces: %s", strerror(-r));
                ctx_done(&c);
                return EXIT_FAIL;
        }
        rows = calloc(n ? n : 1, sizeof(*rows));
        if (!rows) {
                errorf("out of memory");
                nsid_netns_info_free(v, n);
                ctx_done(&c);
                return EXIT_FAIL;
        }

        /* 1. open every netns; which ones have no key recorded yet */
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];
                nsid_registry_entry e = {};

                w->info = &v[i];
                r = nsid_netns_info_open(&v[i], &w->netns, &w->proc);
                if (r < 0) {
                        snprintf(w->state, sizeof(w->state), "gone (%s)", strerror(-r));
                        continue;
                }
                if (mode == MODE_RECONCILE && (!v[i].initial || arg.include_host)) {
                        w->want_set = true;
                        w->need_mid = w->proc && lookup_binding(c.reg, w->netns, &e) < 0;
                        if (w->need_mid)
                                need_mid = true;
                        nsid_registry_entry_done(&e);
                } else
                        w->job_kind = JOB_GET;
        }

        /* 2. their machine-ids, many at a time, each bounded */
        if (need_mid)
                pool_run(rows, n, PHASE_MACHINE_ID);

        /* 3. pick and record identities (sequential: the registry) */
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];

                if (w->want_set) {
                        if (set_prepare(&c, w->netns, w->proc, NULL, NSID_KEY_AUTO, NULL,
                                        dry_run ? SET_DRY_RUN : 0, v[i].nfs_mounted,
                                        w->need_mid && w->mid_r < 0 ? w->mid_r : 0,
                                        w->need_mid && w->mid_r == 0 ? w->mid_hex : NULL,
                                        &w->job, &w->res))
                                w->job_kind = JOB_SET;
                        else {
                                snprintf(w->state, sizeof(w->state), "failed: %s", w->res.why);
                                failed = true;
                        }
                }
        }

        /* 4. the identifier workers, many at a time */
        pool_run(rows, n, PHASE_APPLY);

        /* 5. results (sequential: the registry) */
        for (size_t i = 0; i < n; i++) {
                row *w = &rows[i];
                nsid_key_source src;

                if (w->job_kind == JOB_SET) {
                        set_result *res = &w->res;

                        set_finish(&c, &w->job, res);
                        w->source = res->source != NSID_KEY_AUTO
                                            ? nsid_key_source_to_string(res->source)
                                            : NULL;
                        w->have_identifier = true;
                        snprintf(w->identifier, sizeof(w->identifier), "%s", res->identity);
                        switch (res->state) {
                        case ST_SET_NOW:
                                snprintf(w->state, sizeof(w->state), "set");
                                break;
                        case ST_WOULD_SET:
                                snprintf(w->state, sizeof(w->state), "would-set");
                                w->identifier[0] = '\0';
                                break;
                        case ST_ALREADY_SET:
                                snprintf(w->state, sizeof(w->state), "already-set");
                                break;
                        case ST_TOO_LATE:
                                snprintf(w->state, sizeof(w->state),
                                         "too-late: set, but NFS is already mounted");
                                break;
                        case ST_NOT_LOADED:
                                snprintf(w->state, sizeof(w->state),
                                         "no-nfs-client (module not loaded); recorded");
                                w->have_identifier = false;
                                break;
                        case ST_REFUSED:
                                snprintf(w->state, sizeof(w->state), "already-set (not by nsid)");
                                snprintf(w->identifier, sizeof(w->identifier), "%s",
                                         res->previous);
                                w->source = NULL;
                                break;
                        default:
                                snprintf(w->state, sizeof(w->state), "failed: %s", res->why);
                                w->have_identifier = false;
                                failed = true;
                        }
                        if (res->mid_error == -ETIMEDOUT && res->source == NSID_KEY_RANDOM &&
                            res->state != ST_FAILED) {
                                char note[96];
                                snprintf(note, sizeof(note),
                                         "; /etc/machine-id not read within %d ms: random key",
                                         arg.timeout_ms);
                                strncat(w->state, note,
                                        sizeof(w->state) - strlen(w->state) - 1);
                                if (!arg.quiet)
                                        errorf("netns %" PRIu64 " (pid %d): %s", w->info->id.ino,
                                               (int) w->info->pid, res->why);
                        }
                } else if (w->job_kind == JOB_GET) {
                        if (w->get_r == -ENOENT) {
                                w->no_nfs_client = true;
                                w->have_identifier = false;
                        } else if (w->get_r < 0) {
                                snprintf(w->state, sizeof(w->state), "failed: cannot read: %s",
                                         strerror(-w->get_r));
                                failed = true;
                                goto next;
                        } else {
                                w->have_identifier = true;
                                snprintf(w->identifier, sizeof(w->identifier), "%s",
                                         w->get_ident);
                        }
                        w->source = w->have_identifier ? registry_source_of(c.reg, w->netns,
                                                                            w->identifier, &src)
                                                       : NULL;
                        if (w->no_nfs_client)
                                snprintf(w->state, sizeof(w->state), "no-nfs-client");
                        else if (!w->identifier[0] && w->info->nfs_mounted) {
                                snprintf(w->state, sizeof(w->state), "unset, NFS mounted");
                                w->problem = !w->info->initial;
                        } else if (!w->identifier[0])
                                snprintf(w->state, sizeof(w->state),
                                         w->info->initial ? "unset (host)" : "unset");
                        else
                                snprintf(w->state, sizeof(w->state),
                                         w->info->initial ? "already-set (host)"
                                                          : "already-set");
                }
        next:
                w->get_ident = mfree(w->get_ident);
                w->netns = nsid_ns_unref(w->netns);
                w->proc = nsid_proc_unref(w->proc);
        }

        /* forget the bindings of namespaces that are gone (their random keys with them) */
        if (mode == MODE_RECONCILE && !dry_run && c.reg) {
                scan_view sv = { .v = v, .n = n };
                if (nsid_boot_id(sv.boot_id) >= 0) {
                        r = nsid_registry_prune(c.reg, scan_live, &sv);
                        if (r > 0 && arg.verbose)
                                errorf("forgot %d binding(s) of network namespaces that are gone", r);
                }
        }

        /* duplicates: two live netns presenting the same identifier */
        for (size_t i = 0; i < n; i++) {
                if (!rows[i].have_identifier || !rows[i].identifier[0])
                        continue;
                for (size_t j = i + 1; j < n; j++)
                        if (rows[j].have_identifier &&
                            strcmp(rows[i].identifier, rows[j].identifier) == 0) {
                                char note[80];
                                rows[i].problem = rows[j].problem = true;
                                snprintf(note, sizeof(note), "; DUPLICATE of netns %" PRIu64,
                                         rows[j].info->id.ino);
                                strncat(rows[i].state, note,
                                        sizeof(rows[i].state) - strlen(rows[i].state) - 1);
                                snprintf(note, sizeof(note), "; DUPLICATE of netns %" PRIu64,
                                         rows[i].info->id.ino);
                                strncat(rows[j].state, note,
                                        sizeof(rows[j].state) - strlen(rows[j].state) - 1);
                        }
        }

        print_table(rows, n);
        for (size_t i = 0; i < n; i++)
                if (rows[i].problem) {
                        problems = true;
                        if (mode == MODE_CHECK)
                                errorf("netns %" PRIu64 " (pid %d%s%s): %s", rows[i].info->id.ino,
                                       (int) rows[i].info->pid,
                                       rows[i].info->path ? ", " : "",
                                       rows[i].info->path ? rows[i].info->path : "",
                                       rows[i].state);
                }

        free(rows);
        nsid_netns_info_free(v, n);
        ctx_done(&c);
        if (mode == MODE_CHECK && problems)
                return EXIT_PROBLEMS;
        return failed ? EXIT_FAIL : EXIT_OK;
}
