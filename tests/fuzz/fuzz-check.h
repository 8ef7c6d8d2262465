/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every fuzz target shares: the libFuzzer entry point and CHECK(), an invariant that
 * aborts (a crash libFuzzer reports and keeps) when it does not hold, in every build type. */
#ifndef NSID_FUZZ_CHECK_H
#define NSID_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define CHECK(x)                                                                               \
        do {                                                                                   \
                if (!(x))                                                                      \
                        abort();                                                               \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
