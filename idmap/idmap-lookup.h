/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the id_resolver lookup's strategies share (idmap-upcall.c runs them): an answer, and
 * the two places this helper finds one itself.
 */
#ifndef NSID_IDMAP_LOOKUP_H
#define NSID_IDMAP_LOOKUP_H

#include <stdbool.h>
#include <stdint.h>

#include <nsid/keydesc.h>

#include "nsid-idmap.h"

#define NAME_BUF (NSID_IDMAP_KEYDESC_NAME_MAX + 1)

typedef struct answer {
        bool is_name;
        uint32_t id;
        char name[NAME_BUF];
} answer;

/* libnfsidmap loaded and initialised with the host's idmapd.conf (once) */
int idmap_nfsidmap_init(const idmap_opts *o);
/* The host's answer, through libnfsidmap and idmapd.conf (its Method list, plugins...);
 * -ENOENT when it has none. */
int idmap_resolve_host(const idmap_opts *o, const nsid_idmap_keydesc *kd, answer *ret);
/* The requester's own answer, from its files, read by a worker (idmap-requester.c);
 * -ETIMEDOUT when its files did not answer in time. */
int idmap_resolve_requester(const idmap_opts *o, requester *rq, const nsid_idmap_keydesc *kd,
                            answer *ret);

#endif
