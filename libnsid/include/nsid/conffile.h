/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_CONFFILE_H
#define NSID_CONFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * INI-style configuration text, as /etc/nsid.conf (nsid.conf(5)) uses it, parsed with
 * libinih, with line-numbered diagnostics. (idmapd.conf is read by nsid/nfsconf.h instead,
 * rule for rule as libnfsidmap reads it.) The syntax: "[Section]" headers, "key = value" lines ("key: value" is accepted
 * too), comment lines starting with '#' or ';'. Section and key names compare
 * case-insensitively (like libnfsidmap's conffile); blanks around names and values are
 * removed, and leading blanks never continue the previous line. Values are taken as
 * nfs-utils takes them (libnfsidmap, nfsconf): a value that starts with a quote (" or ')
 * ends at the same quote, what follows ignored, and one without its closing quote is an
 * error (the line is ignored); any other value ends at the first '#' or ';' (a comment),
 * trailing blanks trimmed: "Domain = example.org  # ours" is example.org. Lines over
 * NSID_CONF_LINE_MAX bytes or containing a NUL byte are ignored (and reported by
 * nsid_conf_parse()); a "[" line without "]" ends the current section (what follows, up to
 * the next header, is in no section). The LAST assignment of a key in a section wins. The text may be hostile
 * (a container's idmapd.conf): every input is bounded and fuzzed (tests/fuzz/fuzz-conf.c).
 *
 * libinih is configured once per process (line length NSID_CONF_LINE_MAX, no multi-line
 * values, no inline comments) where the library allows it at run time (Debian's libinih); a
 * program that uses libinih itself sees those settings.
 */
#define NSID_CONF_LINE_MAX 4096u
/* Largest configuration file nsid_conf_load() reads. */
#define NSID_CONF_FILE_MAX (1024u * 1024u)

/* Look up section/key in size bytes of text. On success *ret_value is a malloc'ed copy.
 * -ENOENT when absent, -EINVAL for bad arguments, -ENOMEM. */
NSID_API_WARN_UNUSED int nsid_conf_get(const char *text, size_t size, const char *section,
                                       const char *key, char **ret_value);

/* "1", "yes", "true", "on" -> 1; "0", "no", "false", "off" -> 0 (case-insensitive);
 * -EINVAL otherwise. */
int nsid_conf_parse_bool(const char *value);

/*
 * nsid.conf: the table of every key nsid's programs read, with its type, default and a one
 * line description (what `nsidctl config` prints and nsid.conf(5) documents).
 */
typedef enum nsid_conf_type {
        NSID_CONF_TYPE_STRING, /* any non-empty text */
        NSID_CONF_TYPE_BOOL,   /* nsid_conf_parse_bool() */
        NSID_CONF_TYPE_UINT,   /* decimal digits, min..max */
        NSID_CONF_TYPE_PATH,   /* an absolute path */
        _NSID_CONF_TYPE_MAX,
} nsid_conf_type;

typedef struct nsid_conf_key {
        const char *section;       /* as written in nsid.conf(5): "idmapd", "idmap" */
        const char *name;          /* "cache-ttl" */
        nsid_conf_type type;
        const char *default_value; /* as text, never NULL */
        uint32_t min, max;         /* NSID_CONF_TYPE_UINT */
        const char *unit;          /* "s", "ms" or NULL */
        const char *used_by;       /* "nsid-idmapd", "nsid-idmap" */
        const char *description;   /* one line */
} nsid_conf_key;

/* "string", "boolean", "integer", "path"; NULL for an invalid type. */
const char *nsid_conf_type_to_string(nsid_conf_type type);
/* The table (static, in nsid.conf(5) order) and its length. */
const nsid_conf_key *nsid_conf_keys(size_t *ret_n);
/* One key of the table, names compared case-insensitively; NULL if unknown. */
const nsid_conf_key *nsid_conf_key_lookup(const char *section, const char *name);
/* Check value against key's type: 0, or -EINVAL (wrong form) / -ERANGE (number out of
 * min..max). */
int nsid_conf_key_validate(const nsid_conf_key *key, const char *value);

/*
 * A parsed nsid.conf. Opaque and reference counted. Parsing is strict but never fatal:
 * unknown sections and keys, keys given twice, ignored lines are warnings; malformed lines
 * and values that do not fit their key's type are errors, and such a value is not used (the
 * default is). Every diagnostic carries the line number and is kept in the object; the
 * library only logs them at debug level, the program decides what to print and whether
 * errors are fatal.
 */
typedef struct nsid_conf nsid_conf;

typedef struct nsid_conf_diagnostic {
        int priority;        /* LOG_WARNING or LOG_ERR */
        unsigned line;       /* 1-based; 0 for the file as a whole */
        const char *message; /* "PATH:LINE: ...", valid while the object lives */
} nsid_conf_diagnostic;

typedef struct nsid_conf_entry {
        const char *section;       /* as written, blanks removed */
        const char *name;
        const char *value;
        unsigned line;
        const nsid_conf_key *key;  /* NULL when unknown */
        bool used;                 /* the value in effect for its key (valid, last one) */
} nsid_conf_entry;

/*
 * Read and parse a configuration file (NULL: NSID_SYSCONF_FILE, /etc/nsid.conf). Symlinks
 * are followed; the file must be a regular file of at most NSID_CONF_FILE_MAX bytes, owned
 * by root (or by the caller's effective uid) and not writable by others, nor by its group
 * unless that is root's group: -EPERM otherwise (logged at LOG_ERR with the reason), since
 * the settings steer root daemons. A missing file is not an error: every key has its
 * default (nsid_conf_file_found() says 0). -ENXIO for a file that is not regular, -EFBIG.
 */
NSID_API_WARN_UNUSED int nsid_conf_load(const char *path, nsid_conf **ret);
/* Parse text (size bytes, not necessarily NUL-terminated). origin names it in messages
 * (NULL: "<text>"). */
NSID_API_WARN_UNUSED int nsid_conf_parse(const char *text, size_t size, const char *origin,
                                         nsid_conf **ret);
nsid_conf *nsid_conf_ref(nsid_conf *c);
nsid_conf *nsid_conf_unref(nsid_conf *c);

/* The path given to nsid_conf_load() (or the origin of nsid_conf_parse()). */
const char *nsid_conf_get_path(const nsid_conf *c);
/* 1 if the file existed and was read, 0 if it was missing. */
int nsid_conf_file_found(const nsid_conf *c);

/* The value in effect for a known key: the file's if valid, its default otherwise. NULL for
 * a key that is not in the table. Valid while the object lives. */
const char *nsid_conf_get_value(const nsid_conf *c, const char *section, const char *name);
/* The same, converted: 0, -ENOENT for an unknown key, -EINVAL when the key has another type. */
NSID_API_WARN_UNUSED int nsid_conf_get_bool(const nsid_conf *c, const char *section,
                                            const char *name, bool *ret);
NSID_API_WARN_UNUSED int nsid_conf_get_uint(const nsid_conf *c, const char *section,
                                            const char *name, uint32_t *ret);
/* Where the value in effect comes from: 1 and *ret_line (may be NULL) when set in the file,
 * 0 for the default, -ENOENT for an unknown key. */
int nsid_conf_get_origin(const nsid_conf *c, const char *section, const char *name,
                         unsigned *ret_line);

/* Diagnostics in line order; -ERANGE past the end. */
size_t nsid_conf_get_n_diagnostics(const nsid_conf *c);
unsigned nsid_conf_get_n_errors(const nsid_conf *c);
int nsid_conf_get_diagnostic(const nsid_conf *c, size_t i, nsid_conf_diagnostic *ret);

/* Every assignment of the file in order, known or not; -ERANGE past the end. */
size_t nsid_conf_get_n_entries(const nsid_conf *c);
int nsid_conf_get_entry(const nsid_conf *c, size_t i, nsid_conf_entry *ret);

#ifdef __cplusplus
}
#endif
#endif
