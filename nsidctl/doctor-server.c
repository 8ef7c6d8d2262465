/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor on an NFS server (knfsd): owner strings that collide, seen from the one
 * place that sees every client, /proc/fs/nfsd/clients. Sampled over a window: the server
 * keeps one record per owner string, and colliding clients take it from each other. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nsid/nfsdclients.h>

#include "doctor.h"

#define NFSD_CLIENTS "/proc/fs/nfsd/clients"
#define SAMPLE_MS 250

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void addresses(const nsid_nfsd_clients *c, size_t i, size_t n, char *buf, size_t size) {
        size_t o = 0;

        buf[0] = 0;
        for (size_t j = 0; j < n && o + 60 < size; j++) {
                int k = snprintf(buf + o, size - o, "%s%s", j ? ", " : "",
                                 nsid_nfsd_clients_get_finding_address(c, i, j));
                if (k < 0)
                        break;
                o += (size_t) k;
        }
        if (o + 60 >= size)
                snprintf(buf + o, size - o, ", ...");
}

void check_nfsd_clients(void) {
        const char *dir = arg.nfsd_clients ? arg.nfsd_clients : NFSD_CLIENTS;
        nsid_nfsd_clients *c = NULL;
        uint64_t t0, window = (uint64_t) arg.window_ms;
        char span[64];
        int r, n;

        if (access(dir, F_OK) < 0 && errno == ENOENT && !arg.server && !arg.nfsd_clients)
                return; /* not an NFS server: nothing to say */
        if (nsid_nfsd_clients_new(&c) < 0) {
                errorf("out of memory");
                exit(EXIT_FAIL);
        }
        t0 = now_ms();
        r = nsid_nfsd_clients_scan(c, dir, t0);
        while (r >= 0 && now_ms() - t0 < window) {
                struct timespec ts = { 0, SAMPLE_MS * 1000000L };
                nanosleep(&ts, NULL);
                r = nsid_nfsd_clients_scan(c, dir, now_ms());
        }
        if (r < 0) {
                add_finding(SEV_ERROR, "nfsd-clients",
                            r == -ENOENT ? "run doctor on the NFS server, as root, with nfsd "
                                           "started (the nfsd filesystem mounted on /proc/fs/nfsd)"
                                         : NULL,
                            "cannot read the NFS server's clients in %s: %s", dir, strerror(-r));
                nsid_nfsd_clients_unref(c);
                return;
        }
        if (window == 0)
                snprintf(span, sizeof(span), "in one reading");
        else
                snprintf(span, sizeof(span), "within %.1f s", (double) window / 1000);
        n = nsid_nfsd_clients_check(c, window);
        if (n < 0) {
                errorf("out of memory");
                exit(EXIT_FAIL);
        }
        for (size_t i = 0; i < (size_t) n; i++) {
                nsid_nfsd_finding_kind k;
                const char *owner;
                char addrs[1024];
                json_object *o, *a;
                size_t na;

                if (nsid_nfsd_clients_get_finding(c, i, &k, &owner, &na) < 0)
                        continue;
                addresses(c, i, na, addrs, sizeof(addrs));
                switch (k) {
                case NSID_NFSD_OWNER_MULTIPLE_ADDRESSES:
                        add_finding(SEV_ERROR, "nfsd-owner-multiple-addresses", nsid_nfsd_finding_kind_fix(k),
                                    "owner string \"%s\" confirmed from %zu addresses %s: %s "
                                    "(one identity on several clients: they take each other's "
                                    "lease)",
                                    owner, na, span, addrs);
                        break;
                case NSID_NFSD_OWNER_NO_UNIQUIFIER:
                        add_finding(SEV_ERROR, "nfsd-owner-no-uniquifier", nsid_nfsd_finding_kind_fix(k),
                                    "owner string \"%s\" from %s carries no uniquifier", owner,
                                    addrs);
                        break;
                case NSID_NFSD_V40_COLLISION:
                        add_finding(SEV_ERROR, "nfsd-v40-owner-collision", nsid_nfsd_finding_kind_fix(k),
                                    "NFSv4.0 owner string \"%s\" used from %zu addresses: %s",
                                    owner, na, addrs);
                        break;
                default:
                        continue;
                }
                /* for --json: the owner string (escaped as above) and each address */
                o = json_object_new_object();
                a = json_object_new_array();
                json_object_object_add(o, "owner", json_object_new_string(owner));
                for (size_t j = 0; j < na; j++)
                        json_object_array_add(a, json_object_new_string(
                                                         nsid_nfsd_clients_get_finding_address(c, i, j)));
                json_object_object_add(o, "addresses", a);
                finding_attach(o);
        }
        if (n == 0)
                add_finding(SEV_OK, "nfsd-clients", NULL,
                            "%zu client owner string(s) seen in %s %s: none collides, each "
                            "carries a uniquifier",
                            nsid_nfsd_clients_get_owners(c), dir, span);
        if (nsid_nfsd_clients_get_skipped(c) > 0)
                add_finding(SEV_INFO, "nfsd-clients", NULL,
                            "%llu of %llu client records in %s could not be read (gone while "
                            "read, or not in the format of client_info_show())",
                            (unsigned long long) nsid_nfsd_clients_get_skipped(c),
                            (unsigned long long) nsid_nfsd_clients_get_records(c), dir);
        nsid_nfsd_clients_unref(c);
}
