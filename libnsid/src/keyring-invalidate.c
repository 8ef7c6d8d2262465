/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Invalidating keys of the kernel's caches by type and description (nsid/kernel.h).
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
#include <nsid/kernel.h>
#include <nsid/keyring.h>

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

_public_ int nsid_keyring_invalidate_keys_in(int32_t ring, const char *type,
                                             const char *description, unsigned *ret_failed) {
        int32_t *list = NULL;
        unsigned failed = 0;
        int n = 0;

        assert_return(ring > 0, -EINVAL);
        assert_return(type, -EINVAL);
        assert_return(description, -EINVAL);
        /* the serials the keyring links (a multiple of 4 bytes asked, else EINVAL) */
        long size = 4096;
        for (;;) {
                int32_t *l = realloc(list, (size_t) size);
                if (!l) {
                        free(list);
                        return -ENOMEM;
                }
                list = l;
                long m = syscall(SYS_keyctl, KEYCTL_READ, (long) ring, list, size, 0L);
                if (m < 0) {
                        int e = -errno;
                        free(list);
                        return e;
                }
                if (m <= size) {
                        size = m;
                        break;
                }
                size = (m + 3) & ~3L; /* grew meanwhile: again with what it needs */
        }
        /* the description holds names a container chose: escaped, and cut, for the log */
        char shown[4 * 128 + 1];
        escape_bytes(description, strnlen(description, 128), shown);
        for (size_t i = 0; i < (size_t) size / sizeof(int32_t); i++) {
                /* dead keys not yet collected are still listed: they fail to describe */
                if (key_is(list[i], type, UINT32_MAX, description) != 1)
                        continue;
                if (syscall(SYS_keyctl, KEYCTL_INVALIDATE, (long) list[i], 0L, 0L, 0L) == 0) {
                        n++;
                        log_debug("invalidated key %d (%s %s)", list[i], type, shown);
                } else {
                        failed++;
                        log_debug("cannot invalidate key %d (%s %s): %s", list[i], type, shown,
                                  strerror(errno));
                }
        }
        free(list);
        if (ret_failed)
                *ret_failed = failed;
        return n;
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
