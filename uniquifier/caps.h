/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dropping the capabilities nsid-uniquifier does not need (libcap). */
#ifndef NSID_UNIQUIFIER_CAPS_H
#define NSID_UNIQUIFIER_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/capability.h>

/*
 * Keep only keep[0..n) of the capabilities we have, in the effective and permitted sets; empty
 * the inheritable and ambient sets, shrink the bounding set to keep[] (where we hold
 * CAP_SETPCAP to do so; without it there is nothing beyond keep[] to lose), and set
 * PR_SET_NO_NEW_PRIVS (nothing is ever exec()ed). Capabilities in keep[] that we do not have
 * are not gained. Returns 0 or a negative errno; *ret_text (may be NULL) gets the kept set
 * as text ("cap_dac_override,cap_sys_admin=ep"; free() it).
 */
int caps_restrict(const cap_value_t *keep, size_t n, char **ret_text);

#endif
