/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-idmapd: the control socket, server and client (idmapd-ctl.c). */
#ifndef NSID_IDMAPD_CTL_H
#define NSID_IDMAPD_CTL_H

#include "idmapd.h"

int dm_ctl_listen(const char *path);
void dm_ctl_accept(int lfd);
void dm_ctl_client_event(dm_client *c, uint32_t events);
/* Resume the clients whose pipelined lines waited for a late answer (dm_ctl_answer()):
 * the main loop calls it after each round of work, when no namespace is in use. */
void dm_ctl_resume(void);
void dm_ctl_answer(dm_pending *p, const dm_answer *a, bool cached, uint32_t ttl);
void dm_ctl_close_all(void);
int dm_status_client(const char *path, bool json, bool legend);
int dm_ctl_command(const char *path, const char *request);

#endif
