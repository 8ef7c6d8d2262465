/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd: the kernel side of each network namespace.
 *
 *  - client: the netns's own rpc_pipefs, created from a thread that joined the netns
 *    (rpc_pipefs takes the netns of the task that creates the filesystem context) as a
 *    detached mount (fsopen/fsmount) that only this daemon holds: nothing is mounted in any
 *    mount namespace, and closing the fd releases it. nfs/ and each nfs/clnt<N>/ are watched
 *    with inotify; every nfs/clnt<N>/idmap pipe is read one upcall at a time.
 *  - server: /proc/thread-self/net/rpc/nfs4.{nametoid,idtoname}/channel opened by the same
 *    thread, i.e. the channels of that netns's knfsd.
 *  - the kernel's global key cache: answers that are specific to a namespace are invalidated
 *    in .id_resolver (KEYCTL_INVALIDATE on the id_legacy key) shortly after the kernel took
 *    them, so another namespace cannot be served them from the cache. Not on a kernel that
 *    tags ID keys by network namespace (kernel/patches/, nsid/kernel.h): there each
 *    namespace's answers are cached apart and nothing is invalidated.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <nsid/kernel.h>

#include "idmapd.h"
#include "idmapd-resolve.h"
#include "idmapd-kernel.h"
#include "idmapd-ns.h"

static int inotify_fd = -1;

typedef struct watch {
        struct watch *next;
        int wd;
        dm_ns *ns;
} watch;
static watch *watches = NULL;

int dm_inotify_fd(void) {
        if (inotify_fd < 0)
                inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        return inotify_fd;
}

/* ---- attaching: a thread joins the netns and creates what must be created there ---- */

typedef struct attach_args {
        int netns_fd;
        int pipefs_fd, pipefs_err;
        int chan[2], chan_err;
} attach_args;

static void *attach_thread(void *arg) {
        attach_args *a = arg;
        static const char *const chans[2] = {
                "/proc/thread-self/net/rpc/nfs4.nametoid/channel",
                "/proc/thread-self/net/rpc/nfs4.idtoname/channel",
        };
        if (setns(a->netns_fd, CLONE_NEWNET) < 0) {
                a->pipefs_err = a->chan_err = -errno;
                return NULL;
        }
        int fs = (int) syscall(SYS_fsopen, "rpc_pipefs", FSOPEN_CLOEXEC);
        if (fs < 0)
                a->pipefs_err = -errno;
        else {
                if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                        a->pipefs_err = -errno;
                else {
                        a->pipefs_fd = (int) syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
                        if (a->pipefs_fd < 0)
                                a->pipefs_err = -errno;
                }
                close(fs);
        }
        for (int i = 0; i < 2; i++) {
                a->chan[i] = open(chans[i], O_RDWR | O_NONBLOCK | O_CLOEXEC);
                if (a->chan[i] < 0)
                        a->chan_err = -errno;
        }
        if (a->chan_err < 0)
                for (int i = 0; i < 2; i++)
                        if (a->chan[i] >= 0) {
                                close(a->chan[i]);
                                a->chan[i] = -1;
                        }
        return NULL;
}

/*
 * The test seam for the client side (the test host has no NFS, so no rpc_pipefs):
 * NSID_TEST_RPC_PIPEFS_DIR (read with secure_getenv(), a host-admin setting like the
 * library's NSID_TEST_* variables) names a directory that stands for the initial netns's
 * rpc_pipefs. Its nfs/ and nfs/clnt<N>/ are watched and synced as the real ones are, and each
 * nfs/clnt<N>/idmap there is a listening SOCK_SEQPACKET socket that the daemon connects to
 * and then uses as it uses a pipe: one read() gives one upcall, one write() is one downcall
 * (tests/integration/itest-hostile-idmapd-pipe.sh plays the kernel behind it). NULL: off.
 */
static const char *test_pipefs_dir(void) {
        static const char *dir;
        static bool known;
        if (!known) {
                dir = secure_getenv("NSID_TEST_RPC_PIPEFS_DIR");
                if (dir && !*dir)
                        dir = NULL;
                known = true;
        }
        return dir;
}

/* nfs/<clnt>/idmap of a netns's rpc_pipefs, opened as the daemon reads and writes it. */
static int pipe_open(dm_ns *ns, const char *clnt) {
        char path[384];
        if (ns->initial && test_pipefs_dir()) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                if (snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/nfs/%s/idmap",
                             ns->pipefs_fd, clnt) >= (int) sizeof(sa.sun_path))
                        return -ENAMETOOLONG;
                int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return -errno;
                if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                        int e = -errno;
                        close(fd);
                        return e;
                }
                return fd;
        }
        snprintf(path, sizeof(path), "nfs/%s/idmap", clnt);
        int fd = openat(ns->pipefs_fd, path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static void pipe_close(dm_pipe *p) {
        dm_pending_drop_pipe(p);
        dm_epoll_del(p->fd);
        close(p->fd);
        free(p);
}

/* Bring the set of idmap pipes in line with nfs/clnt<N>/ of the netns's rpc_pipefs. */
void dm_kernel_sync_pipes(dm_ns *ns) {
        char path[384];
        int dfd;
        DIR *d;
        struct dirent *de;

        if (ns->pipefs_fd < 0)
                return;
        for (dm_pipe *p = ns->pipes; p; p = p->next)
                p->seen = false;
        dfd = openat(ns->pipefs_fd, "nfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return;
        d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return;
        }
        while ((de = readdir(d))) {
                if (strncmp(de->d_name, "clnt", 4) != 0 || strlen(de->d_name) >= 48)
                        continue;
                char name[48];
                snprintf(name, sizeof(name), "%.47s", de->d_name);
                dm_pipe *p;
                for (p = ns->pipes; p; p = p->next)
                        if (strcmp(p->clnt, name) == 0)
                                break;
                if (p) {
                        p->seen = true;
                        continue;
                }
                /* watch the client directory: its idmap pipe may appear after it */
                snprintf(path, sizeof(path), "/proc/self/fd/%d/nfs/%s", ns->pipefs_fd, name);
                int wd = inotify_add_watch(dm_inotify_fd(), path, IN_CREATE | IN_ONLYDIR);
                if (wd >= 0) {
                        watch *w = calloc(1, sizeof(*w));
                        if (w) {
                                w->wd = wd;
                                w->ns = ns;
                                w->next = watches;
                                watches = w;
                        }
                }
                int fd = pipe_open(ns, name);
                if (fd < 0)
                        continue; /* not an NFSv4 client (or not yet) */
                p = calloc(1, sizeof(*p));
                if (!p) {
                        close(fd);
                        continue;
                }
                p->ns = ns;
                p->fd = fd;
                p->seen = true;
                p->tag = (dm_tag) { .kind = DM_TAG_PIPE, .obj = p };
                snprintf(p->clnt, sizeof(p->clnt), "%s", name);
                if (dm_epoll_add(fd, EPOLLIN, &p->tag) < 0) {
                        close(fd);
                        free(p);
                        continue;
                }
                p->next = ns->pipes;
                ns->pipes = p;
                dm_log(LOG_INFO, ns, "serving %s/idmap", p->clnt);
                /* a lookup made before this pipe was open failed, and on a kernel without
                 * tagging that failure is cached for every namespace */
                if (!ns->initial)
                        dm_keys_clear("a network namespace's NFS client appeared");
                /* an NFS client was just made in this netns: its upcalls are coming */
                dm_ns_preload(ns);
        }
        closedir(d);
        for (dm_pipe **pp = &ns->pipes; *pp;) {
                dm_pipe *p = *pp;
                if (p->seen) {
                        pp = &p->next;
                        continue;
                }
                *pp = p->next;
                dm_log(LOG_INFO, ns, "%s/idmap gone", p->clnt);
                pipe_close(p);
        }
}

void dm_kernel_attach(dm_ns *ns) {
        attach_args a = { .netns_fd = nsid_ns_get_fd(ns->netns), .pipefs_fd = -1,
                          .chan = { -1, -1 } };
        pthread_t t;
        bool want_pipefs = ns->pipefs_fd < 0;
        /* knfsd cannot run in a netns owned by a user namespace (its control fs is refused
         * there, even to root): its nfs4.* channels, there whenever nfsd is loaded, would
         * only cost two descriptors */
        bool want_chan = ns->chan_fd[0] < 0 && !ns->charged;

        ns->next_attach_us = 0;
        if (!want_pipefs && !want_chan)
                return;
        if (pthread_create(&t, NULL, attach_thread, &a) != 0) {
                ns->next_attach_us = dm_now_us() + 30 * 1000000ll;
                return;
        }
        pthread_join(t, NULL);
        if (want_pipefs && ns->initial && test_pipefs_dir()) {
                if (a.pipefs_fd >= 0)
                        close(a.pipefs_fd);
                a.pipefs_fd = open(test_pipefs_dir(), O_PATH | O_DIRECTORY | O_CLOEXEC);
                a.pipefs_err = a.pipefs_fd < 0 ? -errno : 0;
                dm_log(LOG_WARNING, ns, "test seam: %s stands for this netns's rpc_pipefs "
                       "(NSID_TEST_RPC_PIPEFS_DIR)", test_pipefs_dir());
        }

        if (want_pipefs) {
                int old = ns->pipefs_error;
                ns->pipefs_error = a.pipefs_err;
                if (a.pipefs_fd >= 0) {
                        char path[64];
                        ns->pipefs_fd = a.pipefs_fd;
                        snprintf(path, sizeof(path), "/proc/self/fd/%d/nfs", ns->pipefs_fd);
                        ns->pipefs_wd = inotify_add_watch(dm_inotify_fd(), path,
                                                          IN_CREATE | IN_DELETE | IN_ONLYDIR);
                        if (ns->pipefs_wd >= 0) {
                                watch *w = calloc(1, sizeof(*w));
                                if (w) {
                                        w->wd = ns->pipefs_wd;
                                        w->ns = ns;
                                        w->next = watches;
                                        watches = w;
                                }
                        }
                        dm_log(LOG_INFO, ns, "private rpc_pipefs created (client side)");
                        dm_kernel_sync_pipes(ns);
                } else if (old != a.pipefs_err)
                        dm_log(LOG_INFO, ns, "no rpc_pipefs: %s%s", strerror(-a.pipefs_err),
                               a.pipefs_err == -ENODEV ? " (sunrpc not loaded); retrying" : "");
        } else if (a.pipefs_fd >= 0)
                close(a.pipefs_fd);

        if (want_chan) {
                int old = ns->chan_error;
                ns->chan_error = a.chan_err;
                if (a.chan[0] >= 0) {
                        for (int i = 0; i < 2; i++) {
                                ns->chan_fd[i] = a.chan[i];
                                ns->chan_tag[i] = (dm_tag) { .kind = DM_TAG_CHANNEL, .obj = ns,
                                                             .which = i };
                                (void) dm_epoll_add(ns->chan_fd[i], EPOLLIN, &ns->chan_tag[i]);
                        }
                        dm_log(LOG_INFO, ns, "serving knfsd's nfs4.nametoid and nfs4.idtoname "
                               "channels (server side)");
                } else if (old != a.chan_err)
                        dm_log(LOG_INFO, ns, "no knfsd idmap channels: %s%s",
                               strerror(-a.chan_err),
                               a.chan_err == -ENOENT ? " (nfsd not loaded); retrying" : "");
        } else
                for (int i = 0; i < 2; i++)
                        if (a.chan[i] >= 0)
                                close(a.chan[i]);

        /* (one owned by a user namespace is tried again at its next `route` only: a retry
         * every 30 s for each would be a thread per namespace any user can make) */
        if (!ns->charged && (ns->pipefs_fd < 0 || ns->chan_fd[0] < 0))
                ns->next_attach_us = dm_now_us() + 30 * 1000000ll;
}

void dm_kernel_detach(dm_ns *ns) {
        for (watch **pp = &watches; *pp;) {
                watch *w = *pp;
                if (w->ns != ns) {
                        pp = &w->next;
                        continue;
                }
                *pp = w->next;
                (void) inotify_rm_watch(inotify_fd, w->wd);
                free(w);
        }
        while (ns->pipes) {
                dm_pipe *p = ns->pipes;
                ns->pipes = p->next;
                pipe_close(p);
        }
        if (ns->pipefs_fd >= 0)
                close(ns->pipefs_fd);
        ns->pipefs_fd = -1;
        for (int i = 0; i < 2; i++)
                if (ns->chan_fd[i] >= 0) {
                        dm_epoll_del(ns->chan_fd[i]);
                        close(ns->chan_fd[i]);
                        ns->chan_fd[i] = -1;
                }
}

void dm_kernel_inotify_event(int ifd) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        for (;;) {
                ssize_t n = read(ifd, buf, sizeof(buf));
                if (n <= 0)
                        return;
                for (char *p = buf; p < buf + n;) {
                        struct inotify_event *ev = (struct inotify_event *) p;
                        p += sizeof(*ev) + ev->len;
                        if (ev->wd == dm.netns_dir_wd) {
                                /* `ip netns add` creates the file, then bind-mounts the
                                 * netns on it: look a moment later */
                                dm.rescan_at_us = dm_now_us() + 200000;
                                continue;
                        }
                        for (watch **pp = &watches; *pp; pp = &(*pp)->next) {
                                watch *w = *pp;
                                if (w->wd != ev->wd)
                                        continue;
                                if (ev->mask & IN_IGNORED) {
                                        *pp = w->next;
                                        free(w);
                                } else
                                        dm_kernel_sync_pipes(w->ns);
                                break;
                        }
                }
        }
}

/* ---- pipes ---- */

static void query_from_pipe(const nsid_idmap_request *rq, dm_view view, dm_query *q) {
        *q = (dm_query) { .view = view };
        bool user = rq->type == NSID_IDMAP_TYPE_USER;
        if (rq->conv == NSID_IDMAP_CONV_NAMETOID) {
                q->kind = user ? NSID_IDMAP_KEY_UID : NSID_IDMAP_KEY_GID;
                memcpy(q->name, rq->name, strlen(rq->name) + 1);
        } else {
                q->kind = user ? NSID_IDMAP_KEY_USER : NSID_IDMAP_KEY_GROUP;
                q->id = rq->id;
        }
}

const char *dm_log_esc(const char *s, size_t len, char *buf, size_t size) {
        size_t o = 0;
        for (size_t i = 0; i < len && o + 5 < size; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"')
                        o += (size_t) snprintf(buf + o, size - o, "\\x%02x", c);
                else
                        buf[o++] = (char) c;
        }
        buf[o] = '\0';
        return buf;
}

/* A refused name-to-id upcall: the owner name as a log shows it (bytes below 0x20, from 0x7f,
 * '\\' and '"' as \xNN: a hostile server chose them) and why it was refused, in the order
 * nsid_idmap_msg_parse_upcall() checks. false for anything else (size, type, conv). */
static bool refused_owner(const unsigned char *buf, size_t n, char *why, size_t why_size,
                          char *esc, size_t esc_size) {
        nsid_idmap_msg m;
        size_t l;

        if (n != sizeof(m))
                return false;
        memcpy(&m, buf, sizeof(m));
        if (m.im_conv != NSID_IDMAP_CONV_NAMETOID || m.im_status != 0 ||
            (m.im_type != NSID_IDMAP_TYPE_USER && m.im_type != NSID_IDMAP_TYPE_GROUP))
                return false;
        l = strnlen(m.im_name, sizeof(m.im_name));
        dm_log_esc(m.im_name, l, esc, esc_size);
        snprintf(why, why_size, "%s",
                 l == 0 || l == sizeof(m.im_name) ? "empty, or not NUL-terminated"
                 : l == sizeof(m.im_name) - 1     ? "127 bytes: the kernel may have cut it"
                 : nsid_idmap_name_check(m.im_name, l) < 0
                         ? "control bytes, ':', '@@' or an edge '@'"
                         : "not UTF-8");
        return true;
}

/* The request for a refused owner name that can still be answered: a name of 1..127 bytes
 * NUL-terminated in im_name (the downcall echoes it; the kernel compares it with the
 * upcall's), status 0. */
static bool refused_owner_request(const unsigned char *buf, nsid_idmap_request *ret) {
        nsid_idmap_msg m;
        memcpy(&m, buf, sizeof(m));
        size_t l = strnlen(m.im_name, sizeof(m.im_name));
        if (m.im_status != 0 || l == 0 || l == sizeof(m.im_name))
                return false;
        *ret = (nsid_idmap_request) { .type = m.im_type, .conv = m.im_conv };
        memcpy(ret->name, m.im_name, l + 1);
        return true;
}

void dm_pipe_readable(dm_pipe *p) {
        unsigned char buf[NSID_IDMAP_MSG_SIZE + 1];
        dm_pending t = { .complete = dm_pipe_answer, .pipe = p };
        dm_query q;
        ssize_t n;
        int r;

        if (p->busy)
                return;
        n = read(p->fd, buf, sizeof(buf));
        if (n <= 0)
                return;
        p->ns->stats.pipe_upcalls++;
        r = nsid_idmap_msg_parse_upcall(buf, (size_t) n, &t.pipe_req);
        char why[64], esc[NSID_IDMAP_NAMESZ * 4 + 8];
        if (r < 0 && refused_owner(buf, (size_t) n, why, sizeof(why), esc, sizeof(esc)) &&
            refused_owner_request(buf, &t.pipe_req)) {
                /* An owner name the daemon will not look up (a hostile server chose it) is
                 * answered as an owner unknown in this namespace's context is, like
                 * libnfsidmap, which maps every name it cannot map to the nobody user:
                 * the context is asked about a name no one has (the domain .invalid is
                 * reserved, RFC 6761), and the answer goes back for the name the kernel
                 * asked about (the downcall must echo it). Host context: nobody; a
                 * container's: its answer for unknown owners. */
                dm_log(LOG_WARNING, p->ns, "%s/idmap: refused owner name \"%s\" (%s): "
                       "answered as an unknown owner", p->clnt, esc, why);
                q = (dm_query) { .view = p->ns->kernel_view,
                                 .kind = t.pipe_req.type == NSID_IDMAP_TYPE_USER
                                                 ? NSID_IDMAP_KEY_UID
                                                 : NSID_IDMAP_KEY_GID };
                snprintf(q.name, sizeof(q.name), "%s", DM_UNKNOWN_OWNER);
                p->busy = true;
                if (dm_request(p->ns, &q, &t) == 0 && p->busy) {
                        p->masked = true;
                        (void) dm_epoll_mod(p->fd, 0, &p->tag);
                }
                return;
        }
        if (r < 0) {
                /* Answered all the same, as a failure: the kernel keeps this client's one
                 * upcall outstanding until a downcall completes it, and every other ID
                 * lookup of the client waits for that (a hostile NFS server chooses the
                 * owner strings that end up in im_name). */
                nsid_idmap_msg m;
                bool sent = nsid_idmap_msg_build_failure_raw(buf, (size_t) n,
                                                             NSID_IDMAP_STATUS_LOOKUPFAIL, &m) == 0 &&
                            write(p->fd, &m, sizeof(m)) == (ssize_t) sizeof(m);
                const char *outcome = sent ? "failed (LOOKUPFAIL)"
                                           : "the failure downcall was refused";
                if (refused_owner(buf, (size_t) n, why, sizeof(why), esc, sizeof(esc)))
                        dm_log(LOG_WARNING, p->ns, "%s/idmap: refused owner name \"%s\" (%s); %s",
                               p->clnt, esc, why, outcome);
                else
                        dm_log(LOG_WARNING, p->ns, "%s/idmap: refused an invalid upcall (%zd "
                               "bytes): %s; %s", p->clnt, n, strerror(-r), outcome);
                return;
        }
        query_from_pipe(&t.pipe_req, p->ns->kernel_view, &q);
        p->busy = true;
        /* answered at once (cache, or memory): the pipe was never masked; queued to the
         * resolver: masked until the answer (one outstanding request per pipe) */
        if (dm_request(p->ns, &q, &t) == 0 && p->busy) {
                p->masked = true;
                (void) dm_epoll_mod(p->fd, 0, &p->tag);
        }
}

void dm_pipe_answer(dm_pending *pd, const dm_answer *a, bool cached, uint32_t ttl) {
        (void) cached, (void) ttl; /* the NFS client keeps no answer: nothing to tell it */
        dm_pipe *p = pd->pipe;
        nsid_idmap_msg m;
        int r;

        if (!p)
                return; /* the pipe went away meanwhile */
        if (a->error == 0)
                r = nsid_idmap_msg_build_reply(&pd->pipe_req, a->id, a->name, &m);
        else
                r = -EINVAL;
        /* the answer, or the failure the kernel takes for it (none: the pipe is only made
         * ready again) */
        bool have_msg = r >= 0 || nsid_idmap_msg_build_failure(&pd->pipe_req,
                                                              NSID_IDMAP_STATUS_LOOKUPFAIL, &m) >= 0;
        if (have_msg && write(p->fd, &m, sizeof(m)) != (ssize_t) sizeof(m))
                dm_log(LOG_INFO, p->ns, "%s/idmap: downcall refused: %s (the upcall may have "
                       "timed out)", p->clnt, strerror(errno));
        else if (have_msg && r >= 0 && dm_keys_isolation_needed()) {
                /* the key the kernel asked about (an owner refused was asked as another) */
                dm_query iq;
                query_from_pipe(&pd->pipe_req, pd->q.view, &iq);
                dm_keys_schedule_invalidate(p->ns, &iq);
        }
        p->busy = false;
        if (p->masked) {
                p->masked = false;
                (void) dm_epoll_mod(p->fd, EPOLLIN, &p->tag);
        }
}

/* ---- knfsd channels ---- */

/* One request of a channel: 1 if one was read, 0 if none is queued. */
static int channel_request(dm_ns *ns, int which) {
        char buf[NSID_NFSD_LINE_MAX + 2];
        dm_pending t = { .complete = dm_channel_answer, .channel = which };
        dm_query q = { .view = ns->channel_view };
        ssize_t n;
        int r;

        n = read(ns->chan_fd[which], buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0; /* a cache channel reads 0 when nothing is queued for it */
        ns->stats.channel_requests++;
        r = nsid_nfsd_request_parse((nsid_nfsd_channel) which, buf, (size_t) n, &t.chan_req);
        if (r < 0) {
                char esc[200];
                if (nsid_qword_escape(buf, (size_t) n < 48 ? (size_t) n : 48, esc, sizeof(esc)) < 0)
                        strcpy(esc, "?");
                /* Not answered: no reply can fail these keys. knfsd takes no reply for an
                 * empty name (nametoid_parse() refuses it), and writes no other line this
                 * parser refuses (the fuzz target checks every line it can write). The nfsd
                 * thread waits for an answer at most 5 s (1 s with no idle thread), then
                 * the client gets NFS4ERR_DELAY; the request stays queued while its cache
                 * entry is pending (120 s, CACHE_NEW_EXPIRY). doc/kernel-findings.md. */
                if (r == -ENODATA)
                        dm_log(LOG_WARNING, ns, "%s: request \"%s\" for an empty owner name (a "
                               "client sent an owner string starting with a NUL byte): not "
                               "answered, knfsd takes no reply for it; that client's "
                               "operation gets NFS4ERR_DELAY",
                               nsid_nfsd_channel_name((nsid_nfsd_channel) which), esc);
                else
                        dm_log(LOG_WARNING, ns, "%s: refused an invalid request \"%s\": %s "
                               "(not answered: no reply could name its key)",
                               nsid_nfsd_channel_name((nsid_nfsd_channel) which), esc,
                               strerror(-r));
                return 1;
        }
        if (which == NSID_NFSD_NAMETOID) {
                q.kind = t.chan_req.group ? NSID_IDMAP_KEY_GID : NSID_IDMAP_KEY_UID;
                memcpy(q.name, t.chan_req.name, strlen(t.chan_req.name) + 1);
        } else {
                q.kind = t.chan_req.group ? NSID_IDMAP_KEY_GROUP : NSID_IDMAP_KEY_USER;
                q.id = t.chan_req.id;
                if (q.id == UINT32_MAX) {
                        dm_answer neg = { .error = -ENOENT };
                        t.ns = ns;
                        dm_channel_answer(&t, &neg, false, 0);
                        return 1;
                }
        }
        (void) dm_request(ns, &q, &t);
        return 1;
}

/* Every request knfsd has queued (its threads wait on them concurrently), a bounded number
 * per wakeup so that the other namespaces' pipes and channels get their turn: one
 * epoll_wait for a burst, not one per request. */
void dm_channel_readable(dm_ns *ns, int which) {
        for (int i = 0; i < 16 && ns->chan_fd[which] >= 0 && channel_request(ns, which); i++)
                ;
}

void dm_channel_answer(dm_pending *pd, const dm_answer *a, bool cached, uint32_t cache_ttl) {
        (void) cached, (void) cache_ttl; /* knfsd's entry has its own expiry, set below */
        dm_ns *ns = pd->ns;
        char line[NSID_NFSD_LINE_MAX];
        int which = pd->channel;
        /* failures (timeouts) are short negative entries so that knfsd asks again soon */
        unsigned ttl = a->error == 0         ? dm.cfg.cache_ttl
                       : a->error == -ENOENT ? dm.cfg.negative_ttl
                                             : 5;
        int n = nsid_nfsd_reply_format(&pd->chan_req, (int64_t) time(NULL) + ttl, a->error != 0,
                                       a->id, a->name, line, sizeof(line));
        if (n < 0)
                n = nsid_nfsd_reply_format(&pd->chan_req, (int64_t) time(NULL) + 5, true, 0, NULL,
                                           line, sizeof(line));
        if (n < 0 || ns->chan_fd[which] < 0)
                return;
        if (write(ns->chan_fd[which], line, (size_t) n) != n)
                dm_log(LOG_INFO, ns, "%s: reply refused: %s",
                       nsid_nfsd_channel_name((nsid_nfsd_channel) which), strerror(errno));
}

/* ---- the kernel's global .id_resolver cache ----
 *
 * On a kernel that does not tag ID keys by network namespace, .id_resolver is one cache for
 * every namespace: whatever answer a key holds, the next namespace that asks the same name is
 * served it. So every answer given on a pipe (the host's too, and one that happens to equal
 * the host's: the next namespace to ask may differ) is invalidated as soon as the kernel
 * allows: root may invalidate an id_legacy key only once the NFS client that asked has it
 * back (nfs_idmap_request_key() sets KEY_FLAG_ROOT_CAN_INVAL then). Until then the kernel
 * refuses (EACCES), and the job is retried, first at once, then after 1, 2, 4 ... ms (at most
 * 100 ms apart), until it succeeds or the key is gone. The exposure that is left is the time
 * between the answer and the reader's return, and a namespace asking the same name while
 * the key is under construction (the kernel hands it the same key): measured by the lab's
 * kernel-keyns and idmap-default scenarios. */

typedef struct key_job {
        struct key_job *next;
        int64_t first_us, when_us;
        unsigned attempts;
        nsid_ns_id ns_id;
        char desc[160];
} key_job;
static key_job *key_jobs = NULL;
/* dm.key_timer_fd: one-shot, armed for the earliest job (the 100 ms tick is too coarse) */
static int32_t id_resolver_ring = 0; /* .id_resolver's serial, once found */
static nsid_keyring_index *id_resolver_index = NULL; /* its keys, for id_resolver_ring */

#define KEY_RETRY_MAX_US (100 * 1000)
#define KEY_JOB_MAX_US (600 * 1000000ll) /* nfs_idmap_cache_timeout: the key is gone by then */

static void arm_key_timer(void) {
        int64_t first = INT64_MAX, now = dm_now_us();
        for (key_job *j = key_jobs; j; j = j->next)
                if (j->when_us < first)
                        first = j->when_us;
        if (dm.key_timer_fd < 0 || first == INT64_MAX)
                return;
        int64_t d = first > now ? first - now : 1;
        struct itimerspec its = { .it_value = { .tv_sec = d / 1000000, .tv_nsec = (d % 1000000) * 1000 } };
        (void) timerfd_settime(dm.key_timer_fd, 0, &its, NULL);
}

static int key_description(const dm_query *q, char *buf, size_t size) {
        static const char *const prefix[] = { "uid", "gid", "user", "group" };
        if ((unsigned) q->kind >= 4)
                return -EINVAL;
        if (q->kind == NSID_IDMAP_KEY_UID || q->kind == NSID_IDMAP_KEY_GID)
                return snprintf(buf, size, "%s:%s", prefix[q->kind], q->name) >= (int) size ? -ENAMETOOLONG : 0;
        return snprintf(buf, size, "%s:%u", prefix[q->kind], q->id) >= (int) size ? -ENAMETOOLONG : 0;
}


void dm_kernel_idkeys_refresh(void) {
        int r = nsid_kernel_nfs_idkeys_tagged_cached(NSID_RUN_DIR "/nfs-idkeys");
        if (r == dm.kernel_idkeys)
                return;
        if (r == 1)
                dm_log(LOG_NOTICE, NULL, "the NFS client tags its ID keys by network namespace: "
                       "each namespace has its own key cache; no key is invalidated");
        else if (r == 0)
                dm_log(dm.cfg.isolate_keys ? LOG_INFO : LOG_WARNING, NULL,
                       "the NFS client keeps one ID key cache for all network namespaces: %s",
                       dm.cfg.isolate_keys ? "every answer is invalidated once its reader has "
                                             "it (isolate-keys)"
                                           : "isolate-keys = no, so one namespace's answers "
                                             "reach the others");
        else if (r != -ENODEV)
                dm_log(LOG_WARNING, NULL, "cannot tell whether the NFS client tags its ID keys "
                       "by network namespace: %s; keys are isolated as on a kernel that does "
                       "not", strerror(-r));
        dm.kernel_idkeys = r;
}

bool dm_keys_isolation_needed(void) {
        if (!dm.cfg.isolate_keys)
                return false;
        if (dm.kernel_idkeys < 0)
                dm_kernel_idkeys_refresh(); /* a pipe answered: the client is loaded now */
        return dm.kernel_idkeys != 1;
}

void dm_keys_clear(const char *why) {
        if (!dm_keys_isolation_needed())
                return;
        int32_t ring = nsid_keyring_find(".id_resolver", 0);
        if (ring < 0)
                return; /* no NFS client loaded: nothing cached */
        id_resolver_ring = ring;
        if (syscall(SYS_keyctl, KEYCTL_CLEAR, (long) ring, 0L, 0L, 0L) < 0)
                dm_log(LOG_WARNING, NULL, "cannot clear .id_resolver (%s): %s", why,
                       strerror(errno));
        else
                dm_log(LOG_INFO, NULL, "cleared .id_resolver: %s", why);
}

void dm_keys_schedule_invalidate(dm_ns *ns, const dm_query *q) {
        key_job *j = calloc(1, sizeof(*j));
        if (!j)
                return;
        if (key_description(q, j->desc, sizeof(j->desc)) < 0) {
                free(j);
                return;
        }
        j->ns_id = ns->id;
        j->first_us = j->when_us = dm_now_us();
        j->next = key_jobs;
        key_jobs = j;
        dm_keys_run(j->when_us);
}

/* One attempt: 1 done (invalidated, or no such key any more), 0 to retry, -errno given up. */
static int key_job_try(key_job *j, dm_ns *ns) {
        unsigned failed = 0;
        int n = -ENOENT;
        for (int pass = 0; pass < 2; pass++) {
                if (id_resolver_ring <= 0)
                        id_resolver_ring = nsid_keyring_find(".id_resolver", 0);
                if (id_resolver_ring <= 0)
                        return 1; /* no keyring: no key */
                if (id_resolver_index &&
                    nsid_keyring_index_ring(id_resolver_index) != id_resolver_ring) {
                        nsid_keyring_index_free(id_resolver_index);
                        id_resolver_index = NULL;
                }
                if (!id_resolver_index &&
                    nsid_keyring_index_new(id_resolver_ring, &id_resolver_index) < 0)
                        return 0; /* out of memory: retried */
                n = nsid_keyring_index_invalidate(id_resolver_index, "id_legacy", j->desc,
                                                  &failed);
                if (n >= 0)
                        break;
                id_resolver_ring = 0; /* the module went and came back: find it again */
        }
        if (n < 0)
                return n;
        if (n > 0) {
                if (ns)
                        ns->stats.keys_invalidated += (unsigned) n;
                char esc[sizeof(j->desc) * 4 + 1];
                dm_log(LOG_DEBUG, ns, "invalidated id_legacy %s after %u attempt%s, %" PRId64
                       " us", dm_log_esc(j->desc, strlen(j->desc), esc, sizeof(esc)), j->attempts, j->attempts == 1 ? "" : "s",
                       dm_now_us() - j->first_us);
        }
        return failed == 0 ? 1 : 0;
}

void dm_keys_run(int64_t now_us) {
        for (key_job **pp = &key_jobs; *pp;) {
                key_job *j = *pp;
                if (j->when_us > now_us) {
                        pp = &j->next;
                        continue;
                }
                dm_ns *ns = dm_ns_find(&j->ns_id);
                j->attempts++;
                int r = key_job_try(j, ns);
                char esc[sizeof(j->desc) * 4 + 1];
                if (r == 0 && now_us - j->first_us < KEY_JOB_MAX_US) {
                        if (ns)
                                ns->stats.key_retries++;
                        int64_t d = j->attempts >= 18 ? KEY_RETRY_MAX_US : 500ll << j->attempts;
                        j->when_us = now_us + (d > KEY_RETRY_MAX_US ? KEY_RETRY_MAX_US : d);
                        pp = &j->next;
                        continue;
                }
                if (r <= 0 && ns)
                        ns->stats.key_give_ups++;
                if (r == 0)
                        dm_log(LOG_WARNING, ns, "id_legacy %s: still not invalidated after "
                               "%u attempts; given up (its reader never returned?)",
                               dm_log_esc(j->desc, strlen(j->desc), esc, sizeof(esc)),
                               j->attempts);
                else if (r < 0)
                        dm_log(LOG_WARNING, ns, "cannot invalidate id_legacy %s: %s",
                               dm_log_esc(j->desc, strlen(j->desc), esc, sizeof(esc)),
                               strerror(-r));
                *pp = j->next;
                free(j);
        }
        arm_key_timer();
}
