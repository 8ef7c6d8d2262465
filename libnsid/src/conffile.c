/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* INI-style configuration (nsid/conffile.h), parsed with libinih. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nsid/conffile.h>

#include "inih-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "parse-util.h"
#include "proc-util.h"

#ifndef NSID_SYSCONF_FILE
#define NSID_SYSCONF_FILE "/etc/nsid.conf"
#endif
#ifndef NSID_STATE_DIR
#define NSID_STATE_DIR "/var/lib/nsid"
#endif

#define BLANKS " \t\r\v\f"

/* ---- feeding inih one line at a time ----
 *
 * inih calls the reader once per line and numbers lines by those calls, so the reader's count
 * is the line number of the assignment being handled. The reader removes leading blanks
 * (libnfsidmap allows indented keys; in inih a leading blank would continue the previous
 * value) and replaces lines that are too long or contain a NUL byte by an empty line. */
typedef struct feed {
        const char *p, *end;
        unsigned line;
        /* why NULL: a section header without ']' */
        void (*skipped)(void *userdata, unsigned line, const char *why);
        void *userdata;
} feed;

static char *feed_line(char *buf, int num, void *userdata) {
        feed *f = userdata;
        const char *l = f->p, *nl;
        size_t len;

        if (f->p >= f->end || num < 2)
                return NULL;
        nl = memchr(l, '\n', (size_t) (f->end - l));
        len = nl ? (size_t) (nl - l) : (size_t) (f->end - l);
        f->p = l + len + (nl ? 1 : 0);
        f->line++;

        if (len > NSID_CONF_LINE_MAX || len + 2 > (size_t) num || memchr(l, '\0', len)) {
                if (f->skipped)
                        f->skipped(f->userdata, f->line,
                                   memchr(l, '\0', len) ? "contains a NUL byte"
                                                        : "is too long");
                len = 0;
        }
        while (len > 0 && strchr(BLANKS, l[0]))
                l++, len--;
        if (len > 0 && l[0] == '[' && !memchr(l, ']', len)) {
                /* inih would report it and stay in the previous section; what follows
                 * belongs to no section instead, as in libnfsidmap */
                if (f->skipped)
                        f->skipped(f->userdata, f->line, NULL);
                l = "[]";
                len = 2;
        }
        memcpy(buf, l, len);
        buf[len] = '\n';
        buf[len + 1] = '\0';
        return buf;
}

static int parse_text(const char *text, size_t size, ini_handler handler, feed *f) {
        f->p = text;
        f->end = text + size;
        f->line = 0;
        return conf_ini_parse_stream(feed_line, f, handler, f->userdata);
}

/* Section names keep inner blanks in inih; compare them trimmed. */
static bool section_eq(const char *s, const char *want) {
        size_t len = strlen(s);

        while (len > 0 && strchr(BLANKS, s[0]))
                s++, len--;
        while (len > 0 && strchr(BLANKS, s[len - 1]))
                len--;
        return strlen(want) == len && strncasecmp(s, want, len) == 0;
}

static char *section_dup(const char *s) {
        size_t len = strlen(s);

        while (len > 0 && strchr(BLANKS, s[0]))
                s++, len--;
        while (len > 0 && strchr(BLANKS, s[len - 1]))
                len--;
        return strndup(s, len);
}

/* ---- nsid_conf_get(): one lookup in any INI text ---- */

/* A value as nfs-utils' configuration reader takes it (libnfsidmap, nfsconf; checked with
 * `nfsidmap -d`): one that starts with a quote (" or ') ends at the same quote, and what
 * follows is ignored ("a#b" # c -> a#b); no closing quote is an error (-EINVAL: the line is
 * ignored). Any other value ends at the first '#' or ';', trailing blanks trimmed
 * (example.org  # our domain -> example.org). inih has trimmed the blanks around it. */
static int value_nfs(const char *raw, char **ret) {
        size_t len;

        while (*raw && strchr(BLANKS, *raw))
                raw++;
        if (raw[0] == '"' || raw[0] == '\'') {
                const char *close = strchr(raw + 1, raw[0]);
                if (!close)
                        return -EINVAL;
                raw++;
                len = (size_t) (close - raw);
        } else {
                len = strcspn(raw, "#;");
                while (len > 0 && strchr(BLANKS, raw[len - 1]))
                        len--;
        }
        *ret = strndup(raw, len);
        return *ret ? 0 : -ENOMEM;
}

typedef struct lookup {
        feed f;
        const char *section, *key;
        char *found;
        int error;
} lookup;

static int lookup_handler(void *userdata, const char *section, const char *name,
                          const char *value) {
        lookup *k = userdata;

        if (!section_eq(section, k->section) || strcasecmp(name, k->key) != 0)
                return 1;
        char *v = NULL;
        int r = value_nfs(value, &v);
        if (r == -EINVAL)
                return 1; /* unmatched quote: the line is ignored, as nfs-utils does */
        if (r < 0) {
                k->error = r;
                return 1;
        }
        free(k->found);
        k->found = v;
        return 1;
}

_public_ int nsid_conf_get(const char *text, size_t size, const char *section, const char *key,
                           char **ret_value) {
        lookup k = { .section = section, .key = key };
        int r;

        assert_return(text || size == 0, -EINVAL);
        assert_return(section && key && ret_value, -EINVAL);

        k.f.userdata = &k;
        r = parse_text(text ? text : "", size, lookup_handler, &k.f);
        if (r == -2)
                k.error = -ENOMEM;
        if (k.error < 0) {
                free(k.found);
                return k.error;
        }
        if (!k.found)
                return -ENOENT;
        *ret_value = k.found;
        return 0;
}

_public_ int nsid_conf_parse_bool(const char *v) {
        static const char *const yes[] = { "1", "yes", "true", "on" };
        static const char *const no[] = { "0", "no", "false", "off" };

        assert_return(v, -EINVAL);
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(v, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(v, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

/* ---- the keys of nsid.conf ---- */

static const nsid_conf_key keys[] = {
        { "idmapd", "cache-ttl", NSID_CONF_TYPE_UINT, "600", 1, 86400, "s", "nsid-idmapd",
          "how long a resolved name or id stays in the daemon's per-namespace cache" },
        { "idmapd", "negative-ttl", NSID_CONF_TYPE_UINT, "60", 1, 86400, "s", "nsid-idmapd",
          "how long a failed lookup (no such name or id) is cached" },
        { "idmapd", "request-timeout-ms", NSID_CONF_TYPE_UINT, "2000", 10, 60000, "ms",
          "nsid-idmapd", "bound of one resolution; past it the kernel gets a negative answer" },
        { "idmapd", "rescan-interval", NSID_CONF_TYPE_UINT, "10", 1, 3600, "s", "nsid-idmapd",
          "how often every network namespace is looked for (besides inotify and hooks)" },
        { "idmapd", "refresh-interval", NSID_CONF_TYPE_UINT, "2", 1, 3600, "s", "nsid-idmapd",
          "how often a namespace's passwd, group and idmapd.conf are checked for changes" },
        { "idmapd", "isolate-keys", NSID_CONF_TYPE_BOOL, "yes", 0, 0, NULL, "nsid-idmapd",
          "invalidate namespace-specific answers in the kernel's global .id_resolver cache" },
        { "idmapd", "set-identifier", NSID_CONF_TYPE_BOOL, "yes", 0, 0, NULL, "nsid-idmapd",
          "give newly found network namespaces an NFS client identifier" },
        { "idmapd", "host-pipes", NSID_CONF_TYPE_BOOL, "yes", 0, 0, NULL, "nsid-idmapd",
          "also serve the initial namespace's idmap pipes and knfsd channels" },
        { "idmapd", "max-netns-per-owner", NSID_CONF_TYPE_UINT, "64", 0, 1000000, NULL,
          "nsid-idmapd", "network namespaces owned by user namespaces of one host user that are "
          "served at once" },
        { "idmapd", "max-netns-unprivileged", NSID_CONF_TYPE_UINT, "1024", 0, 1000000, NULL,
          "nsid-idmapd", "network namespaces owned by user namespaces (any owner) that are "
          "served at once" },
        { "idmapd", "idle-thread-timeout", NSID_CONF_TYPE_UINT, "60", 1, 86400, "s",
          "nsid-idmapd", "how long an idle namespace's resolver thread is kept" },
        { "idmapd", "idmapd-conf", NSID_CONF_TYPE_PATH, "/etc/idmapd.conf", 0, 0, NULL,
          "nsid-idmapd", "the host's libnfsidmap configuration" },
        { "idmapd", "state-dir", NSID_CONF_TYPE_PATH, NSID_STATE_DIR, 0, 0, NULL, "nsid-idmapd",
          "where the host secret and the identity registry live" },
        { "idmap", "requester-context", NSID_CONF_TYPE_BOOL, "no", 0, 0, NULL, "nsid-idmap",
          "answer request-key upcalls from the requesting process's own passwd and group" },
        { "idmap", "requester-context-timeout", NSID_CONF_TYPE_UINT, "5", 2, 600, "s",
          "nsid-idmap", "key timeout of answers that differ from the host's" },
};

#define N_KEYS ELEMENTSOF(keys)

_public_ const char *nsid_conf_type_to_string(nsid_conf_type type) {
        static const char *const names[_NSID_CONF_TYPE_MAX] = {
                [NSID_CONF_TYPE_STRING] = "string",
                [NSID_CONF_TYPE_BOOL] = "boolean",
                [NSID_CONF_TYPE_UINT] = "integer",
                [NSID_CONF_TYPE_PATH] = "path",
        };
        if ((unsigned) type >= _NSID_CONF_TYPE_MAX)
                return NULL;
        return names[type];
}

_public_ const nsid_conf_key *nsid_conf_keys(size_t *ret_n) {
        if (ret_n)
                *ret_n = N_KEYS;
        return keys;
}

static int key_index(const char *section, const char *name) {
        for (size_t i = 0; i < N_KEYS; i++)
                if (section_eq(section, keys[i].section) && strcasecmp(name, keys[i].name) == 0)
                        return (int) i;
        return -ENOENT;
}

_public_ const nsid_conf_key *nsid_conf_key_lookup(const char *section, const char *name) {
        int i;

        if (!section || !name)
                return NULL;
        i = key_index(section, name);
        return i < 0 ? NULL : &keys[i];
}

_public_ int nsid_conf_key_validate(const nsid_conf_key *key, const char *value) {
        uint64_t v;
        int r;

        assert_return(key, -EINVAL);
        assert_return(value, -EINVAL);
        switch (key->type) {
        case NSID_CONF_TYPE_STRING:
                return value[0] ? 0 : -EINVAL;
        case NSID_CONF_TYPE_BOOL:
                return nsid_conf_parse_bool(value) < 0 ? -EINVAL : 0;
        case NSID_CONF_TYPE_UINT:
                r = parse_u64_max(value, UINT32_MAX, &v);
                if (r < 0)
                        return r;
                return v < key->min || v > key->max ? -ERANGE : 0;
        case NSID_CONF_TYPE_PATH:
                return value[0] == '/' && strlen(value) < 4096 ? 0 : -EINVAL;
        default:
                return -EINVAL;
        }
}

/* ---- nsid_conf objects ---- */

typedef struct entry {
        char *section, *name, *value;
        unsigned line;
        int key; /* index in keys[], or -1 */
} entry;

typedef struct diag {
        int priority;
        unsigned line;
        char *message;
} diag;

struct nsid_conf {
        unsigned n_ref;
        char *path;
        bool found;
        /* per key of the table: the entry in effect, or -1 for the default */
        ssize_t effective[N_KEYS];
        entry *entries;
        size_t n_entries, cap_entries;
        diag *diags;
        size_t n_diags, cap_diags;
        unsigned n_errors;
        bool oom;
        feed f;
};

static void grow(void **array, size_t *cap, size_t n, size_t size, bool *oom) {
        if (n < *cap)
                return;
        size_t c = *cap ? *cap * 2 : 16;
        void *p = reallocarray(*array, c, size);
        if (!p) {
                *oom = true;
                return;
        }
        *array = p;
        *cap = c;
}

static void add_diag(nsid_conf *c, int priority, unsigned line, const char *fmt, ...)
        _printf_(4, 5);
static void add_diag(nsid_conf *c, int priority, unsigned line, const char *fmt, ...) {
        char msg[512], *full = NULL;
        va_list ap;

        grow((void **) &c->diags, &c->cap_diags, c->n_diags, sizeof(diag), &c->oom);
        if (c->n_diags >= c->cap_diags)
                return;
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if ((line ? asprintf(&full, "%s:%u: %s", c->path, line, msg)
                  : asprintf(&full, "%s: %s", c->path, msg)) < 0) {
                c->oom = true;
                return;
        }
        log_debug("%s", full);
        c->diags[c->n_diags++] = (diag) { .priority = priority, .line = line, .message = full };
        if (priority <= LOG_ERR)
                c->n_errors++;
}

static void line_skipped(void *userdata, unsigned line, const char *why) {
        nsid_conf *c = userdata;
        if (!why)
                add_diag(c, LOG_ERR, line,
                         "section header without \"]\"; the keys up to the next section "
                         "are ignored");
        else
                add_diag(c, LOG_WARNING, line, "line %s (limit %u bytes, no NUL); ignored",
                         why, NSID_CONF_LINE_MAX);
}

/* Levenshtein distance, capped: for "did you mean" hints on short key names. */
static unsigned distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned row[64];

        if (la >= ELEMENTSOF(row) || lb >= ELEMENTSOF(row))
                return 99;
        for (size_t j = 0; j <= lb; j++)
                row[j] = (unsigned) j;
        for (size_t i = 1; i <= la; i++) {
                unsigned diagv = row[0];
                row[0] = (unsigned) i;
                for (size_t j = 1; j <= lb; j++) {
                        unsigned up = row[j];
                        unsigned cost = (a[i - 1] | 0x20) == (b[j - 1] | 0x20) ? 0 : 1;
                        unsigned best = diagv + cost;
                        if (up + 1 < best)
                                best = up + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        diagv = up;
                }
        }
        return row[lb];
}

static const char *closest_key(const char *section, const char *name) {
        const char *best = NULL;
        unsigned bestd = 3;

        for (size_t i = 0; i < N_KEYS; i++) {
                if (!section_eq(section, keys[i].section))
                        continue;
                unsigned d = distance(name, keys[i].name);
                if (d < bestd) {
                        bestd = d;
                        best = keys[i].name;
                }
        }
        return best;
}

static const char *closest_section(const char *section) {
        const char *best = NULL;
        unsigned bestd = 3;

        for (size_t i = 0; i < N_KEYS; i++) {
                unsigned d = distance(section, keys[i].section);
                if (d < bestd) {
                        bestd = d;
                        best = keys[i].section;
                }
        }
        return best;
}

static bool known_section(const char *section) {
        for (size_t i = 0; i < N_KEYS; i++)
                if (section_eq(section, keys[i].section))
                        return true;
        return false;
}

static void describe_invalid(nsid_conf *c, unsigned line, const char *section,
                             const nsid_conf_key *k, const char *value, int r) {
        switch (k->type) {
        case NSID_CONF_TYPE_BOOL:
                add_diag(c, LOG_ERR, line,
                         "[%s] %s = \"%s\" is not a boolean (yes/no, true/false, on/off, 1/0); "
                         "the default %s is used",
                         section, k->name, value, k->default_value);
                break;
        case NSID_CONF_TYPE_UINT:
                add_diag(c, LOG_ERR, line,
                         "[%s] %s = \"%s\" %s %" PRIu32 "..%" PRIu32 "%s%s; the default %s is "
                         "used",
                         section, k->name, value,
                         r == -ERANGE ? "is out of range" : "is not a whole number in",
                         k->min, k->max, k->unit ? " " : "", k->unit ? k->unit : "",
                         k->default_value);
                break;
        case NSID_CONF_TYPE_PATH:
                add_diag(c, LOG_ERR, line,
                         "[%s] %s = \"%s\" is not an absolute path; the default %s is used",
                         section, k->name, value, k->default_value);
                break;
        default:
                add_diag(c, LOG_ERR, line, "[%s] %s is empty; the default %s is used", section,
                         k->name, k->default_value);
        }
}

static int conf_handler(void *userdata, const char *section, const char *name,
                        const char *value) {
        nsid_conf *c = userdata;
        unsigned line = c->f.line;
        int ki = key_index(section, name), r;
        entry *e;

        grow((void **) &c->entries, &c->cap_entries, c->n_entries, sizeof(entry), &c->oom);
        if (c->n_entries >= c->cap_entries)
                return 1;
        e = &c->entries[c->n_entries];
        *e = (entry) { .line = line, .key = ki };
        if (value_nfs(value, &e->value) == -EINVAL) {
                add_diag(c, LOG_WARNING, line, "\"%s\": unmatched quote; ignored", name);
                return 1;
        }
        e->section = section_dup(section);
        e->name = strdup(name);
        value = e->value;
        if (!e->section || !e->name || !e->value) {
                free(e->section);
                free(e->name);
                free(e->value);
                c->oom = true;
                return 1;
        }
        c->n_entries++;

        if (ki < 0) {
                const char *hint;
                if (!e->section[0])
                        add_diag(c, LOG_WARNING, line,
                                 "\"%s\" is not in any valid [section]; ignored", name);
                else if (!known_section(section)) {
                        hint = closest_section(e->section);
                        add_diag(c, LOG_WARNING, line,
                                 "unknown section [%s]; \"%s\" ignored%s%s%s", e->section,
                                 name, hint ? " (did you mean [" : "", hint ? hint : "",
                                 hint ? "]?)" : "");
                } else {
                        hint = closest_key(section, name);
                        add_diag(c, LOG_WARNING, line, "unknown key \"%s\" in [%s]; ignored%s%s%s",
                                 name, e->section, hint ? " (did you mean \"" : "",
                                 hint ? hint : "", hint ? "\"?)" : "");
                }
                return 1;
        }

        r = nsid_conf_key_validate(&keys[ki], value);
        if (r < 0) {
                describe_invalid(c, line, keys[ki].section, &keys[ki], value, r);
                return 1;
        }
        if (c->effective[ki] >= 0)
                add_diag(c, LOG_WARNING, line,
                         "[%s] %s was already set on line %u; this later value wins",
                         keys[ki].section, keys[ki].name,
                         c->entries[c->effective[ki]].line);
        c->effective[ki] = (ssize_t) c->n_entries - 1;
        return 1;
}

static nsid_conf *conf_new(const char *origin) {
        nsid_conf *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->n_ref = 1;
        c->path = strdup(origin);
        if (!c->path) {
                free(c);
                return NULL;
        }
        for (size_t i = 0; i < N_KEYS; i++)
                c->effective[i] = -1;
        c->f.skipped = line_skipped;
        c->f.userdata = c;
        return c;
}

static void conf_free(nsid_conf *c) {
        for (size_t i = 0; i < c->n_entries; i++) {
                free(c->entries[i].section);
                free(c->entries[i].name);
                free(c->entries[i].value);
        }
        for (size_t i = 0; i < c->n_diags; i++)
                free(c->diags[i].message);
        free(c->entries);
        free(c->diags);
        free(c->path);
        free(c);
}

_public_ nsid_conf *nsid_conf_ref(nsid_conf *c) {
        if (c)
                c->n_ref++;
        return c;
}

_public_ nsid_conf *nsid_conf_unref(nsid_conf *c) {
        if (!c)
                return NULL;
        if (--c->n_ref > 0)
                return NULL;
        conf_free(c);
        return NULL;
}

DEFINE_UNREF_CLEANUP(nsid_conf, nsid_conf_unref)

static int diag_cmp(const void *a, const void *b) {
        const diag *x = a, *y = b;
        return x->line < y->line ? -1 : x->line > y->line;
}

static int conf_parse_into(nsid_conf *c, const char *text, size_t size) {
        int r = parse_text(text, size, conf_handler, &c->f);

        if (r == -2 || c->oom)
                return -ENOMEM;
        if (r > 0)
                add_diag(c, LOG_ERR, (unsigned) r,
                         "syntax error: neither \"[section]\" nor \"key = value\"; ignored");
        /* inih reports only the first malformed line; keep diagnostics in line order (a
         * stable sort: messages of one line keep their order) */
        for (size_t i = 1; i < c->n_diags; i++)
                for (size_t j = i; j > 0 && diag_cmp(&c->diags[j - 1], &c->diags[j]) > 0; j--) {
                        diag t = c->diags[j];
                        c->diags[j] = c->diags[j - 1];
                        c->diags[j - 1] = t;
                }
        return c->oom ? -ENOMEM : 0;
}

_public_ int nsid_conf_parse(const char *text, size_t size, const char *origin,
                             nsid_conf **ret) {
        _cleanup_(nsid_conf_unrefp) nsid_conf *c = NULL;
        int r;

        assert_return(text || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        c = conf_new(origin ? origin : "<text>");
        if (!c)
                return -ENOMEM;
        c->found = true;
        r = conf_parse_into(c, text ? text : "", size);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

/* The file steers root daemons: only root (or the caller itself) may be able to change it. */
static int check_trusted(const char *path, const struct stat *st) {
        if (st->st_uid != 0 && st->st_uid != geteuid()) {
                log_error("%s: owned by uid %u; it must be owned by root (chown root:root %s)",
                          path, (unsigned) st->st_uid, path);
                return -EPERM;
        }
        if (st->st_mode & S_IWOTH) {
                log_error("%s: writable by everyone (mode %04o); chmod 644 %s", path,
                          (unsigned) (st->st_mode & 07777), path);
                return -EPERM;
        }
        if ((st->st_mode & S_IWGRP) && st->st_gid != 0) {
                log_error("%s: writable by group %u (mode %04o); chmod 644 %s", path,
                          (unsigned) st->st_gid, (unsigned) (st->st_mode & 07777), path);
                return -EPERM;
        }
        return 0;
}

_public_ int nsid_conf_load(const char *path, nsid_conf **ret) {
        _cleanup_(nsid_conf_unrefp) nsid_conf *c = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t size = 0;
        int r;

        assert_return(ret, -EINVAL);
        if (!path)
                path = NSID_SYSCONF_FILE;
        assert_return(path[0], -EINVAL);

        c = conf_new(path);
        if (!c)
                return -ENOMEM;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                if (errno != ENOENT)
                        return log_debug_errno(negative_errno(), "%s: cannot open: %s", path,
                                               strerror(errno));
                *ret = TAKE_PTR(c);
                return 0;
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode)) {
                log_error("%s: not a regular file", path);
                return S_ISDIR(st.st_mode) ? -EISDIR : -ENXIO;
        }
        r = check_trusted(path, &st);
        if (r < 0)
                return r;
        if (st.st_size > (off_t) NSID_CONF_FILE_MAX) {
                log_error("%s: larger than %u bytes", path, NSID_CONF_FILE_MAX);
                return -EFBIG;
        }
        r = read_fd_capped(fd, NSID_CONF_FILE_MAX, &text, &size);
        if (r == -EFBIG)
                log_error("%s: larger than %u bytes", path, NSID_CONF_FILE_MAX);
        if (r < 0)
                return r;
        c->found = true;
        r = conf_parse_into(c, text, size);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

_public_ const char *nsid_conf_get_path(const nsid_conf *c) {
        return c ? c->path : NULL;
}

_public_ int nsid_conf_file_found(const nsid_conf *c) {
        assert_return(c, -EINVAL);
        return c->found;
}

_public_ const char *nsid_conf_get_value(const nsid_conf *c, const char *section,
                                         const char *name) {
        int i;

        if (!c || !section || !name)
                return NULL;
        i = key_index(section, name);
        if (i < 0)
                return NULL;
        return c->effective[i] >= 0 ? c->entries[c->effective[i]].value : keys[i].default_value;
}

_public_ int nsid_conf_get_bool(const nsid_conf *c, const char *section, const char *name,
                                bool *ret) {
        const nsid_conf_key *k;
        int r;

        assert_return(c && section && name && ret, -EINVAL);
        k = nsid_conf_key_lookup(section, name);
        if (!k)
                return -ENOENT;
        if (k->type != NSID_CONF_TYPE_BOOL)
                return -EINVAL;
        r = nsid_conf_parse_bool(nsid_conf_get_value(c, section, name));
        if (r < 0)
                return r;
        *ret = r;
        return 0;
}

_public_ int nsid_conf_get_uint(const nsid_conf *c, const char *section, const char *name,
                                uint32_t *ret) {
        const nsid_conf_key *k;
        uint64_t v;
        int r;

        assert_return(c && section && name && ret, -EINVAL);
        k = nsid_conf_key_lookup(section, name);
        if (!k)
                return -ENOENT;
        if (k->type != NSID_CONF_TYPE_UINT)
                return -EINVAL;
        r = parse_u64_max(nsid_conf_get_value(c, section, name), UINT32_MAX, &v);
        if (r < 0)
                return r;
        *ret = (uint32_t) v;
        return 0;
}

_public_ int nsid_conf_get_origin(const nsid_conf *c, const char *section, const char *name,
                                  unsigned *ret_line) {
        int i;

        assert_return(c && section && name, -EINVAL);
        i = key_index(section, name);
        if (i < 0)
                return -ENOENT;
        if (c->effective[i] < 0)
                return 0;
        if (ret_line)
                *ret_line = c->entries[c->effective[i]].line;
        return 1;
}

_public_ size_t nsid_conf_get_n_diagnostics(const nsid_conf *c) {
        return c ? c->n_diags : 0;
}

_public_ unsigned nsid_conf_get_n_errors(const nsid_conf *c) {
        return c ? c->n_errors : 0;
}

_public_ int nsid_conf_get_diagnostic(const nsid_conf *c, size_t i, nsid_conf_diagnostic *ret) {
        assert_return(c && ret, -EINVAL);
        if (i >= c->n_diags)
                return -ERANGE;
        *ret = (nsid_conf_diagnostic) {
                .priority = c->diags[i].priority,
                .line = c->diags[i].line,
                .message = c->diags[i].message,
        };
        return 0;
}

_public_ size_t nsid_conf_get_n_entries(const nsid_conf *c) {
        return c ? c->n_entries : 0;
}

_public_ int nsid_conf_get_entry(const nsid_conf *c, size_t i, nsid_conf_entry *ret) {
        const entry *e;

        assert_return(c && ret, -EINVAL);
        if (i >= c->n_entries)
                return -ERANGE;
        e = &c->entries[i];
        *ret = (nsid_conf_entry) {
                .section = e->section,
                .name = e->name,
                .value = e->value,
                .line = e->line,
                .key = e->key >= 0 ? &keys[e->key] : NULL,
                .used = e->key >= 0 && c->effective[e->key] == (ssize_t) i,
        };
        return 0;
}
