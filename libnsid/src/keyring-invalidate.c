/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Invalidating keys of the kernel's caches by type and description (nsid/kernel.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nsid/kernel.h>
#include <nsid/keyring.h>

#include "log-internal.h"
#include "macro.h"

#define KEYCTL_INVALIDATE_ 21

/* /proc/keys shows an instantiated id_legacy key as "<description>: <payload length>"
 * (user_describe(), seen on 6.1), one under construction as the bare description. */
static bool legacy_desc_matches(const char *d, size_t len, const char *want, size_t wl) {
        if (len < wl || memcmp(d, want, wl) != 0)
                return false;
        if (len == wl)
                return true;
        if (len < wl + 3 || d[wl] != ':' || d[wl + 1] != ' ')
                return false;
        for (size_t i = wl + 2; i < len; i++)
                if (d[i] < '0' || d[i] > '9')
                        return false;
        return true;
}

_public_ int nsid_keyring_invalidate_keys(const char *keyring, uint32_t keyring_uid,
                                          const char *type, const char *description,
                                          unsigned *ret_failed) {
        char *text = NULL;
        size_t size = 0, cap = 0;
        unsigned failed = 0;
        int n = 0;

        assert_return(keyring, -EINVAL);
        assert_return(type, -EINVAL);
        assert_return(description, -EINVAL);
        int fd = open("/proc/keys", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                for (;;) {
                        if (size + 4096 > cap) {
                                char *nt = realloc(text, cap = cap ? cap * 2 : 65536);
                                if (!nt)
                                        break;
                                text = nt;
                        }
                        ssize_t k = read(fd, text + size, cap - size);
                        if (k <= 0)
                                break;
                        size += (size_t) k;
                }
                close(fd);
        }
        size_t dl = strlen(description);
        for (size_t off = 0; text && off < size;) {
                const char *nl = memchr(text + off, '\n', size - off);
                size_t ll = nl ? (size_t) (nl - (text + off)) : size - off;
                nsid_proc_keys_entry e;
                if (nsid_proc_keys_parse_line(text + off, ll, &e) >= 0 &&
                    strcmp(e.type, type) == 0 &&
                    legacy_desc_matches(e.description, e.description_len, description, dl)) {
                        if (syscall(SYS_keyctl, KEYCTL_INVALIDATE_, e.serial) == 0) {
                                n++;
                                log_debug("invalidated key %d (%s %s)", e.serial, type,
                                          description);
                        } else {
                                failed++;
                                log_debug("cannot invalidate key %d (%s %s): %s", e.serial,
                                          type, description, strerror(errno));
                        }
                }
                off += ll + 1;
        }
        free(text);
        if (ret_failed)
                *ret_failed = failed;
        return n;
}
