/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: loading a container's context in a worker (idmapd-load.h).
 *
 * The worker (a fork of the daemon, nsid_worker_run() with NSID_WORKER_DROP_IN_FN) is put in
 * the container's mount namespace and root, reads the raw bytes of etc/passwd, etc/group,
 * etc/idmapd.conf and etc/nsswitch.conf there with the safe-open path (openat2
 * RESOLVE_IN_ROOT, regular files only, size caps), then drops everything (an empty read-only
 * root, the container's user namespace, its nobody, no capability, no_new_privs, its own fd
 * directory closed) before it parses a byte. It replies with canonical lines:
 *
 *   domain DOMAIN | baddomain DOMAIN   (the host's, when the container's is invalid)
 *   passwd SERVICE...                  nsswitch.conf's sources for passwd
 *   group SERVICE...
 *   libnfsidmap 0|1                    idmapd.conf asks for more than nsswitch
 *   systemd-empty 0|1                  nss-systemd has nothing to add to the files
 *   u UID NAME                         files-only: every user (then every group)
 *   g GID NAME
 *   end USERS GROUPS
 *
 * The daemon checks every line (dm_context_parse_reply(): names of at most 127 bytes
 * without ':', blanks or control bytes, decimal ids, counts that match) and builds the
 * user database from text it writes itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nsid/nfsconf.h>
#include <nsid/resolv.h>
#include <nsid/worker.h>

#include "idmapd-load.h"
#include "macro.h"

#define CONF_MAX (1024u * 1024u)
#define REPLY_MAX DM_LOAD_REPLY_MAX

static const char *const watched[DM_WATCHED_FILES] = {
        "/etc/passwd",         "/etc/group",           "/etc/idmapd.conf",
        "/etc/nsswitch.conf",  "/etc/sssd/sssd.conf",  "/etc/nslcd.conf",
        "/etc/ldap/ldap.conf", "/etc/ldap.conf",
        /* directories (DM_WATCHED_DIRS_FROM on): nss-systemd's records and services */
        "/etc/userdb",         "/run/userdb",          "/run/host/userdb",
        "/usr/local/lib/userdb", "/usr/lib/userdb",    "/run/systemd/userdb",
        "/run/systemd/dynamic-uid",
};
#define USERDB_DIRS_FROM 8  /* watched[8..12]: drop-in records; 13 services; 14 dynamic ids */
#define USERDB_SERVICES 13
#define DYNAMIC_UIDS 14
_Static_assert(DYNAMIC_UIDS + 1 == DM_WATCHED_FILES, "the table and its count");

/* A directory in the container's root, by the same rules as nsid/file.h (openat2
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), opened O_PATH for a stat or O_RDONLY to list. */
static int open_dir_in_root(int rootfd, const char *path, bool list) {
        struct open_how how = {
                .flags = (list ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        while (*path == '/')
                path++;
        for (int tries = 0; tries < 8; tries++) {
                int fd = (int) syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
                if (fd >= 0 || errno != EAGAIN)
                        return fd < 0 ? -errno : fd;
        }
        return -EAGAIN;
}

static int stat_dir_in_root(int rootfd, const char *path, nsid_file_stat *ret) {
        struct stat st;
        int fd = open_dir_in_root(rootfd, path, false);
        if (fd < 0)
                return fd;
        int r = fstat(fd, &st) < 0 ? -errno : 0;
        (void) close(fd);
        if (r == 0)
                *ret = (nsid_file_stat) { .dev = st.st_dev, .ino = st.st_ino,
                                          .mtime_nsec = (int64_t) st.st_mtim.tv_sec * 1000000000 +
                                                        st.st_mtim.tv_nsec,
                                          .size = (uint64_t) st.st_size };
        return r;
}

/* Up to max entries' names of a directory (".", ".." left out), NUL-separated into buf;
 * the count (capped at max + 1: "more"), or -errno; a missing directory has 0. Names are
 * only copied here, before the drop; they are compared after it. */
#define DIR_LIST_MAX 32
static int list_dir(int rootfd, const char *path, char *buf, size_t len) {
        int fd = open_dir_in_root(rootfd, path, true), n = 0;
        size_t used = 0;
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd < 0)
                return fd;
        DIR *d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return -errno;
        }
        for (struct dirent *e; n <= DIR_LIST_MAX && (e = readdir(d));) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                size_t l = strlen(e->d_name);
                if (buf && used + l + 1 < len) {
                        memcpy(buf + used, e->d_name, l + 1);
                        used += l + 1;
                }
                n++;
        }
        if (buf && len)
                buf[used < len ? used : len - 1] = '\0';
        (void) closedir(d);
        return n;
}

/* nss-systemd adds nothing to the files when there is no user or group record to read (no
 * drop-in file), no dynamic user allocated, and no userdb service beyond systemd's own
 * (DynamicUser, which has none then; the Multiplexer, NameServiceSwitch and DropIn, which
 * only relay those). Then "files systemd" answers as "files" does, and the fast path is
 * exact. (It also makes up root and nobody when the files lack them: the daemon answers
 * an unknown owner with the namespace's nobody either way.) */
static bool systemd_adds_nothing(const int *counts, const char *services) {
        static const char *const relays[] = { "io.systemd.DynamicUser", "io.systemd.Multiplexer",
                                              "io.systemd.NameServiceSwitch", "io.systemd.DropIn" };
        for (int i = USERDB_DIRS_FROM; i <= DYNAMIC_UIDS; i++)
                if (counts[i] < 0 || (i != USERDB_SERVICES && counts[i] > 0) ||
                    counts[i] > DIR_LIST_MAX)
                        return false;
        for (const char *p = services; *p; p += strlen(p) + 1) {
                bool known = false;
                for (size_t k = 0; k < sizeof(relays) / sizeof(relays[0]); k++)
                        known |= strcmp(p, relays[k]) == 0;
                if (!known)
                        return false;
        }
        return true;
}

/* ---- the worker (runs in the container's root, parses only after dropping) ---- */

typedef struct load_job {
        const char *host_domain;
} load_job;

static void read_one(int rootfd, const char *path, size_t max, char **data, size_t *size,
                     int *err) {
        *err = nsid_file_read_in_root(rootfd, path, max, data, size, NULL);
}

/* One canonical line per entry of the parsed database, in the order the userdb keeps. */
typedef struct emit_state {
        FILE *f;
        uint64_t n;
} emit_state;

static void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}

DEFINE_UNREF_CLEANUP(nsid_userdb, nsid_userdb_unref)

/* Every kept name, by walking the text again through the database: a name is emitted when
 * the database gives it back for its own id and name. */
static void emit_names(FILE *out, nsid_userdb *db, const char *t, size_t ts, bool users,
                       uint64_t *count) {
        const char *p = t, *e = t ? t + ts : NULL;

        while (p && p < e) {
                const char *nl = memchr(p, '\n', (size_t) (e - p));
                const char *le = nl ? nl : e;
                const char *c = memchr(p, ':', (size_t) (le - p));
                char name[NSID_USERDB_NAME_MAX + 1];
                uint32_t id;
                if (c && c > p && (size_t) (c - p) <= NSID_USERDB_NAME_MAX) {
                        memcpy(name, p, (size_t) (c - p));
                        name[c - p] = '\0';
                        if (users && nsid_userdb_user_by_name(db, name, &id, NULL) >= 0) {
                                fprintf(out, "u %" PRIu32 " %s\n", id, name);
                                (*count)++;
                        } else if (!users && nsid_userdb_group_by_name(db, name, &id) >= 0) {
                                fprintf(out, "g %" PRIu32 " %s\n", id, name);
                                (*count)++;
                        }
                }
                p = nl ? nl + 1 : e;
        }
}

static int load_worker(int fd, void *userdata) {
        const load_job *job = userdata;
        _cleanup_free_ char *passwd = NULL, *group = NULL, *conf = NULL, *nss = NULL,
                            *domain = NULL;
        size_t passwd_size = 0, group_size = 0, conf_size = 0, nss_size = 0;
        int perr, gerr, cerr, nerr, r;
        _cleanup_(nsid_userdb_unrefp) nsid_userdb *db = NULL;
        _cleanup_(fclosep) FILE *out = NULL;
        nss_sources pw, gr;

        int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return -errno;
        read_one(rootfd, "/etc/passwd", NSID_USERDB_FILE_MAX, &passwd, &passwd_size, &perr);
        read_one(rootfd, "/etc/group", NSID_USERDB_FILE_MAX, &group, &group_size, &gerr);
        read_one(rootfd, "/etc/idmapd.conf", CONF_MAX, &conf, &conf_size, &cerr);
        read_one(rootfd, "/etc/nsswitch.conf", CONF_MAX, &nss, &nss_size, &nerr);
        int counts[DM_WATCHED_FILES] = { 0 };
        char services[DIR_LIST_MAX * 64] = "";
        for (int i = USERDB_DIRS_FROM; i <= DYNAMIC_UIDS; i++)
                counts[i] = list_dir(rootfd, watched[i], i == USERDB_SERVICES ? services : NULL,
                                     i == USERDB_SERVICES ? sizeof(services) : 0);
        (void) close(rootfd);

        /* nothing above is parsed; from here on nothing is privileged */
        r = nsid_worker_drop_privileges();
        if (r < 0)
                return r;
        out = fdopen(fd, "w");
        if (!out)
                return -errno;

        /* (as libnfsidmap reads it: nsid/nfsconf.h) */
        if (cerr >= 0 && nsid_nfsconf_get(conf, conf_size, "General", "Domain", &domain) < 0)
                domain = NULL; /* none: the host's */
        if (domain && *domain && nsid_dns_name_valid(domain, strlen(domain)) &&
            strlen(domain) < sizeof(((dm_context *) 0)->domain))
                fprintf(out, "domain %s\n", domain);
        else if (domain && *domain)
                fprintf(out, "baddomain %s\n", job->host_domain);
        else
                fprintf(out, "domain %s\n", job->host_domain);

        bool needs_lib = cerr >= 0 && nss_idmapd_conf_needs_libnfsidmap(conf, conf_size);
        bool files_only = false;
        if (nerr == -ENOENT)
                pw = gr = (nss_sources) { .n = 1, .name = { "files" } };
        else if (nerr < 0)
                return nerr;
        if (nerr >= 0 && (nss_sources_parse(nss, nss_size, "passwd", &pw) < 0 ||
                          nss_sources_parse(nss, nss_size, "group", &gr) < 0))
                pw = gr = (nss_sources) { .n = 1, .name = { "unknown" } };
        char line[NSS_SOURCES_MAX * NSS_SOURCE_NAME_MAX];
        nss_sources_format(&pw, line, sizeof(line));
        fprintf(out, "passwd %s\n", line);
        nss_sources_format(&gr, line, sizeof(line));
        fprintf(out, "group %s\n", line);
        fprintf(out, "libnfsidmap %d\n", needs_lib ? 1 : 0);
        bool sd_empty = systemd_adds_nothing(counts, services);
        fprintf(out, "systemd-empty %d\n", sd_empty ? 1 : 0);
        files_only = !needs_lib && nss_sources_files_only(&pw, sd_empty) &&
                     nss_sources_files_only(&gr, sd_empty);

        uint64_t users = 0, groups = 0;
        if (files_only) {
                if (perr < 0)
                        return perr;
                if (gerr < 0 && gerr != -ENOENT)
                        return gerr;
                r = nsid_userdb_parse(passwd, passwd_size, gerr < 0 ? NULL : group,
                                      gerr < 0 ? 0 : group_size, &db);
                if (r < 0)
                        return r;
                emit_names(out, db, passwd, passwd_size, true, &users);
                emit_names(out, db, group, gerr < 0 ? 0 : group_size, false, &groups);
        }
        fprintf(out, "end %" PRIu64 " %" PRIu64 "\n", users, groups);
        return fflush(out) == 0 ? 0 : -EIO;
}

/* ---- the daemon's side ---- */

static bool name_ok(const char *s, size_t len) {
        if (len == 0 || len > NSID_USERDB_NAME_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c <= 0x20 || c == 0x7f || c == ':')
                        return false;
        }
        return true;
}

/* "SERVICE SERVICE..." as nss_sources (the worker formatted it: re-parsed strictly) */
static int parse_sources_line(const char *s, size_t len, nss_sources *ret) {
        char buf[NSS_SOURCES_MAX * NSS_SOURCE_NAME_MAX + 16];
        if (len + 16 >= sizeof(buf))
                return -EBADMSG;
        memcpy(buf, "x:", 2);
        memcpy(buf + 2, s, len);
        /* "unknown" is what the worker says of a file it could not read as glibc would */
        if (nss_sources_parse(buf, len + 2, "x", ret) < 0)
                return -EBADMSG;
        return 0;
}

typedef struct text_buf {
        char *p;
        size_t len, alloc;
} text_buf;

static void text_buf_done(text_buf *t) {
        free(t->p);
}

static int text_add(text_buf *t, const char *name, size_t nlen, uint64_t id, bool user) {
        char tail[48];
        int k = snprintf(tail, sizeof(tail), user ? ":x:%" PRIu64 ":65534::/:/nonexistent\n"
                                                  : ":x:%" PRIu64 ":\n", id);
        size_t need = nlen + (size_t) k;
        if (t->alloc - t->len <= need) {
                size_t a = t->alloc ? t->alloc * 2 : 65536;
                while (a - t->len <= need)
                        a *= 2;
                char *n = realloc(t->p, a);
                if (!n)
                        return -ENOMEM;
                t->p = n;
                t->alloc = a;
        }
        memcpy(t->p + t->len, name, nlen);
        memcpy(t->p + t->len + nlen, tail, (size_t) k);
        t->len += need;
        return 0;
}

int dm_context_parse_reply(const char *buf, size_t size, dm_context *c) {
        _cleanup_(text_buf_done) text_buf pw = { 0 }, gr = { 0 };
        const char *p = buf, *end = buf + size;
        bool have_domain = false, have_pw = false, have_gr = false, have_lib = false, done = false;
        bool have_sd = false;
        uint64_t users = 0, groups = 0;
        int r;

        if (!buf || memchr(buf, '\0', size))
                return -EBADMSG;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                if (!nl || done)
                        return -EBADMSG; /* every line ends with \n; nothing after "end" */
                size_t len = (size_t) (nl - p);
                const char *sp = memchr(p, ' ', len);
                if (!sp)
                        return -EBADMSG;
                size_t kl = (size_t) (sp - p), vl = len - kl - 1;
                const char *v = sp + 1;
#define KEY(k) (kl == strlen(k) && memcmp(p, k, kl) == 0)
                if ((KEY("domain") || KEY("baddomain")) && !have_domain) {
                        if (vl == 0 || vl >= sizeof(c->domain) || !nsid_dns_name_valid(v, vl))
                                return -EBADMSG;
                        memcpy(c->domain, v, vl);
                        c->domain[vl] = '\0';
                        c->baddomain = KEY("baddomain");
                        have_domain = true;
                } else if (KEY("passwd") && !have_pw) {
                        if (parse_sources_line(v, vl, &c->passwd) < 0)
                                return -EBADMSG;
                        have_pw = true;
                } else if (KEY("group") && !have_gr) {
                        if (parse_sources_line(v, vl, &c->group) < 0)
                                return -EBADMSG;
                        have_gr = true;
                } else if (KEY("libnfsidmap") && !have_lib) {
                        if (vl != 1 || (v[0] != '0' && v[0] != '1'))
                                return -EBADMSG;
                        c->conf_libnfsidmap = v[0] == '1';
                        have_lib = true;
                } else if (KEY("systemd-empty") && !have_sd) {
                        if (vl != 1 || (v[0] != '0' && v[0] != '1'))
                                return -EBADMSG;
                        c->systemd_empty = v[0] == '1';
                        have_sd = true;
                } else if (KEY("u") || KEY("g")) {
                        bool user = KEY("u");
                        const char *sp2 = memchr(v, ' ', vl);
                        uint64_t id;
                        if (!sp2 || nss_parse_uint(v, (size_t) (sp2 - v), UINT32_MAX - 1, &id) < 0 ||
                            !name_ok(sp2 + 1, (size_t) (v + vl - sp2 - 1)) ||
                            (user && gr.len > 0)) /* users first, then groups */
                                return -EBADMSG;
                        r = text_add(user ? &pw : &gr, sp2 + 1, (size_t) (v + vl - sp2 - 1), id, user);
                        if (r < 0)
                                return r;
                        (user ? users++ : groups++);
                } else if (KEY("end")) {
                        const char *sp2 = memchr(v, ' ', vl);
                        uint64_t nu, ng;
                        if (!sp2 || nss_parse_uint(v, (size_t) (sp2 - v), UINT64_MAX, &nu) < 0 ||
                            nss_parse_uint(sp2 + 1, (size_t) (v + vl - sp2 - 1), UINT64_MAX, &ng) < 0 ||
                            nu != users || ng != groups)
                                return -EBADMSG;
                        done = true;
                } else
                        return -EBADMSG;
#undef KEY
                p = nl + 1;
        }
        if (!done || !have_domain || !have_pw || !have_gr || !have_lib || !have_sd)
                return -EBADMSG;
        c->nss = c->conf_libnfsidmap || !nss_sources_files_only(&c->passwd, c->systemd_empty) ||
                 !nss_sources_files_only(&c->group, c->systemd_empty);
        if (c->nss && (users || groups))
                return -EBADMSG; /* a name-service context carries no database */
        c->users = users;
        c->groups = groups;
        if (!c->nss) {
                r = nsid_userdb_parse(pw.p ? pw.p : "", pw.len, gr.p, gr.len, &c->db);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void stat_all(const nsid_proc *proc, int *errs, nsid_file_stat *st) {
        int rootfd = -EBADF;
        int r = nsid_proc_open_root(proc, &rootfd);
        for (size_t i = 0; i < DM_WATCHED_FILES; i++) {
                st[i] = (nsid_file_stat) { 0 };
                errs[i] = r < 0                   ? r
                          : i >= USERDB_DIRS_FROM ? stat_dir_in_root(rootfd, watched[i], &st[i])
                                                  : nsid_file_stat_in_root(rootfd, watched[i], &st[i]);
        }
        if (rootfd >= 0)
                (void) close(rootfd);
}

int dm_context_load_direct(const nsid_proc *proc, const char *host_domain, int timeout_ms,
                           char **reply, size_t *size) {
        load_job job = { .host_domain = host_domain };
        return nsid_worker_run(proc, NSID_NS_MASK(NSID_NS_MNT), NSID_WORKER_DROP_IN_FN,
                               timeout_ms, load_worker, &job, REPLY_MAX, reply, size);
}

dm_load_runner dm_load_run = NULL;

int dm_context_load(const nsid_proc *proc, const char *host_domain, int timeout_ms,
                    dm_context **ret, char *err, size_t errlen) {
        char *reply = NULL;
        size_t size = 0;
        dm_context *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        stat_all(proc, c->stat_err, c->stat);
        r = (dm_load_run ? dm_load_run : dm_context_load_direct)(proc, host_domain, timeout_ms,
                                                                  &reply, &size);
        if (r < 0) {
                if (r == -ETIMEDOUT)
                        snprintf(err, errlen, "reading its files took longer than %d ms",
                                 timeout_ms);
                else
                        snprintf(err, errlen, "reading its files: %s", strerror(-r));
                free(c);
                return r;
        }
        r = dm_context_parse_reply(reply, size, c);
        free(reply);
        if (r < 0) {
                snprintf(err, errlen, "the worker's reply was malformed");
                dm_context_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int dm_context_changed(const dm_context *c, const nsid_proc *proc) {
        int errs[DM_WATCHED_FILES];
        nsid_file_stat st[DM_WATCHED_FILES];
        stat_all(proc, errs, st);
        for (size_t i = 0; i < DM_WATCHED_FILES; i++) {
                if (errs[i] == -ESRCH)
                        return -ESRCH;
                if (errs[i] != c->stat_err[i] ||
                    (errs[i] >= 0 && memcmp(&st[i], &c->stat[i], sizeof(st[i])) != 0))
                        return (int) i + 1;
        }
        return 0;
}

const char *dm_context_watched_name(int changed) {
        if (changed < 1 || changed > DM_WATCHED_FILES)
                return "?";
        return changed <= 2 ? "passwd/group" : watched[changed - 1];
}

dm_context *dm_context_free(dm_context *c) {
        if (c) {
                nsid_userdb_unref(c->db);
                free(c);
        }
        return NULL;
}
