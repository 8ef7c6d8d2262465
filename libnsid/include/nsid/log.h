/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_LOG_H
#define NSID_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library never prints. It hands each message, already formatted, to a handler set by
 * the program. Priorities are syslog's (LOG_ERR ... LOG_DEBUG). Without a handler messages
 * are dropped. Both calls are thread safe.
 */
typedef void (*nsid_log_fn)(int priority, const char *message, void *userdata);

/* Install a handler (NULL to drop messages). */
void nsid_log_set_handler(nsid_log_fn fn, void *userdata);

/* Messages less important than this syslog priority are not formatted; default LOG_INFO. */
void nsid_log_set_max_priority(int priority);
int nsid_log_get_max_priority(void);

#ifdef __cplusplus
}
#endif
#endif
