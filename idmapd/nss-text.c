/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Strict parsers for nsid-idmapd's name-service path (nss-text.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nss-text.h"

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* One line [p, end): skip blanks; returns the first non-blank */
static const char *skip_blank(const char *p, const char *end) {
        while (p < end && is_blank(*p))
                p++;
        return p;
}

static bool service_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
}

static int parse_services(const char *p, const char *end, nss_sources *ret) {
        nss_sources s = { 0 };
        while ((p = skip_blank(p, end)) < end) {
                if (*p == '[') { /* an action: [NOTFOUND=return] ... */
                        const char *q = memchr(p, ']', (size_t) (end - p));
                        if (!q)
                                return -EINVAL;
                        p = q + 1;
                        continue;
                }
                const char *w = p;
                while (p < end && !is_blank(*p) && *p != '[')
                        p++;
                size_t len = (size_t) (p - w);
                for (size_t i = 0; i < len; i++)
                        if (!service_char(w[i]))
                                return -EINVAL;
                if (len >= NSS_SOURCE_NAME_MAX)
                        return -EINVAL;
                if (s.n >= NSS_SOURCES_MAX)
                        return -E2BIG;
                memcpy(s.name[s.n], w, len);
                s.name[s.n][len] = '\0';
                s.n++;
        }
        if (s.n == 0)
                return -EINVAL; /* "passwd:" and nothing: glibc would fall back; we say unknown */
        *ret = s;
        return 0;
}

int nss_sources_parse(const char *text, size_t size, const char *db, nss_sources *ret) {
        const char *p = text, *end = text ? text + size : NULL;
        size_t dblen = strlen(db);

        while (p && p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *le = nl ? nl : end;
                const char *hash = memchr(p, '#', (size_t) (le - p));
                const char *ce = hash ? hash : le;
                const char *q = skip_blank(p, ce);
                if (memchr(p, '\0', (size_t) (le - p)))
                        return -EINVAL; /* a NUL in the text: not a configuration file */
                if ((size_t) (ce - q) > dblen && strncasecmp(q, db, dblen) == 0) {
                        const char *c = skip_blank(q + dblen, ce);
                        if (c < ce && *c == ':')
                                return parse_services(c + 1, ce, ret);
                }
                p = nl ? nl + 1 : end;
        }
        *ret = (nss_sources) { .n = 1, .name = { "files" } };
        return 0;
}

bool nss_sources_files_only(const nss_sources *s, bool systemd_empty) {
        for (unsigned i = 0; i < s->n; i++)
                if (strcmp(s->name[i], "files") != 0 &&
                    !(systemd_empty && strcmp(s->name[i], "systemd") == 0))
                        return false;
        return s->n > 0;
}

void nss_sources_format(const nss_sources *s, char *buf, size_t len) {
        size_t used = 0;
        if (len == 0)
                return;
        buf[0] = '\0';
        for (unsigned i = 0; i < s->n && used < len; i++) {
                int k = snprintf(buf + used, len - used, "%s%s", i ? " " : "", s->name[i]);
                if (k < 0)
                        break;
                used += (size_t) k;
        }
}

/* idmapd.conf, read as libnfsidmap's conffile reads it, only as far as telling whether it
 * asks for more than nsswitch: sections and tags case-insensitive, comments from '#' or ';'
 * to the end of the line, values trimmed. Anything unclear counts as "needs libnfsidmap". */
bool nss_idmapd_conf_needs_libnfsidmap(const char *text, size_t size) {
        char section[64] = "";
        const char *p = text, *end = text ? text + size : NULL;

        while (p && p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *le = nl ? nl : end;
                const char *q = skip_blank(p, le);
                p = nl ? nl + 1 : end;
                if (q == le || *q == '#' || *q == ';')
                        continue;
                if (memchr(q, '\0', (size_t) (le - q)))
                        return true;
                if (*q == '[') {
                        const char *c = memchr(q, ']', (size_t) (le - q));
                        size_t n = c ? (size_t) (c - q - 1) : 0;
                        if (!c || n >= sizeof(section))
                                return true;
                        memcpy(section, q + 1, n);
                        section[n] = '\0';
                        if (strcasecmp(section, "Static") == 0 || strcasecmp(section, "REGEX") == 0 ||
                            strcasecmp(section, "UMICH_SCHEMA") == 0)
                                return true;
                        continue;
                }
                const char *eq = memchr(q, '=', (size_t) (le - q));
                if (!eq)
                        continue; /* libnfsidmap ignores such a line too */
                const char *te = eq;
                while (te > q && is_blank(te[-1]))
                        te--;
                size_t tlen = (size_t) (te - q);
                const char *v = skip_blank(eq + 1, le), *ve = v;
                while (ve < le && *ve != '#' && *ve != ';')
                        ve++;
                while (ve > v && is_blank(ve[-1]))
                        ve--;
#define TAG_IS(t) (tlen == strlen(t) && strncasecmp(q, t, tlen) == 0)
                if (strcasecmp(section, "General") == 0 &&
                    (TAG_IS("Local-Realms") || TAG_IS("No-Strip") || TAG_IS("Reformat-Group")))
                        return true;
                if (strcasecmp(section, "Translation") == 0 &&
                    (TAG_IS("Method") || TAG_IS("GSS-Methods"))) {
                        /* a list: only "nsswitch" items keep the files-only path */
                        const char *w = v;
                        while (w < ve) {
                                while (w < ve && (is_blank(*w) || *w == ','))
                                        w++;
                                const char *we = w;
                                while (we < ve && *we != ',' && !is_blank(*we))
                                        we++;
                                if (we > w && !((size_t) (we - w) == 8 && strncasecmp(w, "nsswitch", 8) == 0))
                                        return true;
                                w = we;
                        }
                }
#undef TAG_IS
        }
        return false;
}

static bool owner_valid(const char *s, size_t len) {
        const char *at = memchr(s, '@', len);
        if (len == 0 || len >= sizeof(((nss_reply *) 0)->name) || !at || at == s ||
            s[len - 1] == '@')
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c <= 0x20 || c == 0x7f)
                        return false;
        }
        return true;
}

int nss_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;
        if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
                return -EBADMSG;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9' || v > (max - (uint64_t) (s[i] - '0')) / 10)
                        return -EBADMSG;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        *ret = v;
        return 0;
}

static int parse_u32(const char *s, size_t len, uint32_t max, uint32_t *ret) {
        uint64_t v = 0;
        int r = nss_parse_uint(s, len, max, &v);
        *ret = r == 0 ? (uint32_t) v : 0;
        return r;
}

int nss_reply_parse(const char *buf, size_t size, bool want_id, nss_reply *ret) {
        nss_reply r = { 0 };
        const char *end = buf + size, *l2, *nl;
        size_t len;

        if (!buf || memchr(buf, '\0', size))
                return -EBADMSG;
        if (size >= 16 && memcmp(buf, "via libnfsidmap\n", 16) == 0)
                r.via_libnfsidmap = true, l2 = buf + 16;
        else if (size >= 8 && memcmp(buf, "via nss\n", 8) == 0)
                l2 = buf + 8;
        else
                return -EBADMSG;
        nl = memchr(l2, '\n', (size_t) (end - l2));
        if (!nl || nl + 1 != end)
                return -EBADMSG; /* exactly one answer line, newline-terminated */
        len = (size_t) (nl - l2);
        if (len == 4 && memcmp(l2, "none", 4) == 0)
                r.kind = NSS_REPLY_NONE;
        else if (len > 4 && memcmp(l2, "err ", 4) == 0) {
                uint32_t e;
                if (parse_u32(l2 + 4, len - 4, 4095, &e) < 0 || e == 0)
                        return -EBADMSG;
                r.kind = NSS_REPLY_ERR;
                r.err = (int) e;
        } else if (want_id && len > 3 && memcmp(l2, "id ", 3) == 0) {
                if (parse_u32(l2 + 3, len - 3, UINT32_MAX - 1, &r.id) < 0)
                        return -EBADMSG;
                r.kind = NSS_REPLY_ID;
        } else if (!want_id && len > 5 && memcmp(l2, "name ", 5) == 0) {
                if (!owner_valid(l2 + 5, len - 5))
                        return -EBADMSG;
                memcpy(r.name, l2 + 5, len - 5);
                r.name[len - 5] = '\0';
                r.kind = NSS_REPLY_NAME;
        } else
                return -EBADMSG;
        *ret = r;
        return 0;
}
