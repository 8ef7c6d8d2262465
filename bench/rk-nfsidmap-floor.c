/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The floor of an id_resolver upcall that resolves through libnfsidmap: the least any helper
 * can cost that maps the name with libnfsidmap and /etc/idmapd.conf, as issue #5 requires of
 * nsid-idmap without its daemon. Linked against libnfsidmap at build time (nsid-idmap loads
 * it on first use), /etc/idmapd.conf, one lookup, the key's timeout, instantiate; no option
 * parsing, no checks of the description, no requester, no logging. Like nsid-idmap, it loads
 * the nsswitch plugin from libnfsidmap's directory first (libnfsidmap's own search for it
 * costs some 40 failed opens). Used by bench-idmap-helper (bench/lab/) only, to show what
 * part of the no-daemon figure libnfsidmap itself costs.
 *
 *   nsid-rk-nfsidmap-floor [--conf=PATH] KEY DESC
 *                           (DESC: uid:NAME, gid:NAME, user:ID, group:ID; PATH: the
 *                           idmapd.conf, default libnfsidmap's own, /etc/idmapd.conf)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <nfsidmap.h>

#include <linux/keyctl.h>

static long kctl(int op, long a, long b, long c, long d) {
        return syscall(SYS_keyctl, op, a, b, c, d);
}

int main(int argc, char **argv) {
        char *conf = NULL;
        if (argc == 4 && strncmp(argv[1], "--conf=", 7) == 0) {
                conf = argv[1] + 7;
                argv++;
                argc--;
        }
        if (argc != 3)
                return 2;
        long key = strtol(argv[1], NULL, 10);
        const char *desc = argv[2];
        char out[1024], domain[512];
        size_t len;
        int r;

        (void) dlopen(NSID_NFSIDMAP_PLUGIN_DIR "/nsswitch.so", RTLD_NOW | RTLD_LOCAL);
        if (nfs4_init_name_mapping(conf) != 0)
                return 1;
        if (strncmp(desc, "uid:", 4) == 0 || strncmp(desc, "gid:", 4) == 0) {
                uid_t id = 0;
                if (desc[0] == 'u')
                        r = nfs4_owner_to_uid((char *) desc + 4, &id);
                else
                        r = nfs4_group_owner_to_gid((char *) desc + 4, (gid_t *) &id);
                if (r != 0)
                        id = 65534;
                len = (size_t) snprintf(out, sizeof(out), "%u", id) + 1;
        } else {
                const char *colon = strchr(desc, ':');
                if (!colon)
                        return 2;
                uid_t id = (uid_t) strtoul(colon + 1, NULL, 10);
                if (nfs4_get_default_domain(NULL, domain, sizeof(domain)) != 0)
                        return 1;
                if (desc[0] == 'u')
                        r = nfs4_uid_to_name(id, domain, out, sizeof(out));
                else
                        r = nfs4_gid_to_name(id, domain, out, sizeof(out));
                if (r != 0)
                        snprintf(out, sizeof(out), "nobody");
                len = strlen(out);
        }
        kctl(KEYCTL_SET_TIMEOUT, key, 600, 0, 0);
        return kctl(KEYCTL_INSTANTIATE, key, (long) out, (long) len, 0) < 0;
}
