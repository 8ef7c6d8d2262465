/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: terminal colours, messages, JSON printing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <nsid/log.h>

#include "json-envelope.h"
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

/* Every JSON document carries what produced it (shared/json-envelope.h; nsidctl(8), JSON
 * OUTPUT). */
void print_json(json_object *o) {
        json_envelope_add(o, "nsidctl", json_command);
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
