/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-nss-query: one ID-mapping lookup answered by a container's own name service, as
 * rpc.idmapd running in that container would answer it.
 *
 * nsid-idmapd runs this program inside the container (nsid_worker_session_start(): every namespace of
 * the container joined, its root, an unprivileged id, no capability, no_new_privs, resource
 * limits, a clean environment, nothing of the daemon's open). It is linked against libc only:
 * the container's dynamic loader and libc load it, with the container's NSS modules and, where
 * the container has it, the container's libnfsidmap with its /etc/idmapd.conf (Method =
 * nsswitch, static, umich_ldap, sss, regex, [Static], Local-Realms, No-Strip...), loaded
 * with dlopen() so that a container without nfs-common still gets its NSS answer.
 *
 *   nsid-nss-query uid|gid OWNER@DOMAIN DOMAIN
 *   nsid-nss-query user|group ID DOMAIN
 *   nsid-nss-query --serve DOMAIN       one request a line on stdin ("uid OWNER@DOMAIN",
 *                                       "user ID", ...), a reply per request, until EOF
 *
 * DOMAIN is the container's NFSv4 domain as nsid-idmapd read it (used only without
 * libnfsidmap: NSS answers plain names). Output, one line each, on stdout:
 *   via libnfsidmap|nss        what answered
 *   id N | name OWNER@DOMAIN   the answer
 *   none                       the name service does not know it
 *   err ERRNO                  the lookup failed (not the same as unknown)
 * Every reply is exactly two lines. Everything it prints is untrusted input to the daemon
 * (nss-text.c parses it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/types.h>

#define NAME_MAX_LEN 1024
#define NSS_BUF_MAX (1024u * 1024u)

typedef int (*init_fn)(char *);
typedef int (*owner_fn)(char *, uint32_t *);
typedef int (*toname_fn)(uint32_t, char *, char *, size_t);
typedef int (*domain_fn)(char *, char *, size_t);

static int parse_id(const char *s, uint32_t *ret) {
        char *end = NULL;
        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || *end || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

/* libnfsidmap as rpc.idmapd calls it on its client pipe (nfs4_name_to_uid(), not
 * nfs4_owner_to_uid(), which would turn an unknown owner into a nobody of its own: the
 * daemon maps "none" to the namespace's nobody, as it does for every context). -ENOENT (not
 * known) and -EINVAL (another domain, an unqualified name) are "none". 1 answered (printed),
 * 0 libnfsidmap is not there. */
static int via_libnfsidmap(bool user, bool to_id, const char *arg) {
        /* RTLD_GLOBAL: its plugins (nsswitch.so...) take its symbols from the global scope */
        static void *h;
        static bool tried;
        char name[NAME_MAX_LEN], domain[512];
        uint32_t id = 0;
        int r;

        if (!tried) {
                h = dlopen("libnfsidmap.so.1", RTLD_NOW | RTLD_GLOBAL);
                tried = true;
        }
        if (!h)
                return 0;
        init_fn init = (init_fn) dlsym(h, "nfs4_init_name_mapping");
        owner_fn owner = (owner_fn) dlsym(h, user ? "nfs4_name_to_uid" : "nfs4_name_to_gid");
        toname_fn toname = (toname_fn) dlsym(h, user ? "nfs4_uid_to_name" : "nfs4_gid_to_name");
        domain_fn getdomain = (domain_fn) dlsym(h, "nfs4_get_default_domain");
        if (!init || !owner || !toname || !getdomain)
                return 0;
        printf("via libnfsidmap\n");
        r = init(NULL);
        if (r != 0) {
                printf("err %d\n", r < 0 ? -r : EINVAL);
                return 1;
        }
        if (to_id) {
                snprintf(name, sizeof(name), "%s", arg);
                r = owner(name, &id);
                if (r == 0)
                        printf("id %" PRIu32 "\n", id);
                else
                        printf(r == -ENOENT || r == -EINVAL ? "none\n" : "err %d\n", -r);
                return 1;
        }
        if (parse_id(arg, &id) < 0) {
                printf("err %d\n", EINVAL);
                return 1;
        }
        r = getdomain(NULL, domain, sizeof(domain));
        if (r == 0)
                r = toname(id, domain, name, sizeof(name));
        if (r == 0)
                printf("name %s\n", name);
        else
                printf(r == -ENOENT ? "none\n" : "err %d\n", r < 0 ? -r : EINVAL);
        return 1;
}

/* getpw*_r / getgr*_r with a buffer grown on ERANGE: 0 found, -ENOENT, -errno */
static int nss_lookup(bool user, const char *name, uint32_t id, uint32_t *ret_id,
                      char *ret_name, size_t name_len) {
        size_t size = 4096;
        for (;;) {
                char *buf = malloc(size);
                struct passwd pw, *pr = NULL;
                struct group gr, *gp = NULL;
                int e;
                if (!buf)
                        return -ENOMEM;
                if (user)
                        e = name ? getpwnam_r(name, &pw, buf, size, &pr)
                                 : getpwuid_r(id, &pw, buf, size, &pr);
                else
                        e = name ? getgrnam_r(name, &gr, buf, size, &gp)
                                 : getgrgid_r(id, &gr, buf, size, &gp);
                if (e == ERANGE && size < NSS_BUF_MAX) {
                        free(buf);
                        size *= 2;
                        continue;
                }
                if (e == 0 && (pr || gp)) {
                        *ret_id = user ? pr->pw_uid : gp->gr_gid;
                        snprintf(ret_name, name_len, "%s", user ? pr->pw_name : gp->gr_name);
                        free(buf);
                        return 0;
                }
                free(buf);
                /* no entry: 0 with a NULL result, or one of the errnos glibc documents for it */
                if (e == 0 || e == ENOENT || e == ESRCH || e == EBADF || e == EPERM)
                        return -ENOENT;
                return -e;
        }
}

static int via_nss(bool user, bool to_id, const char *arg, const char *domain) {
        char name[NAME_MAX_LEN];
        uint32_t id = 0;
        int r;

        printf("via nss\n");
        if (to_id) {
                const char *at = strrchr(arg, '@');
                if (!at || strcasecmp(at + 1, domain) != 0 || at == arg ||
                    (size_t) (at - arg) >= sizeof(name)) {
                        printf("none\n");
                        return 0;
                }
                memcpy(name, arg, (size_t) (at - arg));
                name[at - arg] = '\0';
                r = nss_lookup(user, name, 0, &id, name, sizeof(name));
                if (r == 0)
                        printf("id %" PRIu32 "\n", id);
        } else {
                if (parse_id(arg, &id) < 0) {
                        printf("err %d\n", EINVAL);
                        return 0;
                }
                r = nss_lookup(user, NULL, id, &id, name, sizeof(name));
                if (r == 0)
                        printf("name %s@%s\n", name, domain);
        }
        if (r == -ENOENT)
                printf("none\n");
        else if (r < 0)
                printf("err %d\n", -r);
        return 0;
}

/* One lookup, its two lines printed: 0, or -EINVAL for an unknown kind (nothing printed). */
static int answer(const char *kind, const char *arg, const char *domain) {
        bool user, to_id;
        if (strcmp(kind, "uid") == 0)
                user = true, to_id = true;
        else if (strcmp(kind, "gid") == 0)
                user = false, to_id = true;
        else if (strcmp(kind, "user") == 0)
                user = true, to_id = false;
        else if (strcmp(kind, "group") == 0)
                user = false, to_id = false;
        else
                return -EINVAL;
        if (via_libnfsidmap(user, to_id, arg) == 0)
                (void) via_nss(user, to_id, arg, domain);
        return 0;
}

/* Requests on stdin, one a line, "KIND ARG"; a malformed one is answered "err EINVAL". */
static int serve(const char *domain) {
        char line[NAME_MAX_LEN + 16];
        while (fgets(line, sizeof(line), stdin)) {
                size_t n = strlen(line);
                char *sp = strchr(line, ' ');
                if (n == 0 || line[n - 1] != '\n') {
                        int c; /* too long: skip the rest of it */
                        while ((c = getchar()) != EOF && c != '\n')
                                ;
                        sp = NULL;
                } else
                        line[n - 1] = '\0';
                if (sp)
                        *sp = '\0';
                if (!sp || answer(line, sp + 1, domain) < 0)
                        printf("via nss\nerr %d\n", EINVAL);
                if (fflush(stdout) != 0)
                        return 1;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        /* run from a memfd by its fd, its comm would be "5": named for ps and pgrep */
        (void) prctl(PR_SET_NAME, "nsid-nss-query", 0, 0, 0);
        if (argc == 3 && strcmp(argv[1], "--serve") == 0)
                return serve(argv[2]);
        if (argc != 4) {
                fprintf(stderr, "usage: nsid-nss-query uid|gid|user|group NAME-OR-ID DOMAIN\n"
                                "       nsid-nss-query --serve DOMAIN\n"
                                "(run by nsid-idmapd inside a container; see nsid-idmapd(8))\n");
                return 2;
        }
        if (answer(argv[1], argv[2], argv[3]) < 0) {
                fprintf(stderr, "nsid-nss-query: unknown lookup '%s'\n", argv[1]);
                return 2;
        }
        return fflush(stdout) == 0 ? 0 : 1;
}
