/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Invalidating keys of the kernel's caches by type and description (nsid/keyring.h).
 *
 * /proc/keys cannot choose what is invalidated: it prints descriptions raw, and a user key's
 * description may hold a newline, so any user can print a line that looks like a key of any
 * type and description with any serial. The keys are found from the keyring itself:
 *  - the keyring: each "keyring" line of /proc/keys that names it is only a candidate,
 *    kept when KEYCTL_DESCRIBE of its serial says type "keyring", the owner uid asked for and
 *    exactly that description (what KEYCTL_DESCRIBE returns is the kernel's, not text a
 *    user wrote; and userspace cannot create keyrings whose names start with '.', like the
 *    NFS client's ".id_resolver");
 *  - its keys: KEYCTL_READ of the keyring (the serials it links), then KEYCTL_DESCRIBE of
 *    each: the type and the whole description must equal the ones asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/keyctl.h>
#include <nsid/keyring.h>
#include <nsid/prockeys.h>

#include "log-internal.h"
#include "macro.h"
#include "parse-util.h"
#include "proc-util.h"

#define PROC_KEYS_MAX (64u * 1024 * 1024)

/* KEYCTL_DESCRIBE of serial is `type` owned by uid (UINT32_MAX: any) described exactly
 * `description`: 1, 0 if not, -errno if it cannot be described. */
static int key_is(int32_t serial, const char *type, uint32_t uid, const char *description) {
        char buf[4200]; /* "type;uid;gid;perm;" and a description of at most 4095 bytes */
        nsid_key_describe kd;
        long m = syscall(SYS_keyctl, KEYCTL_DESCRIBE, (long) serial, buf, sizeof(buf), 0L);
        if (m < 0)
                return -errno;
        if (m == 0 || (size_t) m > sizeof(buf))
                return 0; /* (counts its NUL) too long to be the one */
        buf[m - 1] = '\0';
        if (nsid_key_describe_parse(buf, (size_t) m - 1, &kd) < 0)
                return 0;
        return kd.type_len == strlen(type) && memcmp(kd.type, type, kd.type_len) == 0 &&
               (uid == UINT32_MAX || kd.uid == uid) &&
               kd.description_len == strlen(description) &&
               memcmp(kd.description, description, kd.description_len) == 0;
}

static int read_proc_keys(char **ret, size_t *ret_size) {
        int fd = open("/proc/keys", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = read_fd_capped(fd, PROC_KEYS_MAX, ret, ret_size);
        close(fd);
        return r;
}

_public_ int32_t nsid_keyring_find(const char *name, uint32_t uid) {
        char *text = NULL;
        size_t size = 0, nl;
        int32_t found = -ENOENT;
        int r;

        assert_return(name && *name, -EINVAL);
        nl = strlen(name);
        r = read_proc_keys(&text, &size);
        if (r < 0)
                return r;
        for (size_t off = 0; off < size;) {
                const char *eol = memchr(text + off, '\n', size - off);
                size_t ll = eol ? (size_t) (eol - (text + off)) : size - off;
                nsid_proc_keys_entry e;
                /* keyring_describe() prints "<name>: <count>" or "<name>: empty" */
                if (nsid_proc_keys_parse_line(text + off, ll, &e) >= 0 &&
                    strcmp(e.type, "keyring") == 0 && e.description_len >= nl &&
                    memcmp(e.description, name, nl) == 0 &&
                    (e.description_len == nl || e.description[nl] == ':')) {
                        /* a candidate only: the line may be forged */
                        if (key_is(e.serial, "keyring", uid, name) == 1) {
                                found = e.serial;
                                break;
                        }
                        log_debug("/proc/keys: a line names key %d keyring \"%s\", which it "
                                  "is not (a forged line?): ignored", e.serial, name);
                }
                off += ll + 1;
        }
        free(text);
        return found;
}

/* One key of an index: its serial and, once described, "type\0description". */
typedef struct index_entry {
        int32_t serial;
        bool dead; /* cannot be described and never will be (expired, revoked, gone) */
        size_t type_len, description_len;
        char *text;
} index_entry;

struct nsid_keyring_index {
        int32_t ring;
        index_entry *entries; /* sorted by serial */
        size_t n;
        int32_t *list; /* KEYCTL_READ buffer, kept for the next refresh */
        size_t list_size;
};

_public_ int nsid_keyring_index_new(int32_t ring, nsid_keyring_index **ret) {
        assert_return(ring > 0, -EINVAL);
        assert_return(ret, -EINVAL);
        nsid_keyring_index *idx = calloc(1, sizeof(*idx));
        if (!idx)
                return -ENOMEM;
        idx->ring = ring;
        *ret = idx;
        return 0;
}

_public_ void nsid_keyring_index_free(nsid_keyring_index *idx) {
        if (!idx)
                return;
        for (size_t i = 0; i < idx->n; i++)
                free(idx->entries[i].text);
        free(idx->entries);
        free(idx->list);
        free(idx);
}

_public_ int32_t nsid_keyring_index_ring(const nsid_keyring_index *idx) {
        return idx ? idx->ring : -EINVAL;
}

/* KEYCTL_READ of the ring into idx->list: the number of serials, or -errno. */
static ssize_t read_ring(nsid_keyring_index *idx) {
        if (!idx->list) {
                idx->list = malloc(4096);
                if (!idx->list)
                        return -ENOMEM;
                idx->list_size = 4096;
        }
        for (;;) {
                /* a multiple of 4 bytes asked, else EINVAL */
                long m = syscall(SYS_keyctl, KEYCTL_READ, (long) idx->ring, idx->list,
                                 (long) idx->list_size, 0L);
                if (m < 0)
                        return -errno;
                if ((size_t) m <= idx->list_size)
                        return m / (long) sizeof(int32_t);
                size_t want = ((size_t) m + 3) & ~(size_t) 3; /* grew meanwhile: again */
                int32_t *l = realloc(idx->list, want);
                if (!l)
                        return -ENOMEM;
                idx->list = l;
                idx->list_size = want;
        }
}

static int cmp_serial(const void *a, const void *b) {
        int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
        return (x > y) - (x < y);
}

/* Describe serial into e: 0, or -errno (e->dead set when it never will be describable). */
static int describe_entry(index_entry *e) {
        char buf[4200]; /* "type;uid;gid;perm;" and a description of at most 4095 bytes */
        nsid_key_describe kd;
        long m = syscall(SYS_keyctl, KEYCTL_DESCRIBE, (long) e->serial, buf, sizeof(buf), 0L);
        if (m < 0) {
                int r = -errno;
                /* dead keys not yet collected are still linked; their state is final */
                e->dead = r == -ENOKEY || r == -EKEYEXPIRED || r == -EKEYREVOKED;
                return r;
        }
        if (m == 0 || (size_t) m > sizeof(buf))
                return -E2BIG; /* (counts its NUL) too long to be one asked for */
        buf[m - 1] = '\0';
        if (nsid_key_describe_parse(buf, (size_t) m - 1, &kd) < 0)
                return -EBADMSG;
        char *t = malloc(kd.type_len + 1 + kd.description_len + 1);
        if (!t)
                return -ENOMEM;
        memcpy(t, kd.type, kd.type_len);
        t[kd.type_len] = '\0';
        memcpy(t + kd.type_len + 1, kd.description, kd.description_len);
        t[kd.type_len + 1 + kd.description_len] = '\0';
        e->text = t;
        e->type_len = kd.type_len;
        e->description_len = kd.description_len;
        return 0;
}

_public_ int nsid_keyring_index_refresh(nsid_keyring_index *idx) {
        assert_return(idx, -EINVAL);
        ssize_t n = read_ring(idx);
        if (n < 0)
                return (int) n;
        qsort(idx->list, (size_t) n, sizeof(int32_t), cmp_serial);
        index_entry *next = calloc((size_t) n + 1, sizeof(*next));
        if (!next)
                return -ENOMEM;
        /* both sorted: keep what was described, describe only serials not seen before */
        size_t i = 0, k = 0;
        for (size_t j = 0; j < (size_t) n; j++) {
                int32_t s = idx->list[j];
                if (k > 0 && next[k - 1].serial == s)
                        continue; /* linked twice? never: a keyring links a key once */
                while (i < idx->n && idx->entries[i].serial < s)
                        free(idx->entries[i++].text); /* gone from the ring */
                if (i < idx->n && idx->entries[i].serial == s &&
                    (idx->entries[i].text || idx->entries[i].dead)) {
                        next[k++] = idx->entries[i];
                        idx->entries[i++].text = NULL;
                        continue;
                }
                next[k] = (index_entry) { .serial = s };
                (void) describe_entry(&next[k]); /* not describable now: tried again next time */
                k++;
        }
        for (; i < idx->n; i++)
                free(idx->entries[i].text);
        free(idx->entries);
        idx->entries = next;
        idx->n = k;
        return (int) k;
}

_public_ int nsid_keyring_index_invalidate(nsid_keyring_index *idx, const char *type,
                                           const char *description, unsigned *ret_failed) {
        unsigned failed = 0;
        int n = 0;

        assert_return(idx, -EINVAL);
        assert_return(type, -EINVAL);
        assert_return(description, -EINVAL);
        int r = nsid_keyring_index_refresh(idx);
        if (r < 0)
                return r;
        size_t tl = strlen(type), dl = strlen(description);
        /* the description holds names a container chose: escaped, and cut, for the log */
        char shown[4 * 128 + 1];
        escape_bytes(description, strnlen(description, 128), shown);
        for (size_t i = 0; i < idx->n; i++) {
                const index_entry *e = &idx->entries[i];
                if (!e->text || e->type_len != tl || e->description_len != dl ||
                    memcmp(e->text, type, tl) != 0 ||
                    memcmp(e->text + tl + 1, description, dl) != 0)
                        continue;
                if (syscall(SYS_keyctl, KEYCTL_INVALIDATE, (long) e->serial, 0L, 0L, 0L) == 0) {
                        n++;
                        log_debug("invalidated key %d (%s %s)", e->serial, type, shown);
                } else {
                        failed++;
                        log_debug("cannot invalidate key %d (%s %s): %s", e->serial, type,
                                  shown, strerror(errno));
                }
        }
        if (ret_failed)
                *ret_failed = failed;
        return n;
}

_public_ int nsid_keyring_invalidate_keys_in(int32_t ring, const char *type,
                                             const char *description, unsigned *ret_failed) {
        nsid_keyring_index *idx = NULL;
        assert_return(ring > 0, -EINVAL);
        int r = nsid_keyring_index_new(ring, &idx);
        if (r < 0)
                return r;
        r = nsid_keyring_index_invalidate(idx, type, description, ret_failed);
        nsid_keyring_index_free(idx);
        return r;
}

_public_ int nsid_keyring_invalidate_keys(const char *keyring, uint32_t keyring_uid,
                                          const char *type, const char *description,
                                          unsigned *ret_failed) {
        assert_return(keyring, -EINVAL);
        assert_return(type, -EINVAL);
        assert_return(description, -EINVAL);
        int32_t ring = nsid_keyring_find(keyring, keyring_uid);
        if (ring < 0)
                return ring;
        return nsid_keyring_invalidate_keys_in(ring, type, description, ret_failed);
}
