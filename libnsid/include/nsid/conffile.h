/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_CONFFILE_H
#define NSID_CONFFILE_H

#include <stddef.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * INI-style configuration text, as /etc/nsid.conf and idmapd.conf(5) use it:
 * "[Section]" headers, "key = value" lines, '#' and ';' comment lines. Section and key names
 * compare case-insensitively (like libnfsidmap's conffile); blanks around names and values
 * are removed. Lines over NSID_CONF_LINE_MAX bytes or containing a NUL byte are ignored, as
 * are lines that are neither a header nor "key = value". The LAST assignment of a key in a
 * section wins. The text may be hostile (a container's idmapd.conf).
 */
#define NSID_CONF_LINE_MAX 4096u

/* Look up section/key in size bytes of text. On success *ret_value is a malloc'ed copy.
 * -ENOENT when absent, -EINVAL for bad arguments, -ENOMEM. */
NSID_API_WARN_UNUSED int nsid_conf_get(const char *text, size_t size, const char *section,
                                       const char *key, char **ret_value);

/* "1", "yes", "true", "on" -> 1; "0", "no", "false", "off" -> 0 (case-insensitive);
 * -EINVAL otherwise. */
int nsid_conf_parse_bool(const char *value);

#ifdef __cplusplus
}
#endif
#endif
