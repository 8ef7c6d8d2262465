/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The process that called request_key() (nsid/requester.h). Direct keyctl(2) system calls:
 * nsid-idmap links this into a helper that runs at every upcall and loads no libkeyutils. */
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nsid/keyring.h>
#include <nsid/requester.h>

#include "fmt-util.h"
#include "macro.h"
#include "proc-util.h"

#define NOBODY_UID 65534
#define PROC_KEYS_MAX (64u * 1024 * 1024)

static long keyctl4(int op, long a2, long a3, long a4) {
        return syscall(SYS_keyctl, op, a2, a3, a4, 0L);
}

/* Its description must be exactly the target's serial in hex. */
static bool is_auth_key_for(int32_t k, const char *want) {
        char buf[256];
        nsid_key_describe kd;
        /* ".request_key_auth;UID;GID;PERM;HEX": far below 256 bytes; a longer description
         * is not the one we look for */
        long m = keyctl4(KEYCTL_DESCRIBE, k, (long) buf, (long) sizeof(buf));
        if (m <= 0 || (size_t) m > sizeof(buf))
                return false;
        buf[m - 1] = '\0';
        return nsid_key_describe_parse(buf, (size_t) m - 1, &kd) >= 0 &&
               kd.type_len == strlen(".request_key_auth") &&
               memcmp(kd.type, ".request_key_auth", kd.type_len) == 0 &&
               kd.description_len == strlen(want) &&
               memcmp(kd.description, want, kd.description_len) == 0;
}

/* The .request_key_auth key for target: the authority the thread has assumed (request-key
 * assumes it before it runs the helper), else a search of the session keyring. */
static int32_t find_auth_key(int32_t target) {
        char want[17];
        int32_t list[128];

        fmt_hex(want, (uint32_t) target, 0);
        long k = keyctl4(KEYCTL_GET_KEYRING_ID, KEY_SPEC_REQKEY_AUTH_KEY, 0, 0);
        if (k > 0 && is_auth_key_for((int32_t) k, want))
                return (int32_t) k;
        /* the keyring request-key runs the helper with holds the auth key and little else */
        long n = keyctl4(KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, (long) list, (long) sizeof(list));
        if (n < 0)
                return -ENOKEY;
        if ((size_t) n > sizeof(list))
                n = sizeof(list);
        for (size_t i = 0; i < (size_t) n / sizeof(int32_t); i++)
                if (is_auth_key_for(list[i], want))
                        return list[i];
        return -ENOKEY;
}

/* The requester's namespace of one type: its inode (a stat() of /proc/PID/ns/NAME, which
 * follows the link to the namespace) and whether it is the initial one (the reserved inode
 * of newer kernels, else the same as PID 1's). One or two system calls instead of opening
 * the namespace; the pid is checked to still be the requester's (its pidfd) once all are
 * read, in nsid_requester_find(). */
static int ns_info(pid_t pid, nsid_ns_type type, uint64_t *ret_ino, int *ret_initial) {
        const char *name = nsid_ns_type_name(type);
        uint32_t reserved = nsid_ns_type_initial_ino(type);
        char path[64], p[24];
        struct stat st, init;

        fmt_u64(p, (uint64_t) pid);
        if (fmt_join(path, sizeof(path), "/proc/", p, "/ns/", name, NULL) < 0)
                return -ENAMETOOLONG;
        if (stat(path, &st) < 0)
                return -errno;
        *ret_ino = (uint64_t) st.st_ino;
        if ((uint64_t) st.st_ino == reserved)
                *ret_initial = 1;
        else {
                (void) fmt_join(path, sizeof(path), "/proc/1/ns/", name, NULL);
                *ret_initial = stat(path, &init) < 0 ? -errno
                                                      : init.st_dev == st.st_dev &&
                                                                init.st_ino == st.st_ino;
        }
        return 0;
}

_public_ int nsid_proc_keys_open(void) {
        int fsuid = setfsuid(NOBODY_UID);
        bool changed = setfsuid((uid_t) -1) == NOBODY_UID;
        int fd = open("/proc/keys", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        int e = errno;
        if (changed)
                (void) setfsuid((uid_t) fsuid);
        if (fd >= 0)
                return fd;
        if (!changed)
                return -e;
        /* a kernel or policy that refuses nobody /proc/keys: as ourselves */
        fd = open("/proc/keys", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd >= 0 ? fd : -errno;
}

/* The whole of /proc/keys from its start into buf (size bytes, NUL appended) when it fits,
 * else into *ret_heap (malloc'ed); *ret is whichever holds it. Each read from offset 0 makes
 * the kernel walk the keys anew. */
static int proc_keys_read(int fd, char *buf, size_t size, char **ret, char **ret_heap,
                          size_t *ret_size) {
        char *b = buf, *heap = NULL;
        size_t got = 0, cap = size - 1;

        for (;;) {
                if (got == cap) {
                        if (cap >= PROC_KEYS_MAX) {
                                free(heap);
                                return -EFBIG;
                        }
                        size_t ncap = cap * 2 > PROC_KEYS_MAX ? PROC_KEYS_MAX : cap * 2;
                        char *n = realloc(heap, ncap + 1);
                        if (!n) {
                                free(heap);
                                return -ENOMEM;
                        }
                        if (!heap)
                                memcpy(n, buf, got);
                        heap = b = n;
                        cap = ncap;
                }
                ssize_t k = pread(fd, b + got, cap - got, (off_t) got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        int e = -errno;
                        free(heap);
                        return e;
                }
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        b[got] = '\0';
        *ret = b;
        *ret_heap = heap;
        *ret_size = got;
        return 0;
}

/* a printable copy of a process name for log lines */
static void comm_copy(const char *s, size_t len, char *buf, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;
        for (size_t i = 0; i < len && o + 5 < size; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"') {
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[c >> 4];
                        buf[o++] = hex[c & 15];
                } else
                        buf[o++] = (char) c;
        }
        buf[o] = '\0';
}

_public_ int nsid_requester_find(int32_t target, int keys_fd, nsid_requester *ret) {
        nsid_requester r = { .pidfd = -1, .net_initial = -ENODATA, .user_initial = -ENODATA,
                             .mnt_initial = -ENODATA, .mnt_owner_initial = -ENODATA };
        char keysbuf[16384]; /* opened as nobody, /proc/keys shows a few lines: no allocation */
        char *keys = NULL, *keys_heap = NULL;
        size_t size = 0;
        char type[10];
        const char *desc;
        size_t desc_len;
        int32_t t;
        pid_t pid;
        int k;

        assert_return(ret, -EINVAL);
        *ret = r;
        assert_return(target > 0 && keys_fd >= 0, -EINVAL);
        r.auth_key = find_auth_key(target);
        if (r.auth_key < 0)
                return -ENOKEY;
        k = proc_keys_read(keys_fd, keysbuf, sizeof(keysbuf), &keys, &keys_heap, &size);
        if (k < 0)
                return k;
        /* only the auth key's line, and of it only its type and description (a forged line
         * duplicating its serial makes it -ENOTUNIQ) */
        k = nsid_proc_keys_find_brief(keys, size, r.auth_key, type, &desc, &desc_len);
        if (k >= 0 && strcmp(type, ".request_") != 0)
                k = -EBADMSG;
        if (k >= 0)
                k = nsid_reqkey_auth_parse(desc, desc_len, &t, &pid, NULL);
        free(keys_heap);
        if (k < 0)
                return k;
        if (t != target)
                return -EBADMSG;
        /* pinned by a pidfd; a libnsid process object (an allocation and an open of its
         * /proc directory) only when its namespaces must be opened, nsid_requester_proc() */
        r.pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (r.pidfd < 0)
                return errno == EINVAL ? -ESRCH : -errno;
        /* The auth key must still be there once the pid is pinned: the pid we read belongs
         * to a task that was waiting for this very key. */
        if (keyctl4(KEYCTL_DESCRIBE, r.auth_key, 0, 0) < 0) {
                close(r.pidfd);
                return -EKEYREVOKED;
        }
        r.pid = pid;

        /* its name (at most 16 bytes and a newline: one read), for the log; like the
         * namespaces below, read by path and vouched for by the pidfd check after them */
        char path[64], comm[64], p[24];
        fmt_u64(p, (uint64_t) pid);
        (void) fmt_join(path, sizeof(path), "/proc/", p, "/comm", NULL);
        int cfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (cfd >= 0) {
                ssize_t cl = read(cfd, comm, sizeof(comm));
                close(cfd);
                while (cl > 0 && (comm[cl - 1] == '\n' || comm[cl - 1] == '\0'))
                        cl--;
                if (cl > 0)
                        comm_copy(comm, (size_t) cl, r.comm, sizeof(r.comm));
        }
        /* (include/linux/proc_ns.h: the inodes of the initial namespaces; net and mnt
         * have theirs since 6.x, before that they are dynamic and compared with PID 1's) */
        (void) ns_info(pid, NSID_NS_NET, &r.net_ino, &r.net_initial);
        (void) ns_info(pid, NSID_NS_USER, &r.user_ino, &r.user_initial);
        (void) ns_info(pid, NSID_NS_MNT, &r.mnt_ino, &r.mnt_initial);
        if (pidfd_check_alive(r.pidfd) < 0) {
                close(r.pidfd);
                return -ESRCH;
        }
        if (r.mnt_initial == 1)
                r.mnt_owner_initial = 1;
        else {
                nsid_ns *mnt = NULL, *owner = NULL;
                if (nsid_requester_proc(&r) >= 0 && nsid_proc_open_ns(r.proc, NSID_NS_MNT, &mnt) >= 0 &&
                    nsid_ns_get_userns(mnt, &owner) >= 0)
                        r.mnt_owner_initial = nsid_ns_is_initial(owner);
                nsid_ns_unref(owner);
                nsid_ns_unref(mnt);
        }
        *ret = r;
        return 0;
}

_public_ int nsid_requester_proc(nsid_requester *r) {
        assert_return(r, -EINVAL);
        if (r->proc)
                return 0;
        if (r->pidfd < 0)
                return -ESRCH;
        return nsid_proc_open_pidfd(r->pidfd, &r->proc); /* (a copy of the pidfd) */
}

_public_ void nsid_requester_done(nsid_requester *r) {
        if (!r)
                return;
        r->proc = nsid_proc_unref(r->proc);
        if (r->pidfd >= 0)
                close(r->pidfd);
        r->pidfd = -1;
}

_public_ const char *nsid_requester_describe(const nsid_requester *r, int find_error,
                                             char *buf, size_t size) {
        char pid[24], net[24], user[24], mnt[24];

        if (!buf || size == 0)
                return "";
        if (!r || find_error < 0 || r->pidfd < 0) {
                if (fmt_join(buf, size, "requester unknown (",
                             strerror(find_error < 0 ? -find_error : ESRCH), ")", NULL) < 0)
                        buf[0] = '\0';
                return buf;
        }
        /* "requester pid %d (%s) net:[%llu]%s user:[%llu]%s mnt:[%llu]%s", without printf
         * (a line of every upcall) */
        fmt_u64(pid, (uint64_t) r->pid);
        fmt_u64(net, r->net_ino);
        fmt_u64(user, r->user_ino);
        fmt_u64(mnt, r->mnt_ino);
        if (fmt_join(buf, size, "requester pid ", pid, " (", r->comm, ") net:[", net, "]",
                     r->net_initial == 1 ? "(host)" : "", " user:[", user, "]",
                     r->user_initial == 1 ? "(host)" : "", " mnt:[", mnt, "]",
                     r->mnt_initial == 1 ? "(host)" : "", NULL) < 0 &&
            fmt_join(buf, size, "requester pid ", pid, NULL) < 0)
                buf[0] = '\0';
        return buf;
}
