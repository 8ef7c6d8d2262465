/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A namespace's user database: passwd and group parsing, lookups, stat-based refresh. The
 * rules for what is accepted are in nsid/userdb.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log-internal.h"
#include "macro.h"
#include "nsid/file.h"
#include "nsid/userdb.h"
#include "parse-util.h"
#include "siphash.h"
#include "userdb-internal.h"

/* 20 bytes: a hostile file of many tiny lines costs a few times its size, not tens. */
typedef struct entry {
        uint32_t name_off; /* NUL-terminated name at table.text + name_off */
        uint32_t id;
        uint32_t gid; /* passwd: the primary group */
        uint32_t hash;
        uint8_t name_len; /* <= NSID_USERDB_NAME_MAX */
        bool duplicate;   /* its name came earlier: not in the tables */
} entry;

/*
 * Entries stay in file order. Names are found through an open-addressing hash table keyed
 * with a random SipHash key per table, so a container cannot choose names that collide (no
 * quadratic load); ids through a sorted array (stable radix sort, so among entries sharing an
 * id the first line comes first) searched by bisection. Both are built in linear time.
 */
typedef struct table {
        char *text;        /* private copy of the file; names are cut out of it in place */
        entry *e;          /* file order, duplicates included (flagged) */
        size_t n;          /* entries in e */
        uint32_t *slots;   /* index+1 into e, 0 = empty; mask+1 of them */
        size_t mask;
        uint32_t *ids;     /* sorted ids of the non-duplicate entries */
        uint32_t *id_idx;  /* the entry index of each ids[] */
        size_t n_ids;
        uint8_t key[16];
        nsid_userdb_counts counts;
        bool present;
        bool have_stat;
        nsid_file_stat st;
} table;

struct nsid_userdb {
        unsigned n_ref;
        table t[_NSID_USERDB_FILE_MAX];
        /* Where the files came from, for refresh: a root fd or a pinned process, or neither
         * (parsed from memory). */
        int rootfd;
        nsid_proc *proc;
};

static const char *const file_path[_NSID_USERDB_FILE_MAX] = {
        [NSID_USERDB_PASSWD] = "etc/passwd",
        [NSID_USERDB_GROUP] = "etc/group",
};

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

bool userdb_name_valid(const char *s, size_t len) {
        bool all_digits = true;

        if (len == 0 || len > NSID_USERDB_NAME_MAX)
                return false;
        if (s[0] == '+' || s[0] == '-')
                return false;
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c < 0x20 || c == 0x7f || c == ' ' || c == ':' || c == ',' || c == '/' ||
                    c == '@')
                        return false;
                if (c < '0' || c > '9')
                        all_digits = false;
        }
        if (all_digits)
                return false;
        return utf8_valid(s, len);
}

/* An id field: plain decimal, 0 .. 4294967294. */
static int parse_id(const char *s, size_t len, uint32_t *ret) {
        uint64_t v;
        /* more than 20 digits is out of range anyway: rejected before parsing */
        if (len > 20)
                return -ERANGE;
        int r = parse_u64_n(s, len, UINT32_MAX - 1, &v);
        if (r < 0)
                return r;
        *ret = (uint32_t) v;
        return 0;
}


static void table_done(table *t) {
        free(t->text);
        free(t->e);
        free(t->slots);
        free(t->ids);
        free(t->id_idx);
        *t = (table) {};
}

/* Parse one line (without its '\n'; it may be modified: the name is NUL-terminated in
 * place). Returns 1 for an entry, 0 for a comment or blank line, -EINVAL for an invalid
 * line. */
static int parse_line(nsid_userdb_file which, const char *base, char *s, size_t len,
                      entry *ret) {
        const char *field[7];
        size_t flen[7];
        unsigned nf = which == NSID_USERDB_PASSWD ? 7 : 4, k = 0;
        char *end = s + len;

        if (memchr(s, '\0', len))
                return -EINVAL;
        while (s < end && is_blank(*s))
                s++;
        if (s == end || *s == '#')
                return 0;

        /* Exactly nf fields separated by ':'. */
        for (char *p = s;;) {
                char *c = memchr(p, ':', (size_t) (end - p));
                if (k == nf)
                        return -EINVAL;
                field[k] = p;
                flen[k] = c ? (size_t) (c - p) : (size_t) (end - p);
                k++;
                if (!c)
                        break;
                p = c + 1;
        }
        if (k != nf)
                return -EINVAL;

        if (!userdb_name_valid(field[0], flen[0]))
                return -EINVAL;
        if (parse_id(field[2], flen[2], &ret->id) < 0)
                return -EINVAL;
        if (which == NSID_USERDB_PASSWD) {
                if (parse_id(field[3], flen[3], &ret->gid) < 0)
                        return -EINVAL;
        } else
                ret->gid = ret->id;

        s[flen[0]] = '\0'; /* the ':' after the name */
        ret->name_off = (uint32_t) (s - base);
        ret->name_len = (uint8_t) flen[0];
        return 1;
}

static const char *entry_name(const table *t, const entry *e) {
        return t->text + e->name_off;
}

static bool entry_is(const table *t, const entry *e, const char *name, size_t len,
                     uint32_t hash) {
        return e->hash == hash && e->name_len == len &&
               memcmp(entry_name(t, e), name, len) == 0;
}

/* Build the name table, flagging later lines of a name as duplicates. */
static int table_index_names(table *t) {
        size_t size = 16;
        while (size < t->n * 2)
                size *= 2;
        t->slots = calloc(size, sizeof(uint32_t));
        if (!t->slots)
                return -ENOMEM;
        t->mask = size - 1;
        for (size_t i = 0; i < t->n; i++) {
                entry *e = &t->e[i];
                size_t s = e->hash & t->mask;
                for (;;) {
                        uint32_t v = t->slots[s];
                        if (v == 0) {
                                t->slots[s] = (uint32_t) i + 1;
                                break;
                        }
                        if (entry_is(t, &t->e[v - 1], entry_name(t, e), e->name_len, e->hash)) {
                                e->duplicate = true;
                                t->counts.duplicates++;
                                break;
                        }
                        s = (s + 1) & t->mask;
                }
        }
        return 0;
}

/* Sorted ids of the kept entries: LSD radix sort, 4 stable passes of 8 bits. */
static int table_index_ids(table *t) {
        size_t n = 0;
        _cleanup_free_ uint32_t *tmp_ids = NULL, *tmp_idx = NULL;

        t->ids = malloc((t->n ? t->n : 1) * sizeof(uint32_t));
        t->id_idx = malloc((t->n ? t->n : 1) * sizeof(uint32_t));
        tmp_ids = malloc((t->n ? t->n : 1) * sizeof(uint32_t));
        tmp_idx = malloc((t->n ? t->n : 1) * sizeof(uint32_t));
        if (!t->ids || !t->id_idx || !tmp_ids || !tmp_idx)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++)
                if (!t->e[i].duplicate) {
                        t->ids[n] = t->e[i].id;
                        t->id_idx[n] = (uint32_t) i;
                        n++;
                }
        t->n_ids = n;

        uint32_t *src_ids = t->ids, *src_idx = t->id_idx, *dst_ids = tmp_ids, *dst_idx = tmp_idx;
        for (unsigned shift = 0; shift < 32; shift += 8) {
                size_t count[257] = {};
                for (size_t i = 0; i < n; i++)
                        count[((src_ids[i] >> shift) & 0xff) + 1]++;
                for (int b = 0; b < 256; b++)
                        count[b + 1] += count[b];
                for (size_t i = 0; i < n; i++) {
                        size_t d = count[(src_ids[i] >> shift) & 0xff]++;
                        dst_ids[d] = src_ids[i];
                        dst_idx[d] = src_idx[i];
                }
                uint32_t *x = src_ids;
                src_ids = dst_ids;
                dst_ids = x;
                x = src_idx;
                src_idx = dst_idx;
                dst_idx = x;
        }
        /* Four passes: the result is back in t->ids / t->id_idx. */
        return 0;
}

/* Parse text into t (t is empty on entry and left empty on failure). owned_text is a
 * malloc'ed buffer of size + 1 bytes that t takes over (names are cut out of it in place). */
static int table_parse_take(table *t, nsid_userdb_file which, char *owned_text, size_t size,
                            const char *label) {
        size_t cap = 0, pos = 0;
        int r;

        siphash_random_key(t->key);
        t->text = owned_text;
        t->text[size] = '\0';
        t->present = true;

        while (pos < size) {
                char *s = t->text + pos;
                char *nl = memchr(s, '\n', size - pos);
                size_t len = nl ? (size_t) (nl - s) : size - pos;
                entry e = {};

                pos += len + (nl ? 1 : 0);
                if (len > NSID_USERDB_LINE_MAX) {
                        t->counts.invalid++;
                        continue;
                }
                r = parse_line(which, t->text, s, len, &e);
                if (r == 0)
                        continue;
                if (r < 0) {
                        t->counts.invalid++;
                        continue;
                }
                if (t->n == cap) {
                        size_t ncap = cap ? cap * 2 : 64;
                        entry *ne = reallocarray(t->e, ncap, sizeof(entry));
                        if (!ne) {
                                table_done(t);
                                return -ENOMEM;
                        }
                        t->e = ne;
                        cap = ncap;
                }
                e.hash = (uint32_t) siphash24(entry_name(t, &e), e.name_len, t->key);
                t->e[t->n++] = e;
        }

        r = table_index_names(t);
        if (r >= 0)
                r = table_index_ids(t);
        if (r < 0) {
                table_done(t);
                return r;
        }
        t->counts.entries = t->n - t->counts.duplicates;

        if (t->counts.invalid > 0 || t->counts.duplicates > 0)
                log_warning("%s: skipped %" PRIu64 " invalid and %" PRIu64
                            " duplicate line(s), kept %" PRIu64 " entries",
                            label, t->counts.invalid, t->counts.duplicates, t->counts.entries);
        return 0;
}

/* The same for text the caller keeps. */
static int table_parse(table *t, nsid_userdb_file which, const char *text, size_t size,
                       const char *label) {
        char *copy = malloc(size + 1);
        if (!copy)
                return -ENOMEM;
        if (size > 0)
                memcpy(copy, text, size);
        return table_parse_take(t, which, copy, size, label);
}

static nsid_userdb *userdb_new(void) {
        nsid_userdb *db = calloc(1, sizeof(*db));
        if (!db)
                return NULL;
        db->n_ref = 1;
        db->rootfd = -EBADF;
        return db;
}

static void userdb_free(nsid_userdb *db) {
        for (int i = 0; i < _NSID_USERDB_FILE_MAX; i++)
                table_done(&db->t[i]);
        safe_close(db->rootfd);
        nsid_proc_unref(db->proc);
        free(db);
}

DEFINE_UNREF_CLEANUP(nsid_userdb, nsid_userdb_unref)

_public_ int nsid_userdb_parse(const char *passwd_text, size_t passwd_size,
                               const char *group_text, size_t group_size, nsid_userdb **ret) {
        _cleanup_(nsid_userdb_unrefp) nsid_userdb *db = NULL;
        int r;

        assert_return(passwd_text || passwd_size == 0, -EINVAL);
        assert_return(group_text || group_size == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        /* Offsets into the text are 32-bit. */
        if (passwd_size >= UINT32_MAX || group_size >= UINT32_MAX)
                return -EFBIG;

        db = userdb_new();
        if (!db)
                return -ENOMEM;
        r = table_parse(&db->t[NSID_USERDB_PASSWD], NSID_USERDB_PASSWD,
                        passwd_text ? passwd_text : "", passwd_size, "passwd");
        if (r < 0)
                return r;
        if (group_text) {
                r = table_parse(&db->t[NSID_USERDB_GROUP], NSID_USERDB_GROUP, group_text,
                                group_size, "group");
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(db);
        return 0;
}

/* A root fd for the source of db: its own (duplicated) or the process's. */
static int source_rootfd(const nsid_userdb *db, int *ret_fd, const char **ret_what) {
        if (db->proc) {
                *ret_what = "process root";
                return nsid_proc_open_root(db->proc, ret_fd);
        }
        *ret_what = "root";
        int fd = fcntl(db->rootfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

static void make_label(char *buf, size_t size, const nsid_userdb *db, nsid_userdb_file which) {
        if (db->proc)
                (void) snprintf(buf, size, "/proc/%d/root/%s", (int) nsid_proc_get_pid(db->proc),
                                file_path[which]);
        else
                (void) snprintf(buf, size, "%s (below root fd)", file_path[which]);
}

/* Read both files into db (whose source is set). */
static int userdb_load(nsid_userdb *db) {
        _cleanup_close_ int rootfd = -EBADF;
        const char *what;
        char label[96];
        int r;

        r = source_rootfd(db, &rootfd, &what);
        if (r < 0)
                return log_debug_errno(r, "cannot open %s: %s", what, strerror(-r));

        for (int i = 0; i < _NSID_USERDB_FILE_MAX; i++) {
                _cleanup_free_ char *data = NULL;
                size_t size = 0;
                nsid_file_stat st = {};

                make_label(label, sizeof(label), db, (nsid_userdb_file) i);
                r = nsid_file_read_in_root(rootfd, file_path[i], NSID_USERDB_FILE_MAX, &data,
                                           &size, &st);
                if (r == -ENOENT && i == NSID_USERDB_GROUP) {
                        log_debug("%s: missing, no groups", label);
                        continue;
                }
                if (r < 0)
                        return log_debug_errno(r, "cannot read %s: %s", label, strerror(-r));
                /* nsid_file_read_in_root() gives size + 1 bytes (NUL-terminated): take them. */
                r = table_parse_take(&db->t[i], (nsid_userdb_file) i, TAKE_PTR(data), size,
                                     label);
                if (r < 0)
                        return r;
                db->t[i].st = st;
                db->t[i].have_stat = true;
        }
        /* The files must have come from the pinned process. */
        if (db->proc) {
                r = nsid_proc_check_alive(db->proc);
                if (r < 0)
                        return r;
        }
        return 0;
}

_public_ int nsid_userdb_load_root(int rootfd, nsid_userdb **ret) {
        _cleanup_(nsid_userdb_unrefp) nsid_userdb *db = NULL;
        int r;

        assert_return(rootfd >= 0, -EBADF);
        assert_return(ret, -EINVAL);

        db = userdb_new();
        if (!db)
                return -ENOMEM;
        db->rootfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        if (db->rootfd < 0)
                return negative_errno();
        r = userdb_load(db);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(db);
        return 0;
}

_public_ int nsid_userdb_load_proc(const nsid_proc *p, nsid_userdb **ret) {
        _cleanup_(nsid_userdb_unrefp) nsid_userdb *db = NULL;
        int r;

        assert_return(p, -EINVAL);
        assert_return(ret, -EINVAL);

        db = userdb_new();
        if (!db)
                return -ENOMEM;
        db->proc = nsid_proc_ref((nsid_proc *) p);
        r = userdb_load(db);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(db);
        return 0;
}

static bool stat_equal(const nsid_file_stat *a, const nsid_file_stat *b) {
        return a->dev == b->dev && a->ino == b->ino && a->mtime_nsec == b->mtime_nsec &&
               a->size == b->size;
}

_public_ int nsid_userdb_refresh(nsid_userdb *db, nsid_userdb **ret) {
        _cleanup_(nsid_userdb_unrefp) nsid_userdb *fresh = NULL;
        _cleanup_close_ int rootfd = -EBADF;
        const char *what;
        bool changed = false;
        int r;

        assert_return(db, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(db->proc || db->rootfd >= 0, -EINVAL);

        r = source_rootfd(db, &rootfd, &what);
        if (r < 0)
                return log_debug_errno(r, "cannot open %s: %s", what, strerror(-r));
        for (int i = 0; i < _NSID_USERDB_FILE_MAX && !changed; i++) {
                nsid_file_stat st = {};
                r = nsid_file_stat_in_root(rootfd, file_path[i], &st);
                if (r == -ENOENT && i == NSID_USERDB_GROUP) {
                        changed = db->t[i].present;
                        continue;
                }
                if (r < 0)
                        return log_debug_errno(r, "cannot stat %s: %s", file_path[i],
                                               strerror(-r));
                changed = !db->t[i].have_stat || !stat_equal(&st, &db->t[i].st);
        }
        if (!changed) {
                *ret = nsid_userdb_ref(db);
                return 0;
        }

        fresh = userdb_new();
        if (!fresh)
                return -ENOMEM;
        if (db->proc)
                fresh->proc = nsid_proc_ref(db->proc);
        else {
                fresh->rootfd = fcntl(db->rootfd, F_DUPFD_CLOEXEC, 3);
                if (fresh->rootfd < 0)
                        return negative_errno();
        }
        r = userdb_load(fresh);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(fresh);
        return 1;
}

_public_ nsid_userdb *nsid_userdb_ref(nsid_userdb *db) {
        if (db)
                __atomic_add_fetch(&db->n_ref, 1, __ATOMIC_RELAXED);
        return db;
}

_public_ nsid_userdb *nsid_userdb_unref(nsid_userdb *db) {
        if (!db)
                return NULL;
        if (__atomic_sub_fetch(&db->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        userdb_free(db);
        return NULL;
}

static const entry *find_name(const table *t, const char *name) {
        size_t len = strnlen(name, NSID_USERDB_NAME_MAX + 1);

        if (!t->slots || len > NSID_USERDB_NAME_MAX)
                return NULL;
        uint32_t hash = (uint32_t) siphash24(name, len, t->key);
        for (size_t s = hash & t->mask;; s = (s + 1) & t->mask) {
                uint32_t v = t->slots[s];
                if (v == 0)
                        return NULL;
                if (entry_is(t, &t->e[v - 1], name, len, hash))
                        return &t->e[v - 1];
        }
}

static const entry *find_id(const table *t, uint32_t id) {
        size_t lo = 0, hi = t->n_ids; /* the first index whose id is >= id */

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->ids[mid] < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == t->n_ids || t->ids[lo] != id)
                return NULL;
        return &t->e[t->id_idx[lo]];
}

_public_ int nsid_userdb_user_by_name(const nsid_userdb *db, const char *name, uint32_t *ret_uid,
                                      uint32_t *ret_gid) {
        assert_return(db, -EINVAL);
        assert_return(name, -EINVAL);
        assert_return(ret_uid, -EINVAL);

        const entry *e = find_name(&db->t[NSID_USERDB_PASSWD], name);
        if (!e)
                return -ENOENT;
        *ret_uid = e->id;
        if (ret_gid)
                *ret_gid = e->gid;
        return 0;
}

_public_ int nsid_userdb_user_by_uid(const nsid_userdb *db, uint32_t uid, const char **ret_name,
                                     uint32_t *ret_gid) {
        assert_return(db, -EINVAL);
        assert_return(ret_name, -EINVAL);

        const table *t = &db->t[NSID_USERDB_PASSWD];
        const entry *e = find_id(t, uid);
        if (!e)
                return -ENOENT;
        *ret_name = entry_name(t, e);
        if (ret_gid)
                *ret_gid = e->gid;
        return 0;
}

_public_ int nsid_userdb_group_by_name(const nsid_userdb *db, const char *name,
                                       uint32_t *ret_gid) {
        assert_return(db, -EINVAL);
        assert_return(name, -EINVAL);
        assert_return(ret_gid, -EINVAL);

        const entry *e = find_name(&db->t[NSID_USERDB_GROUP], name);
        if (!e)
                return -ENOENT;
        *ret_gid = e->id;
        return 0;
}

_public_ int nsid_userdb_group_by_gid(const nsid_userdb *db, uint32_t gid,
                                      const char **ret_name) {
        assert_return(db, -EINVAL);
        assert_return(ret_name, -EINVAL);

        const table *t = &db->t[NSID_USERDB_GROUP];
        const entry *e = find_id(t, gid);
        if (!e)
                return -ENOENT;
        *ret_name = entry_name(t, e);
        return 0;
}

_public_ int nsid_userdb_has_groups(const nsid_userdb *db) {
        assert_return(db, -EINVAL);
        return db->t[NSID_USERDB_GROUP].present;
}

_public_ int nsid_userdb_get_counts(const nsid_userdb *db, nsid_userdb_file which,
                                    nsid_userdb_counts *ret) {
        assert_return(db, -EINVAL);
        assert_return((int) which >= 0 && which < _NSID_USERDB_FILE_MAX, -EINVAL);
        assert_return(ret, -EINVAL);
        *ret = db->t[which].counts;
        return 0;
}

_public_ int nsid_userdb_get_file_stat(const nsid_userdb *db, nsid_userdb_file which,
                                       nsid_file_stat *ret) {
        assert_return(db, -EINVAL);
        assert_return((int) which >= 0 && which < _NSID_USERDB_FILE_MAX, -EINVAL);
        assert_return(ret, -EINVAL);
        if (!db->proc && db->rootfd < 0)
                return -ENODATA;
        if (!db->t[which].have_stat)
                return -ENOENT;
        *ret = db->t[which].st;
        return 0;
}
