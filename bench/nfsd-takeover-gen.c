/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfsd-takeover-gen: takeovers of one owner string's record on a knfsd, as fast as asked, for
 * bench-server-watch (issue #31). Two TCP connections (two client addresses: two ports) take
 * turns presenting one owner string with their own verifier: EXCHANGE_ID (a confirmed record
 * with another verifier: knfsd traces nfsd_clid_verf_mismatch and replaces it,
 * nfsd_clid_replaced) then CREATE_SESSION (the new record confirmed, nfsd_clid_confirmed).
 * Each turn is one takeover, as two real clients with one owner string make it, without the
 * client's recovery around it. NFSv4.1 (RFC 8881) over ONC RPC (RFC 5531), AUTH_SYS.
 *   nfsd-takeover-gen SERVER-IP OWNER COUNT [RATE]   (RATE per second; 0 or none: at once)
 * Prints: "takeovers N seconds S rate R errors E".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NFS_PROGRAM 100003
#define OP_EXCHANGE_ID 42
#define OP_CREATE_SESSION 43

typedef struct buf {
        uint8_t d[4096];
        size_t n;
} buf;

static void u32(buf *b, uint32_t v) {
        v = htonl(v);
        memcpy(b->d + b->n, &v, 4);
        b->n += 4;
}

static void u64(buf *b, uint64_t v) {
        u32(b, (uint32_t) (v >> 32));
        u32(b, (uint32_t) v);
}

static void opaque(buf *b, const void *p, size_t len, int counted) {
        if (counted)
                u32(b, (uint32_t) len);
        memcpy(b->d + b->n, p, len);
        b->n += len;
        while (b->n % 4)
                b->d[b->n++] = 0;
}

static uint32_t xid = 1;

/* The RPC call header and COMPOUND's (empty tag, minor version 1, one op). */
static void call(buf *b) {
        static const char machine[] = "nsid-bench";
        b->n = 4; /* record mark, filled in by send_call */
        u32(b, xid++);
        u32(b, 0); /* CALL */
        u32(b, 2);
        u32(b, NFS_PROGRAM);
        u32(b, 4);
        u32(b, 1); /* COMPOUND */
        u32(b, 1); /* AUTH_SYS */
        u32(b, 5 * 4 + (uint32_t) ((sizeof(machine) - 1 + 3) / 4 * 4));
        u32(b, 0); /* stamp */
        opaque(b, machine, sizeof(machine) - 1, 1);
        u32(b, 0); /* uid */
        u32(b, 0); /* gid */
        u32(b, 0); /* gids */
        u32(b, 0); /* verifier AUTH_NONE */
        u32(b, 0);
        u32(b, 0); /* tag */
        u32(b, 1); /* minor version */
        u32(b, 1); /* one op */
}

static int xfer(int fd, buf *b, uint8_t *reply, size_t size, size_t *ret_len) {
        uint32_t mark = htonl(0x80000000u | (uint32_t) (b->n - 4)), rm;
        size_t got = 0, len;
        ssize_t k;

        memcpy(b->d, &mark, 4);
        if (write(fd, b->d, b->n) != (ssize_t) b->n)
                return -EIO;
        for (size_t h = 0; h < 4; h += (size_t) k)
                if ((k = read(fd, (uint8_t *) &rm + h, 4 - h)) <= 0)
                        return -EIO;
        len = ntohl(rm) & 0x7fffffffu;
        if (len > size)
                return -EMSGSIZE;
        for (; got < len; got += (size_t) k)
                if ((k = read(fd, reply + got, len - got)) <= 0)
                        return -EIO;
        *ret_len = len;
        return 0;
}

static uint32_t get32(const uint8_t *p) {
        uint32_t v;
        memcpy(&v, p, 4);
        return ntohl(v);
}

static int verbose;

/* What failed, on stderr (the first few failures only). */
static int failed(const char *what, uint32_t v) {
        if (verbose > 0) {
                verbose--;
                fprintf(stderr, "nfsd-takeover-gen: %s: %u\n", what, v);
        }
        return -1;
}

/* The status of the reply's one op and where its result starts; -1 when not NFS4_OK. */
static int op_result(const uint8_t *r, size_t len, const uint8_t **ret) {
        size_t o = 12; /* xid, REPLY, MSG_ACCEPTED */
        if (len < 24 || get32(r + 4) != 1 || get32(r + 8) != 0)
                return failed("RPC reply_stat (or short reply)", len < 24 ? 0 : get32(r + 8));
        o += 8 + (get32(r + 16) + 3) / 4 * 4; /* verifier */
        if (o + 4 > len || get32(r + o) != 0) /* SUCCESS */
                return failed("RPC accept_stat", o + 4 > len ? 0 : get32(r + o));
        o += 4;
        if (o + 4 > len || get32(r + o) != 0) /* compound status */
                return failed("COMPOUND status", o + 4 > len ? 0 : get32(r + o));
        o += 4;
        o += 4 + (get32(r + o) + 3) / 4 * 4; /* tag */
        o += 4 + 4;                           /* count, op */
        if (o + 4 > len || get32(r + o) != 0)
                return failed("op status", o + 4 > len ? 0 : get32(r + o));
        *ret = r + o + 4;
        return 0;
}

static int exchange_id(int fd, const char *owner, uint64_t verifier, uint64_t *clid,
                       uint32_t *seq) {
        uint8_t reply[4096];
        const uint8_t *p;
        size_t len;
        buf b;

        call(&b);
        u32(&b, OP_EXCHANGE_ID);
        u64(&b, verifier);
        opaque(&b, owner, strlen(owner), 1);
        u32(&b, 0); /* flags */
        u32(&b, 0); /* SP4_NONE */
        u32(&b, 0); /* no implementation id */
        if (xfer(fd, &b, reply, sizeof(reply), &len) < 0)
                return failed("EXCHANGE_ID transfer", 0);
        if (op_result(reply, len, &p) < 0 || p + 12 > reply + len)
                return failed("EXCHANGE_ID", 0);
        *clid = ((uint64_t) get32(p) << 32) | get32(p + 4);
        *seq = get32(p + 8);
        return 0;
}

static void chan(buf *b, uint32_t req, uint32_t resp, uint32_t ops, uint32_t reqs) {
        u32(b, 0);
        u32(b, req);
        u32(b, resp);
        u32(b, 0);
        u32(b, ops);
        u32(b, reqs);
        u32(b, 0); /* no rdma_ird */
}

static int create_session(int fd, uint64_t clid, uint32_t seq) {
        uint8_t reply[4096];
        const uint8_t *p;
        size_t len;
        buf b;

        call(&b);
        u32(&b, OP_CREATE_SESSION);
        u64(&b, clid);
        u32(&b, seq);
        u32(&b, 0); /* flags: no back channel, no persistence */
        chan(&b, 1049620, 1049480, 8, 16);
        chan(&b, 4096, 4096, 2, 1);
        u32(&b, 0x40000000); /* callback program */
        u32(&b, 1);          /* one security parameter: AUTH_NONE */
        u32(&b, 0);
        if (xfer(fd, &b, reply, sizeof(reply), &len) < 0)
                return failed("CREATE_SESSION transfer", 0);
        return op_result(reply, len, &p) < 0 ? failed("CREATE_SESSION", 0) : 0;
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(2049) };
        long count, rate = 0, done = 0, errors = 0;
        int fd[2], one = 1;
        double t0, t;

        if (argc < 4 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 ||
            (count = atol(argv[3])) <= 0 || (argc > 4 && (rate = atol(argv[4])) < 0)) {
                fprintf(stderr, "usage: %s SERVER-IP OWNER COUNT [RATE]\n", argv[0]);
                return 2;
        }
        for (int k = 0; k < 2; k++) {
                fd[k] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd[k] < 0 || connect(fd[k], (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                        perror("connect");
                        return 1;
                }
                setsockopt(fd[k], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
        verbose = getenv("NSID_GEN_VERBOSE") ? 5 : 0;
        t0 = now_s();
        for (long i = 0; i < count; i++) {
                uint64_t clid;
                uint32_t seq;
                int k = (int) (i % 2);

                if (rate > 0) {
                        double due = t0 + (double) i / (double) rate, wait = due - now_s();
                        if (wait > 0) {
                                struct timespec ts = { (time_t) wait,
                                                       (long) ((wait - (double) (time_t) wait) * 1e9) };
                                nanosleep(&ts, NULL);
                        }
                }
                if (exchange_id(fd[k], argv[2], 0x6e73696400000000ull + (uint64_t) k, &clid,
                                &seq) < 0 ||
                    create_session(fd[k], clid, seq) < 0)
                        errors++;
                else
                        done++;
        }
        t = now_s() - t0;
        printf("takeovers %ld seconds %.3f rate %.1f errors %ld\n", done, t, (double) done / t,
               errors);
        return errors ? 1 : 0;
}
