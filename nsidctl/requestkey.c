/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: the rules of request-key.conf(5) and request-key.d/NAME.conf, to see which program
 * answers id_resolver keys. Host configuration, root-owned: read as text, nothing executed. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsidctl.h"

#define RK_LINE_MAX 4096

void rk_rules_free(rk_rule *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(v[i].file);
                free(v[i].op);
                free(v[i].type);
                free(v[i].description);
                free(v[i].callout_info);
                free(v[i].program);
                free(v[i].text);
        }
        free(v);
}

typedef struct rules {
        rk_rule *v;
        size_t n, cap;
} rules;

static char *next_field(char **p) {
        char *s = *p + strspn(*p, " \t"), *e;

        if (!*s)
                return NULL;
        e = s + strcspn(s, " \t");
        *p = *e ? e + 1 : e;
        return strndup(s, (size_t) (e - s));
}

static int scan_file(rules *rs, const char *path) {
        FILE *f = fopen(path, "re");
        char line[RK_LINE_MAX];
        unsigned no = 0;

        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (fgets(line, sizeof(line), f)) {
                char *p = line, *s;
                rk_rule r = { .line = ++no };

                line[strcspn(line, "\r\n")] = '\0';
                s = line + strspn(line, " \t");
                if (!*s || *s == '#')
                        continue;
                r.text = strdup(s);
                r.op = next_field(&p);
                r.type = next_field(&p);
                r.description = next_field(&p);
                r.callout_info = next_field(&p);
                r.program = next_field(&p);
                r.file = strdup(path);
                if (!r.text || !r.file || !r.op || !r.type || !r.description ||
                    !r.callout_info || !r.program) {
                        /* a short line (request-key ignores it) or no memory */
                        free(r.text);
                        free(r.file);
                        free(r.op);
                        free(r.type);
                        free(r.description);
                        free(r.callout_info);
                        free(r.program);
                        continue;
                }
                if (rs->n == rs->cap) {
                        rk_rule *nv = reallocarray(rs->v, rs->cap = rs->cap ? rs->cap * 2 : 16,
                                                   sizeof(*nv));
                        if (!nv) {
                                fclose(f);
                                return -ENOMEM;
                        }
                        rs->v = nv;
                }
                rs->v[rs->n++] = r;
        }
        fclose(f);
        return 0;
}

static int cmp_names(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int conf_only(const struct dirent *d) {
        size_t l = strlen(d->d_name);
        return d->d_name[0] != '.' && l > 5 && strcmp(d->d_name + l - 5, ".conf") == 0;
}

int requestkey_scan(const char *conf, const char *dir, rk_rule **ret, size_t *ret_n) {
        rules rs = {};
        struct dirent **names = NULL;
        int k, r = 0;

        if (!conf)
                conf = "/etc/request-key.conf";
        if (!dir)
                dir = "/etc/request-key.d";
        /* request-key looks through request-key.d first, then request-key.conf */
        k = scandir(dir, &names, conf_only, cmp_names);
        for (int i = 0; i < k; i++) {
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
                if (r >= 0)
                        r = scan_file(&rs, path);
                free(names[i]);
        }
        free(names);
        if (r >= 0)
                r = scan_file(&rs, conf);
        if (r < 0) {
                rk_rules_free(rs.v, rs.n);
                return r;
        }
        *ret = rs.v;
        *ret_n = rs.n;
        return 0;
}

bool rk_rule_matches(const rk_rule *r, const char *op, const char *type) {
        return fnmatch(r->op, op, 0) == 0 && fnmatch(r->type, type, 0) == 0;
}

const char *rk_rule_program_name(const rk_rule *r) {
        const char *p = r->program;
        if (p[0] == '|')
                p++;
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}
