/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The id_resolver upcall: "nsid-idmap [-t timeout] <key serial> <description>".
 *
 * Every path ends the request: the key is instantiated, or rejected with a short negative
 * timeout; only when even the rejection fails (or the serial itself is unusable) does the
 * helper exit non-zero leaving the kernel to negate the key.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <dirent.h>

#include <keyutils.h>
#include <nfsidmap.h>
#include <nsid/conffile.h>
#include <nsid/nfsconf.h>
#include <nsid/file.h>
#include <nsid/kernel.h>
#include <nsid/keyring.h>
#include <nsid/resolv.h>
#include <nsid/userdb.h>
#include <nsid/worker.h>

#include "fmt-util.h"
#include "idmap-reply.h"
#include "nsid-idmap.h"
#define LAZY_WANT_NFSIDMAP
#include "lazylib.h"

#ifndef NSID_NFSIDMAP_PLUGIN_DIR
#define NSID_NFSIDMAP_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/libnfsidmap"
#endif

#define NAME_BUF (NSID_IDMAP_KEYDESC_NAME_MAX + 1)
#define NOBODY_ID 65534u

typedef struct answer {
        bool is_name;
        uint32_t id;
        char name[NAME_BUF];
} answer;

static int libnfsidmap_ready = 0;

static void nfsidmap_debug(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void nfsidmap_debug(const char *format, ...) {
        char buf[1024];
        va_list ap;
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        size_t l = strlen(buf);
        while (l > 0 && buf[l - 1] == '\n')
                buf[--l] = '\0';
        logmsg(LOG_DEBUG, "%s%s", strncmp(buf, "libnfsidmap:", 12) == 0 ? "" : "libnfsidmap: ", buf);
}

static int nfsidmap_init(const idmap_opts *o) {
        if (libnfsidmap_ready)
                return 0;
        int l = lazy_nfsidmap_load();
        if (l < 0)
                return l;
        /* libnfsidmap loads each translation plugin by its bare name first ("nsswitch.so",
         * so that the library search path may override it) and from its own directory only
         * when that fails: on Debian 12 some 40 failed opens and stats of library
         * directories at every upcall (nfsidmap pays them too; in the lab, over 9p, a third
         * of this helper's time without the daemon). The default plugin is loaded here from
         * libnfsidmap's directory; its soname is "nsswitch.so", so the search by that name
         * finds it already loaded. (The override the search allows could only come from
         * /lib or /usr/lib themselves: request-key runs us without LD_LIBRARY_PATH and
         * ldconfig does not cache such names.) Other methods load as before. */
        (void) dlopen(NSID_NFSIDMAP_PLUGIN_DIR "/nsswitch.so", RTLD_NOW | RTLD_LOCAL);
        if (o->verbose > 1)
                nfs4_set_debug(o->verbose, nfsidmap_debug);
        int r = nfs4_init_name_mapping((char *) o->idmapd_conf);
        if (r != 0)
                return r < 0 ? r : -EINVAL;
        libnfsidmap_ready = 1;
        return 0;
}

/* The host's answer, through libnfsidmap and idmapd.conf (its Method list, plugins...). */
static int resolve_host(const idmap_opts *o, const nsid_idmap_keydesc *kd, answer *ret) {
        char domain[NFS4_MAX_DOMAIN_LEN];
        answer a = {};
        int r;

        r = nfsidmap_init(o);
        if (r < 0)
                return r;
        switch (kd->kind) {
        case NSID_IDMAP_KEY_UID: {
                uid_t uid = (uid_t) -1;
                r = nfs4_owner_to_uid((char *) kd->name, &uid);
                a.id = uid;
                break;
        }
        case NSID_IDMAP_KEY_GID: {
                gid_t gid = (gid_t) -1;
                r = nfs4_group_owner_to_gid((char *) kd->name, &gid);
                a.id = gid;
                break;
        }
        case NSID_IDMAP_KEY_USER:
        case NSID_IDMAP_KEY_GROUP:
                a.is_name = true;
                r = nfs4_get_default_domain(NULL, domain, sizeof(domain));
                if (r != 0)
                        return r < 0 ? r : -EINVAL;
                if (kd->kind == NSID_IDMAP_KEY_USER)
                        r = nfs4_uid_to_name(kd->id, domain, a.name, sizeof(a.name));
                else
                        r = nfs4_gid_to_name(kd->id, domain, a.name, sizeof(a.name));
                break;
        default:
                return -EINVAL;
        }
        if (r != 0)
                return r < 0 ? r : -ENOENT;
        *ret = a;
        return 0;
}

/* Configuration of the opt-in policy, from /etc/nsid.conf [idmap]. The timeout of answers
 * that differ from the host's is short (the cache is global) but not shorter than 2 s: the
 * kernel checks the key once the helper has been reaped, and the NFS client reads it right
 * after, and an already expired key fails the requester itself (seen with 1 s under load). */
typedef struct policy {
        bool requester_context;
        bool requester_context_set; /* nsid.conf says yes or no */
        bool per_ns_keys; /* the kernel caches each network namespace's answers apart */
        unsigned differing_timeout; /* timeout of answers that differ from the host's */
} policy;

static void load_policy(const idmap_opts *o, policy *ret) {
        policy p = { .requester_context = false, .differing_timeout = 5 };
        char small[4096]; /* nsid.conf is that small, usually: read without an allocation */
        char *text = NULL, *heap = NULL, *v = NULL;
        size_t size = 0;
        int r;

        r = read_small_file(o->nsid_conf, small, sizeof(small));
        if (r >= 0) {
                text = small;
                size = (size_t) r;
        } else if (r == -EFBIG) {
                r = read_host_file(o->nsid_conf, 1024 * 1024, &heap, &size);
                text = heap;
        }
        if (r < 0) {
                if (r != -ENOENT)
                        logmsg(LOG_WARNING, "cannot read %s: %s; using the default policy",
                               o->nsid_conf, strerror(-r));
                *ret = p;
                return;
        }
        /* No [idmap] section without the word (section names compare case-insensitively):
         * nothing to look up, and libinih need not be loaded (libnsid/src/inih-internal.h). */
        bool named = false;
        for (size_t i = 0; i + 5 <= size && !named; i++)
                named = strncasecmp(text + i, "idmap", 5) == 0;
        if (!named) {
                free(heap);
                *ret = p;
                return;
        }
        if (nsid_conf_get(text, size, "idmap", "requester-context", &v) >= 0) {
                r = nsid_conf_parse_bool(v);
                if (r < 0)
                        logmsg(LOG_WARNING, "%s: [idmap] requester-context = \"%s\" is not a "
                               "boolean; ignored", o->nsid_conf, v);
                else {
                        p.requester_context = r;
                        p.requester_context_set = true;
                }
                free(v);
                v = NULL;
        }
        if (nsid_conf_get(text, size, "idmap", "requester-context-timeout", &v) >= 0) {
                uint64_t t;
                if (parse_uint_strict(v, 600, &t) < 0 || t < 2)
                        logmsg(LOG_WARNING, "%s: [idmap] requester-context-timeout = \"%s\" "
                               "is not 2..600; ignored", o->nsid_conf, v);
                else
                        p.differing_timeout = (unsigned) t;
                free(v);
        }
        free(heap);
        *ret = p;
}

/* The requester's own answer: its /etc/passwd, /etc/group and /etc/idmapd.conf, read never
 * through NSS, in a worker (nsid/worker.h): a forked child that joins the requester's mount
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
        nsid_userdb *db = NULL;
        char *conf = NULL, *domain = NULL, *nobody = NULL, *passwd = NULL, *group = NULL;
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
                goto out;
        }
        r = nsid_userdb_parse(passwd, passwd_size, group, group_size, &db);
        report_creds(fd);
        if (r < 0) {
                dprintf(fd, "err=%d\nstage=load\n", -r);
                goto out;
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
out:
        free(nobody);
        free(domain);
        free(conf);
        free(passwd);
        free(group);
        nsid_userdb_unref(db);
        return 0;
}

/* The worker's time limit: half of --max-time (the watchdog then still has time to act),
 * at most 5 s, at least 200 ms. */
static int requester_worker_timeout_ms(const idmap_opts *o) {
        unsigned ms = o->max_seconds * 500u;
        return (int) (ms > 5000u ? 5000u : ms < 200u ? 200u : ms);
}

static int resolve_requester(const idmap_opts *o, requester *rq,
                             const nsid_idmap_keydesc *kd, answer *ret) {
        char hd[NFS4_MAX_DOMAIN_LEN];
        char *reply = NULL;
        size_t reply_size = 0;
        idmap_reply rp;
        int r;

        /* the host's domain, for a container without a valid one of its own */
        r = nfsidmap_init(o);
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

/* nsid-idmapd's answer (checked by fastpath_finish()) as the helper's own */
static void answer_from_daemon(const fastpath_answer *fa, answer *ret) {
        ret->is_name = fa->is_name;
        ret->id = fa->id;
        if (fa->is_name)
                memcpy(ret->name, fa->name, strlen(fa->name) + 1);
}

static void drop_all_caps(key_serial_t key) {
        int r = caps_keep(0);
        if (r < 0)
                logmsg(LOG_WARNING, "key %d: cannot drop capabilities: %s", key, strerror(-r));
}

int idmap_upcall(const idmap_opts *o, const char *serial_s, const char *desc_arg) {
        char esc[1024] = "", who[512] = "";
        key_serial_t key;
        /* "id_resolver;UID;GID;PERM;" and a description of at most 1,024 bytes and its kind
         * fit here; a longer one is read into d (and then rejected by the parser) */
        char dbuf[1280];
        char *d = NULL, *dh = NULL;
        nsid_key_describe kdesc;
        nsid_idmap_keydesc kdbuf, *kd = &kdbuf;
        requester rq = { .pidfd = -1 };
        fastpath_call fc = { .fd = -EBADF };
        int rq_r = -ENODATA, r, status = 1;
        const char *desc;
        size_t desc_len;
        const char *want_type = o->test_prefix ? "user" : "id_resolver";
        policy pol;
        answer host = {}, ans = {};
        bool have_host = false;
        const char *source = "host";
        const char *via = "";
        unsigned timeout = o->timeout;

        r = parse_key_serial(serial_s, &key);
        if (r < 0) {
                logmsg(LOG_ERR, "invalid key serial \"%s\": %s; no key to answer (check the "
                       "request-key rule: \"%%k %%d\")", log_escape(serial_s, strlen(serial_s),
                                                                  esc, sizeof(esc)),
                       strerror(-r));
                return 1;
        }
        watchdog_arm(key, o->max_seconds, IDMAP_NEGATIVE_TIMEOUT, EAGAIN);
        r = keyctl_describe_buf(key, dbuf, sizeof(dbuf));
        if (r >= 0)
                d = dbuf;
        else if (r == -ERANGE) {
                if (keyctl_describe_alloc(key, &dh) < 0)
                        r = -errno;
                d = dh;
        }
        if (!d) {
                logmsg(LOG_ERR, "key %d: cannot describe it: %s", key, strerror(-r));
                key_reject(key, IDMAP_NEGATIVE_TIMEOUT, EKEYREJECTED);
                return 1;
        }
        r = nsid_key_describe_parse(d, strlen(d), &kdesc);
        if (r < 0 || kdesc.type_len != strlen(want_type) ||
            memcmp(kdesc.type, want_type, kdesc.type_len) != 0) {
                logmsg(LOG_ERR, "key %d: rejected: type is not %s (\"%s\")", key, want_type,
                       log_escape(d, strlen(d), esc, sizeof(esc)));
                goto reject_invalid;
        }
        /* The description request-key passed must be the key's own. */
        if (strlen(desc_arg) != kdesc.description_len ||
            memcmp(desc_arg, kdesc.description, kdesc.description_len) != 0) {
                logmsg(LOG_ERR, "key %d: rejected: description argument \"%s\" is not the "
                       "key's", key, log_escape(desc_arg, strlen(desc_arg), esc, sizeof(esc)));
                goto reject_invalid;
        }
        desc = kdesc.description;
        desc_len = kdesc.description_len;
        if (o->test_prefix) {
                size_t pl = strlen(o->test_prefix);
                if (desc_len < pl || memcmp(desc, o->test_prefix, pl) != 0) {
                        logmsg(LOG_ERR, "key %d: rejected: test mode and the description "
                               "lacks the prefix", key);
                        goto reject_invalid;
                }
                desc += pl;
                desc_len -= pl;
        }
        r = nsid_idmap_keydesc_parse(desc, desc_len, kd);
        if (r < 0) {
                logmsg(LOG_ERR, "key %d: rejected: invalid id_resolver description \"%s\" "
                       "(%zu bytes): %s", key, log_escape(desc, desc_len, esc, sizeof(esc)),
                       desc_len,
                       r == -ENAMETOOLONG ? "name longer than 1024 bytes"
                       : r == -ERANGE     ? "id out of range"
                                          : "expected uid:NAME, gid:NAME, user:ID or group:ID "
                                            "with a name without ':', '@@' or control "
                                            "characters, or a decimal id below 4294967295");
                goto reject_invalid;
        }
        load_policy(o, &pol);
        /* A kernel that tags ID keys by network namespace (kernel/patches/, nsid/kernel.h)
         * caches each namespace's answers apart: there every requester is answered in its
         * own network namespace's context by default (nsid-idmapd's; without the daemon,
         * its files read by a worker), with the full timeout. nsid.conf's
         * requester-context = no keeps the host's answers for everyone, as nfsidmap gives. */
        if (!pol.requester_context_set && !o->test_prefix &&
            nsid_kernel_nfs_idkeys_tagged_cached(NSID_RUN_DIR "/nfs-idkeys") == 1) {
                pol.requester_context = true;
                pol.per_ns_keys = true;
        }
        /* A kernel that keeps one ID key cache for every namespace (no tagging): an answer
         * this helper gives is served to every namespace that asks the same name. The
         * lookup goes to the requester's own namespace instead, through the kernel's other
         * path: this key is rejected (a marker that lives as long as an answer would), the
         * NFS client falls back to its network namespace's idmap pipe, and nsid-idmapd
         * answers there in that namespace's context and invalidates the key once read.
         * Only when nsid-idmapd says it holds that namespace's pipes open ("route"; it
         * attaches the namespace first): a pipe nobody reads fails the lookup, and the
         * kernel caches that failure for everyone. nsid.conf's requester-context (either
         * value) keeps this helper answering itself. */
        bool to_pipe = !pol.requester_context_set && !o->test_prefix && !pol.per_ns_keys &&
                       o->daemon_timeout_ms > 0;
        /* The fast path (nsid-idmapd's cache, host context): the lookup is sent now and its
         * reply read once the requester is found, so the daemon answers meanwhile. */
        int f = -ECANCELED;
        if (!pol.requester_context && !to_pipe)
                f = fastpath_start(o->daemon_socket, o->daemon_timeout_ms, kd, 0, &fc);
        rq_r = requester_find(key, &rq);
        if (log_wanted(LOG_ERR)) { /* what the log lines show (nothing to build without a log) */
                log_escape(desc, desc_len, esc, sizeof(esc));
                requester_describe(&rq, rq_r, who, sizeof(who));
        }
        if (to_pipe) {
                /* an unknown requester: its client's pipe is answered if the daemon serves
                 * pipes at all (the host's stand for that) */
                pid_t target = rq_r >= 0 && rq.net_initial != 1 ? rq.pid : 0;
                unsigned rt = o->daemon_timeout_ms > IDMAP_ROUTE_TIMEOUT_MS
                                      ? o->daemon_timeout_ms
                                      : IDMAP_ROUTE_TIMEOUT_MS;
                int pipes = fastpath_route(o->daemon_socket, rt, target);
                if (pipes > 0 && target > 0 &&
                    (requester_proc(&rq) < 0 || nsid_proc_check_alive(rq.proc) < 0))
                        pipes = -ESRCH; /* the reply was about a pid that may be another's */
                if (pipes > 0) {
                        drop_all_caps(key);
                        r = key_reject(key, timeout, ENOKEY);
                        if (r >= 0) {
                                if (log_wanted(LOG_INFO))
                                        logmsg(LOG_INFO, "key %d: %s: handed to the idmap pipe "
                                               "of the requester's network namespace "
                                               "(nsid-idmapd); marker for %us; %s", key, esc,
                                               timeout, who);
                                status = 0;
                                goto out;
                        }
                        logmsg(LOG_WARNING, "key %d: %s: cannot hand it to the idmap pipe: %s; "
                               "answering here", key, esc, strerror(-r));
                } else if (pipes != -ENOENT && pipes != -ECONNREFUSED)
                        logmsg(pipes == 0 ? LOG_INFO : LOG_WARNING, "key %d: %s: nsid-idmapd %s; "
                               "answering here; %s", key, esc,
                               pipes == 0 ? "does not serve the requester's idmap pipes"
                                          : pipes == -ETIMEDOUT ? "did not answer in time"
                                                                : strerror(-pipes), who);
                /* Not handed over by a daemon that is there (slow, or not serving that
                 * namespace's pipes): the host's answer would be cached for everyone and is
                 * the wrong one for a requester in a container, which is answered from its
                 * own files instead (a worker, as requester-context = yes), with the short
                 * timeout of answers that differ from the host's. With no daemon at all the
                 * helper stays nfsidmap's drop-in: the host's context. */
                if (target > 0 && pipes != -ENOENT && pipes != -ECONNREFUSED)
                        pol.requester_context = true;
                if (!pol.requester_context)
                        f = fastpath_start(o->daemon_socket, o->daemon_timeout_ms, kd, 0, &fc);
        }
        if (pol.per_ns_keys) {
                /* the requester's namespace's answer from nsid-idmapd (the host's own, for a
                 * requester in the initial network namespace) */
                fastpath_answer fa;
                pid_t target = rq_r >= 0 && rq.net_initial != 1 ? rq.pid : 0;
                f = rq_r >= 0 ? fastpath_start(o->daemon_socket, o->daemon_timeout_ms, kd,
                                               target, &fc)
                              : -ESRCH;
                if (f >= 0)
                        f = fastpath_finish(&fc, &fa);
                if (f >= 0 && target > 0 &&
                    (requester_proc(&rq) < 0 || nsid_proc_check_alive(rq.proc) < 0))
                        f = -ESRCH; /* answered for a pid that may name another process now */
                if (f >= 0 && fa.negative) {
                        logmsg(LOG_WARNING, "key %d: %s: no mapping in the requester's context "
                               "(nsid-idmapd); rejected for %us; %s", key, esc,
                               IDMAP_NEGATIVE_TIMEOUT, who);
                        key_reject(key, IDMAP_NEGATIVE_TIMEOUT, ENOKEY);
                        goto out;
                }
                if (f >= 0) {
                        answer_from_daemon(&fa, &ans);
                        source = target > 0 ? "requester" : "host";
                        via = fa.cached ? ", nsid-idmapd cache" : ", nsid-idmapd";
                        drop_all_caps(key);
                        goto answer;
                }
                if (f != -ENOENT && f != -ECONNREFUSED && f != -ESRCH)
                        logmsg(LOG_WARNING, "key %d: nsid-idmapd at %s not used (%s); resolving "
                               "here", key, o->daemon_socket,
                               f == -ETIMEDOUT ? "no answer in time" : strerror(-f));
        }

        if (!pol.requester_context)
                drop_all_caps(key); /* the requester is known: nothing privileged is left */
        r = -ENODATA;
        if (!pol.requester_context) {
                fastpath_answer fa;
                if (f >= 0)
                        f = fastpath_finish(&fc, &fa);
                if (f >= 0 && fa.negative) {
                        logmsg(LOG_WARNING, "key %d: %s: no mapping (nsid-idmapd); rejected for "
                               "%us; %s", key, esc, IDMAP_NEGATIVE_TIMEOUT, who);
                        key_reject(key, IDMAP_NEGATIVE_TIMEOUT, ENOKEY);
                        goto out;
                }
                if (f >= 0) {
                        answer_from_daemon(&fa, &host);
                        via = fa.cached ? ", nsid-idmapd cache" : ", nsid-idmapd";
                        r = 0;
                } else if (f != -ECANCELED)
                        logmsg(f == -ENOENT || f == -ECONNREFUSED ? LOG_DEBUG : LOG_WARNING,
                               "key %d: nsid-idmapd at %s not used (%s); resolving here", key,
                               o->daemon_socket, f == -ETIMEDOUT ? "no answer in time" : strerror(-f));
        }
        if (r < 0)
                r = resolve_host(o, kd, &host);
        have_host = r >= 0;
        if (r < 0 && !pol.requester_context) {
                logmsg(LOG_WARNING, "key %d: %s: no mapping in the host context (%s); "
                       "rejected for %us; %s", key, esc, strerror(-r), IDMAP_NEGATIVE_TIMEOUT,
                       who);
                key_reject(key, IDMAP_NEGATIVE_TIMEOUT, ENOKEY);
                goto out;
        }
        ans = host;

        if (pol.requester_context) {
                if (rq_r < 0)
                        logmsg(LOG_WARNING, "key %d: requester-context: requester not found "
                               "(%s); answering in the host context", key, strerror(-rq_r));
                else if (rq.user_initial != 1 || rq.mnt_owner_initial != 1)
                        logmsg(LOG_WARNING, "key %d: requester-context: requester pid %d %s; "
                               "the kernel interprets this answer in the initial user "
                               "namespace, so the host context is used", key, (int) rq.pid,
                               rq.user_initial != 1
                                       ? "is in a non-initial user namespace"
                                       : "has a mount namespace owned by a non-initial user "
                                         "namespace (its files hold another ID space)");
                else if (rq.mnt_initial != 1) {
                        answer c;
                        r = resolve_requester(o, &rq, kd, &c);
                        if (r >= 0) {
                                source = "requester";
                                bool same = have_host && c.is_name == host.is_name &&
                                            (c.is_name ? strcmp(c.name, host.name) == 0
                                                       : c.id == host.id);
                                if (!same && !pol.per_ns_keys &&
                                    timeout > pol.differing_timeout) {
                                        /* The kernel caches this answer for everyone: keep
                                         * a container-specific one short-lived. */
                                        timeout = pol.differing_timeout;
                                }
                                ans = c;
                        } else if (r == -ETIMEDOUT) {
                                /* Its files hang (a mount that never answers): no answer
                                 * for this container now; the kernel asks again later. */
                                logmsg(LOG_WARNING, "key %d: %s: the requester's files did not "
                                       "answer in time; rejected for %us (EAGAIN); %s", key,
                                       esc, IDMAP_NEGATIVE_TIMEOUT, who);
                                key_reject(key, IDMAP_NEGATIVE_TIMEOUT, EAGAIN);
                                goto out;
                        } else if (!have_host) {
                                logmsg(LOG_WARNING, "key %d: %s: no mapping in the requester's "
                                       "context (%s) nor the host's; rejected for %us; %s",
                                       key, esc, strerror(-r), IDMAP_NEGATIVE_TIMEOUT, who);
                                key_reject(key, IDMAP_NEGATIVE_TIMEOUT, ENOKEY);
                                goto out;
                        }
                }
                if (!have_host && strcmp(source, "host") == 0) {
                        logmsg(LOG_WARNING, "key %d: %s: no mapping in the host context; "
                               "rejected for %us; %s", key, esc, IDMAP_NEGATIVE_TIMEOUT, who);
                        key_reject(key, IDMAP_NEGATIVE_TIMEOUT, ENOKEY);
                        goto out;
                }
        }

        drop_all_caps(key);

answer:
        /* Check what goes to the kernel as strictly as what came from it. */
        char payload[NAME_BUF + 16];
        size_t plen;
        if (ans.is_name) {
                size_t nl = strnlen(ans.name, sizeof(ans.name));
                if (nl >= sizeof(ans.name) || nsid_idmap_name_check(ans.name, nl) < 0) {
                        logmsg(LOG_ERR, "key %d: %s: the %s answer is not a valid name; "
                               "rejected; %s", key, esc, source, who);
                        key_reject(key, IDMAP_NEGATIVE_TIMEOUT, ENOKEY);
                        goto out;
                }
                memcpy(payload, ans.name, nl);
                plen = nl; /* names without their NUL, as the kernel expects */
        } else {
                if (ans.id == UINT32_MAX) {
                        logmsg(LOG_ERR, "key %d: %s: the %s answer is the invalid id "
                               "4294967295; rejected; %s", key, esc, source, who);
                        key_reject(key, IDMAP_NEGATIVE_TIMEOUT, ENOKEY);
                        goto out;
                }
                plen = fmt_u64(payload, ans.id) + 1; /* ids as decimal with their NUL */
        }

        r = key_answer(key, payload, plen, timeout);
        if (r < 0) {
                /* No keyring clear on EDQUOT: that would drop every other user's mappings. */
                logmsg(LOG_ERR, "key %d: %s: cannot instantiate: %s%s; rejected; %s", key, esc,
                       strerror(-r), r == -EDQUOT ? " (key quota of root exhausted)" : "", who);
                key_reject(key, IDMAP_NEGATIVE_TIMEOUT, (unsigned) -r);
                goto out;
        }
        if (log_wanted(LOG_INFO)) {
                /* "key %d: %s -> \"%s\"|%u (%s context%s, timeout %us); %s", without printf */
                char ks[24], ids[24], ts[24];
                fmt_u64(ks, (uint64_t) key);
                fmt_u64(ids, ans.id);
                fmt_u64(ts, timeout);
                log_join(LOG_INFO, "key ", ks, ": ", esc, " -> ", ans.is_name ? "\"" : "",
                         ans.is_name ? ans.name : ids, ans.is_name ? "\"" : "", " (", source,
                         " context", via, ", timeout ", ts, "s); ", who, NULL);
        }
        if (strcmp(source, "requester") == 0 && have_host && !pol.per_ns_keys &&
            (ans.is_name ? strcmp(ans.name, host.name) != 0 : ans.id != host.id)) {
                char h[NAME_BUF + 2];
                if (host.is_name)
                        snprintf(h, sizeof(h), "\"%s\"", host.name);
                else
                        snprintf(h, sizeof(h), "%u", host.id);
                logmsg(LOG_NOTICE, "key %d: the requester's answer differs from the host's "
                       "(%s); the kernel caches it globally, so only for %us", key, h,
                       timeout);
        }
        status = 0;
        goto out;

reject_invalid:
        key_reject(key, IDMAP_NEGATIVE_TIMEOUT, EKEYREJECTED);
out:
        fastpath_cancel(&fc);
        requester_done(&rq);
        free(dh);
        return status;
}
