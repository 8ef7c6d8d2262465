/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * no-tmpfile PROGRAM ARGS...: run PROGRAM where open() and openat() with O_TMPFILE fail with
 * EOPNOTSUPP, as on a file system without it (overlayfs before Linux 6.6: the 6.1 lab's
 * /var/lib, where `nsidctl host-secret new` failed until it fell back to a named temporary
 * file). A seccomp filter, inherited by every child and exec; x86_64 only. Mocks the file
 * system's answer: no file system without O_TMPFILE can be mounted on this host.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* __O_TMPFILE without O_DIRECTORY (O_TMPFILE is both) */
#define TMPFILE_BIT (O_TMPFILE & ~O_DIRECTORY)

int main(int argc, char *argv[]) {
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 3, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                /* openat: flags are argument 2 (the low 32 bits) */
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, TMPFILE_BIT, 3, 2),
                /* open: flags are argument 1 */
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, TMPFILE_BIT, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
        };
        struct sock_fprog prog = { .len = (unsigned short) (sizeof(f) / sizeof(f[0])), .filter = f };

        if (argc < 2) {
                fprintf(stderr, "usage: no-tmpfile PROGRAM ARGS...\n");
                return 2;
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                fprintf(stderr, "no-tmpfile: %s\n", strerror(errno));
                return 1;
        }
        execvp(argv[1], argv + 1);
        fprintf(stderr, "no-tmpfile: %s: %s\n", argv[1], strerror(errno));
        return 127;
}
