/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * syscall-deny PROGRAM ARGS...: run PROGRAM with the system calls of the units'
 * SystemCallFilter=~@clock @cpu-emulation @debug @module @obsolete @raw-io @reboot @swap
 * refused with EPERM (SystemCallErrorNumber=EPERM), as systemd would install it: a seccomp
 * filter, inherited by every child and exec. x86_64 only (SystemCallArchitectures=native).
 * For the tests that run nsid's programs as their units would, where no systemd is PID 1.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int denied[] = {
        /* @clock */ SYS_adjtimex, SYS_clock_adjtime, SYS_clock_settime, SYS_settimeofday,
        /* @cpu-emulation */ SYS_modify_ldt,
        /* @debug */ SYS_lookup_dcookie, SYS_perf_event_open, SYS_pidfd_getfd, SYS_ptrace,
        /* @module */ SYS_delete_module, SYS_finit_module, SYS_init_module,
        /* @obsolete */ SYS__sysctl, SYS_afs_syscall, SYS_create_module, SYS_get_kernel_syms,
        SYS_getpmsg, SYS_putpmsg, SYS_query_module, SYS_security, SYS_sysfs, SYS_tuxcall,
        SYS_uselib, SYS_ustat, SYS_vserver,
        /* @raw-io */ SYS_ioperm, SYS_iopl,
        /* @reboot */ SYS_kexec_file_load, SYS_kexec_load, SYS_reboot,
        /* @swap */ SYS_swapoff, SYS_swapon,
};
#define N (sizeof(denied) / sizeof(denied[0]))

int main(int argc, char *argv[]) {
        struct sock_filter f[4 + 2 * N + 2];
        size_t k = 0;

        if (argc < 2) {
                fprintf(stderr, "usage: syscall-deny PROGRAM ARGS...\n");
                return 2;
        }
        f[k++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
        f[k++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
        f[k++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
        f[k++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        for (size_t i = 0; i < N; i++) {
                f[k++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned) denied[i], 0, 1);
                f[k++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
        }
        f[k++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = { .len = (unsigned short) k, .filter = f };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                fprintf(stderr, "syscall-deny: %s\n", strerror(errno));
                return 1;
        }
        execvp(argv[1], argv + 1);
        fprintf(stderr, "syscall-deny: %s: %s\n", argv[1], strerror(errno));
        return 127;
}
