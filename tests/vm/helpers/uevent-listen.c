/* nsid-uevent-listen: print kernel uevents (NETLINK_KOBJECT_UEVENT, group 1) received in
 * the caller's network namespace, one line per event: "add@/fs/nfs/net/nfs_client
 * ACTION=add DEVPATH=... SUBSYSTEM=nfs SEQNUM=...". A lab helper (tests/vm), not installed.
 *
 *   nsid-uevent-listen [--timeout SECONDS] [--match SUBSTRING] [--ready FILE]
 *
 * --ready FILE is created once the socket is bound, so a script knows it may trigger.
 * Exits 0 after --timeout seconds (default 10), 1 on a setup error. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_seconds(const char *s, long *ret) {
        char *end = NULL;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 86400)
                return -EINVAL;
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "timeout", required_argument, NULL, 't' },
                { "match", required_argument, NULL, 'm' },
                { "ready", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *match = NULL, *ready = NULL;
        long timeout = 10;
        int c, fd, rcvbuf = 4 * 1024 * 1024;
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
        long long deadline;
        static char buf[16384];

        while ((c = getopt_long(argc, argv, "t:m:r:h", opts, NULL)) >= 0) {
                switch (c) {
                case 't':
                        if (parse_seconds(optarg, &timeout) < 0) {
                                fprintf(stderr, "nsid-uevent-listen: bad --timeout '%s'\n", optarg);
                                return 1;
                        }
                        break;
                case 'm': match = optarg; break;
                case 'r': ready = optarg; break;
                case 'h':
                        printf("usage: %s [--timeout SECONDS] [--match SUBSTRING] [--ready FILE]\n", argv[0]);
                        return 0;
                default: return 1;
                }
        }

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0) {
                fprintf(stderr, "nsid-uevent-listen: socket(NETLINK_KOBJECT_UEVENT): %s\n", strerror(errno));
                return 1;
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "nsid-uevent-listen: bind(group 1): %s\n", strerror(errno));
                return 1;
        }
        if (ready) {
                int rfd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (rfd < 0) {
                        fprintf(stderr, "nsid-uevent-listen: %s: %s\n", ready, strerror(errno));
                        return 1;
                }
                close(rfd);
        }
        setvbuf(stdout, NULL, _IOLBF, 0);

        deadline = now_ms() + timeout * 1000;
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                long long left = deadline - now_ms();
                ssize_t n;
                int r;

                if (left <= 0)
                        break;
                r = poll(&p, 1, (int) left);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "nsid-uevent-listen: poll: %s\n", strerror(errno));
                        return 1;
                }
                if (r == 0)
                        break;
                n = recv(fd, buf, sizeof(buf) - 1, 0);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)
                                continue;
                        fprintf(stderr, "nsid-uevent-listen: recv: %s\n", strerror(errno));
                        return 1;
                }
                buf[n] = '\0';
                /* kernel messages: "action@devpath\0KEY=value\0..." (skip libudev's) */
                if (n == 0 || strncmp(buf, "libudev", 7) == 0 || !strchr(buf, '@'))
                        continue;
                for (ssize_t i = 0; i < n - 1; i++)
                        if (buf[i] == '\0')
                                buf[i] = ' ';
                if (match && !strstr(buf, match))
                        continue;
                printf("%s\n", buf);
        }
        return 0;
}
