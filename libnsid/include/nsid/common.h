/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_COMMON_H
#define NSID_COMMON_H

/*
 * Conventions shared by every libnsid module:
 *  - functions return 0 (or a documented positive value) on success and a negative errno
 *    value on failure; output parameters are named ret_*, come last and are left untouched
 *    on failure;
 *  - objects are opaque and reference counted: nsid_foo_ref() / nsid_foo_unref(), where
 *    unref accepts NULL and returns NULL;
 *  - the library never prints, never exits and never changes signal dispositions; it reports
 *    details through the log handler (nsid/log.h).
 */

#define NSID_API_WARN_UNUSED __attribute__((warn_unused_result))
#define NSID_API_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))

#endif
