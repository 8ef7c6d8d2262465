/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid-idmapd's load server: the process its context-load workers are forked from. The
 * daemon runs threads; a fork of a threaded process may find an allocator lock held by
 * another thread forever (ASan's allocator has no fork handler), and the load worker reads
 * and parses with the allocator. The load server is forked once at start, before any thread,
 * and stays single-threaded: for each load it forks a child that runs the worker
 * (dm_context_load_direct()) and writes the reply into a pipe the daemon handed over.
 */
#ifndef NSID_IDMAPD_LOADSRV_H
#define NSID_IDMAPD_LOADSRV_H

/* Fork the load server (call before any thread starts) and route dm_context_load() through
 * it. 0, or -errno (then loads fork from the daemon as before). */
int dm_load_server_start(void);

#endif
