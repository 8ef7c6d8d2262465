/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_LOG_INTERNAL_H
#define NSID_LOG_INTERNAL_H

#include <syslog.h>

#include "macro.h"

/* Format and hand a message to the program's handler. Returns -abs(error) when error != 0, so
 * "return log_error_errno(r, ...)" both logs and propagates; %m is not supported, use
 * strerror(-r). */
int nsid_log_internal(int priority, int error, const char *file, int line, const char *format,
                      ...) _printf_(5, 6);

/* Around a fork() whose child may log: nsid_log_fork_prepare() before it, nsid_log_fork_done()
 * after it in the parent and in the child. */
void nsid_log_fork_prepare(void);
void nsid_log_fork_done(void);
/* In a worker child (worker.c), before it enters any namespace: nothing is logged from then
 * on (the program's handler would write to syslog from a container's root, resolving its
 * /dev/log and /etc/localtime there). */
void nsid_log_silence(void);

#define nsid_log_full(prio, err, ...) nsid_log_internal(prio, err, __FILE__, __LINE__, __VA_ARGS__)
#define log_debug(...) nsid_log_full(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) nsid_log_full(LOG_INFO, 0, __VA_ARGS__)
#define log_warning(...) nsid_log_full(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) nsid_log_full(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(err, ...) nsid_log_full(LOG_DEBUG, err, __VA_ARGS__)
#define log_warning_errno(err, ...) nsid_log_full(LOG_WARNING, err, __VA_ARGS__)
#define log_error_errno(err, ...) nsid_log_full(LOG_ERR, err, __VA_ARGS__)

#endif
