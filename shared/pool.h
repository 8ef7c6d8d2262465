/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A pool of threads over the items of an array, for work that mostly waits on the kernel (a
 * worker forked per namespace): reading identifiers, machine-ids, setting identifiers. */
#ifndef NSID_SHARED_POOL_H
#define NSID_SHARED_POOL_H

#include <stddef.h>

/* fn(i, userdata) for every i in [0, n), each once, by the caller and up to 4 threads per
 * online CPU in all, at most max_threads, never more than n; returns when every call has
 * returned. A thread that cannot be created leaves its share to the others. */
void pool_for_each(size_t n, size_t max_threads, void (*fn)(size_t i, void *userdata),
                   void *userdata);

#endif
