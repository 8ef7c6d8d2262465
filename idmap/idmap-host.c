/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's answer to an id_resolver lookup: libnfsidmap (loaded on first use) with the
 * host's idmapd.conf, its Method list and plugins, as nfsidmap gives it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <sys/types.h>

#include <nfsidmap.h>

#include "idmap-lookup.h"
#include "nsid-idmap.h"
#define LAZY_WANT_NFSIDMAP
#include "lazylib.h"

#ifndef NSID_NFSIDMAP_PLUGIN_DIR
#define NSID_NFSIDMAP_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/libnfsidmap"
#endif

static int libnfsidmap_ready = 0;

static void nfsidmap_debug(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void nfsidmap_debug(const char *format, ...) {
        char buf[1024];
        va_list ap;
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        size_t l = strlen(buf);
        while (l > 0 && buf[l - 1] == '\n')
                buf[--l] = '\0';
        logmsg(LOG_DEBUG, "%s%s", strncmp(buf, "libnfsidmap:", 12) == 0 ? "" : "libnfsidmap: ", buf);
}

int idmap_nfsidmap_init(const idmap_opts *o) {
        if (libnfsidmap_ready)
                return 0;
        int l = lazy_nfsidmap_load();
        if (l < 0)
                return l;
        /* libnfsidmap loads each translation plugin by its bare name first ("nsswitch.so",
         * so that the library search path may override it) and from its own directory only
         * when that fails: on Debian 12 some 40 failed opens and stats of library
         * directories at every upcall (nfsidmap pays them too; in the lab, over 9p, a third
         * of this helper's time without the daemon). The default plugin is loaded here from
         * libnfsidmap's directory; its soname is "nsswitch.so", so the search by that name
         * finds it already loaded. (The override the search allows could only come from
         * /lib or /usr/lib themselves: request-key runs us without LD_LIBRARY_PATH and
         * ldconfig does not cache such names.) Other methods load as before. */
        (void) dlopen(NSID_NFSIDMAP_PLUGIN_DIR "/nsswitch.so", RTLD_NOW | RTLD_LOCAL);
        if (o->verbose > 1)
                nfs4_set_debug(o->verbose, nfsidmap_debug);
        int r = nfs4_init_name_mapping((char *) o->idmapd_conf);
        if (r != 0)
                return r < 0 ? r : -EINVAL;
        libnfsidmap_ready = 1;
        return 0;
}

/* The host's answer, through libnfsidmap and idmapd.conf (its Method list, plugins...). */
int idmap_resolve_host(const idmap_opts *o, const nsid_idmap_keydesc *kd, answer *ret) {
        char domain[NFS4_MAX_DOMAIN_LEN];
        answer a = {};
        int r;

        r = idmap_nfsidmap_init(o);
        if (r < 0)
                return r;
        switch (kd->kind) {
        case NSID_IDMAP_KEY_UID: {
                uid_t uid = (uid_t) -1;
                r = nfs4_owner_to_uid((char *) kd->name, &uid);
                a.id = uid;
                break;
        }
        case NSID_IDMAP_KEY_GID: {
                gid_t gid = (gid_t) -1;
                r = nfs4_group_owner_to_gid((char *) kd->name, &gid);
                a.id = gid;
                break;
        }
        case NSID_IDMAP_KEY_USER:
        case NSID_IDMAP_KEY_GROUP:
                a.is_name = true;
                r = nfs4_get_default_domain(NULL, domain, sizeof(domain));
                if (r != 0)
                        return r < 0 ? r : -EINVAL;
                if (kd->kind == NSID_IDMAP_KEY_USER)
                        r = nfs4_uid_to_name(kd->id, domain, a.name, sizeof(a.name));
                else
                        r = nfs4_gid_to_name(kd->id, domain, a.name, sizeof(a.name));
                break;
        default:
                return -EINVAL;
        }
        if (r != 0)
                return r < 0 ? r : -ENOENT;
        *ret = a;
        return 0;
}
