/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: run from a user namespace (a rootless container, `podman unshare`) or by a
 * user without root, where NFS cannot be mounted at all. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"

#define ROOTLESS_FIX                                                                           \
        "mount the export on the host (or in a rootful container) and bind-mount the directory " \
        "in, e.g. podman run -v /mnt/nfs:/data ..."

int userns_map_state(const char *uid_map, char *first, size_t size) {
        unsigned long inside, outside, count;
        int consumed = 0;

        if (sscanf(uid_map, " %lu %lu %lu %n", &inside, &outside, &count, &consumed) != 3)
                return -EINVAL;
        snprintf(first, size, "%lu %lu %lu", inside, outside, count);
        /* the initial user namespace maps every id onto itself, in one line */
        return inside == 0 && outside == 0 && count == 4294967295UL && uid_map[consumed] == '\0';
}

bool check_userns(void) {
        char map[4096], first[96];
        ssize_t n = 0;
        int fd, r;

        fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                n = read(fd, map, sizeof(map) - 1);
                close(fd);
        }
        if (n <= 0)
                return false;
        map[n] = '\0';
        r = userns_map_state(map, first, sizeof(first));
        if (r == 0) {
                add_finding(SEV_ERROR, "user-namespace", ROOTLESS_FIX,
                            "nsidctl runs in a user namespace (uid_map %s...): the kernel refuses "
                            "NFS mounts from a user namespace, so a rootless container can have no "
                            "NFS client and no NFS identity of its own",
                            first);
                return true;
        }
        if (r == 1 && geteuid() != 0)
                add_finding(SEV_WARNING, "rootless", ROOTLESS_FIX,
                            "not root (uid %u): rootless containers cannot mount NFS (the kernel "
                            "refuses NFS mounts from a user namespace), and other namespaces' "
                            "identifiers cannot be read; run nsidctl doctor as root to see them",
                            (unsigned) geteuid());
        return false;
}
