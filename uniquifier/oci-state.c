/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#include "macro.h"
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

static void json_tokener_freep(json_tokener **t) {
        if (*t)
                json_tokener_free(*t);
}

static void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/* r, with why for the caller */
static int refuse(const char **ret_error, const char *why, int r) {
        if (ret_error)
                *ret_error = why;
        return r;
}

int oci_state_parse(const char *data, size_t size, oci_state *ret, const char **ret_error) {
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        _cleanup_(json_object_putp) json_object *root = NULL;
        _cleanup_(oci_state_done) oci_state s = {};
        json_object *v, *ann;
        const char *err = "invalid state";
        int64_t pid;
        int r;

        if (!data || !ret)
                return -EINVAL;
        if (size == 0)
                return refuse(ret_error, "empty input", -EINVAL);
        if (size > OCI_STATE_MAX)
                return refuse(ret_error, "state larger than 1 MiB", -EFBIG);
        if (memchr(data, '\0', size))
                return refuse(ret_error, "NUL byte in state", -EINVAL);
        tok = json_tokener_new_ex(OCI_STATE_DEPTH);
        if (!tok)
                return refuse(ret_error, "out of memory", -ENOMEM);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, data, (int) size);
        if (!root) {
                enum json_tokener_error je = json_tokener_get_error(tok);
                return refuse(ret_error,
                              je == json_tokener_continue      ? "truncated JSON"
                              : je == json_tokener_error_depth ? "JSON nested too deeply"
                                                               : "malformed JSON",
                              -EINVAL);
        }
        /* nothing but whitespace may follow the object */
        for (size_t i = json_tokener_get_parse_end(tok); i < size; i++)
                if (!strchr(" \t\r\n", data[i]))
                        return refuse(ret_error, "trailing data after the JSON object", -EINVAL);
        if (!json_object_is_type(root, json_type_object))
                return refuse(ret_error, "state is not a JSON object", -EINVAL);

        if (!json_object_object_get_ex(root, "pid", &v) || !json_object_is_type(v, json_type_int))
                return refuse(ret_error, "no integer \"pid\"", -EINVAL);
        errno = 0;
        pid = json_object_get_int64(v);
        if (errno != 0 || pid <= 1 || pid > 4194304)
                return refuse(ret_error,
                              "\"pid\" out of range (must be a process other than 0 and 1)",
                              -EINVAL);
        s.pid = (pid_t) pid;

        r = get_string(root, "id", OCI_ID_MAX, true, &s.id, &err,
                       "\"id\" must be 1..1024 printable ASCII characters");
        if (r < 0)
                return refuse(ret_error, err, r);
        if (!s.id)
                return refuse(ret_error, "no \"id\"", -EINVAL);
        r = get_string(root, "status", 64, true, &s.status, &err, "bad \"status\"");
        if (r < 0)
                return refuse(ret_error, err, r);
        r = get_string(root, "bundle", 4096, false, &s.bundle, &err, "bad \"bundle\"");
        if (r < 0)
                return refuse(ret_error, err, r);

        if (json_object_object_get_ex(root, "annotations", &ann) &&
            !json_object_is_type(ann, json_type_null)) {
                if (!json_object_is_type(ann, json_type_object))
                        return refuse(ret_error, "\"annotations\" is not an object", -EINVAL);
                r = get_string(ann, "org.nsid.key", 1024, true, &s.nsid_key, &err,
                               "annotation org.nsid.key must be 1..1024 printable ASCII characters");
                if (r < 0)
                        return refuse(ret_error, err, r);
                r = get_string(ann, "org.nsid.app", 64, true, &s.nsid_app, &err,
                               "annotation org.nsid.app must be 1..64 printable ASCII characters");
                if (r < 0)
                        return refuse(ret_error, err, r);
        }
        *ret = s;
        s = (oci_state) {};
        return 0;
}
