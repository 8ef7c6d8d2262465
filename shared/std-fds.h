/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The three standard descriptors, open before anything else is: a program started with one
 * of them closed (by a careless parent, or request-key) would otherwise hand that number to
 * the first file or socket it opens, and a later message to stderr would land in it.
 */
#ifndef NSID_SHARED_STD_FDS_H
#define NSID_SHARED_STD_FDS_H

/* Point each closed one of 0, 1 and 2 at /dev/null (one poll() tells which are closed).
 * 0, or -errno when /dev/null cannot be opened (the caller decides whether to go on). */
int std_fds_ensure(void);

#endif
