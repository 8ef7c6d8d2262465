/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* knfsd's clients seen over a window, and the checks for owner strings that collide. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log-internal.h"
#include "macro.h"
#include "nfsdinfo-internal.h"
#include "parse-util.h"
#include "nsid/nfsdclients.h"
#include "siphash.h"

#define NFSD_CLIENTS_DIR "/proc/fs/nfsd/clients"

/* One (owner string, address, confirmed or not) seen, with when it was last seen. Many scans
 * of the same clients cost no memory: a repeat updates last_seen. */
typedef struct obs {
        uint64_t last_seen;
        uint64_t hash;
        uint8_t *name;
        size_t name_len;
        int minor;
        bool confirmed;
        char host[NFSD_HOST_MAX];
} obs;

typedef struct finding {
        nsid_nfsd_finding_kind kind;
        const obs *owner; /* the first observation of the owner string */
        char *owner_escaped;
        size_t n_hosts;
        const char **hosts; /* into the observations */
} finding;

struct nsid_nfsd_clients {
        unsigned n_ref;
        uint8_t key[16];
        obs *obs;
        size_t n_obs, cap_obs;
        uint32_t *table; /* open addressing: index + 1 into obs, 0 empty */
        size_t table_size;
        uint64_t newest;
        uint64_t records, skipped;
        size_t owners;
        finding *findings;
        size_t n_findings;
};

_public_ int nsid_nfsd_clients_new(nsid_nfsd_clients **ret) {
        nsid_nfsd_clients *c;

        assert_return(ret, -EINVAL);
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->n_ref = 1;
        siphash_random_key(c->key);
        *ret = c;
        return 0;
}

_public_ nsid_nfsd_clients *nsid_nfsd_clients_ref(nsid_nfsd_clients *c) {
        if (c)
                c->n_ref++;
        return c;
}

static void findings_clear(nsid_nfsd_clients *c) {
        for (size_t i = 0; i < c->n_findings; i++) {
                free(c->findings[i].owner_escaped);
                free(c->findings[i].hosts);
        }
        free(c->findings);
        c->findings = NULL;
        c->n_findings = 0;
}

_public_ nsid_nfsd_clients *nsid_nfsd_clients_unref(nsid_nfsd_clients *c) {
        if (!c || --c->n_ref > 0)
                return NULL;
        findings_clear(c);
        for (size_t i = 0; i < c->n_obs; i++)
                free(c->obs[i].name);
        free(c->obs);
        free(c->table);
        free(c);
        return NULL;
}

static uint64_t obs_hash(const nsid_nfsd_clients *c, const nfsd_info *in) {
        uint64_t h = siphash24(in->name, in->name_len, c->key);
        return h ^ (siphash24(in->host, strlen(in->host), c->key) * 31) ^
               (nfsd_status_confirmed(in->status) ? 0x9e3779b97f4a7c15ULL : 0);
}

static int table_grow(nsid_nfsd_clients *c) {
        size_t size = c->table_size ? c->table_size * 2 : 1024;
        uint32_t *t = calloc(size, sizeof(*t));

        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_obs; i++) {
                size_t j = c->obs[i].hash & (size - 1);
                while (t[j])
                        j = (j + 1) & (size - 1);
                t[j] = (uint32_t) (i + 1);
        }
        free(c->table);
        c->table = t;
        c->table_size = size;
        return 0;
}

static int obs_add(nsid_nfsd_clients *c, const nfsd_info *in, uint64_t now_ms) {
        bool confirmed = nfsd_status_confirmed(in->status);
        uint64_t h = obs_hash(c, in);
        size_t j;
        obs *o;

        if ((c->n_obs + 1) * 2 > c->table_size && table_grow(c) < 0)
                return -ENOMEM;
        if (c->n_obs >= UINT32_MAX - 1)
                return -ENOMEM;
        for (j = h & (c->table_size - 1); c->table[j]; j = (j + 1) & (c->table_size - 1)) {
                o = &c->obs[c->table[j] - 1];
                if (o->hash == h && o->confirmed == confirmed && o->name_len == in->name_len &&
                    strcmp(o->host, in->host) == 0 &&
                    memcmp(o->name, in->name, in->name_len) == 0) {
                        if (now_ms > o->last_seen)
                                o->last_seen = now_ms;
                        if (in->minor >= 0)
                                o->minor = in->minor;
                        return 0;
                }
        }
        if (c->n_obs == c->cap_obs) {
                size_t cap = c->cap_obs ? c->cap_obs * 2 : 256;
                obs *nv = reallocarray(c->obs, cap, sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                c->obs = nv;
                c->cap_obs = cap;
        }
        o = &c->obs[c->n_obs];
        *o = (obs) { .last_seen = now_ms, .hash = h, .name_len = in->name_len,
                     .minor = in->minor, .confirmed = confirmed };
        o->name = malloc(in->name_len ? in->name_len : 1);
        if (!o->name)
                return -ENOMEM;
        memcpy(o->name, in->name, in->name_len);
        memcpy(o->host, in->host, sizeof(o->host));
        c->table[j] = (uint32_t) ++c->n_obs;
        return 0;
}

_public_ int nsid_nfsd_clients_add_info(nsid_nfsd_clients *c, const char *data, size_t size,
                                        uint64_t now_ms) {
        nfsd_info info;
        int r;

        assert_return(c, -EINVAL);
        assert_return(data || size == 0, -EINVAL);

        c->records++;
        r = nfsd_info_parse(data ? data : "", size, &info);
        if (r < 0) {
                c->skipped++;
                return r;
        }
        if (now_ms > c->newest)
                c->newest = now_ms;
        return obs_add(c, &info, now_ms);
}

#define INFO_OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* <dfd>/<name>/info with no symbolic link in either component: one openat2() where the kernel
 * has it (5.6+), else two openat(O_NOFOLLOW). */
static int open_info(int dfd, const char *name) {
        static bool no_openat2;
        _cleanup_close_ int cfd = -EBADF;
        char path[NAME_MAX + 8];
        int fd;

        if (!no_openat2 && strlen(name) <= NAME_MAX) {
                struct open_how how = {
                        .flags = INFO_OPEN_FLAGS,
                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
                };
                snprintf(path, sizeof(path), "%s/info", name);
                fd = (int) syscall(SYS_openat2, dfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != ENOSYS)
                        return negative_errno();
                no_openat2 = true;
        }
        cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0)
                return negative_errno();
        fd = openat(cfd, "info", INFO_OPEN_FLAGS);
        return fd < 0 ? negative_errno() : fd;
}

/* Read <dfd>/<name>/info: no symlinks, a regular file, bounded. */
static int read_info(int dfd, const char *name, char *buf, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t n = 0;

        fd = open_info(dfd, name);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -ENXIO;
        for (;;) {
                ssize_t k = read(fd, buf + n, NSID_NFSD_INFO_MAX + 1 - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > NSID_NFSD_INFO_MAX)
                        return -EFBIG;
        }
        *ret_size = n;
        return 0;
}

_public_ int nsid_nfsd_clients_scan(nsid_nfsd_clients *c, const char *dir, uint64_t now_ms) {
        _cleanup_free_ char *buf = NULL;
        DIR *d;
        int dfd, added = 0, r = 0;
        struct dirent *de;

        assert_return(c, -EINVAL);

        if (!dir)
                dir = NFSD_CLIENTS_DIR;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = negative_errno();
                return log_debug_errno(r, "nfsd clients: cannot open %s: %s", dir, strerror(-r));
        }
        d = fdopendir(dfd);
        if (!d) {
                r = negative_errno();
                close(dfd);
                return r;
        }
        buf = malloc(NSID_NFSD_INFO_MAX + 1);
        if (!buf) {
                closedir(d);
                return -ENOMEM;
        }
        if (now_ms > c->newest)
                c->newest = now_ms;
        for (;;) {
                size_t size = 0;
                int k;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = errno != 0 ? -errno : 0;
                        break;
                }
                if (de->d_name[0] == '.')
                        continue;
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                k = read_info(dirfd(d), de->d_name, buf, &size);
                if (k < 0) {
                        /* -ENOENT: the client went away between readdir and open; it is
                         * counted, and the scan goes on (never its result) */
                        c->records++;
                        c->skipped++;
                        log_debug("nfsd clients: %s/%s/info: %s", dir, de->d_name, strerror(-k));
                        continue;
                }
                k = nsid_nfsd_clients_add_info(c, buf, size, now_ms);
                if (k == -ENOMEM) {
                        r = k;
                        break;
                }
                if (k < 0)
                        log_debug("nfsd clients: %s/%s/info does not parse", dir, de->d_name);
                else
                        added++;
        }
        closedir(d);
        return r < 0 ? r : added;
}

_public_ uint64_t nsid_nfsd_clients_get_records(const nsid_nfsd_clients *c) {
        return c ? c->records : 0;
}

_public_ uint64_t nsid_nfsd_clients_get_skipped(const nsid_nfsd_clients *c) {
        return c ? c->skipped : 0;
}

_public_ size_t nsid_nfsd_clients_get_owners(const nsid_nfsd_clients *c) {
        return c ? c->owners : 0;
}

static int cmp_obs(const void *a, const void *b) {
        const obs *x = *(const obs *const *) a, *y = *(const obs *const *) b;
        int r;

        if (x->name_len != y->name_len)
                return x->name_len < y->name_len ? -1 : 1;
        r = memcmp(x->name, y->name, x->name_len);
        if (r)
                return r;
        return strcmp(x->host, y->host);
}

static bool same_owner(const obs *x, const obs *y) {
        return x->name_len == y->name_len && memcmp(x->name, y->name, x->name_len) == 0;
}

static int finding_add(nsid_nfsd_clients *c, nsid_nfsd_finding_kind kind, obs **group,
                       size_t n, bool confirmed_only) {
        finding *nv, *f;

        nv = reallocarray(c->findings, c->n_findings + 1, sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        c->findings = nv;
        f = &c->findings[c->n_findings];
        *f = (finding) { .kind = kind, .owner = group[0] };
        f->owner_escaped = malloc(group[0]->name_len * 4 + 1);
        f->hosts = calloc(n, sizeof(*f->hosts));
        if (!f->owner_escaped || !f->hosts) {
                free(f->owner_escaped);
                free(f->hosts);
                return -ENOMEM;
        }
        escape_bytes(group[0]->name, group[0]->name_len, f->owner_escaped);
        /* the group is sorted by host: one entry per distinct host */
        for (size_t i = 0; i < n; i++) {
                if (confirmed_only && !group[i]->confirmed)
                        continue;
                if (f->n_hosts > 0 && strcmp(f->hosts[f->n_hosts - 1], group[i]->host) == 0)
                        continue;
                f->hosts[f->n_hosts++] = group[i]->host;
        }
        c->n_findings++;
        return 0;
}

static size_t distinct_hosts(obs **group, size_t n, bool confirmed_only) {
        const char *last = NULL;
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                if (confirmed_only && !group[i]->confirmed)
                        continue;
                if (!last || strcmp(last, group[i]->host) != 0)
                        k++;
                last = group[i]->host;
        }
        return k;
}

_public_ int nsid_nfsd_clients_check(nsid_nfsd_clients *c, uint64_t window_ms) {
        _cleanup_free_ obs **v = NULL;
        uint64_t since;
        size_t n = 0;
        int r;

        assert_return(c, -EINVAL);

        findings_clear(c);
        c->owners = 0;
        since = c->newest > window_ms ? c->newest - window_ms : 0;
        v = calloc(c->n_obs ? c->n_obs : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_obs; i++)
                if (c->obs[i].last_seen >= since)
                        v[n++] = &c->obs[i];
        qsort(v, n, sizeof(*v), cmp_obs);

        for (size_t i = 0; i < n;) {
                size_t j = i + 1, k;
                int minor = v[i]->minor, uniq;

                while (j < n && same_owner(v[i], v[j]))
                        j++;
                k = j - i;
                c->owners++;
                for (size_t m = i; m < j; m++)
                        if (v[m]->minor >= 0)
                                minor = v[m]->minor;

                if (minor == 0 && distinct_hosts(v + i, k, false) > 1)
                        r = finding_add(c, NSID_NFSD_V40_COLLISION, v + i, k, false);
                else if (minor != 0 && distinct_hosts(v + i, k, true) > 1)
                        r = finding_add(c, NSID_NFSD_OWNER_MULTIPLE_ADDRESSES, v + i, k, true);
                else
                        r = 0;
                if (r < 0)
                        return r;
                uniq = nfsd_owner_has_uniquifier(v[i]->name, v[i]->name_len);
                if (uniq == 0) {
                        r = finding_add(c, NSID_NFSD_OWNER_NO_UNIQUIFIER, v + i, k, false);
                        if (r < 0)
                                return r;
                }
                i = j;
        }
        if (c->n_findings > INT32_MAX)
                return -ERANGE;
        return (int) c->n_findings;
}

_public_ int nsid_nfsd_clients_get_finding(const nsid_nfsd_clients *c, size_t i,
                                           nsid_nfsd_finding_kind *ret_kind,
                                           const char **ret_owner, size_t *ret_n_addresses) {
        assert_return(c, -EINVAL);
        if (i >= c->n_findings)
                return -ERANGE;
        if (ret_kind)
                *ret_kind = c->findings[i].kind;
        if (ret_owner)
                *ret_owner = c->findings[i].owner_escaped;
        if (ret_n_addresses)
                *ret_n_addresses = c->findings[i].n_hosts;
        return 0;
}

_public_ int nsid_nfsd_clients_get_finding_owner_raw(const nsid_nfsd_clients *c, size_t i,
                                                     const uint8_t **ret_data,
                                                     size_t *ret_size) {
        assert_return(c, -EINVAL);
        assert_return(ret_data, -EINVAL);
        assert_return(ret_size, -EINVAL);
        if (i >= c->n_findings)
                return -ERANGE;
        *ret_data = c->findings[i].owner->name;
        *ret_size = c->findings[i].owner->name_len;
        return 0;
}

_public_ const char *nsid_nfsd_clients_get_finding_address(const nsid_nfsd_clients *c,
                                                           size_t i, size_t j) {
        if (!c || i >= c->n_findings || j >= c->findings[i].n_hosts)
                return NULL;
        return c->findings[i].hosts[j];
}

_public_ const char *nsid_nfsd_finding_kind_to_string(nsid_nfsd_finding_kind k) {
        switch (k) {
        case NSID_NFSD_OWNER_MULTIPLE_ADDRESSES:
                return "owner-multiple-addresses";
        case NSID_NFSD_OWNER_NO_UNIQUIFIER:
                return "owner-no-uniquifier";
        case NSID_NFSD_V40_COLLISION:
                return "v40-owner-collision";
        default:
                return NULL;
        }
}

_public_ const char *nsid_nfsd_finding_kind_fix(nsid_nfsd_finding_kind k) {
        switch (k) {
        case NSID_NFSD_OWNER_MULTIPLE_ADDRESSES:
                return "more than one client (host or container) presents this owner string and "
                       "they take the lease from each other: give each its own identity. On "
                       "cloned hosts run 'nsidctl host-secret new' on each clone (or give each "
                       "its own /etc/machine-id before first boot); in containers run "
                       "nsid-uniquifier so each netns gets its own uniquifier";
        case NSID_NFSD_OWNER_NO_UNIQUIFIER:
                return "the client sets no uniquifier, so its owner string is only its "
                       "hostname and any host or container with the same hostname takes its "
                       "lease: install nsid on the client (nsid-uniquifier sets "
                       "/sys/fs/nfs/net/nfs_client/identifier per netns), or set the nfs "
                       "module's nfs4_unique_id on the host";
        case NSID_NFSD_V40_COLLISION:
                return "several NFSv4.0 clients present one owner string (same hostname, no "
                       "uniquifier): give each netns a uniquifier with nsid-uniquifier, or "
                       "mount with vers=4.1 or later";
        default:
                return NULL;
        }
}
