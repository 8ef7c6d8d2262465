/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The generated host secret and the fingerprint of the platform it was made on: what tells
 * cloned hosts apart when they share /etc/machine-id (doc/host-secret.md). */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hmac-internal.h"
#include "file-internal.h"
#include "hostsecret-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "nsid/hostsecret.h"
#include "nsid/identity.h"
#include "proc-util.h"

#define SECRET_FILE "host-secret"
#define FP_MAGIC "nsid-host-fingerprint 1\n"
#define PLATFORM_ID_PATH "/sys/class/dmi/id/product_uuid"
#define HEX_ID 33 /* 32 hex + NUL */

typedef struct fingerprint {
        char platform[HEX_ID]; /* "" when not recorded */
        char machine[HEX_ID];
} fingerprint;

/* The DMI product UUID, lowercased: 36 characters of a UUID. -ENOMEDIUM for the placeholder
 * values firmware leaves (all zeros, all ones), -EINVAL for anything else malformed. */
static int platform_id_read(const char *path, char ret[37]) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        bool zero = true, ones = true;
        size_t size = 0;
        struct stat st;
        int r;

        fd = open_regular_at(AT_FDCWD, path ? path : PLATFORM_ID_PATH, O_NOFOLLOW, &st);
        if (fd < 0)
                return fd;
        r = read_fd_capped(fd, 64, &data, &size);
        if (r < 0)
                return r == -EFBIG ? -EINVAL : r;
        if (size == 37 && data[36] == '\n')
                size = 36;
        if (size != 36)
                return -EINVAL;
        for (size_t i = 0; i < 36; i++) {
                char c = data[i];
                if (i == 8 || i == 13 || i == 18 || i == 23) {
                        if (c != '-')
                                return -EINVAL;
                        ret[i] = c;
                        continue;
                }
                if (c >= 'A' && c <= 'F')
                        c = (char) (c - 'A' + 'a');
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                        return -EINVAL;
                zero = zero && c == '0';
                ones = ones && c == 'f';
                ret[i] = c;
        }
        ret[36] = 0;
        return zero || ones ? -ENOMEDIUM : 0;
}

/* HMAC-SHA256(secret, "nsid-fp-v1" label 0 value), 16 bytes in hex: the fingerprint names no
 * value (the machine-id stays out of every file nsid writes). */
static int fp_hash(const uint8_t secret[16], const char *label, const void *value, size_t len,
                   char ret[HEX_ID]) {
        static const char hex[] = "0123456789abcdef";
        uint8_t msg[128], md[32];
        size_t ll = strlen(label), ml = 10 + ll + 1 + len;

        if (ml > sizeof(msg))
                return -EINVAL;
        memcpy(msg, "nsid-fp-v1", 10);
        memcpy(msg + 10, label, ll);
        msg[10 + ll] = 0;
        memcpy(msg + 11 + ll, value, len);
        {
                const struct iovec iov = { msg, ml };
                if (nsid_hmac_sha256(NSID_HMAC_ANY, secret, 16, &iov, 1, md) < 0)
                        return -EIO;
        }
        for (size_t i = 0; i < 16; i++) {
                ret[2 * i] = hex[md[i] >> 4];
                ret[2 * i + 1] = hex[md[i] & 15];
        }
        ret[32] = 0;
        OPENSSL_cleanse(md, sizeof(md));
        OPENSSL_cleanse(msg, sizeof(msg));
        return 0;
}

/* The platform as it is now, hashed with secret. */
static void fp_now(const uint8_t secret[16], const char *machine_id_path,
                   const char *platform_id_path, fingerprint *ret, bool *ret_have_platform) {
        uint8_t mid[16];
        char uuid[37];

        *ret = (fingerprint) {};
        *ret_have_platform = platform_id_read(platform_id_path, uuid) >= 0;
        if (*ret_have_platform && fp_hash(secret, "platform-id", uuid, 36, ret->platform) < 0)
                ret->platform[0] = 0;
        if (nsid_host_machine_id(machine_id_path, mid) >= 0 &&
            fp_hash(secret, "machine-id", mid, 16, ret->machine) < 0)
                ret->machine[0] = 0;
        OPENSSL_cleanse(mid, sizeof(mid));
}

static int fp_value(const char *line, size_t len, const char *key, char out[HEX_ID]) {
        size_t kl = strlen(key);

        if (len < kl + 2 || memcmp(line, key, kl) != 0 || line[kl] != ' ')
                return -EBADMSG;
        line += kl + 1;
        len -= kl + 1;
        if (len == 4 && memcmp(line, "none", 4) == 0) {
                out[0] = 0;
                return 0;
        }
        if (len != 32)
                return -EBADMSG;
        for (size_t i = 0; i < 32; i++)
                if (!((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' && line[i] <= 'f')))
                        return -EBADMSG;
        memcpy(out, line, 32);
        out[32] = 0;
        return 0;
}

/* STATE_DIR/host-secret.fingerprint: -ENOENT when there is none. */
static int fp_read(int dfd, fingerprint *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        const size_t ml = sizeof(FP_MAGIC) - 1;
        size_t size = 0;
        struct stat st;
        const char *l2, *nl;
        fingerprint fp = {};
        int r;

        fd = open_regular_at(dfd, NSID_HOST_SECRET_FINGERPRINT_FILE, O_NOFOLLOW, &st);
        if (fd < 0)
                return fd == -ELOOP ? -EPERM : fd;
        if (st.st_uid != geteuid() || (st.st_mode & 022) != 0)
                return -EPERM;
        r = read_fd_capped(fd, 256, &data, &size);
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        if (size < ml || memcmp(data, FP_MAGIC, ml) != 0 || data[size - 1] != '\n')
                return -EBADMSG;
        l2 = data + ml;
        nl = memchr(l2, '\n', size - ml);
        if (!nl || fp_value(l2, (size_t) (nl - l2), "platform-id", fp.platform) < 0)
                return -EBADMSG;
        l2 = nl + 1;
        nl = memchr(l2, '\n', (size_t) (data + size - l2));
        if (!nl || nl + 1 != data + size ||
            fp_value(l2, (size_t) (nl - l2), "machine-id", fp.machine) < 0)
                return -EBADMSG;
        *ret = fp;
        return 0;
}

/* Write name in dfd atomically (O_TMPFILE, fsync, then renamed over name via a temporary
 * link), mode 0600. */
static int write_atomic(int dfd, const char *name, const void *data, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        char tmp[128];
        bool named;
        int r;

        snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long) getpid());
        (void) unlinkat(dfd, tmp, 0);
        fd = tmpfile_open(dfd, tmp, &named);
        if (fd < 0)
                return fd;
        if (fchmod(fd, 0600) < 0 || write(fd, data, size) != (ssize_t) size || fsync(fd) < 0) {
                r = errno > 0 ? -errno : -EIO;
                goto fail;
        }
        r = tmpfile_name(dfd, fd, named, tmp);
        if (r < 0)
                goto fail;
        if (renameat(dfd, tmp, dfd, name) < 0) {
                r = negative_errno();
                goto fail;
        }
        (void) fsync(dfd);
        return 0;
fail:
        (void) unlinkat(dfd, tmp, 0);
        return r;
}

static int fp_write(int dfd, const fingerprint *fp) {
        char buf[160];
        int n;

        n = snprintf(buf, sizeof(buf), FP_MAGIC "platform-id %s\nmachine-id %s\n",
                     fp->platform[0] ? fp->platform : "none",
                     fp->machine[0] ? fp->machine : "none");
        if (n < 0 || (size_t) n >= sizeof(buf))
                return -EINVAL;
        return write_atomic(dfd, NSID_HOST_SECRET_FINGERPRINT_FILE, buf, (size_t) n);
}

static int state_dir_open(const char *state_dir, bool create) {
        int fd;

        state_dir = nsid_state_dir_or_default(state_dir);
        if (create && mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* Readers of the secret and its fingerprint hold the state directory's lock shared, the
 * steps that replace them exclusive: a reader sees the pair before or after a change,
 * never one without the other (a rotation read half-way gave the machine-id's identities,
 * or ENOKEY, issue #29 item 5). flock() on the directory itself: no lock file to manage. */
static int state_dir_lock(int dfd, int how) {
        while (flock(dfd, how) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return 0;
}

int host_secret_load_generated(const char *state_dir, uint8_t ret[16]) {
        _cleanup_close_ int dfd = -EBADF;
        fingerprint fp;
        int r;

        dfd = state_dir_open(state_dir, false);
        if (dfd < 0)
                return dfd == -ENOENT ? -ENOENT : dfd;
        r = state_dir_lock(dfd, LOCK_SH);
        if (r < 0)
                return r;
        r = fp_read(dfd, &fp);
        if (r < 0)
                return r;
        r = host_secret_read_file(dfd, ret);
        /* a fingerprint without its secret: lost, not "none" */
        return r == -ENOENT ? -ENOKEY : r;
}

_public_ int nsid_host_secret_inspect(const char *machine_id_path, const char *state_dir,
                                      const char *platform_id_path,
                                      nsid_host_secret_status *ret) {
        _cleanup_close_ int dfd = -EBADF;
        nsid_host_secret_status s = {};
        fingerprint rec, now;
        uint8_t secret[16], mid[16];
        char uuid[37];
        int r;

        assert_return(ret, -EINVAL);

        s.have_platform_id = platform_id_read(platform_id_path, uuid) >= 0;
        r = host_secret_load_generated(state_dir, secret);
        if (r == -ENOENT) {
                s.source = nsid_host_machine_id(machine_id_path, mid) >= 0
                                   ? NSID_HOST_SECRET_MACHINE_ID
                                   : NSID_HOST_SECRET_STATE_FILE;
                OPENSSL_cleanse(mid, sizeof(mid));
                *ret = s;
                return 0;
        }
        if (r < 0)
                return r;
        s.source = NSID_HOST_SECRET_GENERATED;
        dfd = state_dir_open(state_dir, false);
        if (dfd >= 0 && state_dir_lock(dfd, LOCK_SH) < 0)
                dfd = safe_close(dfd);
        if (dfd < 0 || fp_read(dfd, &rec) < 0) {
                OPENSSL_cleanse(secret, sizeof(secret));
                return dfd < 0 ? dfd : -EBADMSG;
        }
        fp_now(secret, machine_id_path, platform_id_path, &now, &s.have_platform_id);
        OPENSSL_cleanse(secret, sizeof(secret));
        s.platform_id_recorded = rec.platform[0] != 0;
        s.machine_id_recorded = rec.machine[0] != 0;
        /* a part that was recorded and now reads otherwise, or no longer reads at all */
        s.platform_id_changed = s.platform_id_recorded && strcmp(rec.platform, now.platform) != 0;
        s.machine_id_changed = s.machine_id_recorded && strcmp(rec.machine, now.machine) != 0;
        *ret = s;
        return 0;
}

static void log_step(int dfd, const char *what, const char *detail, const char *reason) {
        _cleanup_close_ int fd = -EBADF;
        char line[512], when[32], why[201];
        time_t t = time(NULL);
        struct tm tm;
        size_t i = 0;
        int n;

        for (; reason && reason[i] && i < sizeof(why) - 1; i++)
                why[i] = (unsigned char) reason[i] < 0x20 || reason[i] == 0x7f ? '?' : reason[i];
        why[i] = 0;
        if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
                snprintf(when, sizeof(when), "@%lld", (long long) t);
        n = snprintf(line, sizeof(line), "%s %s %s%s%s\n", when, what, detail,
                     why[0] ? "; reason: " : "", why);
        if (n < 0)
                return;
        if ((size_t) n >= sizeof(line))
                n = (int) sizeof(line) - 1, line[n - 1] = '\n';
        fd = openat(dfd, NSID_HOST_SECRET_LOG_FILE,
                    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0 || write(fd, line, (size_t) n) != n)
                log_debug("host secret: cannot append to %s: %s", NSID_HOST_SECRET_LOG_FILE,
                          strerror(errno));
        log_debug("host secret: %s", line);
}

_public_ int nsid_host_secret_new(const char *machine_id_path, const char *state_dir,
                                  const char *platform_id_path, const char *reason,
                                  nsid_host_secret_source *ret_previous) {
        _cleanup_close_ int dfd = -EBADF;
        nsid_host_secret_status prev = {};
        char old[128], detail[160], newtmp[64];
        fingerprint fp;
        bool have_platform;
        uint8_t secret[16];
        long long now = (long long) time(NULL);
        int r;

        r = nsid_host_secret_inspect(machine_id_path, state_dir, platform_id_path, &prev);
        if (r < 0 && r != -ENOKEY && r != -EBADMSG)
                return log_debug_errno(r, "host secret: %s", strerror(-r));
        if (r < 0)
                prev.source = NSID_HOST_SECRET_GENERATED; /* a damaged one is replaced */

        dfd = state_dir_open(state_dir, true);
        if (dfd < 0)
                return log_debug_errno(dfd, "host secret: state dir %s: %s",
                                       nsid_state_dir_or_default(state_dir), strerror(-dfd));
        r = state_dir_lock(dfd, LOCK_EX);
        if (r < 0)
                return log_debug_errno(r, "host secret: locking %s: %s",
                                       nsid_state_dir_or_default(state_dir), strerror(-r));

        /* the new secret under a temporary name first, so the old one stays until the end */
        snprintf(newtmp, sizeof(newtmp), ".host-secret.new.%ld", (long) getpid());
        (void) unlinkat(dfd, newtmp, 0);
        {
                bool named;
                _cleanup_close_ int tfd = tmpfile_open(dfd, newtmp, &named);
                if (tfd < 0)
                        return tfd;
                if (RAND_priv_bytes(secret, sizeof(secret)) != 1) {
                        (void) unlinkat(dfd, newtmp, 0);
                        return -EIO;
                }
                if (fchmod(tfd, 0600) < 0 || write(tfd, secret, 16) != 16 || fsync(tfd) < 0) {
                        r = errno > 0 ? -errno : -EIO;
                        OPENSSL_cleanse(secret, sizeof(secret));
                        (void) unlinkat(dfd, newtmp, 0);
                        return r;
                }
                r = tmpfile_name(dfd, tfd, named, newtmp);
                if (r < 0) {
                        OPENSSL_cleanse(secret, sizeof(secret));
                        return r;
                }
        }
        fp_now(secret, machine_id_path, platform_id_path, &fp, &have_platform);
        OPENSSL_cleanse(secret, sizeof(secret));

        /* keep the previous secret and fingerprint (undo by hand: rename them back) as second
         * names: the files stay in place until the renames below replace them, each at once,
         * so that even a reader that takes no lock finds a secret and a fingerprint */
        snprintf(old, sizeof(old), SECRET_FILE ".old.%lld", now);
        if (linkat(dfd, SECRET_FILE, dfd, old, 0) < 0 && errno != ENOENT && errno != EEXIST) {
                r = negative_errno();
                goto fail;
        }
        snprintf(old, sizeof(old), NSID_HOST_SECRET_FINGERPRINT_FILE ".old.%lld", now);
        if (linkat(dfd, NSID_HOST_SECRET_FINGERPRINT_FILE, dfd, old, 0) < 0 && errno != ENOENT &&
            errno != EEXIST) {
                r = negative_errno();
                goto fail;
        }
        if (renameat(dfd, newtmp, dfd, SECRET_FILE) < 0) {
                r = negative_errno();
                goto fail;
        }
        r = fp_write(dfd, &fp);
        if (r < 0)
                return log_debug_errno(r, "host secret: writing the fingerprint: %s",
                                       strerror(-r));
        (void) fsync(dfd);

        snprintf(detail, sizeof(detail), "replaced %s secret; platform id %s, machine-id %s",
                 nsid_host_secret_source_to_string(prev.source),
                 fp.platform[0] ? "recorded" : "none", fp.machine[0] ? "recorded" : "none");
        log_step(dfd, "new", detail, reason);
        if (ret_previous)
                *ret_previous = prev.source;
        return 0;
fail:
        (void) unlinkat(dfd, newtmp, 0);
        return log_debug_errno(r, "host secret: %s", strerror(-r));
}

_public_ int nsid_host_secret_accept(const char *machine_id_path, const char *state_dir,
                                     const char *platform_id_path, const char *reason) {
        _cleanup_close_ int dfd = -EBADF;
        fingerprint fp;
        bool have_platform;
        uint8_t secret[16];
        char detail[128];
        int r;

        r = host_secret_load_generated(state_dir, secret);
        if (r < 0)
                return r;
        fp_now(secret, machine_id_path, platform_id_path, &fp, &have_platform);
        OPENSSL_cleanse(secret, sizeof(secret));
        dfd = state_dir_open(state_dir, false);
        if (dfd < 0)
                return dfd;
        r = state_dir_lock(dfd, LOCK_EX);
        if (r < 0)
                return r;
        r = fp_write(dfd, &fp);
        if (r < 0)
                return r;
        snprintf(detail, sizeof(detail), "kept the generated secret; platform id %s, machine-id %s",
                 fp.platform[0] ? "recorded" : "none", fp.machine[0] ? "recorded" : "none");
        log_step(dfd, "accept", detail, reason);
        return 0;
}
