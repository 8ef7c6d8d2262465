/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers: visibility, cleanup attributes, argument checks. Not installed. */
#ifndef NSID_MACRO_H
#define NSID_MACRO_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _public_ __attribute__((visibility("default")))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Public entry points check their arguments and return an error instead of asserting. */
#define assert_return(expr, r)                                                                 \
        do {                                                                                   \
                if (!(expr))                                                                   \
                        return (r);                                                            \
        } while (0)

#define TAKE_PTR(p)                                                                            \
        ({                                                                                     \
                __typeof__(p) _take_p = (p);                                                   \
                (p) = NULL;                                                                    \
                _take_p;                                                                       \
        })

#define TAKE_FD(fd)                                                                            \
        ({                                                                                     \
                int _take_fd = (fd);                                                           \
                (fd) = -EBADF;                                                                 \
                _take_fd;                                                                      \
        })

/* close() without retrying on EINTR and without clobbering errno; always returns -EBADF so
 * that "fd = safe_close(fd);" resets the variable. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* For refcounted public types: DEFINE_UNREF_CLEANUP(nsid_ns, nsid_ns_unref) gives
 * _cleanup_(nsid_ns_unrefp). */
#define DEFINE_UNREF_CLEANUP(type, func)                                                       \
        static inline void func##p(type **p) {                                                 \
                if (*p)                                                                        \
                        *p = func(*p);                                                         \
        }

/* errno as a negative return value, never 0 even if errno was unset. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#endif
