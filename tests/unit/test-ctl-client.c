/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid_ctl_roundtrip() against a real AF_UNIX stream server in a thread (what nsid-idmapd
 * would be: the server here only plays its part of the wire protocol), and
 * nsid_fd_read_timeout() on real pipes and files. */
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/ctlproto.h>
#include <nsid/fdio.h>

#include "proc-util.h"

typedef enum mode {
        REPLY,          /* read the request line, send reply (in chunks of chunk bytes) */
        SILENT,         /* read the request line, never answer */
        REFUSE,         /* send reply at once and close without reading (like a non-root
                         * client's refusal) */
        SLOW_READER,    /* read nothing for delay_ms, then the whole request, then reply */
        NEVER_READ,     /* accept, read nothing, close after delay_ms */
} mode;

typedef struct server {
        char dir[64], path[108];
        int lfd;
        mode mode;
        const char *reply;
        size_t reply_len, chunk;
        unsigned delay_ms;
        size_t expect_len;      /* SLOW_READER: bytes of request to read */
        char got[256];          /* the request's first bytes, as received */
        size_t got_len;
        pthread_t thread;
} server;

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Read until the peer closes (or 10 s): the client is done with us. */
static void drain_until_eof(int fd) {
        char b[4096];
        for (int i = 0; i < 1000; i++) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 10) < 0 && errno != EINTR)
                        return;
                ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                        return;
        }
}

static void read_request(server *s, int fd, size_t want, char until) {
        size_t total = 0;
        char b[65536];
        while (total < want) {
                ssize_t n = recv(fd, b, sizeof(b), 0);
                if (n <= 0)
                        return;
                size_t keep = sizeof(s->got) - 1 - s->got_len;
                memcpy(s->got + s->got_len, b, (size_t) n < keep ? (size_t) n : keep);
                s->got_len += (size_t) n < keep ? (size_t) n : keep;
                total += (size_t) n;
                if (until && memchr(b, until, (size_t) n))
                        return;
        }
}

static void send_all_blocking(int fd, const char *p, size_t len, size_t chunk, unsigned delay_ms) {
        while (len > 0) {
                size_t l = chunk && chunk < len ? chunk : len;
                ssize_t n = send(fd, p, l, MSG_NOSIGNAL);
                if (n <= 0)
                        return;
                p += n;
                len -= (size_t) n;
                if (chunk && len > 0)
                        sleep_ms(delay_ms);
        }
}

static void *serve(void *arg) {
        server *s = arg;
        struct pollfd p = { .fd = s->lfd, .events = POLLIN };
        if (poll(&p, 1, 10000) != 1)
                return NULL;
        int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
                return NULL;
        switch (s->mode) {
        case REPLY:
                read_request(s, fd, SIZE_MAX, '\n');
                send_all_blocking(fd, s->reply, s->reply_len, s->chunk, s->delay_ms);
                break;
        case SILENT:
                read_request(s, fd, SIZE_MAX, '\n');
                break;
        case REFUSE:
                send_all_blocking(fd, s->reply, s->reply_len, 0, 0);
                close(fd);
                return NULL;
        case SLOW_READER:
                sleep_ms(s->delay_ms);
                read_request(s, fd, s->expect_len, 0);
                send_all_blocking(fd, s->reply, s->reply_len, 0, 0);
                break;
        case NEVER_READ:
                sleep_ms(s->delay_ms);
                close(fd);
                return NULL;
        }
        if (s->mode == REPLY && s->chunk == SIZE_MAX) {
                close(fd); /* "close early": right after the (partial) reply */
                return NULL;
        }
        drain_until_eof(fd);
        close(fd);
        return NULL;
}

static void server_start(server *s, mode m, const char *reply, size_t reply_len) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        s->mode = m;
        s->reply = reply;
        s->reply_len = reply_len;
        snprintf(s->dir, sizeof(s->dir), "/tmp/test-ctl-client.XXXXXX");
        assert_non_null(mkdtemp(s->dir));
        snprintf(s->path, sizeof(s->path), "%s/idmapd.sock", s->dir);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
        s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(s->lfd >= 0);
        assert_int_equal(bind(s->lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(s->lfd, 4), 0);
        assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(server *s) {
        assert_int_equal(pthread_join(s->thread, NULL), 0);
        close(s->lfd);
        unlink(s->path);
        rmdir(s->dir);
}

static const char LOOKUP[] = "lookup host uid alice@example.test host-ids\n";

static void test_lookup_into_caller_buffer(void **state) {
        static const char reply[] = "ok 1000 600 cache\n";
        char line[NSID_CTL_LINE_MAX + 1], *ret = NULL;
        server s = {};
        (void) state;

        server_start(&s, REPLY, reply, strlen(reply));
        int r = nsid_ctl_roundtrip(s.path, LOOKUP, strlen(LOOKUP), 2000, line, sizeof(line), &ret);
        server_stop(&s);
        assert_int_equal(r, (int) strlen(reply) - 1);
        assert_string_equal(line, "ok 1000 600 cache");
        assert_ptr_equal(ret, line);
        /* the daemon saw exactly the request line */
        assert_int_equal(s.got_len, strlen(LOOKUP));
        assert_memory_equal(s.got, LOOKUP, s.got_len);

        /* and the line parses as a lookup answer */
        nsid_ctl_reply rp;
        char v[NSID_CTL_VALUE_MAX];
        uint32_t ttl;
        bool cached;
        assert_int_equal(nsid_ctl_reply_parse(line, (size_t) r, &rp), 0);
        assert_int_equal(nsid_ctl_lookup_reply_parse(&rp, v, &ttl, &cached), 0);
        assert_string_equal(v, "1000");
        assert_int_equal(ttl, 600);
        assert_true(cached);
}

/* A reply trickling in: five reads, with waits between them, still one line. */
static void test_reply_in_pieces(void **state) {
        static const char reply[] = "negative 30\n";
        char line[64];
        server s = { .chunk = 3, .delay_ms = 20 };
        (void) state;

        server_start(&s, REPLY, reply, strlen(reply));
        int r = nsid_ctl_roundtrip(s.path, LOOKUP, strlen(LOOKUP), 3000, line, sizeof(line), NULL);
        server_stop(&s);
        assert_int_equal(r, 11);
        assert_string_equal(line, "negative 30");
}

/* Several lines at once: the first is the reply, the rest is dropped. */
static void test_multi_line_reply(void **state) {
        static const char reply[] = "ok 1\nok 2\nerror 5 later\n";
        char line[NSID_CTL_LINE_MAX + 1], *alloc = NULL;
        server s = {};
        (void) state;

        server_start(&s, REPLY, reply, strlen(reply));
        int r = nsid_ctl_roundtrip(s.path, "flush\nflush\n", 12, 2000, line, sizeof(line), NULL);
        server_stop(&s);
        assert_int_equal(r, 4);
        assert_string_equal(line, "ok 1");
        /* pipelined requests went out whole */
        assert_int_equal(s.got_len, 12);

        server s2 = {};
        server_start(&s2, REPLY, reply, strlen(reply));
        r = nsid_ctl_roundtrip(s2.path, "status\n", 7, 2000, NULL, 64, &alloc);
        server_stop(&s2);
        assert_int_equal(r, 4);
        assert_string_equal(alloc, "ok 1");
        free(alloc);
}

static void test_silent_server_times_out(void **state) {
        char line[128];
        server s = {};
        (void) state;

        server_start(&s, SILENT, NULL, 0);
        uint64_t t0 = now_monotonic_ms();
        int r = nsid_ctl_roundtrip(s.path, LOOKUP, strlen(LOOKUP), 200, line, sizeof(line), NULL);
        uint64_t took = now_monotonic_ms() - t0;
        server_stop(&s);
        assert_int_equal(r, -ETIMEDOUT);
        assert_true(took >= 199);
        assert_true(took < 2000);
}

/* A daemon that never reads while the request is larger than the socket buffers: the send
 * side is bounded too. */
static void test_send_bounded(void **state) {
        size_t big = 4u * 1024 * 1024;
        char *req = malloc(big), line[128];
        server s = { .delay_ms = 600 };
        (void) state;

        assert_non_null(req);
        memset(req, 'x', big - 1);
        req[big - 1] = '\n';
        server_start(&s, NEVER_READ, NULL, 0);
        uint64_t t0 = now_monotonic_ms();
        int r = nsid_ctl_roundtrip(s.path, req, big, 200, line, sizeof(line), NULL);
        uint64_t took = now_monotonic_ms() - t0;
        server_stop(&s);
        assert_int_equal(r, -ETIMEDOUT);
        assert_true(took < 2000);

        /* the same request to a daemon that reads it late: sent whole after waiting */
        static const char reply[] = "error 90 line\\040too\\040long\n";
        server s2 = { .delay_ms = 100, .expect_len = big };
        server_start(&s2, SLOW_READER, reply, strlen(reply));
        r = nsid_ctl_roundtrip(s2.path, req, big, 5000, line, sizeof(line), NULL);
        server_stop(&s2);
        assert_int_equal(r, (int) strlen(reply) - 1);
        assert_memory_equal(line, "error 90 ", 9);
        free(req);
}

static void test_oversized_reply(void **state) {
        size_t n = NSID_CTL_LINE_MAX + 100;
        char *reply = malloc(n), line[NSID_CTL_LINE_MAX + 1], *alloc = NULL;
        (void) state;

        assert_non_null(reply);
        memcpy(reply, "ok ", 3);
        memset(reply + 3, 'a', n - 4);
        reply[n - 1] = '\n';

        /* a lookup's buffer: too long */
        server s = {};
        server_start(&s, REPLY, reply, n);
        assert_int_equal(nsid_ctl_roundtrip(s.path, LOOKUP, strlen(LOOKUP), 2000, line,
                                            sizeof(line), NULL),
                         -EMSGSIZE);
        server_stop(&s);

        /* a line of exactly size - 1 bytes with its '\n' fits; one more byte does not */
        server s2 = {};
        server_start(&s2, REPLY, reply, n);
        int r = nsid_ctl_roundtrip(s2.path, "status\n", 7, 2000, NULL, n + 1, &alloc);
        server_stop(&s2);
        assert_int_equal(r, (int) n - 1);
        assert_int_equal(strlen(alloc), n - 1);
        assert_memory_equal(alloc, reply, n - 1);
        free(alloc);

        alloc = NULL;
        server s3 = {};
        server_start(&s3, REPLY, reply, n);
        assert_int_equal(nsid_ctl_roundtrip(s3.path, "status\n", 7, 2000, NULL, n, &alloc),
                         -EMSGSIZE);
        server_stop(&s3);
        assert_null(alloc);
        free(reply);
}

/* A status line larger than every intermediate buffer: the allocated reply grows. */
static void test_large_allocated_reply(void **state) {
        size_t n = 3u * 1024 * 1024;
        char *reply = malloc(n), *alloc = NULL;
        (void) state;

        assert_non_null(reply);
        memcpy(reply, "ok {\"x\":\"", 9);
        memset(reply + 9, 'b', n - 12);
        memcpy(reply + n - 3, "\"}\n", 3);
        server s = {};
        server_start(&s, REPLY, reply, n);
        int r = nsid_ctl_roundtrip(s.path, "status\n", 7, 5000, NULL, NSID_CTL_REPLY_MAX + 1,
                                   &alloc);
        server_stop(&s);
        assert_int_equal(r, (int) n - 1);
        assert_memory_equal(alloc, reply, n - 1);
        assert_int_equal(alloc[n - 1], '\0');
        free(alloc);
        free(reply);
}

static void test_peer_closes_early(void **state) {
        static const char partial[] = "ok 10";
        char line[128], *alloc = NULL;
        server s = { .chunk = SIZE_MAX };
        (void) state;

        server_start(&s, REPLY, partial, strlen(partial));
        assert_int_equal(nsid_ctl_roundtrip(s.path, LOOKUP, strlen(LOOKUP), 2000, line,
                                            sizeof(line), NULL),
                         -ECONNRESET);
        server_stop(&s);

        /* nothing at all */
        server s2 = { .chunk = SIZE_MAX };
        server_start(&s2, REPLY, "", 0);
        assert_int_equal(nsid_ctl_roundtrip(s2.path, "status\n", 7, 2000, NULL, 4096, &alloc),
                         -ECONNRESET);
        server_stop(&s2);
        assert_null(alloc);
}

/* The daemon refuses a client and closes without reading: its reason is still read. */
static void test_refused_reason_read(void **state) {
        static const char reply[] = "error 13 permission\\040denied:\\040root\\040only\n";
        char line[NSID_CTL_LINE_MAX + 1];
        server s = {};
        (void) state;

        server_start(&s, REFUSE, reply, strlen(reply));
        int r = nsid_ctl_roundtrip(s.path, "status\n", 7, 2000, line, sizeof(line), NULL);
        server_stop(&s);
        assert_int_equal(r, (int) strlen(reply) - 1);
        nsid_ctl_reply rp;
        assert_int_equal(nsid_ctl_reply_parse(line, (size_t) r, &rp), 0);
        assert_int_equal(rp.kind, NSID_CTL_REPLY_ERROR);
        assert_int_equal(rp.error, 13);
        assert_string_equal(rp.message, "permission denied: root only");
}

/* The two halves: the request is on the wire once nsid_ctl_send() returns, the client
 * works, and nsid_ctl_receive() reads the reply; a silent daemon costs the receive bound. */
static void test_send_then_receive(void **state) {
        static const char reply[] = "ok 1000 600 cache\n";
        char line[NSID_CTL_LINE_MAX + 1], *ret = NULL;
        server s = {};
        (void) state;

        server_start(&s, REPLY, reply, strlen(reply));
        int fd = nsid_ctl_send(s.path, LOOKUP, strlen(LOOKUP), 2000);
        assert_true(fd >= 0);
        sleep_ms(50); /* the caller's own work, meanwhile */
        int r = nsid_ctl_receive(fd, 2000, line, sizeof(line), &ret);
        close(fd);
        server_stop(&s);
        assert_int_equal(r, (int) strlen(reply) - 1);
        assert_string_equal(line, "ok 1000 600 cache");
        assert_ptr_equal(ret, line);
        assert_int_equal(s.got_len, strlen(LOOKUP));
        assert_memory_equal(s.got, LOOKUP, s.got_len);

        server s2 = {};
        server_start(&s2, SILENT, NULL, 0);
        fd = nsid_ctl_send(s2.path, LOOKUP, strlen(LOOKUP), 2000);
        assert_true(fd >= 0);
        uint64_t t0 = now_monotonic_ms();
        r = nsid_ctl_receive(fd, 150, line, sizeof(line), NULL);
        uint64_t took = now_monotonic_ms() - t0;
        close(fd);
        server_stop(&s2);
        assert_int_equal(r, -ETIMEDOUT);
        assert_true(took >= 149 && took < 2000);

        /* the refusal a daemon sends as it closes, without reading the request, is read */
        static const char refusal[] = "error 13 permission\\040denied\n";
        server s3 = {};
        server_start(&s3, REFUSE, refusal, strlen(refusal));
        fd = nsid_ctl_send(s3.path, LOOKUP, strlen(LOOKUP), 2000);
        assert_true(fd >= 0);
        r = nsid_ctl_receive(fd, 2000, line, sizeof(line), NULL);
        close(fd);
        server_stop(&s3);
        assert_int_equal(r, (int) strlen(refusal) - 1);

        /* arguments */
        assert_int_equal(nsid_ctl_send(s.path, "status", 6, 500), -EINVAL);
        assert_int_equal(nsid_ctl_send(s.path, "status\n", 7, 0), -EINVAL);
        assert_int_equal(nsid_ctl_send(NULL, "status\n", 7, 500), -EINVAL);
        assert_int_equal(nsid_ctl_receive(-1, 500, line, sizeof(line), NULL), -EBADF);
        assert_int_equal(nsid_ctl_receive(0, 0, line, sizeof(line), NULL), -EINVAL);
        assert_int_equal(nsid_ctl_receive(0, 500, NULL, 64, NULL), -EINVAL);
        assert_int_equal(nsid_ctl_receive(0, 500, line, 1, NULL), -EINVAL);
}

/* nsid_ctl_send() in its two steps: connected (nothing sent yet: a client can give up
 * without building its request), then the request written; the same reply. */
static void test_connect_then_write(void **state) {
        static const char reply[] = "ok 1000 600 resolved\n";
        char line[NSID_CTL_LINE_MAX + 1], dir[] = "/tmp/test-ctl-client.XXXXXX", path[64];
        server s = {};
        (void) state;

        server_start(&s, REPLY, reply, strlen(reply));
        int fd = nsid_ctl_connect(s.path);
        assert_true(fd >= 0);
        assert_int_equal(nsid_ctl_write(fd, LOOKUP, strlen(LOOKUP), 2000), 0);
        int r = nsid_ctl_receive(fd, 2000, line, sizeof(line), NULL);
        close(fd);
        server_stop(&s);
        assert_int_equal(r, (int) strlen(reply) - 1);
        assert_string_equal(line, "ok 1000 600 resolved");
        assert_int_equal(s.got_len, strlen(LOOKUP));
        assert_memory_equal(s.got, LOOKUP, s.got_len);

        /* no daemon: the error at once, before any request exists */
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/idmapd.sock", dir);
        assert_int_equal(nsid_ctl_connect(path), -ENOENT);
        rmdir(dir);
        assert_int_equal(nsid_ctl_connect(""), -EINVAL);
        assert_int_equal(nsid_ctl_connect(NULL), -EINVAL);

        /* arguments */
        assert_int_equal(nsid_ctl_write(-1, "status\n", 7, 500), -EBADF);
        assert_int_equal(nsid_ctl_write(0, "status", 6, 500), -EINVAL);
        assert_int_equal(nsid_ctl_write(0, "status\n", 7, 0), -EINVAL);
}

static void test_no_daemon(void **state) {
        char line[64], dir[] = "/tmp/test-ctl-client.XXXXXX", path[64], longpath[200];
        (void) state;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/idmapd.sock", dir);
        assert_int_equal(nsid_ctl_roundtrip(path, "status\n", 7, 500, line, sizeof(line), NULL),
                         -ENOENT);

        /* a socket left behind by a daemon that is gone */
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
        assert_int_equal(nsid_ctl_roundtrip(path, "status\n", 7, 500, line, sizeof(line), NULL),
                         -ECONNREFUSED);
        unlink(path);
        rmdir(dir);

        memset(longpath, 'p', sizeof(longpath) - 1);
        longpath[0] = '/';
        longpath[sizeof(longpath) - 1] = '\0';
        assert_int_equal(nsid_ctl_roundtrip(longpath, "status\n", 7, 500, line, sizeof(line), NULL),
                         -ENAMETOOLONG);

        /* arguments */
        assert_int_equal(nsid_ctl_roundtrip(path, "status", 6, 500, line, sizeof(line), NULL),
                         -EINVAL);
        assert_int_equal(nsid_ctl_roundtrip(path, "status\n", 7, 0, line, sizeof(line), NULL),
                         -EINVAL);
        assert_int_equal(nsid_ctl_roundtrip(path, "status\n", 7, 500, NULL, 64, NULL), -EINVAL);
}

/* ---- nsid_fd_read_timeout ---- */

static void test_fd_read_timeout(void **state) {
        char *d = NULL;
        size_t n = 99;
        int p[2];
        (void) state;

        /* a writer that keeps the pipe open: bounded */
        assert_int_equal(pipe(p), 0);
        assert_int_equal(write(p[1], "{\"a\":", 5), 5);
        uint64_t t0 = now_monotonic_ms();
        assert_int_equal(nsid_fd_read_timeout(p[0], 1024, 150, &d, &n), -ETIMEDOUT);
        assert_true(now_monotonic_ms() - t0 >= 149);
        assert_null(d);
        assert_int_equal(n, 99);

        /* what the timed-out read took is gone; the rest, once closed, NUL-terminated */
        assert_int_equal(write(p[1], "1}", 2), 2);
        close(p[1]);
        assert_int_equal(nsid_fd_read_timeout(p[0], 1024, 1000, &d, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(d, "1}");
        free(d);
        close(p[0]);

        /* exactly max, one past max */
        for (int extra = 0; extra <= 1; extra++) {
                assert_int_equal(pipe(p), 0);
                char buf[10001];
                memset(buf, 'z', sizeof(buf));
                assert_int_equal(write(p[1], buf, (size_t) (10000 + extra)), 10000 + extra);
                close(p[1]);
                d = NULL;
                int r = nsid_fd_read_timeout(p[0], 10000, 1000, &d, &n);
                if (extra) {
                        assert_int_equal(r, -EFBIG);
                        assert_null(d);
                } else {
                        assert_int_equal(r, 0);
                        assert_int_equal(n, 10000);
                        assert_int_equal(d[10000], '\0');
                        free(d);
                }
                close(p[0]);
        }

        /* empty input, and a regular file */
        assert_int_equal(pipe(p), 0);
        close(p[1]);
        assert_int_equal(nsid_fd_read_timeout(p[0], 10, 1000, &d, &n), 0);
        assert_int_equal(n, 0);
        assert_string_equal(d, "");
        free(d);
        close(p[0]);

        char tmpl[] = "/tmp/test-fd-read.XXXXXX";
        int fd = mkstemp(tmpl);
        assert_true(fd >= 0);
        unlink(tmpl);
        char big[100000];
        memset(big, 'q', sizeof(big));
        assert_int_equal(write(fd, big, sizeof(big)), (ssize_t) sizeof(big));
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        assert_int_equal(nsid_fd_read_timeout(fd, 1024 * 1024, 1000, &d, &n), 0);
        assert_int_equal(n, sizeof(big));
        assert_memory_equal(d, big, sizeof(big));
        free(d);
        close(fd);
}

/* The internal line mode into a caller's buffer (what the control client uses). */
static void test_read_line_fixed(void **state) {
        char buf[8], *d = NULL;
        size_t n;
        int p[2];
        (void) state;

        assert_int_equal(pipe(p), 0);
        assert_int_equal(write(p[1], "ab\ncd\n", 6), 6);
        assert_int_equal(read_fd_deadline(p[0], sizeof(buf) - 1, now_monotonic_ms() + 1000, true,
                                          buf, &d, &n),
                         0);
        assert_ptr_equal(d, buf);
        assert_int_equal(n, 3);
        assert_string_equal(buf, "ab\n");
        close(p[0]);
        close(p[1]);

        assert_int_equal(pipe(p), 0);
        assert_int_equal(write(p[1], "0123456789\n", 11), 11);
        assert_int_equal(read_fd_deadline(p[0], sizeof(buf) - 1, now_monotonic_ms() + 1000, true,
                                          buf, NULL, &n),
                         -EFBIG);
        close(p[0]);
        close(p[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookup_into_caller_buffer),
                cmocka_unit_test(test_reply_in_pieces),
                cmocka_unit_test(test_multi_line_reply),
                cmocka_unit_test(test_silent_server_times_out),
                cmocka_unit_test(test_send_bounded),
                cmocka_unit_test(test_oversized_reply),
                cmocka_unit_test(test_large_allocated_reply),
                cmocka_unit_test(test_peer_closes_early),
                cmocka_unit_test(test_refused_reason_read),
                cmocka_unit_test(test_send_then_receive),
                cmocka_unit_test(test_connect_then_write),
                cmocka_unit_test(test_no_daemon),
                cmocka_unit_test(test_fd_read_timeout),
                cmocka_unit_test(test_read_line_fixed),
        };
        return run_test_group(tests, NULL, NULL);
}
