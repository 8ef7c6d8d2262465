/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A hostile NSS module for itest-idmapd-nss.sh (built by the test, loaded by the container's
 * glibc inside nsid-nss-query). What it does is chosen by the first word of the container's
 * /etc/hostile-nss: hang, slow (20 s), huge (a 1 MiB name), ctrl (an escape sequence in
 * the name), uid0 (every name is uid 0), crash (SIGSEGV), fork (tries to start a process),
 * creds (reports, as the user's name, what it runs as).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <nss.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>

static char mode[32];

static void read_mode(void) {
        FILE *f = fopen("/etc/hostile-nss", "re");
        mode[0] = '\0';
        if (f) {
                if (fscanf(f, "%31s", mode) != 1)
                        mode[0] = '\0';
                fclose(f);
        }
}

static enum nss_status fill(const char *name, uint32_t id, struct passwd *pw, char *buf,
                            size_t len, int *err) {
        static char huge[1024 * 1024 + 1];
        char creds[200];
        read_mode();
        if (strcmp(mode, "hang") == 0)
                for (;;)
                        pause();
        if (strcmp(mode, "slow") == 0)
                sleep(20);
        if (strcmp(mode, "crash") == 0)
                raise(SIGSEGV);
        if (strcmp(mode, "fork") == 0) {
                pid_t p = fork();
                if (p == 0)
                        _exit(0);
                snprintf(creds, sizeof(creds), "fork%s", p < 0 ? "failed" : "worked");
                name = creds;
        }
        if (strcmp(mode, "huge") == 0) {
                memset(huge, 'a', sizeof(huge) - 1);
                name = huge;
        }
        if (strcmp(mode, "ctrl") == 0)
                name = "evil\033[31m";
        if (strcmp(mode, "creds") == 0) {
                struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
                struct __user_cap_data_struct d[2] = { 0 };
                syscall(SYS_capget, &h, d);
                signal(SIGXFSZ, SIG_IGN);
                int t = open("/tmp/hostile-nss-write", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                snprintf(creds, sizeof(creds), "uid%u-gid%u-cap%x-nnp%d-write%d-envpath%d", getuid(),
                         getgid(), d[0].permitted | d[0].effective,
                         prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), t >= 0 && write(t, "x", 1) == 1,
                         getenv("HOME") != NULL);
                if (t >= 0)
                        close(t);
                name = creds;
        }
        if (strcmp(mode, "uid0") == 0)
                id = 0;
        size_t n = strlen(name) + 1;
        if (n + 2 > len) {
                *err = ERANGE;
                return NSS_STATUS_TRYAGAIN;
        }
        memcpy(buf, name, n);
        buf[n] = 'x';
        buf[n + 1] = '\0';
        *pw = (struct passwd) { .pw_name = buf, .pw_passwd = buf + n, .pw_uid = id,
                                .pw_gid = id, .pw_gecos = buf + n + 1, .pw_dir = buf + n + 1,
                                .pw_shell = buf + n + 1 };
        return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_hostile_getpwnam_r(const char *name, struct passwd *pw, char *buf,
                                        size_t len, int *err) {
        return fill(name, 7777, pw, buf, len, err);
}

enum nss_status _nss_hostile_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len,
                                        int *err) {
        return fill("someone", uid, pw, buf, len, err);
}
