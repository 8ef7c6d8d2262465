/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: the kernel side: rpc_pipefs idmap pipes, knfsd's channels, the ID keys (idmapd-kernel.c). */
#ifndef NSID_IDMAPD_KERNEL_H
#define NSID_IDMAPD_KERNEL_H

#include "idmapd.h"

void dm_kernel_attach(dm_ns *ns);
void dm_kernel_detach(dm_ns *ns);
void dm_kernel_inotify_event(int ifd);
void dm_pipe_readable(dm_pipe *p);
/* Open the idmap pipes of NFS clients made since the last look (inotify may lag behind). */
void dm_kernel_sync_pipes(dm_ns *ns);
void dm_channel_readable(dm_ns *ns, int which);
void dm_pipe_answer(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl);
void dm_channel_answer(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl);
void dm_keys_schedule_invalidate(dm_ns *ns, const dm_query *q);
void dm_keys_run(int64_t now_us);
/* KEYCTL_CLEAR of .id_resolver where keys are isolated (a kernel without tagging): at start,
 * at stop, and when a namespace's NFS client appears (why: for the log). */
void dm_keys_clear(const char *why);
int dm_inotify_fd(void);

#endif
