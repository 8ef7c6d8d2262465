/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which processes are this process's workers (worker.c), for the netns scan: a worker that
 * joined a container's namespaces is no process of the container's. Internal. */
#ifndef NSID_WORKER_INTERNAL_H
#define NSID_WORKER_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

/* The pids of the workers alive now (the forked children; their runners are their
 * children), at most max of them into out; returns how many. Thread-safe. */
size_t worker_pids_snapshot(pid_t *out, size_t max);

#endif
