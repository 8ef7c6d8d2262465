/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's /etc/passwd. */
#include <errno.h>

#include "fuzz-userdb-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        fuzz_userdb(data, size, 0);
        return 0;
}
