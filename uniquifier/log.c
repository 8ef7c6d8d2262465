/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-uniquifier: where its messages go: stderr and, in hook mode, syslog. */
#include "uniquifier.h"

/* A hook's stderr is the engine's to show or drop (Podman 4.3 reports only the hook's exit
 * status; udev keeps it at debug level), so in hook mode every line also goes to syslog
 * (facility daemon, tag nsid-uniquifier). Its text holds names the container's creator chose:
 * control bytes and backslashes are sent as \xHH, so one message stays one line. */
void to_syslog(int priority, const char *message) {
        static bool opened;
        char esc[4 * 1024 + 1];
        size_t o = 0;

        if (!arg.syslog)
                return;
        if (!opened) {
                openlog("nsid-uniquifier", LOG_PID, LOG_DAEMON);
                opened = true;
        }
        for (const unsigned char *c = (const unsigned char *) message;
             *c && o + 5 < sizeof(esc); c++) {
                if (*c < 0x20 || *c == 0x7f || *c == '\\')
                        o += (size_t) snprintf(esc + o, sizeof(esc) - o, "\\x%02x", *c);
                else
                        esc[o++] = (char) *c;
        }
        esc[o] = '\0';
        syslog(priority, "%s", esc);
}

void log_handler(int priority, const char *message, void *userdata) {
        (void) userdata;
        if (priority <= LOG_WARNING || arg.verbose)
                fprintf(stderr, "%s: %s\n", program, message);
        if (priority <= LOG_WARNING)
                to_syslog(priority, message);
}

__attribute__((format(printf, 2, 0)))
static void vreport(int priority, const char *fmt, va_list ap) {
        char buf[1024];
        vsnprintf(buf, sizeof(buf), fmt, ap);
        fprintf(stderr, "%s: %s\n", program, buf);
        to_syslog(priority, buf);
}

void errorf(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vreport(LOG_ERR, fmt, ap);
        va_end(ap);
}

void notef(int priority, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vreport(priority, fmt, ap);
        va_end(ap);
}
