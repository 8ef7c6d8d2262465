/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The requester's own answer to an id_resolver lookup (requester-context): its files, read
 * by a worker in its mount namespace and parsed after every privilege is dropped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include <nfsidmap.h>
#include <nsid/file.h>
#include <nsid/nfsconf.h>
#include <nsid/resolv.h>
#include <nsid/userdb.h>
#include <nsid/worker.h>

#include "idmap-lookup.h"
#include "idmap-reply.h"
#include "nsid-idmap.h"
#define LAZY_WANT_NFSIDMAP
#include "lazylib.h"
#include "macro.h"

#define NOBODY_ID 65534u

DEFINE_UNREF_CLEANUP(nsid_userdb, nsid_userdb_unref)


/* The requester's own answer: its /etc/passwd, /etc/group and /etc/idmapd.conf, read never
 * through NSS, in a worker (libnsid's namespace worker): a forked child that joins the requester's mount
 * namespace and root (by its pidfd: a recycled pid cannot be joined) and reads with openat2
 * RESOLVE_IN_ROOT (symlinks clamped to that root, FIFOs/devices/procfs refused, sizes
 * capped) as the host's root, then drops everything before it parses a byte of them
 * (NSID_WORKER_DROP_IN_FN: an empty read-only root, the requester's user namespace, its
 * nobody, no capability, no_new_privs). The worker has a hard time limit and is killed beyond it, so a container whose
 * files sit on a mount that never answers (hung FUSE or NFS) cannot hold the upcall: this
 * process never touches the container's files itself.
 *
 * The worker's reply, lines of "key=value", is parsed as untrusted input:
 *   id=N | name=NAME     the answer
 *   nobody=NAME          the owner was unknown there and mapped to that nobody user/group
 *   baddomain=1          the container's Domain was invalid (the host's was used)
 *   err=ERRNO stage=load|lookup   no answer */
typedef struct rq_job {
        const nsid_idmap_keydesc *kd;
        const char *host_domain;
} rq_job;

/* What the parsing step runs as, for the debug log (and the tests): uid, gid, effective and
 * permitted capabilities, how many are left in the bounding set, no_new_privs, and what
 * listing its root and finding /etc give (errno). System calls only: no /proc here. */
static void report_creds(int fd) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        unsigned bnd = 0;
        struct stat st;

        if (syscall(SYS_capget, &h, d) < 0)
                d[0].effective = d[0].permitted = UINT32_MAX;
        for (unsigned long cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
                bnd += prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0;
        DIR *dir = opendir("/");
        int root_err = dir ? 0 : errno;
        if (dir)
                closedir(dir);
        dprintf(fd, "creds=uid %u gid %u eff %x%08x prm %x%08x bnd %u nnp %d root %d etc %d\n",
                (unsigned) getuid(), (unsigned) getgid(), d[1].effective, d[0].effective,
                d[1].permitted, d[0].permitted, bnd, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
                root_err, stat("/etc", &st) < 0 ? errno : 0);
}

static int requester_worker(int fd, void *userdata) {
        const rq_job *job = userdata;
        const nsid_idmap_keydesc *kd = job->kd;
        _cleanup_(nsid_userdb_unrefp) nsid_userdb *db = NULL;
        _cleanup_free_ char *conf = NULL, *domain = NULL, *nobody = NULL, *passwd = NULL,
                            *group = NULL;
        size_t conf_size = 0, passwd_size = 0, group_size = 0;
        bool baddomain = false;
        int rootfd, r, cr;

        /* the worker is chroot()ed to the requester's root in its mount namespace: the raw
         * bytes are read here, with privilege, and nothing of them is parsed before the
         * drop below */
        rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0) {
                dprintf(fd, "err=%d\nstage=load\n", errno);
                return 0;
        }
        r = nsid_file_read_in_root(rootfd, "/etc/passwd", NSID_USERDB_FILE_MAX, &passwd,
                                   &passwd_size, NULL);
        if (r >= 0) {
                r = nsid_file_read_in_root(rootfd, "/etc/group", NSID_USERDB_FILE_MAX, &group,
                                           &group_size, NULL);
                if (r == -ENOENT) /* (as nsid_userdb_load_root(): no group file, no groups) */
                        r = 0;
        }
        cr = nsid_file_read_in_root(rootfd, "/etc/idmapd.conf", 1024 * 1024, &conf, &conf_size,
                                    NULL);
        close(rootfd);
        /* An empty root, nobody, no capability (nsid/worker.h), whatever was read: then
         * parse (a worker that replies without having dropped gives no answer, -EPROTO). */
        int d = nsid_worker_drop_privileges();
        if (r >= 0)
                r = d;
        if (r < 0) {
                dprintf(fd, "err=%d\nstage=load\n", -r);
                return 0;
        }
        r = nsid_userdb_parse(passwd, passwd_size, group, group_size, &db);
        report_creds(fd);
        if (r < 0) {
                dprintf(fd, "err=%d\nstage=load\n", -r);
                return 0;
        }
        if (cr >= 0 && nsid_nfsconf_get(conf, conf_size, "General", "Domain", &domain) >= 0 &&
            !nsid_dns_name_valid(domain, strlen(domain))) {
                baddomain = true;
                free(domain);
                domain = NULL;
        }
        const char *dom = domain ? domain : job->host_domain;
        if (baddomain)
                dprintf(fd, "baddomain=1\n");

        switch (kd->kind) {
        case NSID_IDMAP_KEY_UID:
        case NSID_IDMAP_KEY_GID: {
                bool user = kd->kind == NSID_IDMAP_KEY_UID;
                const char *at = strrchr(kd->name, '@');
                char local[NAME_BUF];
                uint32_t id = NOBODY_ID;
                bool found = false;

                if (at && strcasecmp(at + 1, dom) == 0) {
                        memcpy(local, kd->name, (size_t) (at - kd->name));
                        local[at - kd->name] = '\0';
                        found = (user ? nsid_userdb_user_by_name(db, local, &id, NULL)
                                      : nsid_userdb_group_by_name(db, local, &id)) >= 0;
                }
                if (!found) {
                        /* Like libnfsidmap: unknown owners map to the nobody user/group. */
                        if (conf && nsid_nfsconf_get(conf, conf_size, "Mapping",
                                                  user ? "Nobody-User" : "Nobody-Group",
                                                  &nobody) < 0)
                                nobody = NULL;
                        const char *nb = nobody ? nobody : user ? "nobody" : "nogroup";
                        if ((user ? nsid_userdb_user_by_name(db, nb, &id, NULL)
                                  : nsid_userdb_group_by_name(db, nb, &id)) < 0)
                                id = NOBODY_ID;
                        dprintf(fd, "nobody=%.200s\n", nb);
                }
                dprintf(fd, "id=%u\n", id);
                break;
        }
        case NSID_IDMAP_KEY_USER:
        case NSID_IDMAP_KEY_GROUP: {
                const char *n = NULL;
                r = kd->kind == NSID_IDMAP_KEY_USER ? nsid_userdb_user_by_uid(db, kd->id, &n, NULL)
                                                    : nsid_userdb_group_by_gid(db, kd->id, &n);
                if (r < 0)
                        dprintf(fd, "err=%d\nstage=lookup\n", -r);
                else if (strlen(n) + 1 + strlen(dom) >= NAME_BUF)
                        dprintf(fd, "err=%d\nstage=lookup\n", ENAMETOOLONG);
                else
                        dprintf(fd, "name=%s@%s\n", n, dom);
                break;
        }
        default:
                dprintf(fd, "err=%d\nstage=lookup\n", EINVAL);
                break;
        }
        return 0;
}

/* The worker's time limit: half of --max-time (the watchdog then still has time to act),
 * at most 5 s, at least 200 ms. */
static int requester_worker_timeout_ms(const idmap_opts *o) {
        unsigned ms = o->max_seconds * 500u;
        return (int) (ms > 5000u ? 5000u : ms < 200u ? 200u : ms);
}

int idmap_resolve_requester(const idmap_opts *o, requester *rq, const nsid_idmap_keydesc *kd,
                            answer *ret) {
        char hd[NFS4_MAX_DOMAIN_LEN];
        char *reply = NULL;
        size_t reply_size = 0;
        idmap_reply rp;
        int r;

        /* the host's domain, for a container without a valid one of its own */
        r = idmap_nfsidmap_init(o);
        if (r >= 0)
                r = nfs4_get_default_domain(NULL, hd, sizeof(hd));
        if (r != 0)
                return r < 0 ? r : -EINVAL;

        rq_job job = { .kd = kd, .host_domain = hd };
        r = requester_proc(rq);
        if (r < 0)
                return r;
        r = nsid_worker_run(rq->proc, NSID_NS_MASK(NSID_NS_MNT), NSID_WORKER_DROP_IN_FN,
                            requester_worker_timeout_ms(o), requester_worker, &job, 4096, &reply,
                            &reply_size);
        if (r < 0) {
                if (r == -ETIMEDOUT)
                        logmsg(LOG_WARNING, "requester pid %d: reading its files took longer "
                               "than %d ms (a mount that does not answer?); worker killed",
                               (int) rq->pid, requester_worker_timeout_ms(o));
                else
                        logmsg(LOG_WARNING, "requester pid %d: cannot read its files: %s",
                               (int) rq->pid, strerror(-r));
                return r;
        }
        if (strlen(reply) != reply_size) {
                free(reply); /* a NUL inside: refused without a log line */
                return -EBADMSG;
        }
        r = idmap_parse_reply(reply, reply_size, &rp);
        free(reply);
        /* the notes of the lines before any refused one, in the order the worker writes
         * them (a note a hostile worker repeats is logged once, with its last text) */
        if (rp.have_creds)
                logmsg(LOG_DEBUG, "requester pid %d: its files were parsed with %s",
                       (int) rq->pid, rp.creds);
        if (rp.baddomain)
                logmsg(LOG_WARNING, "requester pid %d: its idmapd.conf Domain is not "
                       "a valid domain name; using the host's", (int) rq->pid);
        if (rp.have_nobody)
                logmsg(LOG_INFO, "%s:%s unknown in the requester's context: %s",
                       kd->kind == NSID_IDMAP_KEY_UID ? "uid" : "gid", kd->name, rp.nobody);
        if (r == -EBADMSG) {
                logmsg(LOG_WARNING, "requester pid %d: malformed worker reply", (int) rq->pid);
                return r;
        }
        if (rp.err) {
                if (rp.stage_load)
                        logmsg(LOG_WARNING, "cannot load the user database of requester pid "
                               "%d: %s", (int) rq->pid, strerror(rp.err));
                return -rp.err;
        }
        if (!rp.have)
                return -EBADMSG;
        /* The process we read for must still be the one that asked (pinned by its pidfd
         * since discovery): an answer read for a process that has exited meanwhile is
         * dropped (its pid may name another process by now). */
        r = nsid_proc_check_alive(rq->proc);
        if (r < 0) {
                logmsg(LOG_WARNING, "requester pid %d exited while its files were read; "
                       "its answer is dropped", (int) rq->pid);
                return r;
        }
        _Static_assert(sizeof(ret->name) == sizeof(rp.name), "one name size");
        *ret = (answer) { .is_name = rp.is_name, .id = rp.id };
        if (rp.is_name)
                memcpy(ret->name, rp.name, sizeof(ret->name));
        return 0;
}
