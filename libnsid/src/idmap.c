/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ID translation through uid_map/gid_map (see nsid/idmap.h for the accepted text). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idmap-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "nsid/idmap.h"
#include "parse-util.h"

#define OVERFLOW_ID_DEFAULT 65534u
/* A map is at most 340 lines of 33 bytes when the kernel prints it. Anything bigger is not
 * a kernel map; the cap only bounds what is read, parsing refuses line 341 anyway. */
#define IDMAP_FILE_MAX (64u * 1024u)

struct nsid_idmap {
        unsigned n_ref;
        nsid_idmap_kind kind;
        uint32_t overflow_id;
        unsigned n;
        nsid_idmap_extent ext[NSID_IDMAP_MAX_EXTENTS]; /* in map order */
        uint16_t by_ns[NSID_IDMAP_MAX_EXTENTS];        /* indices sorted by ns_first */
        uint16_t by_host[NSID_IDMAP_MAX_EXTENTS];      /* indices sorted by host_first */
};

static bool kind_valid(nsid_idmap_kind kind) {
        return (int) kind >= 0 && kind < _NSID_IDMAP_KIND_MAX;
}

uint32_t idmap_read_overflow_id(nsid_idmap_kind kind) {
        const char *path = kind == NSID_IDMAP_GID ? "/proc/sys/kernel/overflowgid"
                                                  : "/proc/sys/kernel/overflowuid";
        char buf[32];
        uint32_t v;
        ssize_t n;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return OVERFLOW_ID_DEFAULT;
        n = read(fd, buf, sizeof(buf) - 1);
        safe_close(fd);
        if (n <= 0)
                return OVERFLOW_ID_DEFAULT;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        if (parse_u32(buf, &v) < 0 || v == NSID_IDMAP_INVALID_ID)
                return OVERFLOW_ID_DEFAULT;
        return v;
}

/* The kernel's isspace() minus '\n' (lines are already split) and minus Latin-1 0xa0. */
static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* One number at *p (strictly decimal, <= UINT32_MAX), advancing *p past it. */
static int take_number(const char **p, const char *end, uint32_t *ret) {
        const char *s = *p;
        uint64_t v;
        int r;

        while (*p < end && is_digit(**p))
                (*p)++;
        if (*p == s)
                return -EINVAL;
        /* More than 20 digits is out of range anyway: rejected before parsing. (It once
         * guarded parse_u64_n() reading beyond len, found by fuzz-idmap; fixed since.) */
        if (*p - s > 20)
                return -EINVAL;
        r = parse_u64_n(s, (size_t) (*p - s), UINT32_MAX, &v);
        if (r < 0)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

static void skip_blanks(const char **p, const char *end) {
        while (*p < end && is_blank(**p))
                (*p)++;
}

static int parse_line(const char *s, size_t len, nsid_idmap_extent *ret) {
        const char *p = s, *end = s + len;
        uint32_t v[3];

        skip_blanks(&p, end);
        for (unsigned i = 0; i < 3; i++) {
                if (take_number(&p, end, &v[i]) < 0)
                        return -EINVAL;
                /* A separator is required between numbers, optional after the last. */
                if (i < 2 && (p >= end || !is_blank(*p)))
                        return -EINVAL;
                skip_blanks(&p, end);
        }
        if (p != end)
                return -EINVAL;

        /* The kernel's checks (map_write()): valid starts, non-zero count, no wrap. */
        if (v[0] == NSID_IDMAP_INVALID_ID || v[1] == NSID_IDMAP_INVALID_ID)
                return -EINVAL;
        if (v[2] == 0)
                return -EINVAL;
        if ((uint64_t) v[0] + v[2] > UINT32_MAX || (uint64_t) v[1] + v[2] > UINT32_MAX)
                return -EINVAL;

        *ret = (nsid_idmap_extent) { .ns_first = v[0], .host_first = v[1], .count = v[2] };
        return 0;
}

/* Insertion sort of at most 340 indices by one side's first id. */
static void sort_indices(const nsid_idmap_extent *ext, unsigned n, bool host, uint16_t *idx) {
        for (unsigned i = 0; i < n; i++) {
                uint16_t cur = (uint16_t) i;
                uint32_t key = host ? ext[i].host_first : ext[i].ns_first;
                unsigned j = i;
                while (j > 0) {
                        const nsid_idmap_extent *prev = &ext[idx[j - 1]];
                        if ((host ? prev->host_first : prev->ns_first) <= key)
                                break;
                        idx[j] = idx[j - 1];
                        j--;
                }
                idx[j] = cur;
        }
}

static bool sorted_overlap(const nsid_idmap_extent *ext, unsigned n, bool host,
                           const uint16_t *idx) {
        for (unsigned i = 1; i < n; i++) {
                const nsid_idmap_extent *a = &ext[idx[i - 1]], *b = &ext[idx[i]];
                uint64_t a_end = (uint64_t) (host ? a->host_first : a->ns_first) + a->count;
                if (a_end > (host ? b->host_first : b->ns_first))
                        return true;
        }
        return false;
}

int idmap_parse_with_overflow(nsid_idmap_kind kind, const char *text, size_t size,
                              uint32_t overflow_id, nsid_idmap **ret) {
        _cleanup_free_ nsid_idmap *m = NULL;
        size_t pos = 0;
        unsigned line = 0;

        assert_return(kind_valid(kind), -EINVAL);
        assert_return(text || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->n_ref = 1;
        m->kind = kind;
        m->overflow_id = overflow_id;

        while (pos < size) {
                const char *s = text + pos;
                const char *nl = memchr(s, '\n', size - pos);
                size_t len = nl ? (size_t) (nl - s) : size - pos;

                line++;
                if (m->n == NSID_IDMAP_MAX_EXTENTS)
                        return log_debug_errno(EINVAL, "id map has more than %u extents",
                                               NSID_IDMAP_MAX_EXTENTS);
                if (parse_line(s, len, &m->ext[m->n]) < 0)
                        return log_debug_errno(EINVAL, "id map line %u is malformed", line);
                m->n++;
                pos += len + (nl ? 1 : 0);
        }

        sort_indices(m->ext, m->n, false, m->by_ns);
        sort_indices(m->ext, m->n, true, m->by_host);
        if (sorted_overlap(m->ext, m->n, false, m->by_ns) ||
            sorted_overlap(m->ext, m->n, true, m->by_host))
                return log_debug_errno(EINVAL, "id map has overlapping extents");

        *ret = TAKE_PTR(m);
        return 0;
}

_public_ int nsid_idmap_parse(nsid_idmap_kind kind, const char *text, size_t size,
                              nsid_idmap **ret) {
        assert_return(kind_valid(kind), -EINVAL);
        assert_return(text || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        return idmap_parse_with_overflow(kind, text, size, idmap_read_overflow_id(kind), ret);
}

_public_ int nsid_idmap_new_identity(nsid_idmap_kind kind, nsid_idmap **ret) {
        static const char identity[] = "0 0 4294967295\n";

        assert_return(kind_valid(kind), -EINVAL);
        assert_return(ret, -EINVAL);

        return nsid_idmap_parse(kind, identity, sizeof(identity) - 1, ret);
}

_public_ int nsid_idmap_load_proc(const nsid_proc *p, nsid_idmap_kind kind, nsid_idmap **ret) {
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r;

        assert_return(p, -EINVAL);
        assert_return(kind_valid(kind), -EINVAL);
        assert_return(ret, -EINVAL);

        const char *name = kind == NSID_IDMAP_UID ? "uid_map" : "gid_map";
        r = nsid_proc_read_file(p, name, IDMAP_FILE_MAX, &data, &size);
        if (r < 0)
                return r;
        r = nsid_idmap_parse(kind, data, size, ret);
        if (r < 0)
                return log_debug_errno(r, "/proc/%d/%s: %s", (int) nsid_proc_get_pid(p), name,
                                       strerror(-r));
        return 0;
}

_public_ nsid_idmap *nsid_idmap_ref(nsid_idmap *m) {
        if (m)
                __atomic_add_fetch(&m->n_ref, 1, __ATOMIC_RELAXED);
        return m;
}

_public_ nsid_idmap *nsid_idmap_unref(nsid_idmap *m) {
        if (!m)
                return NULL;
        if (__atomic_sub_fetch(&m->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        free(m);
        return NULL;
}

_public_ int nsid_idmap_get_kind(const nsid_idmap *m) {
        assert_return(m, -EINVAL);
        return (int) m->kind;
}

_public_ int nsid_idmap_get_n_extents(const nsid_idmap *m) {
        assert_return(m, -EINVAL);
        return (int) m->n;
}

_public_ int nsid_idmap_get_extent(const nsid_idmap *m, unsigned i, nsid_idmap_extent *ret) {
        assert_return(m, -EINVAL);
        assert_return(ret, -EINVAL);
        if (i >= m->n)
                return -ERANGE;
        *ret = m->ext[i];
        return 0;
}

_public_ int nsid_idmap_get_overflow_id(const nsid_idmap *m, uint32_t *ret) {
        assert_return(m, -EINVAL);
        assert_return(ret, -EINVAL);
        *ret = m->overflow_id;
        return 0;
}

_public_ int nsid_idmap_is_identity(const nsid_idmap *m) {
        uint64_t next = 0;

        assert_return(m, -EINVAL);
        for (unsigned i = 0; i < m->n; i++) {
                const nsid_idmap_extent *e = &m->ext[m->by_ns[i]];
                if (e->ns_first != next || e->host_first != e->ns_first)
                        return 0;
                next += e->count;
        }
        return next == UINT32_MAX;
}

/* The extent containing id on one side, or NULL. by[] is sorted and extents do not overlap,
 * so only the last extent starting at or below id can contain it. */
static const nsid_idmap_extent *lookup(const nsid_idmap *m, bool host, uint32_t id) {
        const uint16_t *by = host ? m->by_host : m->by_ns;
        unsigned lo = 0, hi = m->n; /* find the first index whose start is > id */

        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;
                const nsid_idmap_extent *e = &m->ext[by[mid]];
                if ((host ? e->host_first : e->ns_first) <= id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        const nsid_idmap_extent *e = &m->ext[by[lo - 1]];
        uint32_t first = host ? e->host_first : e->ns_first;
        if (id - first >= e->count)
                return NULL;
        return e;
}

_public_ int nsid_idmap_to_host(const nsid_idmap *m, uint32_t ns_id, uint32_t *ret_host_id) {
        assert_return(m, -EINVAL);
        assert_return(ret_host_id, -EINVAL);

        const nsid_idmap_extent *e = lookup(m, false, ns_id);
        if (!e)
                return -ENOENT;
        *ret_host_id = e->host_first + (ns_id - e->ns_first);
        return 0;
}

_public_ int nsid_idmap_to_ns(const nsid_idmap *m, uint32_t host_id, uint32_t *ret_ns_id) {
        assert_return(m, -EINVAL);
        assert_return(ret_ns_id, -EINVAL);

        const nsid_idmap_extent *e = lookup(m, true, host_id);
        if (!e)
                return -ENOENT;
        *ret_ns_id = e->ns_first + (host_id - e->host_first);
        return 0;
}

_public_ int nsid_idmap_to_host_munged(const nsid_idmap *m, uint32_t ns_id,
                                       uint32_t *ret_host_id) {
        assert_return(m, -EINVAL);
        assert_return(ret_host_id, -EINVAL);

        if (nsid_idmap_to_host(m, ns_id, ret_host_id) == 0)
                return 0;
        *ret_host_id = m->overflow_id;
        return 1;
}

_public_ int nsid_idmap_to_ns_munged(const nsid_idmap *m, uint32_t host_id, uint32_t *ret_ns_id) {
        assert_return(m, -EINVAL);
        assert_return(ret_ns_id, -EINVAL);

        if (nsid_idmap_to_ns(m, host_id, ret_ns_id) == 0)
                return 0;
        *ret_ns_id = m->overflow_id;
        return 1;
}

_public_ int nsid_idmap_format(const nsid_idmap *m, char **ret) {
        assert_return(m, -EINVAL);
        assert_return(ret, -EINVAL);

        /* 3 * 10 digits + 2 spaces + '\n' per extent, plus the NUL. */
        size_t cap = (size_t) m->n * 33 + 1, off = 0;
        char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        buf[0] = '\0';
        for (unsigned i = 0; i < m->n; i++) {
                int k = snprintf(buf + off, cap - off, "%10u %10u %10u\n", m->ext[i].ns_first,
                                 m->ext[i].host_first, m->ext[i].count);
                if (k < 0 || (size_t) k >= cap - off) {
                        free(buf);
                        return -EIO;
                }
                off += (size_t) k;
        }
        *ret = buf;
        return 0;
}
