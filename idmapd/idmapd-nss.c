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
#include <time.h>
#include <unistd.h>

#include <nsid/worker.h>

#include "idmapd-nss.h"
#include "idmapd-resolve.h"
#include "macro.h"
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
        _cleanup_close_ int in = open_agent(path, err, errlen);
        int r;
        if (in < 0)
                return in;
        _cleanup_close_ int mfd = memfd_create(AGENT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (mfd < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
            (uint64_t) st.st_size > AGENT_MAX) {
                r = mfd < 0 || errno ? -errno : -EINVAL;
                if (r == 0)
                        r = -EINVAL;
                snprintf(err, errlen, "%s: not a program nsid can copy", AGENT_NAME);
                return r;
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
                        return r;
                }
                off += n;
        }
        if (fchmod(mfd, 0555) < 0 ||
            fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
                r = -errno;
                snprintf(err, errlen, "sealing the copy of %s: %s", AGENT_NAME, strerror(-r));
                return r;
        }
        agent_fd = TAKE_FD(mfd);
        return 0;
}

bool dm_nss_available(void) {
        return agent_fd >= 0;
}

struct dm_nss_agent {
        nsid_worker_session *ws;
        unsigned served;
        int64_t last_us;
        char domain[256];
};

static int64_t mono_us(void) {
        struct timespec ts;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

dm_nss_agent *dm_nss_agent_new(void) {
        return calloc(1, sizeof(dm_nss_agent));
}

void dm_nss_agent_stop(dm_nss_agent *ag) {
        if (ag && ag->ws) {
                ag->ws = nsid_worker_session_stop(ag->ws);
                ag->served = 0;
        }
}

void dm_nss_agent_reap_idle(dm_nss_agent *ag) {
        if (ag && ag->ws && mono_us() - ag->last_us >= DM_NSS_AGENT_IDLE_US)
                dm_nss_agent_stop(ag);
}

dm_nss_agent *dm_nss_agent_free(dm_nss_agent *ag) {
        dm_nss_agent_stop(ag);
        free(ag);
        return NULL;
}

static void explain(int r, int timeout_ms, char *why, size_t whylen) {
        if (r == -ETIMEDOUT)
                snprintf(why, whylen, "its name service did not answer within %d ms", timeout_ms);
        else if (r == -EFBIG)
                snprintf(why, whylen, "its name service answered more than %u bytes", REPLY_MAX);
        else if (r == -EPIPE || r == -EPROTO)
                snprintf(why, whylen, "%s died in it (a crashing NSS module? a libc older than "
                         "glibc 2.34, or not glibc?)", AGENT_NAME);
        else
                snprintf(why, whylen, "running %s there: %s", AGENT_NAME,
                         strerror(r > -4096 ? -r : EIO));
}

static const unsigned agent_mask = NSID_NS_MASK(NSID_NS_USER) | NSID_NS_MASK(NSID_NS_MNT) |
                                   NSID_NS_MASK(NSID_NS_PID) | NSID_NS_MASK(NSID_NS_NET) |
                                   NSID_NS_MASK(NSID_NS_UTS) | NSID_NS_MASK(NSID_NS_IPC) |
                                   NSID_NS_MASK(NSID_NS_CGROUP);

/* One request on the agent (started if needed): 0 with *reply, or -errno (agent stopped). */
static int agent_call(dm_nss_agent *ag, const nsid_proc *proc, const char *domain,
                      const char *req, size_t len, int timeout_ms, char **reply, size_t *size) {
        int r;
        if (ag->ws && (strcmp(ag->domain, domain) != 0 || ag->served >= DM_NSS_AGENT_MAX_LOOKUPS))
                dm_nss_agent_stop(ag);
        bool fresh = !ag->ws;
        if (fresh) {
                char *argv[] = { AGENT_NAME, "--serve", (char *) domain, NULL };
                r = nsid_worker_session_start(proc, agent_mask, agent_fd, argv, &ag->ws);
                if (r < 0)
                        return r;
                snprintf(ag->domain, sizeof(ag->domain), "%s", domain);
                ag->served = 0;
        }
        r = nsid_worker_session_call(ag->ws, req, len, 2, timeout_ms, REPLY_MAX, reply, size);
        if (r < 0) {
                dm_nss_agent_stop(ag);
                /* an agent that served before and is gone now (its CPU limit, killed from
                 * inside the container) gets one fresh start; a fresh one that dies does not */
                if (r == -EPIPE && !fresh)
                        return agent_call(ag, proc, domain, req, len, timeout_ms, reply, size);
                return r;
        }
        ag->served++;
        ag->last_us = mono_us();
        return 0;
}

void dm_nss_lookup(dm_nss_agent *ag, const nsid_proc *proc, const dm_query *q,
                   const char *domain, int timeout_ms, dm_answer *a, bool *via_lib, char *why,
                   size_t whylen) {
        bool to_id = q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_GID;
        char req[DM_NAME_MAX + 16], *reply = NULL;
        size_t size = 0;
        nss_reply rp;
        int r, n;

        *via_lib = false;
        why[0] = '\0';
        if (agent_fd < 0) {
                a->error = -ENOPKG;
                snprintf(why, whylen, "%s is not installed", AGENT_NAME);
                return;
        }
        if (to_id && strchr(q->name, '\n')) {
                a->error = -ENOENT; /* (the pipe and channel parsers refuse these already) */
                return;
        }
        n = to_id ? snprintf(req, sizeof(req), "%s %s\n", dm_query_kind_name(q), q->name)
                  : snprintf(req, sizeof(req), "%s %" PRIu32 "\n", dm_query_kind_name(q), q->id);
        if (n < 0 || (size_t) n >= sizeof(req)) {
                a->error = -ENAMETOOLONG;
                snprintf(why, whylen, "owner name too long");
                return;
        }
        r = agent_call(ag, proc, domain, req, (size_t) n, timeout_ms, &reply, &size);
        if (r < 0) {
                a->error = r == -ETIMEDOUT ? -ETIMEDOUT : -EIO;
                explain(r, timeout_ms, why, whylen);
                return;
        }
        r = nss_reply_parse(reply, size, to_id, &rp);
        free(reply);
        if (r < 0) {
                dm_nss_agent_stop(ag); /* out of step with us: a new one next time */
                a->error = -EBADMSG;
                snprintf(why, whylen, "its name service gave a malformed answer");
                return;
        }
        *via_lib = rp.via_libnfsidmap;
        _Static_assert(sizeof(a->name) >= sizeof(rp.name), "name fits");
        switch (rp.kind) {
        case NSS_REPLY_ID:
                a->id = rp.id;
                a->error = 0;
                break;
        case NSS_REPLY_NAME:
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
