/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: a container's name service, asked through nsid-nss-query (idmapd-nss.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nsid/worker.h>

#include "idmapd-nss.h"
#include "nss-text.h"

#ifndef NSID_LIBEXEC_DIR
#define NSID_LIBEXEC_DIR "/usr/libexec/nsid"
#endif
#define AGENT_NAME "nsid-nss-query"
#define AGENT_MAX (16u * 1024u * 1024u)
#define REPLY_MAX 512u

static int agent_fd = -1;

static int open_agent(const char *path, char *err, size_t errlen) {
        char self[PATH_MAX], beside[PATH_MAX + 32];
        int fd;

        if (path)
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        else {
                fd = open(NSID_LIBEXEC_DIR "/" AGENT_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
                        if (n > 0) {
                                self[n] = '\0';
                                char *slash = strrchr(self, '/');
                                if (slash)
                                        *slash = '\0';
                                snprintf(beside, sizeof(beside), "%s/%s", self, AGENT_NAME);
                                fd = open(beside, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                        }
                }
                path = NSID_LIBEXEC_DIR "/" AGENT_NAME;
        }
        if (fd < 0)
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return fd < 0 ? -errno : fd;
}

int dm_nss_init(const char *path, char *err, size_t errlen) {
        struct stat st;
        int in = open_agent(path, err, errlen), r = 0;
        if (in < 0)
                return in;
        int mfd = memfd_create(AGENT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (mfd < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
            (uint64_t) st.st_size > AGENT_MAX) {
                r = mfd < 0 || errno ? -errno : -EINVAL;
                if (r == 0)
                        r = -EINVAL;
                snprintf(err, errlen, "%s: not a program nsid can copy", AGENT_NAME);
                goto out;
        }
        /* (copy_file_range() gives EXDEV into a memfd before 5.19) */
        for (off_t off = 0; off < st.st_size;) {
                char buf[65536];
                ssize_t n = pread(in, buf, sizeof(buf), off);
                if (n > 0 && write(mfd, buf, (size_t) n) != n)
                        n = -1;
                if (n <= 0) {
                        r = n < 0 ? -errno : -EIO;
                        snprintf(err, errlen, "copying %s: %s", AGENT_NAME, strerror(-r));
                        goto out;
                }
                off += n;
        }
        if (fchmod(mfd, 0555) < 0 ||
            fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
                r = -errno;
                snprintf(err, errlen, "sealing the copy of %s: %s", AGENT_NAME, strerror(-r));
                goto out;
        }
        agent_fd = mfd;
        mfd = -1;
out:
        if (mfd >= 0)
                (void) close(mfd);
        (void) close(in);
        return r;
}

bool dm_nss_available(void) {
        return agent_fd >= 0;
}

void dm_nss_lookup(const nsid_proc *proc, const dm_query *q, const char *domain,
                   int timeout_ms, dm_answer *a, bool *via_lib, char *why, size_t whylen) {
        bool to_id = q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_GID;
        const char *kind = dm_query_kind_name(q);
        char idbuf[16], *reply = NULL;
        size_t size = 0;
        nss_reply rp;
        int r;

        *via_lib = false;
        why[0] = '\0';
        if (agent_fd < 0) {
                a->error = -ENOPKG;
                snprintf(why, whylen, "%s is not installed", AGENT_NAME);
                return;
        }
        snprintf(idbuf, sizeof(idbuf), "%" PRIu32, q->id);
        char *argv[] = { AGENT_NAME, (char *) kind, to_id ? (char *) q->name : idbuf,
                         (char *) domain, NULL };
        const unsigned mask = NSID_NS_MASK(NSID_NS_USER) | NSID_NS_MASK(NSID_NS_MNT) |
                              NSID_NS_MASK(NSID_NS_PID) | NSID_NS_MASK(NSID_NS_NET) |
                              NSID_NS_MASK(NSID_NS_UTS) | NSID_NS_MASK(NSID_NS_IPC) |
                              NSID_NS_MASK(NSID_NS_CGROUP);
        r = nsid_worker_exec(proc, mask, agent_fd, argv, timeout_ms, REPLY_MAX, &reply, &size);
        if (r < 0) {
                a->error = r == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
                if (r == -ETIMEDOUT)
                        snprintf(why, whylen, "its name service did not answer within %d ms",
                                 timeout_ms);
                else if (r == -EFBIG)
                        snprintf(why, whylen, "its name service answered more than %u bytes",
                                 REPLY_MAX);
                else if (r == -EPROTO)
                        snprintf(why, whylen, "%s died in it (a crashing NSS module?)",
                                 AGENT_NAME);
                else if (r == -127)
                        snprintf(why, whylen, "%s cannot run there (its libc is older than "
                                 "glibc 2.34, or not glibc)", AGENT_NAME);
                else
                        snprintf(why, whylen, "running %s there: %s", AGENT_NAME,
                                 strerror(r > -4096 ? -r : EIO));
                return;
        }
        r = nss_reply_parse(reply, size, to_id, &rp);
        free(reply);
        if (r < 0) {
                a->error = -EBADMSG;
                snprintf(why, whylen, "its name service gave a malformed answer");
                return;
        }
        *via_lib = rp.via_libnfsidmap;
        switch (rp.kind) {
        case NSS_REPLY_ID:
                a->id = rp.id;
                a->error = 0;
                break;
        case NSS_REPLY_NAME:
                _Static_assert(sizeof(a->name) >= sizeof(rp.name), "name fits");
                memcpy(a->name, rp.name, sizeof(rp.name));
                a->error = 0;
                break;
        case NSS_REPLY_NONE:
                a->error = -ENOENT;
                break;
        case NSS_REPLY_ERR:
                a->error = -EIO;
                snprintf(why, whylen, "its name service failed: %s", strerror(rp.err));
                break;
        }
}
