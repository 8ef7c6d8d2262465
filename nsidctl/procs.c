/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: find processes by name (rpc.idmapd, nsid-idmapd) and their network namespace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsidctl.h"

static int read_comm(int dfd, char buf[17]) {
        int fd = openat(dfd, "comm", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, 16);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

int procs_find(const char *const *names, proc_hit **ret, size_t *ret_n) {
        DIR *d = opendir("/proc");
        proc_hit *v = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char comm[17], *end;
                struct stat st;
                bool want = false;
                long pid;
                int dfd;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                dfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        continue;
                if (read_comm(dfd, comm) < 0) {
                        close(dfd);
                        continue;
                }
                for (const char *const *p = names; *p; p++)
                        want = want || strcmp(comm, *p) == 0;
                /* the netns read through the same /proc/PID directory fd: a recycled pid
                 * would make this fail (ESRCH) rather than name another process's netns */
                if (!want || fstatat(dfd, "ns/net", &st, 0) < 0) {
                        close(dfd);
                        continue;
                }
                close(dfd);
                if (n == cap) {
                        proc_hit *nv = reallocarray(v, cap = cap ? cap * 2 : 8, sizeof(*v));
                        if (!nv) {
                                free(v);
                                closedir(d);
                                return -ENOMEM;
                        }
                        v = nv;
                }
                v[n] = (proc_hit) { .pid = (pid_t) pid,
                                    .netns = { .dev = st.st_dev, .ino = st.st_ino } };
                snprintf(v[n].comm, sizeof(v[n].comm), "%s", comm);
                n++;
        }
        closedir(d);
        *ret = v;
        *ret_n = n;
        return 0;
}
