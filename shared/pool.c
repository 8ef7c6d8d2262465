/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <pthread.h>
#include <unistd.h>

#include "pool.h"

#define POOL_THREADS_MAX 64

typedef struct pool {
        size_t n;
        size_t next; /* atomic: the next item to take */
        void (*fn)(size_t i, void *userdata);
        void *userdata;
} pool;

static void *pool_thread(void *userdata) {
        pool *p = userdata;

        for (;;) {
                size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
                if (i >= p->n)
                        return NULL;
                p->fn(i, p->userdata);
        }
}

void pool_for_each(size_t n, size_t max_threads, void (*fn)(size_t i, void *userdata),
                   void *userdata) {
        pool p = { .n = n, .fn = fn, .userdata = userdata };
        pthread_t t[POOL_THREADS_MAX];
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t k = (size_t) (cpus > 0 ? cpus : 1) * 4, started = 0;

        if (max_threads > POOL_THREADS_MAX)
                max_threads = POOL_THREADS_MAX;
        if (k > max_threads)
                k = max_threads;
        if (k > n)
                k = n;
        for (size_t i = 1; i < k; i++)
                if (pthread_create(&t[started], NULL, pool_thread, &p) == 0)
                        started++;
        (void) pool_thread(&p);
        for (size_t i = 0; i < started; i++)
                (void) pthread_join(t[i], NULL);
}
