/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_INIH_INTERNAL_H
#define NSID_INIH_INTERNAL_H

#include <ini.h>

/* libinih's ini_parse_stream(), with its run-time syntax options set to nsid.conf's rules
 * (lines up to NSID_CONF_LINE_MAX, no multi-line values, no inline comments) once.
 *
 * libnsid.so links libinih. The static build (nsid_internal, compiled with
 * NSID_INIH_DLOPEN) loads it with dlopen() on the first call instead: nsid-idmap, which the
 * kernel starts for every upcall, links that build, and most hosts have no nsid.conf section
 * for it to read, so libinih.so stays out of its start-up (idmap/CMakeLists.txt).
 * Returns libinih's value, or -2 (its "out of memory") when libinih cannot be loaded, which
 * is logged. */
int conf_ini_parse_stream(ini_reader reader, void *stream, ini_handler handler, void *user);

#endif
