/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What more than one C integration test checks about the test process itself. Include after
 * <cmocka.h>. */
#ifndef NSID_ITEST_UTIL_H
#define NSID_ITEST_UTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>

/* The fds this process has open. */
static inline int count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int n = 0;
        assert_non_null(d);
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(d);
        return n - 1; /* the directory's own fd */
}

/* A thread that calls malloc() and free() until *(volatile bool *) userdata is true: the
 * allocator's locks are often held when another thread fork()s, which a child that
 * allocates would hang on. */
static inline void *alloc_churn_thread(void *userdata) {
        volatile bool *stop = userdata;
        while (!*stop)
                free(malloc(1 + (size_t) (rand() % 100000)));
        return NULL;
}

#endif
