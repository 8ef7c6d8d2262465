/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#include "oci-state.h"

void oci_state_done(oci_state *s) {
        if (!s)
                return;
        free(s->id);
        free(s->status);
        free(s->bundle);
        free(s->nsid_key);
        free(s->nsid_app);
        *s = (oci_state) {};
}

static bool printable(const char *s, size_t len, size_t max) {
        if (len == 0 || len > max)
                return false;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) s[i] < 0x21 || (unsigned char) s[i] > 0x7e)
                        return false;
        return true;
}

/* A string member, or NULL if absent; -EINVAL if present with another type or bad chars. */
static int get_string(json_object *o, const char *name, size_t max, bool strict, char **ret,
                      const char **err, const char *msg) {
        json_object *v;
        const char *s;
        size_t len;

        *ret = NULL;
        if (!json_object_object_get_ex(o, name, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_string)) {
                *err = msg;
                return -EINVAL;
        }
        s = json_object_get_string(v);
        len = (size_t) json_object_get_string_len(v);
        if (strlen(s) != len || len > max || (strict && !printable(s, len, max))) {
                *err = msg;
                return -EINVAL;
        }
        *ret = strndup(s, len);
        return *ret ? 0 : -ENOMEM;
}

int oci_state_parse(const char *data, size_t size, oci_state *ret, const char **ret_error) {
        json_tokener *tok = NULL;
        json_object *root = NULL, *v, *ann;
        oci_state s = {};
        const char *err = "invalid state";
        int r = -EINVAL;
        int64_t pid;

        if (!data || !ret)
                return -EINVAL;
        if (size == 0) {
                err = "empty input";
                goto out;
        }
        if (size > OCI_STATE_MAX) {
                err = "state larger than 1 MiB";
                r = -EFBIG;
                goto out;
        }
        if (memchr(data, '\0', size)) {
                err = "NUL byte in state";
                goto out;
        }
        tok = json_tokener_new_ex(OCI_STATE_DEPTH);
        if (!tok) {
                r = -ENOMEM;
                err = "out of memory";
                goto out;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, data, (int) size);
        if (!root) {
                enum json_tokener_error je = json_tokener_get_error(tok);
                err = je == json_tokener_continue ? "truncated JSON"
                      : je == json_tokener_error_depth ? "JSON nested too deeply"
                                                       : "malformed JSON";
                goto out;
        }
        /* nothing but whitespace may follow the object */
        for (size_t i = json_tokener_get_parse_end(tok); i < size; i++)
                if (!strchr(" \t\r\n", data[i])) {
                        err = "trailing data after the JSON object";
                        goto out;
                }
        if (!json_object_is_type(root, json_type_object)) {
                err = "state is not a JSON object";
                goto out;
        }

        if (!json_object_object_get_ex(root, "pid", &v) || !json_object_is_type(v, json_type_int)) {
                err = "no integer \"pid\"";
                goto out;
        }
        errno = 0;
        pid = json_object_get_int64(v);
        if (errno != 0 || pid <= 1 || pid > 4194304) {
                err = "\"pid\" out of range (must be a process other than 0 and 1)";
                goto out;
        }
        s.pid = (pid_t) pid;

        r = get_string(root, "id", OCI_ID_MAX, true, &s.id, &err,
                       "\"id\" must be 1..1024 printable ASCII characters");
        if (r < 0)
                goto out;
        if (!s.id) {
                r = -EINVAL;
                err = "no \"id\"";
                goto out;
        }
        r = get_string(root, "status", 64, true, &s.status, &err, "bad \"status\"");
        if (r < 0)
                goto out;
        r = get_string(root, "bundle", 4096, false, &s.bundle, &err, "bad \"bundle\"");
        if (r < 0)
                goto out;

        if (json_object_object_get_ex(root, "annotations", &ann) &&
            !json_object_is_type(ann, json_type_null)) {
                if (!json_object_is_type(ann, json_type_object)) {
                        r = -EINVAL;
                        err = "\"annotations\" is not an object";
                        goto out;
                }
                r = get_string(ann, "org.nsid.key", 1024, true, &s.nsid_key, &err,
                               "annotation org.nsid.key must be 1..1024 printable ASCII characters");
                if (r < 0)
                        goto out;
                r = get_string(ann, "org.nsid.app", 64, true, &s.nsid_app, &err,
                               "annotation org.nsid.app must be 1..64 printable ASCII characters");
                if (r < 0)
                        goto out;
        }
        *ret = s;
        s = (oci_state) {};
        r = 0;
out:
        oci_state_done(&s);
        if (root)
                json_object_put(root);
        if (tok)
                json_tokener_free(tok);
        if (r < 0 && ret_error)
                *ret_error = err;
        return r < 0 ? r : 0;
}
