/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host secret: a generated one (hostsecret-clone.c), /etc/machine-id, or a random secret
 * persisted under the state dir when the machine-id is unusable. */
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "file-internal.h"
#include "hostsecret-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "nsid/identity.h"
#include "proc-util.h"

#define HOST_SECRET_FILE "host-secret"

const char *nsid_state_dir_or_default(const char *dir) {
        return dir && *dir ? dir : NSID_STATE_DIR;
}

int nsid_host_machine_id(const char *path, uint8_t ret[16]) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        struct stat st;
        int r;

        if (!path)
                path = "/etc/machine-id";
        fd = open_regular_at(AT_FDCWD, path, 0, &st);
        if (fd < 0)
                return fd;
        r = read_fd_capped(fd, 64, &data, &size);
        if (r < 0)
                return r == -EFBIG ? -EINVAL : r;
        r = nsid_machine_id_parse(data, size, ret);
        OPENSSL_cleanse(data, size);
        return r;
}

int host_secret_read_file(int dfd, uint8_t ret[16]) {
        _cleanup_close_ int fd = -EBADF;
        uint8_t b[17];
        struct stat st;
        ssize_t n;

        fd = open_regular_at(dfd, HOST_SECRET_FILE, O_NOFOLLOW, &st);
        if (fd < 0)
                return fd;
        if (st.st_uid != geteuid() || (st.st_mode & 077) != 0)
                return -EPERM;
        if (st.st_size != 16)
                return -EBADMSG;
        n = pread(fd, b, sizeof(b), 0);
        if (n < 0)
                return negative_errno();
        if (n != 16) {
                OPENSSL_cleanse(b, sizeof(b));
                return -EBADMSG;
        }
        memcpy(ret, b, 16);
        OPENSSL_cleanse(b, sizeof(b));
        return 0;
}

int host_secret_create_file(int dfd, uint8_t ret[16]) {
        _cleanup_close_ int fd = -EBADF;
        char tmp[64];
        uint8_t b[16];
        bool named;
        int r;

        snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", HOST_SECRET_FILE, (long) getpid());
        (void) unlinkat(dfd, tmp, 0);
        fd = tmpfile_open(dfd, tmp, &named);
        if (fd < 0)
                return fd;
        if (fchmod(fd, 0600) < 0) {
                r = negative_errno();
                goto out;
        }
        if (RAND_priv_bytes(b, sizeof(b)) != 1) {
                r = -EIO;
                goto out;
        }
        if (write(fd, b, sizeof(b)) != (ssize_t) sizeof(b)) {
                r = errno > 0 ? -errno : -EIO;
                goto out;
        }
        if (fsync(fd) < 0) {
                r = negative_errno();
                goto out;
        }
        r = tmpfile_name(dfd, fd, named, tmp);
        if (r < 0)
                goto out;
        /* linkat() never replaces: a concurrent creator's file wins and is read back. */
        if (linkat(dfd, tmp, dfd, HOST_SECRET_FILE, 0) < 0) {
                r = negative_errno();
                goto out;
        }
        (void) fsync(dfd);
        memcpy(ret, b, 16);
        r = 0;
out:
        (void) unlinkat(dfd, tmp, 0);
        OPENSSL_cleanse(b, sizeof(b));
        return r;
}

_public_ int nsid_host_secret_load(const char *machine_id_path, const char *state_dir,
                                   uint8_t ret_secret[NSID_ID128_SIZE],
                                   nsid_host_secret_source *ret_source) {
        _cleanup_close_ int dfd = -EBADF;
        uint8_t b[16];
        int r;

        assert_return(ret_secret, -EINVAL);

        /* A generated secret (nsid_host_secret_new()) wins over the machine-id; once there,
         * its loss is an error, never a silent return to the machine-id's identities. */
        r = host_secret_load_generated(state_dir, b);
        if (r >= 0) {
                memcpy(ret_secret, b, 16);
                OPENSSL_cleanse(b, sizeof(b));
                if (ret_source)
                        *ret_source = NSID_HOST_SECRET_GENERATED;
                return 0;
        }
        if (r != -ENOENT)
                return log_debug_errno(r, "host secret: the generated secret in %s: %s",
                                       nsid_state_dir_or_default(state_dir), strerror(-r));

        r = nsid_host_machine_id(machine_id_path, b);
        if (r >= 0) {
                memcpy(ret_secret, b, 16);
                OPENSSL_cleanse(b, sizeof(b));
                if (ret_source)
                        *ret_source = NSID_HOST_SECRET_MACHINE_ID;
                return 0;
        }
        if (r != -ENOENT && r != -ENOMEDIUM && r != -EINVAL)
                return log_debug_errno(r, "host secret: cannot read %s: %s",
                                       machine_id_path ? machine_id_path : "/etc/machine-id",
                                       strerror(-r));
        log_debug("host secret: machine-id %s (%s), using the state file",
                  machine_id_path ? machine_id_path : "/etc/machine-id", strerror(-r));

        state_dir = nsid_state_dir_or_default(state_dir);
        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return log_debug_errno(-errno, "host secret: cannot create %s: %s", state_dir,
                                       strerror(errno));
        dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();

        r = host_secret_read_file(dfd, b);
        if (r == -ENOENT) {
                r = host_secret_create_file(dfd, b);
                if (r == -EEXIST)
                        r = host_secret_read_file(dfd, b);
        }
        if (r < 0)
                return log_debug_errno(r, "host secret: %s/" HOST_SECRET_FILE ": %s", state_dir,
                                       strerror(-r));
        memcpy(ret_secret, b, 16);
        OPENSSL_cleanse(b, sizeof(b));
        if (ret_source)
                *ret_source = NSID_HOST_SECRET_STATE_FILE;
        return 0;
}
