/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-netns NFSv4 client identifier, read and written from inside the netns. */
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "log-internal.h"
#include "macro.h"
#include "nsid/nfsclient.h"
#include "nsid/worker.h"

#define IDENTIFIER_PATH "fs/nfs/net/nfs_client/identifier"
#define KERNEL_KEEPS 64 /* bytes of a write the kernel keeps (KERNEL-FACTS.md 1) */
#define REPLY_MAX 256
#define DEFAULT_TIMEOUT_MS 10000

_public_ int nsid_nfs_identifier_validate(const char *identifier) {
        size_t n;

        assert_return(identifier, -EINVAL);
        n = strlen(identifier);
        if (n == 0 || n > NSID_NFS_IDENTIFIER_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) identifier[i] < 0x21 || (unsigned char) identifier[i] > 0x7e)
                        return -EINVAL;
        return 0;
}

enum op { OP_GET, OP_SET };

struct child_args {
        enum op op;
        const char *identifier;
        const char *replaceable;
        unsigned flags;
        const char *test_dir; /* NSID_TEST_SYSFS_NFS_CLIENT_DIR */
};

/* ---- in the worker child (joined the netns only, capabilities kept) ---- */

/* A sysfs instance of the current netns that only this process sees. */
static int mount_private_sysfs(void) {
        int fs, mfd;

        fs = (int) syscall(SYS_fsopen, "sysfs", FSOPEN_CLOEXEC);
        if (fs >= 0) {
                if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                        int e = negative_errno();
                        safe_close(fs);
                        return e;
                }
                mfd = (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
                if (mfd < 0) {
                        int e = negative_errno();
                        safe_close(fs);
                        return e;
                }
                safe_close(fs);
                return mfd; /* detached: never attached to any mount tree */
        }
        if (errno != ENOSYS)
                return negative_errno();

        /* Kernels before 5.2: over /sys in a private mount namespace of this child. */
        if (unshare(CLONE_NEWNS) < 0)
                return negative_errno();
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return negative_errno();
        if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return negative_errno();
        mfd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
        return mfd < 0 ? negative_errno() : mfd;
}

/* Test hook path: DIR/<inode of the netns this process is in>. */
static int fake_path(const char *dir, char *buf, size_t size) {
        struct stat st;

        if (stat("/proc/thread-self/ns/net", &st) < 0)
                return negative_errno();
        if ((size_t) snprintf(buf, size, "%s/%llu", dir, (unsigned long long) st.st_ino) >= size)
                return -ENAMETOOLONG;
        return 0;
}

/* Read the identifier: "" when "(null)". */
static int read_identifier(int sysfd, const struct child_args *a, char *buf, size_t size) {
        char path[4096];
        ssize_t n;
        int fd, r;

        if (a->test_dir) {
                r = fake_path(a->test_dir, path, sizeof(path));
                if (r < 0)
                        return r;
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 && errno == ENOENT) {
                        snprintf(buf, size, "%s", ""); /* a fresh netns reads "(null)" */
                        return 0;
                }
        } else
                fd = openat(sysfd, IDENTIFIER_PATH, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        n = read(fd, buf, size - 1);
        r = n < 0 ? negative_errno() : 0;
        safe_close(fd);
        if (r < 0)
                return r;
        buf[n] = '\0';
        if (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        if (strcmp(buf, "(null)") == 0)
                buf[0] = '\0';
        return 0;
}

static int write_identifier(int sysfd, const struct child_args *a) {
        char line[NSID_NFS_IDENTIFIER_MAX + 2], path[4096];
        size_t len;
        ssize_t n;
        int fd, r;

        len = (size_t) snprintf(line, sizeof(line), "%s\n", a->identifier);
        if (a->test_dir) {
                /* The kernel's semantics: trailing "\n" stripped, at most 64 bytes kept. */
                r = fake_path(a->test_dir, path, sizeof(path));
                if (r < 0)
                        return r;
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
                if (fd < 0)
                        return negative_errno();
                n = write(fd, line, len < KERNEL_KEEPS ? len : KERNEL_KEEPS);
        } else {
                fd = openat(sysfd, IDENTIFIER_PATH, O_WRONLY | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                n = write(fd, line, len);
        }
        r = n < 0 ? negative_errno() : (size_t) n == len || a->test_dir ? 0 : -EIO;
        safe_close(fd);
        return r;
}

/* Set the superblock of the sysfs instance behind sysfd read-only or read-write.
 * A netns has one sysfs superblock, shared by every sysfs mount of it: a runtime that mounted
 * its container's /sys read-only with MS_RDONLY (systemd-nspawn does) made that superblock
 * read-only, and our private instance is the same superblock, so the write fails with EROFS.
 * The runtime's mount stays read-only on its own (MNT_READONLY) while we flip the superblock. */
static int sysfs_set_rw(int sysfd, bool rw) {
        int fs, r = 0;

        fs = (int) syscall(SYS_fspick, sysfd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);
        if (fs >= 0) {
                if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, rw ? "rw" : "ro", NULL, 0) < 0 ||
                    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
                        r = negative_errno();
                safe_close(fs);
                return r;
        }
        if (errno != ENOSYS)
                return negative_errno();
        /* before 5.2: our sysfs is mounted over /sys in a mount namespace of our own */
        if (mount(NULL, "/sys", NULL,
                  MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC | (rw ? 0 : MS_RDONLY), NULL) < 0)
                return negative_errno();
        return 0;
}

/* Write; on a read-only superblock (see sysfs_set_rw), make it writable for the write only. */
static int write_identifier_rw(int sysfd, const struct child_args *a) {
        int r, r2;

        r = write_identifier(sysfd, a);
        if (r != -EROFS || a->test_dir)
                return r;
        r = sysfs_set_rw(sysfd, true);
        if (r < 0)
                return -EROFS;
        r = write_identifier(sysfd, a);
        r2 = sysfs_set_rw(sysfd, false);
        return r < 0 ? r : r2;
}

static int reply(int fd, char code, const char *previous) {
        char buf[REPLY_MAX];
        int len = snprintf(buf, sizeof(buf), "%c %s\n", code, previous);

        if (len < 0 || (size_t) len >= sizeof(buf))
                return -EINVAL;
        return write(fd, buf, (size_t) len) == len ? 0 : -EIO;
}

static int child_main(int reply_fd, void *userdata) {
        const struct child_args *a = userdata;
        char cur[REPLY_MAX - 8], back[REPLY_MAX - 8];
        int sysfd, r;

        sysfd = mount_private_sysfs();
        if (sysfd < 0)
                return sysfd;
        r = read_identifier(sysfd, a, cur, sizeof(cur));
        if (r == -ENOENT) {
                safe_close(sysfd);
                return reply(reply_fd, 'N', "");
        }
        if (r < 0)
                goto out;
        if (a->op == OP_GET) {
                r = reply(reply_fd, 'G', cur);
                goto out;
        }
        if (strcmp(cur, a->identifier) == 0) {
                r = reply(reply_fd, 'S', cur);
                goto out;
        }
        if (cur[0] && !(a->flags & NSID_NFS_SET_FORCE) &&
            !(a->replaceable && strcmp(cur, a->replaceable) == 0)) {
                r = reply(reply_fd, 'X', cur);
                goto out;
        }
        if (a->flags & NSID_NFS_SET_DRY_RUN) {
                r = reply(reply_fd, 'D', cur);
                goto out;
        }
        r = write_identifier_rw(sysfd, a);
        if (r < 0)
                goto out;
        r = read_identifier(sysfd, a, back, sizeof(back));
        if (r < 0)
                goto out;
        r = reply(reply_fd, strcmp(back, a->identifier) == 0 ? 'W' : 'R', cur);
out:
        safe_close(sysfd);
        return r;
}

/* ---- in the caller ---- */

static const char *test_dir(void) {
        static bool warned;
        const char *d = secure_getenv("NSID_TEST_SYSFS_NFS_CLIENT_DIR");

        if (!d || !*d)
                return NULL;
        if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
                log_info("NSID_TEST_SYSFS_NFS_CLIENT_DIR=%s: using a fake identifier file per "
                            "netns instead of the kernel's (test hook)",
                            d);
        return d;
}

static int run(nsid_ns *netns, struct child_args *a, int timeout_ms, char *ret_code,
               char **ret_previous) {
        _cleanup_free_ char *rep = NULL;
        nsid_ns *nsv[1] = { netns };
        size_t size = 0;
        char *prev;
        int r;

        r = nsid_worker_run_ns(nsv, 1, NSID_WORKER_KEEP_CAPS,
                               timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS, child_main, a,
                               REPLY_MAX, &rep, &size);
        if (r < 0)
                return r;
        /* Untrusted reply: "<code> <identifier>\n", printable, bounded. */
        if (size < 3 || size >= REPLY_MAX || rep[1] != ' ' || rep[size - 1] != '\n' ||
            !strchr("GNSXDWR", rep[0]) || rep[0] == '\0')
                return -EBADMSG;
        rep[size - 1] = '\0';
        prev = rep + 2;
        for (const char *c = prev; *c; c++)
                if ((unsigned char) *c < 0x20 || (unsigned char) *c > 0x7e)
                        return -EBADMSG;
        *ret_code = rep[0];
        if (ret_previous) {
                char *p = strdup(prev);
                if (!p)
                        return -ENOMEM;
                *ret_previous = p;
        }
        return 0;
}

_public_ int nsid_nfs_client_get_identifier(nsid_ns *netns, int timeout_ms, char **ret) {
        struct child_args a = { .op = OP_GET };
        char *prev = NULL, code = 0;
        int r;

        assert_return(netns, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(nsid_ns_get_type(netns) == NSID_NS_NET, -EINVAL);

        a.test_dir = test_dir();
        r = run(netns, &a, timeout_ms, &code, &prev);
        if (r < 0)
                return r;
        if (code != 'G') {
                free(prev);
                return code == 'N' ? -ENOENT : -EBADMSG;
        }
        *ret = prev;
        return 0;
}

_public_ int nsid_nfs_client_set_identifier(nsid_ns *netns, const char *identifier,
                                            const char *replaceable, unsigned flags,
                                            int timeout_ms, char **ret_previous) {
        struct child_args a = {
                .op = OP_SET,
                .identifier = identifier,
                .replaceable = replaceable,
                .flags = flags,
        };
        _cleanup_free_ char *prev = NULL;
        char code = 0;
        int r;

        assert_return(netns, -EINVAL);
        assert_return(nsid_ns_get_type(netns) == NSID_NS_NET, -EINVAL);
        assert_return(nsid_nfs_identifier_validate(identifier) == 0, -EINVAL);
        assert_return(!replaceable || nsid_nfs_identifier_validate(replaceable) == 0, -EINVAL);
        assert_return((flags & ~(NSID_NFS_SET_FORCE | NSID_NFS_SET_DRY_RUN)) == 0, -EINVAL);

        a.test_dir = test_dir();
        r = run(netns, &a, timeout_ms, &code, &prev);
        if (r < 0)
                return r;
        switch (code) {
        case 'N':
                return -ENOENT;
        case 'S':
        case 'D':
                r = 0;
                break;
        case 'W':
                r = 1;
                break;
        case 'X':
                r = -EEXIST;
                break;
        case 'R':
                return log_debug_errno(-EIO, "nfs: identifier read back differs after write");
        default:
                return -EBADMSG;
        }
        if (ret_previous)
                *ret_previous = TAKE_PTR(prev);
        return r;
}
