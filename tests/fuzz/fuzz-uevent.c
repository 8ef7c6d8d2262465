/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel uevent messages (NETLINK_KOBJECT_UEVENT datagrams: "ACTION@DEVPATH\0KEY=VALUE\0...",
 * or libudev's "libudev\0" + binary header from a udevd, or anything a process in the same
 * netns multicasts on group 1).
 *
 * No shipped program parses uevents: the udev rule (udev-rules/90-nsid-uniquifier.rules.in)
 * matches add@/fs/nfs/net/nfs_client in udevd and runs `nsid-uniquifier --quiet reconcile`
 * through systemd-run with static arguments; no event data reaches the program (no %k, $env
 * or $attr substitution, systemd-run passes no udev environment) and nsid-uniquifier reads
 * no udev variable (reconcile finds the namespaces itself). The only uevent parser in the tree
 * is the lab helper tests/vm/helpers/uevent-listen.c (run in qemu guests to prove delivery).
 * This target runs that helper's receive loop unchanged, with its system calls replaced so
 * that one datagram of fuzz input arrives: what it does with hostile datagrams (no NUL, no
 * '@', a "libudev" header, 16 KiB, embedded NULs) is what is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-check.h"

static const uint8_t *fuzz_data;
static size_t fuzz_size;
static int fuzz_polls;
static size_t fuzz_printed;

static int fake_socket(int domain, int type, int protocol) {
        (void) domain, (void) type, (void) protocol;
        return 1000;
}
static int fake_setsockopt(int fd, int level, int name, const void *v, socklen_t len) {
        (void) fd, (void) level, (void) name, (void) v, (void) len;
        return 0;
}
static int fake_bind(int fd, const void *sa, socklen_t len) {
        (void) fd, (void) sa, (void) len;
        return 0;
}
/* one datagram, then the timeout */
static int fake_poll(struct pollfd *p, nfds_t n, int timeout) {
        (void) n, (void) timeout;
        p->revents = fuzz_polls == 0 ? POLLIN : 0;
        return fuzz_polls++ == 0 ? 1 : 0;
}
static ssize_t fake_recv(int fd, void *buf, size_t len, int flags) {
        (void) fd, (void) flags;
        size_t k = fuzz_size < len ? fuzz_size : len; /* a datagram is truncated to the buffer */
        memcpy(buf, fuzz_data, k);
        return (ssize_t) k;
}
__attribute__((format(printf, 1, 2)))
static int fake_printf(const char *fmt, ...) {
        char out[32768];
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vsnprintf(out, sizeof(out), fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t) k >= sizeof(out))
                __builtin_trap(); /* a line longer than the datagram buffer: impossible */
        fuzz_printed += (size_t) k;
        return k;
}

int uevent_listen_main(int argc, char **argv);
#define main uevent_listen_main
#define socket(d, t, p) fake_socket(d, t, p)
#define setsockopt(f, l, n, v, s) fake_setsockopt(f, l, n, v, s)
#define bind(f, a, l) fake_bind(f, (const void *) (a), l)
#define poll(p, n, t) fake_poll(p, n, t)
#define recv(f, b, l, fl) fake_recv(f, b, l, fl)
#define printf(...) fake_printf(__VA_ARGS__)
#define setvbuf(...) ((void) 0)
#include "../vm/helpers/uevent-listen.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char a0[] = "nsid-uevent-listen", a1[] = "--timeout", a2[] = "5", a3[] = "--match",
             a4[] = "nfs_client";
        char *argv[] = { a0, a1, a2, a3, a4, NULL };

        if (size > 65536)
                return 0;
        fuzz_data = data;
        fuzz_size = size;
        fuzz_polls = 0;
        fuzz_printed = 0;
        optind = 0; /* getopt_long: start over */
        if (uevent_listen_main(5, argv) != 0)
                __builtin_trap();
        /* at most one line, never more than what was received */
        if (fuzz_printed > (size < 16383 ? size : 16383) + 1)
                __builtin_trap();
        return 0;
}
