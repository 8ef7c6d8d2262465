/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdbool.h>

#ifdef NSID_INIH_DLOPEN
#include <dlfcn.h>
#endif

#include <nsid/conffile.h>

#include "inih-internal.h"
#include "log-internal.h"

#define INIH_SONAME "libinih.so.1"

/* the line, its '\n' or "\r\n", and the NUL */
#define INIH_MAX_LINE ((int) NSID_CONF_LINE_MAX + 3)

typedef int (*parse_stream_fn)(ini_reader reader, void *stream, ini_handler handler, void *user);

static pthread_once_t inih_once = PTHREAD_ONCE_INIT;
static parse_stream_fn inih_parse_stream;

/* Upstream libinih fixes its syntax options at compile time; Debian's build turns them into
 * variables. A libinih without them still works (then its compile-time defaults apply:
 * conffile.c's line reader still bounds every line and removes leading blanks, so no line
 * continues another; only inline comments differ). */
static void inih_set_options(int *max_line, bool *multiline, bool *inline_comments) {
        if (max_line && *max_line < INIH_MAX_LINE)
                *max_line = INIH_MAX_LINE;
        if (multiline)
                *multiline = false;
        if (inline_comments)
                *inline_comments = false;
}

#ifdef NSID_INIH_DLOPEN
static void inih_setup(void) {
        void *h = dlopen(INIH_SONAME, RTLD_LAZY | RTLD_LOCAL);
        void *f = h ? dlsym(h, "ini_parse_stream") : NULL;

        if (!f) {
                log_error("cannot load %s: %s", INIH_SONAME, dlerror());
                return;
        }
        inih_set_options(dlsym(h, "ini_max_line"), dlsym(h, "ini_allow_multiline"),
                         dlsym(h, "ini_allow_inline_comments"));
        inih_parse_stream = (parse_stream_fn) f;
}
#else
/* referenced weakly: a libinih without them still links */
extern int ini_max_line;
extern bool ini_allow_multiline;
extern bool ini_allow_inline_comments;
#pragma weak ini_max_line
#pragma weak ini_allow_multiline
#pragma weak ini_allow_inline_comments

static void inih_setup(void) {
        inih_set_options(&ini_max_line, &ini_allow_multiline, &ini_allow_inline_comments);
        inih_parse_stream = ini_parse_stream;
}
#endif

int conf_ini_parse_stream(ini_reader reader, void *stream, ini_handler handler, void *user) {
        (void) pthread_once(&inih_once, inih_setup);
        if (!inih_parse_stream)
                return -2;
        return inih_parse_stream(reader, stream, handler, user);
}
