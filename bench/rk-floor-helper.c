/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The floor of an id_resolver request-key upcall: a helper that does nothing but instantiate
 * the key (no library, no configuration, no lookup), so the kernel's usermode-helper and
 * /sbin/request-key are all that is measured. Used by bench-idmap-helper (bench/lab/) as the
 * baseline and by the lab scenario idmap-helper for the key cache experiment.
 *
 *   nsid-rk-floor [--answer=TEXT] [--invalidate=granted|unlinked] [--log=FILE] KEY DESC
 *
 * Answer: TEXT (ids get their NUL appended like nfsidmap does), default 65534 for uid:/gid:
 * descriptions and "nobody" for user:/group:.
 * --invalidate=granted: while holding the authority, set the key's permissions so that its
 *   owner (root) may search it (KEYCTL_SETPERM), instantiate it, and invalidate it before
 *   exiting, i.e. before the kernel's requester has checked it. (Not KEYCTL_LINK into our
 *   own keyring to possess it: linking a key under construction waits for its construction,
 *   i.e. for this helper, a deadlock that hangs the requester; and instantiating with our
 *   session keyring as destination does not make us its possessor: EACCES, seen on 6.18.)
 * --invalidate=unlinked: instantiate, then try to invalidate it as root without possessing
 *   it (what a daemon does); the result is logged.
 * --log: append "KEY DESC setperm=R instantiate=R invalidate=R" (R: ok, the errno name, -).
 * Raw syscalls only (no libkeyutils): the floor must not pay for a library load.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/keyctl.h>

static long kctl(int op, long a, long b, long c, long d) {
        return syscall(SYS_keyctl, op, a, b, c, d);
}

static const char *res(long r, int e) {
        if (r >= 0)
                return "ok";
        switch (e) {
        case EACCES: return "EACCES";
        case EPERM: return "EPERM";
        case ENOKEY: return "ENOKEY";
        case EKEYREVOKED: return "EKEYREVOKED";
        case EKEYEXPIRED: return "EKEYEXPIRED";
        default: return strerror(e);
        }
}

int main(int argc, char **argv) {
        const char *answer = NULL, *inval = NULL, *log = NULL;
        int i = 1;

        for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
                if (strncmp(argv[i], "--answer=", 9) == 0)
                        answer = argv[i] + 9;
                else if (strncmp(argv[i], "--invalidate=", 13) == 0)
                        inval = argv[i] + 13;
                else if (strncmp(argv[i], "--log=", 6) == 0)
                        log = argv[i] + 6;
                else
                        return 2;
        }
        if (argc - i != 2)
                return 2;
        long key = strtol(argv[i], NULL, 10);
        const char *desc = argv[i + 1];
        int is_id = strncmp(desc, "uid:", 4) == 0 || strncmp(desc, "gid:", 4) == 0;
        if (!answer)
                answer = is_id ? "65534" : "nobody";
        size_t len = strlen(answer) + (is_id ? 1 : 0);
        long lr = 0, ir, vr = -2;
        int le = 0, ie, ve = 0;

        /* granted: while we hold the authority, let the key's owner (root) search it, so
         * that root may invalidate it once it is instantiated without possessing it */
        bool linked = inval && strcmp(inval, "granted") == 0;
        if (linked) {
                lr = kctl(KEYCTL_SETPERM, key, 0x3f3f0000L /* possessor and user: all */, 0, 0);
                le = errno;
        }
        ir = kctl(KEYCTL_INSTANTIATE, key, (long) answer, (long) len, 0);
        ie = errno;
        if (inval) {
                vr = kctl(KEYCTL_INVALIDATE, key, 0, 0, 0);
                ve = errno;
        }
        if (log) {
                int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dprintf(fd, "%ld %s setperm=%s instantiate=%s invalidate=%s\n", key, desc,
                                linked ? res(lr, le) : "-",
                                res(ir, ie), vr == -2 ? "-" : res(vr, ve));
                        close(fd);
                }
        }
        return ir < 0;
}
