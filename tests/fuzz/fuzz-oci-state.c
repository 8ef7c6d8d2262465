/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OCI state JSON nsid-uniquifier oci-hook reads from stdin (container-controlled: id and
 * annotations come from the container's configuration). The parser is compiled in from the
 * program's source, which is not part of libnsid (json-c stays out of the library). */
#include <stdint.h>
#include <string.h>

#include "../../uniquifier/oci-state.c"

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        oci_state s = {};
        const char *err = NULL;

        if (size > 2 * OCI_STATE_MAX)
                return 0;
        if (oci_state_parse((const char *) data, size, &s, &err) == 0) {
                /* what the program relies on */
                if (s.pid <= 1 || !s.id || strlen(s.id) == 0 || strlen(s.id) > OCI_ID_MAX)
                        __builtin_trap();
                for (const char *c = s.id; *c; c++)
                        if ((unsigned char) *c < 0x21 || (unsigned char) *c > 0x7e)
                                __builtin_trap();
                if (s.nsid_key && (strlen(s.nsid_key) == 0 || strlen(s.nsid_key) > 1024))
                        __builtin_trap();
                oci_state_done(&s);
        } else if (!err)
                __builtin_trap();
        return 0;
}
