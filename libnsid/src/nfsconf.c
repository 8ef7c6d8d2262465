/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idmapd.conf as nfs-utils' configuration reader takes it (nsid/nfsconf.h), as
 * conf_parse(), conf_parse_line(), conf_set() and conf_get_section() do it, without their
 * database: conf_set() replaces the newest binding of the same section and tag whatever its
 * subsection, so each section and tag has at most one binding, the last assignment's, and
 * a plain lookup sees it only when that assignment was not in a subsection. One pass over a
 * copy of the text finds it; a "$name" value takes one more pass per hop (at most 16), so
 * the work stays linear in the text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nsid/nfsconf.h>

#include "macro.h"

#define DOLLAR_MAX 16

typedef struct reader {
        const char *want_section, *want_tag;
        const char *section;  /* NULL: in no section */
        const char *arg;      /* the subsection, or NULL */
        const char *value;    /* the wanted tag's binding: its value, */
        bool value_in_arg;    /* set in a subsection (invisible to a plain lookup) */
} reader;

/* C locale classes, as nfs-utils gets them (it never sets a locale) */
static bool is_space(char c) {
        return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static void set(reader *r, const char *tag, const char *value) {
        if (!*value)
                return; /* conf_set(): an empty value sets nothing */
        if (strcasecmp(r->section, r->want_section) != 0 || strcasecmp(tag, r->want_tag) != 0)
                return;
        r->value = value;
        r->value_in_arg = r->arg != NULL;
}

static void section_line(reader *r, char *line) {
        char *end, *quote;

        r->section = r->arg = NULL;
        line++;
        while (is_blank(*line))
                line++;
        end = strchr(line, ']');
        if (!end)
                return; /* no section until the next header */
        *end-- = '\0';
        while (end >= line && is_blank(*end))
                *end-- = '\0';
        quote = strchr(line, '"');
        if (quote) {
                char *p = quote - 1;
                *quote++ = '\0';
                while (p > line && is_blank(*p))
                        *p-- = '\0';
        }
        r->section = line;
        if (!quote)
                return;
        end = strchr(quote, '"');
        if (!end)
                return; /* the section without a subsection, as conf_parse_line() leaves it */
        *end = '\0';
        r->arg = quote;
}

static void parse_line(reader *r, char *line) {
        char *val, *p;

        while (is_space(*line))
                line++;
        if (*line == '\0' || *line == '#' || *line == ';')
                return;
        if (*line == '[') {
                section_line(r, line);
                return;
        }
        p = strchr(line, '=');
        if (!p || !r->section)
                return; /* not an assignment, or in no section */
        val = p + 1;
        *p-- = '\0';
        while (p >= line && is_blank(*p))
                *p-- = '\0';
        while (*val && is_blank(*val))
                val++;
        if (*val == '"' || *val == '\'') {
                char q = *val++;
                p = strchr(val, q);
                if (!p)
                        return; /* unmatched quote: the line is ignored */
                *p = '\0';
        } else {
                if ((p = strchr(val, '#')))
                        *p = '\0';
                if ((p = strchr(val, ';')))
                        *p = '\0';
                /* trailing white space, never the first byte (as conf_parse_line()) */
                for (p = val + strlen(val) - 1; p > val && is_space(*p); p--)
                        *p = '\0';
        }
        if (*line == '\0')
                return; /* no tag */
        if (strcasecmp(line, "include") == 0)
                return; /* not followed: see nsid/nfsconf.h */
        set(r, line, val);
}

/* The value of section/tag in a copy of the text (*ret: malloc'ed), or NULL when unset. */
static int find(const char *text, size_t size, const char *section, const char *tag,
                char **ret) {
        reader r = { .want_section = section, .want_tag = tag };
        char *buf = malloc(size + 1), *cp, *line, *end;

        if (!buf)
                return -ENOMEM;
        if (size)
                memcpy(buf, text, size);
        buf[size] = '\0';
        end = buf + size;
        for (cp = line = buf; cp < end; cp++) {
                if (*cp != '\n')
                        continue;
                if (cp > buf && cp[-1] == '\\') {
                        cp[-1] = cp[0] = ' '; /* an escaped newline joins the lines */
                        continue;
                }
                *cp = '\0';
                parse_line(&r, line);
                line = cp + 1;
        }
        /* (a last line without its newline is ignored, as conf_parse() does) */
        *ret = NULL;
        if (r.value && !r.value_in_arg && !(*ret = strdup(r.value))) {
                free(buf);
                return -ENOMEM;
        }
        free(buf);
        return 0;
}

_public_ int nsid_nfsconf_get(const char *text, size_t size, const char *section,
                              const char *tag, char **ret_value) {
        char *v = NULL, *name = NULL;
        int r;

        assert_return(text || size == 0, -EINVAL);
        assert_return(section && tag && ret_value, -EINVAL);

        /* the text ends at a NUL byte, as conf_readfile()'s buffer does */
        size = text ? strnlen(text, size) : 0;
        for (int hops = 0; hops <= DOLLAR_MAX; hops++) {
                r = find(text, size, section, tag, &v);
                free(name);
                name = NULL;
                if (r < 0)
                        return r;
                if (!v)
                        return -ENOENT;
                if (v[0] != '$') {
                        *ret_value = v;
                        return 0;
                }
                /* "$name": [environment] name (not the caller's environment) */
                name = v;
                section = "environment";
                tag = name + 1;
        }
        free(name);
        return -ELOOP;
}
