/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* INI-style configuration lookup (nsid/conffile.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include <nsid/conffile.h>

#include "macro.h"

#define BLANKS " \t\r\v\f"

static void trim(const char **s, size_t *len) {
        while (*len > 0 && strchr(BLANKS, (*s)[0]) && (*s)[0])
                (*s)++, (*len)--;
        while (*len > 0 && strchr(BLANKS, (*s)[*len - 1]) && (*s)[*len - 1])
                (*len)--;
}

static bool eq_ci(const char *a, size_t alen, const char *b) {
        return strlen(b) == alen && strncasecmp(a, b, alen) == 0;
}

_public_ int nsid_conf_get(const char *text, size_t size, const char *section, const char *key,
                           char **ret_value) {
        const char *p = text, *end = text + size;
        const char *found = NULL;
        size_t found_len = 0;
        bool in_section = false;

        assert_return(text || size == 0, -EINVAL);
        assert_return(section && key && ret_value, -EINVAL);

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *l = p;
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);

                p += len + (nl ? 1 : 0);
                if (len > NSID_CONF_LINE_MAX || memchr(l, '\0', len))
                        continue;
                trim(&l, &len);
                if (len == 0 || l[0] == '#' || l[0] == ';')
                        continue;
                if (l[0] == '[') {
                        const char *close = memchr(l, ']', len);
                        if (!close || (size_t) (close - l) != len - 1) {
                                in_section = false;
                                continue;
                        }
                        const char *s = l + 1;
                        size_t slen = len - 2;
                        trim(&s, &slen);
                        in_section = eq_ci(s, slen, section);
                        continue;
                }
                if (!in_section)
                        continue;
                const char *eq = memchr(l, '=', len);
                if (!eq)
                        continue;
                const char *k = l, *v = eq + 1;
                size_t klen = (size_t) (eq - l), vlen = len - klen - 1;
                trim(&k, &klen);
                trim(&v, &vlen);
                if (!eq_ci(k, klen, key))
                        continue;
                found = v;
                found_len = vlen;
        }
        if (!found)
                return -ENOENT;
        char *r = strndup(found, found_len);
        if (!r)
                return -ENOMEM;
        *ret_value = r;
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
