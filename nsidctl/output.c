/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: terminal colours, messages, JSON printing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <nsid/log.h>

#include "nsidctl.h"

static const char *const escapes[_C_MAX] = {
        [C_RESET] = "\033[0m",   [C_BOLD] = "\033[1m",    [C_DIM] = "\033[2m",
        [C_RED] = "\033[1;31m",  [C_GREEN] = "\033[32m",  [C_YELLOW] = "\033[33m",
        [C_BLUE] = "\033[34m",
};

int out_color_setup(const char *mode) {
        const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

        if (!mode || strcmp(mode, "auto") == 0)
                arg.color = isatty(STDOUT_FILENO) && !(nc && nc[0]) &&
                            !(term && strcmp(term, "dumb") == 0);
        else if (strcmp(mode, "always") == 0)
                arg.color = true;
        else if (strcmp(mode, "never") == 0)
                arg.color = false;
        else
                return -EINVAL;
        return 0;
}

const char *col(color c) {
        if (!arg.color || arg.json || (unsigned) c >= _C_MAX)
                return "";
        return escapes[c];
}

__attribute__((format(printf, 2, 0)))
static void vmsg(const char *prefix, const char *fmt, va_list ap) {
        fprintf(stderr, "%s: %s", program, prefix);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
}

void errorf(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vmsg("", fmt, ap);
        va_end(ap);
}

void warnf(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vmsg("warning: ", fmt, ap);
        va_end(ap);
}

const char *json_command;

/* Every JSON document nsidctl prints carries what produced it, so that a fleet's collected
 * outputs can be told apart and read with the right schema (nsidctl(8), JSON OUTPUT):
 * "nsid": { "schema": 1, "version", "host", "time" (UTC, RFC 3339), "command" }. schema
 * changes only when a member changes meaning or goes away. */
static void add_envelope(json_object *o) {
        char host[256] = "", when[32] = "";
        struct timespec ts;
        struct tm tm;

        if (!json_object_is_type(o, json_type_object) || json_object_object_get_ex(o, "nsid", NULL))
                return;
        if (gethostname(host, sizeof(host) - 1) < 0)
                host[0] = '\0';
        if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && gmtime_r(&ts.tv_sec, &tm))
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "schema", json_object_new_int(NSIDCTL_JSON_SCHEMA));
        json_object_object_add(e, "version", json_object_new_string(NSID_VERSION));
        json_object_object_add(e, "host", json_object_new_string(host));
        json_object_object_add(e, "time", json_object_new_string(when));
        json_object_object_add(e, "command",
                               json_command ? json_object_new_string(json_command) : NULL);
        json_object_object_add(o, "nsid", e);
}

void print_json(json_object *o) {
        add_envelope(o);
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
}

const char *text_safe(const char *s, char *buf, size_t size) {
        size_t o = 0;
        if (size < 5)
                return "";
        if (!s)
                s = "-";
        for (; *s && o + 5 < size; s++) {
                unsigned char c = (unsigned char) *s;
                if (c < 0x20 || c >= 0x7f || c == '\\')
                        o += (size_t) snprintf(buf + o, size - o, "\\x%02x", c);
                else
                        buf[o++] = (char) c;
        }
        buf[o] = '\0';
        return buf;
}

json_object *json_string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

static bool log_quiet;

static void log_handler(int priority, const char *message, void *userdata) {
        (void) userdata;
        if (log_quiet)
                return;
        if (priority <= LOG_WARNING || arg.verbose)
                fprintf(stderr, "%s: %s\n", program, message);
}

void out_log_setup(void) {
        nsid_log_set_handler(log_handler, NULL);
        nsid_log_set_max_priority(arg.verbose ? LOG_DEBUG : LOG_WARNING);
}

void out_log_quiet(bool quiet) {
        log_quiet = quiet;
}
