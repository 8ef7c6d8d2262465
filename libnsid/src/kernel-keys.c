/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether the kernel tags a key type by network namespace, by trying it (nsid/kernel.h),
 * and a cache of the answer for the NFS ID-mapping key types.
 *
 * Facts this relies on (security/keys/, checked on 6.18 by tests/integration/
 * itest-kernel-keys.c):
 *  - add_key(2) of an unregistered type fails with ENODEV (key_type_lookup() does not load
 *    modules).
 *  - key_set_index_key() gives a key of a KEY_TYPE_NET_DOMAIN type the adding task's
 *    net->key_domain as domain tag, every other key one default tag; a keyring holds one
 *    key per index (type, tag, description): add_key() of an existing index updates the key
 *    (types with .update: same serial) or replaces its link with the new key.
 *  - KEYCTL_SEARCH with KEYRING_SEARCH_LOOKUP_DIRECT (types without .match_preparse) looks
 *    the index up, tag included; types that iterate (dns_resolver) are matched by
 *    keyring_search_iterator(), which compares type and description only.
 *
 * The probe runs as a worker function (nsid/worker.h: fork without exec, possibly from a
 * multithreaded program): system calls only, stack buffers, no allocation, no lock. The keys
 * system calls are made directly rather than through libkeyutils: libnsid does not link
 * it, and nsid-idmap, which runs once per upcall, keeps it out on purpose (its own thin
 * keyctl() wrappers in idmap/upcall-util.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nsid/kernel.h>
#include <nsid/netns.h>
#include <nsid/worker.h>

#include "fmt-util.h"
#include "kernel-keys-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "proc-util.h"

#define NFS_IDKEY_TYPE "id_resolver"
#define NFS_IDKEY_LEGACY_TYPE "id_legacy"
#define NFSV4_SRCVERSION_PATH "/sys/module/nfsv4/srcversion"
#define KEY_TYPE_NAME_MAX 32 /* the kernel's limit, NUL included (key_get_type_from_user) */
#define PROBE_DESC_PREFIX "nsid-probe:"

/* ---- the probe (child side: async-signal-safe only) ---- */

typedef struct probe_args {
        const char *type;
        const void *payload;
        size_t payload_len;
} probe_args;

static int32_t k_add_key(const probe_args *a, const char *desc, int32_t ring) {
        return (int32_t) syscall(SYS_add_key, a->type, desc, a->payload, a->payload_len,
                                 (long) ring);
}

/* The serial a search finds, or -1 and errno (ENOKEY: nothing found). */
static int32_t k_search(const probe_args *a, const char *desc, int32_t ring) {
        return (int32_t) syscall(SYS_keyctl, KEYCTL_SEARCH, (long) ring, a->type, desc, 0L);
}

/* 1 if key is linked in ring, 0 if not, negative errno. The ring is the probe's own session
 * keyring: it never holds more than the three keys the probe adds. */
static int ring_has(int32_t ring, int32_t key) {
        int32_t v[8];
        long n = syscall(SYS_keyctl, KEYCTL_READ, (long) ring, v, sizeof(v), 0L);

        if (n < 0)
                return negative_errno();
        if ((size_t) n > sizeof(v) || n % sizeof(int32_t) != 0)
                return -EIO;
        for (size_t i = 0; i < (size_t) n / sizeof(int32_t); i++)
                if (v[i] == key)
                        return 1;
        return 0;
}

/* What the probe observed, after unsharing the network namespace and returning to it. */
static int probe_observe(const probe_args *a, const char *desc, int32_t ring, int32_t keys[3],
                         unsigned *ret_flags) {
        _cleanup_close_ int netfd = -EBADF;
        bool tagged, isolated;
        int32_t found, cur;
        int r;

        /* positive control: a search finds the key from where it was added */
        found = k_search(a, desc, ring);
        if (found < 0 && errno != ENOKEY)
                return negative_errno();
        if (found != keys[0])
                return -EIO;

        netfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (netfd < 0)
                return negative_errno();
        if (unshare(CLONE_NEWNET) < 0)
                return negative_errno();

        found = k_search(a, desc, ring);
        if (found < 0 && errno != ENOKEY)
                return negative_errno();
        if (found >= 0 && found != keys[0])
                return -EIO;
        isolated = found < 0;

        /* Same description from here: the first key's index (updated or displaced), or a
         * second index beside it. */
        keys[1] = k_add_key(a, desc, ring);
        if (keys[1] < 0)
                return negative_errno();
        if (keys[1] == keys[0])
                tagged = false;
        else {
                r = ring_has(ring, keys[0]);
                if (r < 0)
                        return r;
                tagged = r > 0;
        }

        if (setns(netfd, CLONE_NEWNET) < 0)
                return negative_errno();

        /* Back home, a search finds a key again (the first one, where searches go through
         * the index)... */
        found = k_search(a, desc, ring);
        if (found < 0 && errno != ENOKEY)
                return negative_errno();
        if (found < 0 || (isolated && found != keys[0]))
                return -EIO;
        /* ... and an add hits the index that belongs to this namespace: the first key's if
         * tagged (the other namespace's key stays), else the one index both share. */
        cur = tagged ? keys[0] : keys[1];
        keys[2] = k_add_key(a, desc, ring);
        if (keys[2] < 0)
                return negative_errno();
        if (keys[2] != cur) {
                r = ring_has(ring, cur);
                if (r != 0)
                        return r < 0 ? r : -EIO;
        }
        if (tagged) {
                r = ring_has(ring, keys[1]);
                if (r < 0)
                        return r;
                if (r == 0 || keys[2] == keys[1])
                        return -EIO;
        }
        /* the keys core compares tags only through the index */
        if (isolated && !tagged)
                return -EIO;

        *ret_flags = (tagged ? NSID_KEY_NETNS_TAGGED : 0) |
                     (isolated ? NSID_KEY_NETNS_SEARCH_ISOLATED : 0);
        return 0;
}

static int probe_child(int reply_fd, void *userdata) {
        const probe_args *a = userdata;
        char desc[sizeof(PROBE_DESC_PREFIX) + 21] = PROBE_DESC_PREFIX;
        int32_t ring, keys[3] = { -1, -1, -1 };
        unsigned flags = 0;
        int r;

        (void) fmt_u64(desc + strlen(PROBE_DESC_PREFIX), (uint64_t) getpid());

        /* a new anonymous session keyring: nothing of the caller's is touched or found */
        ring = (int32_t) syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL, 0L, 0L, 0L);
        if (ring < 0)
                return negative_errno();
        keys[0] = k_add_key(a, desc, ring);
        if (keys[0] < 0)
                return negative_errno(); /* ENODEV: no such key type */

        r = probe_observe(a, desc, ring, keys, &flags);

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (keys[i] > 0)
                        (void) syscall(SYS_keyctl, KEYCTL_INVALIDATE, (long) keys[i], 0L, 0L,
                                       0L);
        if (r < 0)
                return r;
        char c = (char) ('0' + flags);
        return write(reply_fd, &c, 1) == 1 ? 0 : -EIO;
}

/* ---- the probe (parent side) ---- */

static bool key_type_name_ok(const char *type) {
        size_t l = strnlen(type, KEY_TYPE_NAME_MAX);
        return l > 0 && l < KEY_TYPE_NAME_MAX && type[0] != '.';
}

int key_type_probe(const char *type, const void *payload, size_t payload_len, int timeout_ms,
                   unsigned *ret_flags) {
        _cleanup_free_ char *reply = NULL;
        probe_args a = { .type = type, .payload = payload, .payload_len = payload_len };
        size_t size = 0;
        int r;

        assert_return(type && key_type_name_ok(type), -EINVAL);
        assert_return(payload || payload_len == 0, -EINVAL);
        assert_return(timeout_ms > 0, -EINVAL);
        assert_return(ret_flags, -EINVAL);

        r = nsid_worker_run_ns(NULL, 0, NSID_WORKER_KEEP_CAPS, timeout_ms, probe_child, &a, 8,
                               &reply, &size);
        if (r == -EPROTO) /* the child died: -EPROTO means something else to the callers */
                r = -EIO;
        if (r < 0)
                return log_debug_errno(r, "key type \"%s\": netns probe failed: %s", type,
                                       strerror(-r));
        if (size != 1 || reply[0] < '0' || reply[0] > '3')
                return log_debug_errno(EIO, "key type \"%s\": netns probe gave a bad reply",
                                       type);
        *ret_flags = (unsigned) (reply[0] - '0');
        log_debug("key type \"%s\": %s by network namespace, searches %s", type,
                  *ret_flags & NSID_KEY_NETNS_TAGGED ? "tagged" : "not tagged",
                  *ret_flags & NSID_KEY_NETNS_SEARCH_ISOLATED ? "isolated" : "not isolated");
        return 0;
}

_public_ int nsid_key_type_netns_probe(const char *type, unsigned *ret_flags) {
        static const char addr[] = "192.0.2.1", id[] = "0"; /* sizeof: the NUL included */

        assert_return(type, -EINVAL);
        if (strcmp(type, "dns_resolver") == 0)
                return key_type_probe(type, addr, sizeof(addr), NSID_KERNEL_PROBE_TIMEOUT_MS,
                                      ret_flags);
        return key_type_probe(type, id, sizeof(id), NSID_KERNEL_PROBE_TIMEOUT_MS, ret_flags);
}

_public_ int nsid_key_type_netns_tagged(const char *type) {
        unsigned flags;
        int r;

        r = nsid_key_type_netns_probe(type, &flags);
        if (r < 0)
                return r;
        return !!(flags & NSID_KEY_NETNS_TAGGED);
}

/* 1 if keys of type are private to a network namespace, for the NFS client's lookups
 * (request_key with an exact description: tagged and searched through the index), else 0. */
static int type_isolated(const char *type) {
        const unsigned both = NSID_KEY_NETNS_TAGGED | NSID_KEY_NETNS_SEARCH_ISOLATED;
        unsigned flags;
        int r;

        r = nsid_key_type_netns_probe(type, &flags);
        if (r < 0)
                return r;
        return (flags & both) == both;
}

int idkeys_pair_tagged(const char *type_a, const char *type_b) {
        int a, b;

        assert_return(type_a && type_b, -EINVAL);
        a = type_isolated(type_a);
        if (a < 0)
                return a;
        b = type_isolated(type_b);
        if (b < 0)
                return b;
        if (a != b)
                return log_debug_errno(EPROTO,
                                       "key types \"%s\" and \"%s\" disagree: only \"%s\" "
                                       "is private to each network namespace",
                                       type_a, type_b, a ? type_a : type_b);
        return a;
}

_public_ int nsid_kernel_nfs_idkeys_tagged(void) {
        return idkeys_pair_tagged(NFS_IDKEY_TYPE, NFS_IDKEY_LEGACY_TYPE);
}

/* ---- the cache file ---- */

#define CACHE_MAGIC "nsid-nfs-idkeys 1\n"

/* A line "<name> <value>\n" at *p: the value and its length; *p moves past the line. */
static int cache_line(const char **p, const char *end, const char *name, const char **ret,
                      size_t *ret_len) {
        size_t nl = strlen(name);
        const char *s = *p, *e;

        if ((size_t) (end - s) < nl + 1 || memcmp(s, name, nl) != 0 || s[nl] != ' ')
                return -EINVAL;
        s += nl + 1;
        e = memchr(s, '\n', (size_t) (end - s));
        if (!e)
                return -EINVAL;
        *ret = s;
        *ret_len = (size_t) (e - s);
        *p = e + 1;
        return 0;
}

/* As the kernel prints it: "%pU", lower-case. */
static bool boot_id_ok(const char *s, size_t len) {
        if (len != 36)
                return false;
        for (size_t i = 0; i < len; i++) {
                bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
                if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-' : !hex)
                        return false;
        }
        return true;
}

static bool srcversion_ok(const char *s, size_t len) {
        if (len == 0 || len > IDKEYS_SRCVERSION_MAX)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'F')))
                        return false;
        return true;
}

int idkeys_cache_parse(const char *text, size_t size, idkeys_cache *ret) {
        const char *p = text, *end = text + size, *v;
        idkeys_cache c = {};
        size_t vl;

        assert_return(text || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        if (size < strlen(CACHE_MAGIC) || memcmp(p, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0)
                return -EINVAL;
        p += strlen(CACHE_MAGIC);

        if (cache_line(&p, end, "boot-id", &v, &vl) < 0 || !boot_id_ok(v, vl))
                return -EINVAL;
        memcpy(c.boot_id, v, vl);

        if (cache_line(&p, end, "nfsv4-srcversion", &v, &vl) < 0)
                return -EINVAL;
        if (!(vl == 1 && v[0] == '-')) {
                if (!srcversion_ok(v, vl))
                        return -EINVAL;
                memcpy(c.srcversion, v, vl);
        }

        if (cache_line(&p, end, "tagged", &v, &vl) < 0 || vl != 1 || (v[0] != '0' && v[0] != '1'))
                return -EINVAL;
        c.tagged = v[0] - '0';

        if (p != end)
                return -EINVAL;
        *ret = c;
        return 0;
}

int idkeys_cache_format(const idkeys_cache *c, char *buf, size_t size) {
        size_t sl;
        int r;

        assert_return(c && buf, -EINVAL);
        sl = strnlen(c->srcversion, sizeof(c->srcversion));
        if (strnlen(c->boot_id, sizeof(c->boot_id)) != 36 || !boot_id_ok(c->boot_id, 36) ||
            sl == sizeof(c->srcversion) || (sl > 0 && !srcversion_ok(c->srcversion, sl)) ||
            (c->tagged != 0 && c->tagged != 1))
                return -EINVAL;
        r = fmt_join(buf, size, CACHE_MAGIC, "boot-id ", c->boot_id, "\nnfsv4-srcversion ",
                     sl > 0 ? c->srcversion : "-", "\ntagged ", c->tagged ? "1" : "0", "\n",
                     NULL);
        return r < 0 ? -EINVAL : r;
}

int idkeys_read_srcversion(const char *path, char ret[IDKEYS_SRCVERSION_MAX + 1]) {
        _cleanup_close_ int fd = -EBADF;
        char buf[IDKEYS_SRCVERSION_MAX + 2 + 1];
        size_t n = 0;
        int r;

        assert_return(path && ret, -EINVAL);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        r = read_fd_deadline(fd, sizeof(buf) - 1, READ_NO_DEADLINE, false, buf, NULL, &n);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        if (n < 2 || buf[n - 1] != '\n' || !srcversion_ok(buf, n - 1))
                return -EBADMSG;
        memcpy(ret, buf, n - 1);
        ret[n - 1] = '\0';
        return 0;
}

/* This boot and the loaded NFS client code: the cache's key. A module has a srcversion in
 * sysfs only with MODULE_VERSION or CONFIG_MODULE_SRCVERSION_ALL, which Debian's nfsv4 does
 * not have (neither stock nor rebuilt): then the module's sysfs directory stands for it,
 * by its inode number, which kernfs allocates anew (cyclically) each time the module is
 * loaded, so a module replaced in this boot (rmmod, insmod of another build) is probed
 * again. Neither exists for an NFS client built into the kernel: the boot id alone. */
static int idkeys_identify(const char *srcversion_path, idkeys_cache *ret) {
        idkeys_cache c = {};
        struct stat st;
        int r;

        r = nsid_boot_id(c.boot_id);
        if (r < 0)
                return r;
        r = idkeys_read_srcversion(srcversion_path, c.srcversion);
        if (r == -ENOENT) {
                _cleanup_free_ char *dir = strdup(srcversion_path);
                char *slash = dir ? strrchr(dir, '/') : NULL;
                if (!slash)
                        return -ENOMEM;
                *slash = '\0';
                c.srcversion[0] = '\0'; /* not loaded, or built in */
                if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
                        snprintf(c.srcversion, sizeof(c.srcversion), "%llX",
                                 (unsigned long long) st.st_ino);
        } else if (r < 0)
                return r;
        *ret = c;
        return 0;
}

/* The cache file, if it can be trusted: a regular file of root's that only root can
 * change, in the exact format. */
static int cache_load(const char *path, idkeys_cache *ret) {
        _cleanup_close_ int fd = -EBADF;
        char buf[IDKEYS_CACHE_MAX + 1];
        struct stat st;
        size_t n = 0;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return -EPERM;
        r = read_fd_deadline(fd, IDKEYS_CACHE_MAX, READ_NO_DEADLINE, false, buf, NULL, &n);
        if (r < 0)
                return r;
        return idkeys_cache_parse(buf, n, ret);
}

static int cache_store(const char *path, const idkeys_cache *c) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        char text[IDKEYS_CACHE_MAX];
        int len, r = 0;

        len = idkeys_cache_format(c, text, sizeof(text));
        if (len < 0)
                return len;
        if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, 0644) < 0)
                r = negative_errno();
        else if (write(fd, text, (size_t) len) != len)
                r = -EIO;
        else if (close(TAKE_FD(fd)) < 0)
                r = negative_errno();
        else if (rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

int idkeys_pair_tagged_cached(const char *cache_path, const char *type_a, const char *type_b,
                              const char *srcversion_path) {
        idkeys_cache now, stored, after;
        int r, k;

        assert_return(cache_path && cache_path[0] == '/', -EINVAL);
        assert_return(type_a && type_b && srcversion_path, -EINVAL);

        k = idkeys_identify(srcversion_path, &now);
        if (k < 0) {
                log_debug_errno(k, "%s: cannot tell which NFS client is loaded (%s); probing "
                                   "without the cache",
                                cache_path, strerror(-k));
                return idkeys_pair_tagged(type_a, type_b);
        }

        r = cache_load(cache_path, &stored);
        if (r == 0 && strcmp(stored.boot_id, now.boot_id) == 0 &&
            strcmp(stored.srcversion, now.srcversion) == 0)
                return stored.tagged;
        if (r < 0 && r != -ENOENT)
                log_debug_errno(r, "%s: ignored: %s", cache_path,
                                r == -EPERM ? "not a regular file of root's that only root "
                                              "may change"
                                            : strerror(-r));

        r = idkeys_pair_tagged(type_a, type_b);
        if (r < 0)
                return r; /* errors are not remembered */

        /* a module reloaded meanwhile: the answer may be about either; no record */
        k = idkeys_identify(srcversion_path, &after);
        if (k < 0 || strcmp(after.srcversion, now.srcversion) != 0)
                return r;
        now.tagged = r;
        k = cache_store(cache_path, &now);
        if (k < 0)
                log_debug_errno(k, "%s: cannot write: %s", cache_path, strerror(-k));
        return r;
}

_public_ int nsid_kernel_nfs_idkeys_tagged_cached(const char *cache_path) {
        return idkeys_pair_tagged_cached(cache_path, NFS_IDKEY_TYPE, NFS_IDKEY_LEGACY_TYPE,
                                         NFSV4_SRCVERSION_PATH);
}
