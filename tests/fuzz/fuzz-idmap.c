/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uid_map/gid_map text (container-influenced: a container root writes its children's maps,
 * and nsid reads /proc/PID/uid_map of any process). Checks invariants of every accepted map:
 * translation round trips, extent starts/ends, and format -> parse gives the same map. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idmap-internal.h"
#include "nsid/idmap.h"

#include "fuzz-check.h"

#define INPUT_MAX (1024 * 1024)

static void roundtrip(const nsid_idmap *m, uint32_t id) {
        uint32_t h, n;
        if (nsid_idmap_to_host(m, id, &h) == 0) {
                CHECK(nsid_idmap_to_ns(m, h, &n) == 0 && n == id);
                CHECK(nsid_idmap_to_host_munged(m, id, &n) == 0 && n == h);
        } else
                CHECK(nsid_idmap_to_host_munged(m, id, &n) == 1 && n == 4242);
        if (nsid_idmap_to_ns(m, id, &n) == 0)
                CHECK(nsid_idmap_to_host(m, n, &h) == 0 && h == id);
        else
                CHECK(nsid_idmap_to_ns_munged(m, id, &h) == 1 && h == 4242);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        nsid_idmap *m = NULL, *m2 = NULL;
        char *text = NULL;

        if (size > INPUT_MAX)
                return 0;
        if (idmap_parse_with_overflow(NSID_IDMAP_UID, (const char *) data, size, 4242, &m) < 0) {
                CHECK(m == NULL);
                return 0;
        }
        int n = nsid_idmap_get_n_extents(m);
        CHECK(n >= 0 && n <= (int) NSID_IDMAP_MAX_EXTENTS);
        for (int i = 0; i < n; i++) {
                nsid_idmap_extent e;
                uint32_t v;
                CHECK(nsid_idmap_get_extent(m, (unsigned) i, &e) == 0);
                CHECK(e.count > 0);
                CHECK(nsid_idmap_to_host(m, e.ns_first, &v) == 0 && v == e.host_first);
                CHECK(nsid_idmap_to_host(m, e.ns_first + e.count - 1, &v) == 0 &&
                      v == e.host_first + e.count - 1);
                CHECK(nsid_idmap_to_ns(m, e.host_first, &v) == 0 && v == e.ns_first);
                roundtrip(m, e.ns_first - 1);
                roundtrip(m, e.ns_first + e.count);
                roundtrip(m, e.host_first + e.count);
        }
        CHECK(nsid_idmap_to_host(m, UINT32_MAX, &(uint32_t) { 0 }) == -ENOENT);
        for (size_t i = 0; i + 4 <= size && i < 64; i += 4) {
                uint32_t id;
                memcpy(&id, data + i, 4);
                roundtrip(m, id);
        }
        (void) nsid_idmap_is_identity(m);

        CHECK(nsid_idmap_format(m, &text) == 0);
        CHECK(idmap_parse_with_overflow(NSID_IDMAP_UID, text, strlen(text), 4242, &m2) == 0);
        CHECK(nsid_idmap_get_n_extents(m2) == n);
        for (int i = 0; i < n; i++) {
                nsid_idmap_extent a, b;
                CHECK(nsid_idmap_get_extent(m, (unsigned) i, &a) == 0);
                CHECK(nsid_idmap_get_extent(m2, (unsigned) i, &b) == 0);
                CHECK(a.ns_first == b.ns_first && a.host_first == b.host_first &&
                      a.count == b.count);
        }
        free(text);
        nsid_idmap_unref(m2);
        nsid_idmap_unref(m);
        return 0;
}
