/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "log-internal.h"
#include "nsid/log.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static nsid_log_fn log_handler;
static void *log_userdata;
static int log_max_priority = LOG_INFO;

/* A worker (nsid/worker.h) is a fork()ed copy of a possibly multithreaded program and may log
 * (a refusal's reason, at debug level). worker.c holds this lock across its fork(), so the
 * child never starts with it taken by a thread that does not exist there. (Not a
 * pthread_atfork() handler: that would cost every program linking the library, the
 * one-shot request-key helpers included, for the forks of the few that run workers.) */
void nsid_log_fork_prepare(void) {
        pthread_mutex_lock(&log_lock);
}

/* In a worker child: drop every message from now on. */
static bool log_silenced;

void nsid_log_silence(void) {
        log_silenced = true;
}

void nsid_log_fork_done(void) {
        pthread_mutex_unlock(&log_lock);
}

_public_ void nsid_log_set_handler(nsid_log_fn fn, void *userdata) {
        pthread_mutex_lock(&log_lock);
        log_handler = fn;
        log_userdata = userdata;
        pthread_mutex_unlock(&log_lock);
}

_public_ void nsid_log_set_max_priority(int priority) {
        if (priority < LOG_EMERG)
                priority = LOG_EMERG;
        if (priority > LOG_DEBUG)
                priority = LOG_DEBUG;
        __atomic_store_n(&log_max_priority, priority, __ATOMIC_RELAXED);
}

_public_ int nsid_log_get_max_priority(void) {
        return __atomic_load_n(&log_max_priority, __ATOMIC_RELAXED);
}

int nsid_log_internal(int priority, int error, const char *file, int line, const char *format,
                      ...) {
        int r = error > 0 ? -error : error;
        char buf[2048];
        va_list ap;

        (void) file;
        (void) line;
        if (priority > nsid_log_get_max_priority() || log_silenced)
                return r;

        pthread_mutex_lock(&log_lock);
        if (log_handler) {
                va_start(ap, format);
                (void) vsnprintf(buf, sizeof(buf), format, ap);
                va_end(ap);
                log_handler(priority, buf, log_userdata);
        }
        pthread_mutex_unlock(&log_lock);
        return r;
}
