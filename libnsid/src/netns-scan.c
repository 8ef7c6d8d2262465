/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding the host's network namespaces, their NFS mounts, their cookies. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "log-internal.h"
#include "macro.h"
#include "nsid/netns.h"
#include "parse-util.h"
#include "proc-util.h"
#include "worker-internal.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#define MOUNTINFO_MAX (64u * 1024u * 1024u)

DEFINE_UNREF_CLEANUP(nsid_ns, nsid_ns_unref)
DEFINE_UNREF_CLEANUP(nsid_proc, nsid_proc_unref)

static inline void closedirp_(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

/* ---- mountinfo ---- */

/* Field 10 of a mountinfo line (after the lone "-" separator) is the fstype. */
static bool line_is_nfs(const char *line, size_t len) {
        size_t i = 0, field = 0;
        bool after_sep = false;

        while (i < len) {
                size_t start, flen;

                while (i < len && line[i] == ' ')
                        i++;
                if (i >= len)
                        break;
                start = i;
                while (i < len && line[i] != ' ')
                        i++;
                flen = i - start;
                field++;
                if (after_sep)
                        return (flen == 3 && memcmp(line + start, "nfs", 3) == 0) ||
                               (flen == 4 && memcmp(line + start, "nfs4", 4) == 0);
                /* Fields 1-6 are fixed; optional fields follow; "-" ends them. */
                if (field >= 7 && flen == 1 && line[start] == '-')
                        after_sep = true;
        }
        return false;
}

_public_ int nsid_mountinfo_has_nfs(const char *data, size_t size) {
        size_t i = 0;

        assert_return(data || size == 0, -EINVAL);
        while (i < size) {
                const char *nl = memchr(data + i, '\n', size - i);
                size_t len = nl ? (size_t) (nl - (data + i)) : size - i;

                if (line_is_nfs(data + i, len))
                        return 1;
                i += len + 1;
        }
        return 0;
}

static int read_proc_file(pid_t pid, const char *name, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read_fd_capped(fd, max, ret, ret_size);
}

static int pid_ns_stat(pid_t pid, const char *type, nsid_ns_id *ret) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int) pid, type);
        if (stat(path, &st) < 0)
                return negative_errno();
        ret->dev = (uint64_t) st.st_dev;
        ret->ino = (uint64_t) st.st_ino;
        return 0;
}

_public_ int nsid_netns_initial_id(nsid_ns_id *ret) {
        _cleanup_free_ char *comm = NULL;
        size_t size = 0;
        int r;

        assert_return(ret, -EINVAL);
        r = pid_ns_stat(1, "net", ret);
        if (r >= 0 || r == -ENOENT)
                return r;
        /* PID 1 may be unreadable to us (a sandbox's init); kernel threads always live in the
         * initial network namespace, and kthreadd is PID 2 in the initial pid namespace. */
        if (read_proc_file(2, "comm", 64, &comm, &size) < 0 || strcmp(comm, "kthreadd\n") != 0)
                return r;
        return pid_ns_stat(2, "net", ret);
}

/* ---- enumeration ---- */

typedef struct proc_rec {
        nsid_ns_id net;
        uint64_t mnt;
        pid_t pid;
} proc_rec;

typedef struct mnt_cache {
        uint64_t mnt;
        int has_nfs; /* -1 unknown */
} mnt_cache;

static int cmp_id(const nsid_ns_id *a, const nsid_ns_id *b) {
        if (a->dev != b->dev)
                return a->dev < b->dev ? -1 : 1;
        if (a->ino != b->ino)
                return a->ino < b->ino ? -1 : 1;
        return 0;
}

static int cmp_proc_rec(const void *a, const void *b) {
        const proc_rec *x = a, *y = b;
        int c = cmp_id(&x->net, &y->net);
        if (c)
                return c;
        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_info(const void *a, const void *b) {
        const nsid_netns_info *x = a, *y = b;
        if (x->id.ino != y->id.ino)
                return x->id.ino < y->id.ino ? -1 : 1;
        return x->id.dev < y->id.dev ? -1 : x->id.dev > y->id.dev;
}

/* Every process's netns (and mount ns). With only set, the mount ns is looked up only for the
 * processes in that netns (the "has NFS mounts" question about one netns). */
/* The caller's own workers (nsid/worker.h) and their runners: a worker that joined a
 * container's namespaces is not the container's process. A worker (a name-service agent
 * kept running) found as "the process in that netns" would keep a dead container's netns
 * looking alive, and stand for its context. The workers are the library's record; their
 * runners are their children (/proc/PID/task/PID/children; none told apart without
 * CONFIG_PROC_CHILDREN). At most WORKERS_MAX. */
#define WORKERS_MAX 4096
static size_t read_children(int pid, int *out, size_t n, size_t max) {
        char path[64], *text = NULL, *p;
        size_t size = 0;
        int fd;
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return n;
        FILE *f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return n;
        }
        if (getline(&text, &size, f) > 0)
                for (p = text; *p && n < max;) {
                        char *end;
                        long v = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        if (v > 0 && v <= INT32_MAX)
                                out[n++] = (int) v;
                        p = end;
                }
        free(text);
        fclose(f);
        return n;
}

static size_t collect_own_workers(int *out, size_t max) {
        size_t n = worker_pids_snapshot(out, max), first = n;
        for (size_t i = 0; i < first; i++)
                n = read_children(out[i], out, n, max);
        return n;
}

static bool is_own_worker(const int *w, size_t n, int pid) {
        for (size_t i = 0; i < n; i++)
                if (w[i] == pid)
                        return true;
        return false;
}

static int collect_procs(const nsid_ns_id *only, proc_rec **ret, size_t *ret_n) {
        _cleanup_(closedirp_) DIR *d = NULL;
        _cleanup_free_ int *workers = NULL;
        proc_rec *v = NULL;
        size_t n = 0, cap = 0, n_workers = 0;
        struct dirent *de;

        workers = malloc(WORKERS_MAX * sizeof(*workers));
        if (workers)
                n_workers = collect_own_workers(workers, WORKERS_MAX);
        d = opendir("/proc");
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                proc_rec rec = {};
                int pid;

                if (parse_pid(de->d_name, &pid) < 0)
                        continue;
                if (is_own_worker(workers, n_workers, pid))
                        continue;
                if (pid_ns_stat(pid, "net", &rec.net) < 0)
                        continue; /* exited, or a kernel thread without one */
                if (only && (rec.net.dev != only->dev || rec.net.ino != only->ino))
                        continue;
                {
                        nsid_ns_id m;
                        rec.mnt = pid_ns_stat(pid, "mnt", &m) >= 0 ? m.ino : 0;
                }
                rec.pid = pid;
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 256;
                        proc_rec *nv = reallocarray(v, ncap, sizeof(*v));
                        if (!nv) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = nv;
                        cap = ncap;
                }
                v[n++] = rec;
        }
        if (n > 0) /* (v is NULL when nothing was found: qsort wants an array) */
                qsort(v, n, sizeof(*v), cmp_proc_rec);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* Undo mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash). */
static char *unescape_mountinfo(const char *s, size_t len) {
        char *out = malloc(len + 1), *o = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *o++ = (char) ((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 |
                                       (s[i + 3] - '0'));
                        i += 3;
                } else
                        *o++ = s[i];
        }
        *o = '\0';
        return out;
}

typedef struct path_rec {
        nsid_ns_id net;
        char *path;
} path_rec;

static int add_path(path_rec **v, size_t *n, size_t *cap, const char *path, uint64_t nsfs_dev) {
        struct stat st;
        char *p;

        if (stat(path, &st) < 0 || (uint64_t) st.st_dev != nsfs_dev)
                return 0; /* not (or no longer) a netns bind mount */
        for (size_t i = 0; i < *n; i++)
                if ((*v)[i].net.ino == (uint64_t) st.st_ino)
                        return 0;
        if (*n == *cap) {
                size_t ncap = *cap ? *cap * 2 : 64;
                path_rec *nv = reallocarray(*v, ncap, sizeof(**v));
                if (!nv)
                        return -ENOMEM;
                *v = nv;
                *cap = ncap;
        }
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        (*v)[(*n)++] = (path_rec) { .net = { (uint64_t) st.st_dev, (uint64_t) st.st_ino },
                                    .path = p };
        return 0;
}

/* nsfs bind mounts of network namespaces in our mount namespace, and /run/netns. */
static int collect_paths(uint64_t nsfs_dev, path_rec **ret, size_t *ret_n) {
        _cleanup_free_ char *mi = NULL;
        path_rec *v = NULL;
        size_t n = 0, cap = 0, size = 0;
        int r;

        r = read_proc_file(getpid(), "mountinfo", MOUNTINFO_MAX, &mi, &size);
        if (r >= 0) {
                for (size_t i = 0; i < size;) {
                        char *line = mi + i, *nl = memchr(line, '\n', size - i);
                        size_t len = nl ? (size_t) (nl - line) : size - i;
                        const char *f[5] = {};
                        size_t fl[5] = {}, k = 0, j = 0;

                        i += len + 1;
                        /* fields: id parent maj:min root mountpoint ... */
                        while (j < len && k < 5) {
                                while (j < len && line[j] == ' ')
                                        j++;
                                f[k] = line + j;
                                while (j < len && line[j] != ' ')
                                        j++;
                                fl[k] = (size_t) (line + j - f[k]);
                                k++;
                        }
                        if (k < 5 || fl[3] < 5 || memcmp(f[3], "net:[", 5) != 0)
                                continue;
                        _cleanup_free_ char *mp = unescape_mountinfo(f[4], fl[4]);
                        if (!mp) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        r = add_path(&v, &n, &cap, mp, nsfs_dev);
                        if (r < 0)
                                goto fail;
                }
        }
        {
                _cleanup_(closedirp_) DIR *d = opendir("/run/netns");
                struct dirent *de;

                while (d && (de = readdir(d))) {
                        char path[300];
                        if (de->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
                        r = add_path(&v, &n, &cap, path, nsfs_dev);
                        if (r < 0)
                                goto fail;
                }
        }
        *ret = v;
        *ret_n = n;
        return 0;
fail:
        for (size_t i = 0; i < n; i++)
                free(v[i].path);
        free(v);
        return r;
}

static int mnt_has_nfs(mnt_cache **cache, size_t *n, uint64_t mnt, pid_t pid) {
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        mnt_cache *nv;
        int r;

        for (size_t i = 0; i < *n; i++)
                if ((*cache)[i].mnt == mnt)
                        return (*cache)[i].has_nfs;
        r = read_proc_file(pid, "mountinfo", MOUNTINFO_MAX, &data, &size);
        if (r < 0)
                return r; /* exited: do not cache */
        r = nsid_mountinfo_has_nfs(data, size);
        nv = reallocarray(*cache, *n + 1, sizeof(**cache));
        if (nv) {
                *cache = nv;
                (*cache)[(*n)++] = (mnt_cache) { mnt, r };
        }
        return r;
}

static char *cgroup_v2_path(const char *data) {
        const char *p = data;

        while (p && *p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                if (len >= 3 && memcmp(p, "0::", 3) == 0)
                        return strndup(p + 3, len - 3);
                p = nl ? nl + 1 : NULL;
        }
        return NULL;
}

_public_ void nsid_netns_info_free(nsid_netns_info *v, size_t n) {
        if (!v)
                return;
        for (size_t i = 0; i < n; i++) {
                free(v[i].comm);
                free(v[i].cgroup);
                free(v[i].path);
        }
        free(v);
}

/* Room for entry n in *v (capacity *cap), doubling from 64. */
static int info_reserve(nsid_netns_info **v, size_t *cap, size_t n) {
        if (n < *cap)
                return 0;
        size_t ncap = *cap ? *cap * 2 : 64;
        nsid_netns_info *nv = reallocarray(*v, ncap, sizeof(**v));
        if (!nv)
                return -ENOMEM;
        *v = nv;
        *cap = ncap;
        return 0;
}

_public_ int nsid_netns_scan(nsid_netns_info **ret, size_t *ret_n) {
        _cleanup_free_ proc_rec *procs = NULL;
        _cleanup_free_ mnt_cache *cache = NULL;
        path_rec *paths = NULL;
        size_t nprocs = 0, npaths = 0, ncache = 0, n = 0, cap = 0;
        nsid_netns_info *v = NULL;
        nsid_ns_id init = {}, self = {};
        bool have_init;
        int r;

        assert_return(ret, -EINVAL);
        assert_return(ret_n, -EINVAL);

        have_init = nsid_netns_initial_id(&init) >= 0;
        r = pid_ns_stat(getpid(), "net", &self);
        if (r < 0)
                return r;
        r = collect_procs(NULL, &procs, &nprocs);
        if (r < 0)
                return r;
        r = collect_paths(self.dev, &paths, &npaths);
        if (r < 0)
                return r;

        for (size_t i = 0; i < nprocs; i++) {
                nsid_netns_info *info;
                size_t j = i;

                if (i > 0 && cmp_id(&procs[i].net, &procs[i - 1].net) == 0)
                        continue;
                if (info_reserve(&v, &cap, n) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
                info = &v[n++];
                *info = (nsid_netns_info) { .id = procs[i].net, .pid = procs[i].pid };
                info->initial = have_init && cmp_id(&info->id, &init) == 0;
                for (; j < nprocs && cmp_id(&procs[j].net, &info->id) == 0; j++) {
                        info->n_procs++;
                        if (!info->nfs_mounted && procs[j].mnt != 0 &&
                            mnt_has_nfs(&cache, &ncache, procs[j].mnt, procs[j].pid) > 0)
                                info->nfs_mounted = true;
                }
                {
                        _cleanup_free_ char *comm = NULL, *cg = NULL;
                        size_t sz;
                        if (read_proc_file(info->pid, "comm", 4096, &comm, &sz) >= 0) {
                                if (sz > 0 && comm[sz - 1] == '\n')
                                        comm[sz - 1] = '\0';
                                info->comm = TAKE_PTR(comm);
                        }
                        if (read_proc_file(info->pid, "cgroup", 65536, &cg, &sz) >= 0)
                                info->cgroup = cgroup_v2_path(cg);
                }
        }

        for (size_t i = 0; i < npaths; i++) {
                nsid_netns_info *info = NULL;
                for (size_t k = 0; k < n; k++)
                        if (cmp_id(&v[k].id, &paths[i].net) == 0) {
                                info = &v[k];
                                break;
                        }
                if (!info) {
                        if (info_reserve(&v, &cap, n) < 0) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        info = &v[n++];
                        *info = (nsid_netns_info) { .id = paths[i].net };
                        info->initial = have_init && cmp_id(&info->id, &init) == 0;
                }
                if (!info->path)
                        info->path = TAKE_PTR(paths[i].path);
        }

        for (size_t i = 0; i < npaths; i++)
                free(paths[i].path);
        free(paths);
        qsort(v, n, sizeof(*v), cmp_info);
        *ret = v;
        *ret_n = n;
        return 0;
fail:
        for (size_t i = 0; i < npaths; i++)
                free(paths[i].path);
        free(paths);
        nsid_netns_info_free(v, n);
        return r;
}

_public_ int nsid_netns_info_open(const nsid_netns_info *info, nsid_ns **ret_ns,
                                  nsid_proc **ret_proc) {
        _cleanup_(nsid_proc_unrefp) nsid_proc *p = NULL;
        _cleanup_(nsid_ns_unrefp) nsid_ns *ns = NULL;
        nsid_ns_id id;
        int r = -ENOENT;

        assert_return(info, -EINVAL);
        assert_return(ret_ns, -EINVAL);

        if (info->pid > 0) {
                r = nsid_proc_open(info->pid, &p);
                if (r >= 0)
                        r = nsid_proc_open_ns(p, NSID_NS_NET, &ns);
                if (r >= 0) {
                        r = nsid_ns_get_id(ns, &id);
                        if (r >= 0 && cmp_id(&id, &info->id) != 0)
                                r = -ESTALE;
                }
                if (r < 0) {
                        p = nsid_proc_unref(p);
                        ns = nsid_ns_unref(ns);
                }
        }
        if (r < 0 && info->path) {
                r = nsid_ns_open_path(info->path, NSID_NS_NET, &ns);
                if (r >= 0) {
                        r = nsid_ns_get_id(ns, &id);
                        if (r >= 0 && cmp_id(&id, &info->id) != 0)
                                r = -ESTALE;
                }
        }
        if (r < 0)
                return r;
        *ret_ns = TAKE_PTR(ns);
        if (ret_proc)
                *ret_proc = TAKE_PTR(p);
        return 0;
}

_public_ int nsid_netns_has_nfs_mounts(const nsid_ns_id *id) {
        _cleanup_free_ proc_rec *procs = NULL;
        _cleanup_free_ mnt_cache *cache = NULL;
        size_t nprocs = 0, ncache = 0;
        int r;

        assert_return(id, -EINVAL);
        r = collect_procs(id, &procs, &nprocs);
        if (r < 0)
                return r;
        for (size_t i = 0; i < nprocs; i++)
                if (cmp_id(&procs[i].net, id) == 0 && procs[i].mnt != 0 &&
                    mnt_has_nfs(&cache, &ncache, procs[i].mnt, procs[i].pid) > 0)
                        return 1;
        return 0;
}

/* The volumes file: a header line, then one line per mounted volume (nfs_volume_list_show()
 * in fs/nfs/client.c, the same in 6.1 and 6.12). A file too large to read has volumes. */
#define NFS_VOLUMES_MAX (4u * 1024u * 1024u)

static int proc_in_netns(const nsid_proc *proc, const nsid_ns_id *want) {
        _cleanup_(nsid_ns_unrefp) nsid_ns *cur = NULL;
        nsid_ns_id id;
        int r;

        r = nsid_proc_open_ns(proc, NSID_NS_NET, &cur);
        if (r >= 0)
                r = nsid_ns_get_id(cur, &id);
        if (r < 0)
                return r;
        return cmp_id(&id, want) == 0 ? 0 : -ESTALE;
}

_public_ int nsid_netns_nfs_volumes(const nsid_proc *proc, const nsid_ns *netns) {
        _cleanup_free_ char *data = NULL;
        nsid_ns_id want;
        const char *nl;
        size_t size = 0;
        int r, k;

        assert_return(proc, -EINVAL);
        assert_return(netns, -EINVAL);
        assert_return(nsid_ns_get_type(netns) == NSID_NS_NET, -EINVAL);

        r = nsid_ns_get_id(netns, &want);
        if (r < 0)
                return r;
        /* /proc/PID/net is the netns the process is in when the file is opened: checked
         * before and after, so a process that moved in between is not believed. */
        r = proc_in_netns(proc, &want);
        if (r < 0)
                return r;
        r = nsid_proc_read_file(proc, "net/nfsfs/volumes", NFS_VOLUMES_MAX, &data, &size);
        if (r < 0 && r != -ENOENT && r != -EFBIG)
                return r;
        k = proc_in_netns(proc, &want);
        if (k < 0)
                return k;
        if (r == -ENOENT)
                return 0; /* no nfs module: nothing can be mounted */
        if (r == -EFBIG)
                return 1;
        nl = memchr(data, '\n', size);
        return nl && (size_t) (nl - data) + 1 < size ? 1 : 0;
}

/* ---- cookies and boot id ---- */

struct cookie_args {
        int fd;
        uint64_t cookie;
        int r;
};

static void *cookie_thread(void *userdata) {
        struct cookie_args *a = userdata;
        socklen_t len = sizeof(a->cookie);
        int s;

        /* setns(CLONE_NEWNET) changes only this thread, which exits right after. */
        if (setns(a->fd, CLONE_NEWNET) < 0) {
                a->r = negative_errno();
                return NULL;
        }
        s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0) {
                a->r = negative_errno();
                return NULL;
        }
        if (getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &a->cookie, &len) < 0)
                a->r = negative_errno();
        else
                a->r = len == sizeof(a->cookie) ? 0 : -EIO;
        safe_close(s);
        return NULL;
}

_public_ int nsid_netns_get_cookie(nsid_ns *netns, uint64_t *ret) {
        struct cookie_args a = { .r = -EIO };
        pthread_t t;
        int r;

        assert_return(netns, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(nsid_ns_get_type(netns) == NSID_NS_NET, -EINVAL);

        a.fd = nsid_ns_get_fd(netns);
        r = pthread_create(&t, NULL, cookie_thread, &a);
        if (r != 0)
                return -r;
        (void) pthread_join(t, NULL);
        if (a.r < 0)
                return a.r;
        *ret = a.cookie;
        return 0;
}

_public_ int nsid_boot_id(char ret[37]) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r;

        assert_return(ret, -EINVAL);
        fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = read_fd_capped(fd, 64, &data, &size);
        if (r < 0)
                return r;
        if (size < 36)
                return -EBADMSG;
        memcpy(ret, data, 36);
        ret[36] = '\0';
        return 0;
}

_public_ int nsid_netns_entry_is_live(const nsid_registry_entry *e, void *userdata) {
        nsid_netns_info *v = NULL;
        char boot_id[37];
        size_t n = 0;
        int r, live = 0;

        assert_return(e, -EINVAL);
        r = nsid_boot_id(boot_id);
        if (r < 0)
                return r;
        if (!e->boot_id || strcmp(e->boot_id, boot_id) != 0)
                return 0; /* another boot: every netns of it is gone */
        r = nsid_netns_scan(&v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(nsid_ns_unrefp) nsid_ns *ns = NULL;
                uint64_t cookie;

                if (cmp_id(&v[i].id, &e->netns) != 0)
                        continue;
                r = nsid_netns_info_open(&v[i], &ns, NULL);
                if (r >= 0)
                        r = nsid_netns_get_cookie(ns, &cookie);
                if (r < 0)
                        live = r == -ESRCH || r == -ENOENT || r == -ESTALE ? 0 : r;
                else
                        live = cookie == e->netns_cookie;
                break;
        }
        nsid_netns_info_free(v, n);
        return live;
}
