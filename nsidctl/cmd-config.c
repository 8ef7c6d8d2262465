/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl config: every key of nsid.conf, its default, the value in effect and where it came
 * from, and what is wrong with the file. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "nsidctl.h"

static void range(const nsid_conf_key *k, char *buf, size_t size) {
        if (k->type == NSID_CONF_TYPE_UINT)
                snprintf(buf, size, "%" PRIu32 "..%" PRIu32 "%s%s", k->min, k->max,
                         k->unit ? " " : "", k->unit ? k->unit : "");
        else
                snprintf(buf, size, "%s", nsid_conf_type_to_string(k->type));
}

static int print_text(nsid_conf *c) {
        const nsid_conf_key *keys;
        nsid_conf_diagnostic d;
        unsigned errors = 0, warnings = 0;
        size_t n = 0;

        keys = nsid_conf_keys(&n);
        printf("%s# %s%s%s\n", col(C_DIM), nsid_conf_get_path(c),
               nsid_conf_file_found(c) ? "" : " (absent: every key has its default)",
               col(C_RESET));
        for (size_t i = 0; i < n; i++) {
                const nsid_conf_key *k = &keys[i];
                const char *v = nsid_conf_get_value(c, k->section, k->name);
                unsigned line = 0;
                char from[4200], rng[64];
                int o = nsid_conf_get_origin(c, k->section, k->name, &line);

                if (i == 0 || strcmp(keys[i - 1].section, k->section) != 0)
                        printf("%s[%s]\n", i ? "\n" : "", k->section);
                range(k, rng, sizeof(rng));
                if (o > 0)
                        snprintf(from, sizeof(from), "%s:%u", nsid_conf_get_path(c), line);
                else
                        snprintf(from, sizeof(from), "default");
                printf("%s# %s (%s; default %s; %s)%s\n", col(C_DIM), k->description, rng,
                       k->default_value, k->used_by, col(C_RESET));
                printf("%s%s = %s%s  %s# %s%s\n", o > 0 ? col(C_BOLD) : "", k->name, v,
                       o > 0 ? col(C_RESET) : "", col(C_DIM), from, col(C_RESET));
        }
        for (size_t i = 0; nsid_conf_get_diagnostic(c, i, &d) == 0; i++) {
                bool err = d.priority <= LOG_ERR;
                errors += err;
                warnings += !err;
                fprintf(stderr, "%s%s:%s %s\n", err ? col(C_RED) : col(C_YELLOW),
                        err ? "error" : "warning", col(C_RESET), d.message);
        }
        return errors ? EXIT_PROBLEMS : warnings ? EXIT_WARNINGS : EXIT_OK;
}

static int print_json_conf(nsid_conf *c) {
        json_object *root = json_object_new_object(), *arr = json_object_new_array(),
                    *diags = json_object_new_array(), *unknown = json_object_new_array();
        const nsid_conf_key *keys;
        nsid_conf_diagnostic d;
        nsid_conf_entry e;
        unsigned errors = 0, warnings = 0;
        size_t n = 0;

        keys = nsid_conf_keys(&n);
        json_object_object_add(root, "path", json_object_new_string(nsid_conf_get_path(c)));
        json_object_object_add(root, "found", json_object_new_boolean(nsid_conf_file_found(c) > 0));
        for (size_t i = 0; i < n; i++) {
                const nsid_conf_key *k = &keys[i];
                json_object *o = json_object_new_object();
                unsigned line = 0;
                int org = nsid_conf_get_origin(c, k->section, k->name, &line);

                json_object_object_add(o, "section", json_object_new_string(k->section));
                json_object_object_add(o, "key", json_object_new_string(k->name));
                json_object_object_add(o, "type", json_object_new_string(
                                                          nsid_conf_type_to_string(k->type)));
                json_object_object_add(o, "value", json_object_new_string(
                                                           nsid_conf_get_value(c, k->section, k->name)));
                json_object_object_add(o, "default", json_object_new_string(k->default_value));
                json_object_object_add(o, "source", json_object_new_string(org > 0 ? "file"
                                                                                   : "default"));
                json_object_object_add(o, "line", org > 0 ? json_object_new_int((int) line) : NULL);
                if (k->type == NSID_CONF_TYPE_UINT) {
                        json_object_object_add(o, "min", json_object_new_uint64(k->min));
                        json_object_object_add(o, "max", json_object_new_uint64(k->max));
                }
                json_object_object_add(o, "unit", json_string_or_null(k->unit));
                json_object_object_add(o, "used_by", json_object_new_string(k->used_by));
                json_object_object_add(o, "description", json_object_new_string(k->description));
                json_object_array_add(arr, o);
        }
        json_object_object_add(root, "keys", arr);
        for (size_t i = 0; nsid_conf_get_entry(c, i, &e) == 0; i++) {
                if (e.key)
                        continue;
                json_object *o = json_object_new_object();
                json_object_object_add(o, "section", json_object_new_string(e.section));
                json_object_object_add(o, "key", json_object_new_string(e.name));
                json_object_object_add(o, "value", json_object_new_string(e.value));
                json_object_object_add(o, "line", json_object_new_int((int) e.line));
                json_object_array_add(unknown, o);
        }
        json_object_object_add(root, "unknown", unknown);
        for (size_t i = 0; nsid_conf_get_diagnostic(c, i, &d) == 0; i++) {
                json_object *o = json_object_new_object();
                bool err = d.priority <= LOG_ERR;
                errors += err;
                warnings += !err;
                json_object_object_add(o, "severity", json_object_new_string(err ? "error"
                                                                                 : "warning"));
                json_object_object_add(o, "line", json_object_new_int((int) d.line));
                json_object_object_add(o, "message", json_object_new_string(d.message));
                json_object_array_add(diags, o);
        }
        json_object_object_add(root, "diagnostics", diags);
        json_object_object_add(root, "errors", json_object_new_int((int) errors));
        json_object_object_add(root, "warnings", json_object_new_int((int) warnings));
        print_json(root);
        json_object_put(root);
        return errors ? EXIT_PROBLEMS : warnings ? EXIT_WARNINGS : EXIT_OK;
}

int cmd_config(void) {
        const char *path = arg.config_path ? arg.config_path : NSID_SYSCONF_FILE;
        nsid_conf *c;
        int err = 0, ret;

        /* the library explains a refused file in a log line; it is shown as ours */
        c = ctx_config(&err);
        if (!c && arg.json) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "path", json_object_new_string(path));
                json_object_object_add(o, "refused", json_object_new_boolean(err == -EPERM));
                json_object_object_add(o, "error", json_object_new_string(strerror(-err)));
                print_json(o);
                json_object_put(o);
        }
        if (!c) {
                if (err == -EPERM)
                        errorf("%s is not used: it must be owned by root and writable by no "
                               "one else (chown root:root %s; chmod 644 %s)",
                               path, path, path);
                else
                        errorf("%s cannot be used: %s", path, strerror(-err));
                return err == -EPERM ? EXIT_PROBLEMS : EXIT_FAIL;
        }
        ret = arg.json ? print_json_conf(c) : print_text(c);
        return ret;
}
