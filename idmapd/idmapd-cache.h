/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: the answer cache of a namespace (idmapd-cache.c). */
#ifndef NSID_IDMAPD_CACHE_H
#define NSID_IDMAPD_CACHE_H

#include "idmapd.h"

dm_cache *dm_cache_new(void);
void dm_cache_free(dm_cache *c);
/* 1 hit (answer filled, remaining ttl), 0 miss */
int dm_cache_get(dm_cache *c, const dm_query *q, int64_t now_us, dm_answer *ret, uint32_t *ret_ttl);
void dm_cache_put(dm_cache *c, const dm_query *q, const dm_answer *a, int64_t expires_us);
size_t dm_cache_flush(dm_cache *c);
size_t dm_cache_size(const dm_cache *c);
size_t dm_cache_expire(dm_cache *c, int64_t now_us);

#endif
