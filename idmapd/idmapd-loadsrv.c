/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd's load server (idmapd-loadsrv.h). Request: one SEQPACKET message, the timeout
 * and the host's domain, with two fds (SCM_RIGHTS): the container process's pidfd and the
 * write end of the reply pipe. Reply, on that pipe: the worker's result (int32, 0 or
 * -errno), then its reply bytes, then EOF. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "idmapd-load.h"
#include "idmapd-loadsrv.h"

typedef struct load_req {
        int32_t timeout_ms;
        char host_domain[256];
} load_req;

static int srv_fd = -1;

/* In a child of the server (single-threaded all the way up): the load, its result to out. */
static void serve_one(const load_req *q, int pidfd, int out) {
        nsid_proc *proc = NULL;
        char *reply = NULL;
        size_t size = 0;
        int32_t r;

        signal(SIGCHLD, SIG_DFL); /* the worker reaps its own children */
        r = nsid_proc_open_pidfd(pidfd, &proc);
        if (r >= 0)
                r = dm_context_load_direct(proc, q->host_domain, q->timeout_ms, &reply, &size);
        if (write_all(out, &r, sizeof(r)) == 0 && r >= 0)
                (void) write_all(out, reply, size);
        free(reply);
        nsid_proc_unref(proc);
}

static void server_loop(int sock) {
        for (;;) {
                load_req q;
                struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
                union {
                        char buf[CMSG_SPACE(2 * sizeof(int))];
                        struct cmsghdr align;
                } u;
                struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                                    .msg_controllen = sizeof(u.buf) };
                struct cmsghdr *c;
                int fds[2] = { -1, -1 };
                ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return; /* the daemon is gone */
                c = CMSG_FIRSTHDR(&m);
                if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                    c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
                        memcpy(fds, CMSG_DATA(c), sizeof(fds));
                if ((size_t) n == sizeof(q) && fds[0] >= 0 && fds[1] >= 0) {
                        q.host_domain[sizeof(q.host_domain) - 1] = 0;
                        pid_t pid = fork();
                        if (pid == 0) {
                                (void) close(sock);
                                serve_one(&q, fds[0], fds[1]);
                                _exit(0);
                        }
                        if (pid < 0) {
                                int32_t r = -errno;
                                (void) write_all(fds[1], &r, sizeof(r));
                        }
                }
                if (fds[0] >= 0)
                        (void) close(fds[0]);
                if (fds[1] >= 0)
                        (void) close(fds[1]);
        }
}

/* The daemon's side: one load through the server. */
static int load_via_server(const nsid_proc *proc, const char *host_domain, int timeout_ms,
                           char **ret_reply, size_t *ret_size) {
        load_req q = { .timeout_ms = timeout_ms };
        int p[2], fds[2], r = 0;
        union {
                char buf[CMSG_SPACE(2 * sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                            .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        char *buf = NULL;
        size_t len = 0, cap = 0;
        int32_t result = -EPROTO;
        /* the worker's own timeout, and a margin for the forks around it */
        int budget_ms = timeout_ms + 5000;

        if (strlen(host_domain) >= sizeof(q.host_domain))
                return -ENAMETOOLONG;
        snprintf(q.host_domain, sizeof(q.host_domain), "%s", host_domain);
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        fds[0] = nsid_proc_get_pidfd(proc);
        fds[1] = p[1];
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(fds));
        memcpy(CMSG_DATA(c), fds, sizeof(fds));
        if (fds[0] < 0 || sendmsg(srv_fd, &m, MSG_NOSIGNAL) != (ssize_t) sizeof(q)) {
                r = fds[0] < 0 ? -EBADF : -errno;
                (void) close(p[0]);
                (void) close(p[1]);
                /* the server is gone: as before it was there */
                return r == -EPIPE || r == -ECONNREFUSED
                               ? dm_context_load_direct(proc, host_domain, timeout_ms, ret_reply,
                                                        ret_size)
                               : r;
        }
        (void) close(p[1]);
        for (;;) {
                struct pollfd pf = { .fd = p[0], .events = POLLIN };
                int k = poll(&pf, 1, budget_ms);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                if (cap - len < 65536) {
                        size_t ncap = cap ? cap * 2 : 65536;
                        char *nb;
                        if (ncap > DM_LOAD_REPLY_MAX + sizeof(result) + 1) {
                                r = -EFBIG;
                                break;
                        }
                        nb = realloc(buf, ncap + 1);
                        if (!nb) {
                                r = -ENOMEM;
                                break;
                        }
                        buf = nb;
                        cap = ncap;
                }
                ssize_t n = read(p[0], buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        (void) close(p[0]);
        if (r == 0 && len < sizeof(result))
                r = -EPROTO; /* the server's child died before it said anything */
        if (r == 0) {
                memcpy(&result, buf, sizeof(result));
                r = result > 0 || result < -4095 ? -EPROTO : result;
        }
        if (r < 0) {
                free(buf);
                return r;
        }
        len -= sizeof(result);
        memmove(buf, buf + sizeof(result), len);
        buf[len] = 0;
        *ret_reply = buf;
        *ret_size = len;
        return 0;
}

int dm_load_server_start(void) {
        int sv[2];
        pid_t parent = getpid(), pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int e = -errno;
                (void) close(sv[0]);
                (void) close(sv[1]);
                return e;
        }
        if (pid == 0) {
                (void) close(sv[0]);
                (void) prctl(PR_SET_NAME, "nsid-idmapd-ld");
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                sigset_t none;
                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL); /* SIGTERM ends it, as the unit's stop */
                signal(SIGCHLD, SIG_IGN); /* its children reap themselves */
                server_loop(sv[1]);
                _exit(0);
        }
        (void) close(sv[1]);
        srv_fd = sv[0];
        dm_load_run = load_via_server;
        return 0;
}
