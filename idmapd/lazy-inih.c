/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libinih, loaded on first use. nsid-idmap reads /etc/nsid.conf through libnsid's
 * nsid_conf_get() (linked statically), which parses with libinih's ini_parse_stream(). The
 * kernel starts this program for every upcall and most hosts have no [idmap] section to
 * read, so the definition below stands in for libinih's at link time (--as-needed then
 * leaves libinih.so out of the program's DT_NEEDED) and loads the real one on its first call.
 *
 * libnsid sets libinih's run-time syntax options through weak references that name nothing
 * here (the library is not linked), so they are set on the loaded library instead, to the
 * same values as libnsid/src/conffile.c: lines up to NSID_CONF_LINE_MAX, no multi-line
 * values, no inline comments. A libinih without these variables keeps its built-in ones.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <syslog.h>

#include <ini.h>
#include <nsid/conffile.h>

#include "nsid-idmap.h"

#define LAZY_INIH_SONAME "libinih.so.1"

typedef int (*parse_stream_fn)(ini_reader reader, void *stream, ini_handler handler, void *user);

int ini_parse_stream(ini_reader reader, void *stream, ini_handler handler, void *user) {
        static parse_stream_fn real;
        static bool failed;

        if (!real && !failed) {
                void *h = dlopen(LAZY_INIH_SONAME, RTLD_LAZY | RTLD_LOCAL);
                void *f = h ? dlsym(h, "ini_parse_stream") : NULL;
                if (!f) {
                        logmsg(LOG_ERR, "cannot load %s: %s", LAZY_INIH_SONAME, dlerror());
                        failed = true;
                } else {
                        int *max_line = dlsym(h, "ini_max_line");
                        bool *multiline = dlsym(h, "ini_allow_multiline");
                        bool *inline_comments = dlsym(h, "ini_allow_inline_comments");
                        if (max_line && *max_line < (int) NSID_CONF_LINE_MAX + 3)
                                *max_line = (int) NSID_CONF_LINE_MAX + 3;
                        if (multiline)
                                *multiline = false;
                        if (inline_comments)
                                *inline_comments = false;
                        real = (parse_stream_fn) f;
                }
        }
        if (!real)
                return -2; /* libinih's "out of memory": nsid_conf_get() fails, logged above */
        return real(reader, stream, handler, user);
}
