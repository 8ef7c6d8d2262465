/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <time.h>
#include <unistd.h>

#include "json-envelope.h"
#ifdef JSON_ENVELOPE_LAZY
/* nsid-idmap, which the kernel starts at every upcall, loads json-c only for --json */
#define LAZY_WANT_JSONC
#include "lazylib.h"
#endif

json_object *json_envelope_new(const char *program, const char *command) {
        char host[256] = "", when[32] = "";
        struct timespec ts;
        struct tm tm;

        if (gethostname(host, sizeof(host) - 1) < 0)
                host[0] = '\0';
        if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && gmtime_r(&ts.tv_sec, &tm))
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "schema", json_object_new_int(NSID_JSON_SCHEMA));
        json_object_object_add(e, "program", json_object_new_string(program));
        json_object_object_add(e, "version", json_object_new_string(NSID_VERSION));
        json_object_object_add(e, "host", json_object_new_string(host));
        json_object_object_add(e, "time", json_object_new_string(when));
        json_object_object_add(e, "command", command ? json_object_new_string(command) : NULL);
        return e;
}

void json_envelope_add(json_object *o, const char *program, const char *command) {
        if (!json_object_is_type(o, json_type_object) || json_object_object_get_ex(o, "nsid", NULL))
                return;
        json_object_object_add(o, "nsid", json_envelope_new(program, command));
}
