/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uid_map/gid_map parsing and translation (libnsid/src/idmap.c). The map texts here are
 * what the kernel prints ("%10u %10u %10u\n") or accepts when written; the real kernel's
 * agreement is checked by tests/integration/itest-userns-idmap.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "idmap-internal.h"
#include "nsid/idmap.h"

static nsid_idmap *parse_ok(const char *text) {
        nsid_idmap *m = NULL;
        assert_int_equal(idmap_parse_with_overflow(NSID_IDMAP_UID, text, strlen(text), 65534, &m),
                         0);
        assert_non_null(m);
        return m;
}

static int parse_r(const char *text, size_t size) {
        nsid_idmap *m = (nsid_idmap *) 0x1; /* must stay untouched on failure */
        int r = idmap_parse_with_overflow(NSID_IDMAP_UID, text, size, 65534, &m);
        if (r < 0)
                assert_ptr_equal(m, (nsid_idmap *) 0x1);
        else
                nsid_idmap_unref(m);
        return r;
}

static int parse_s(const char *text) {
        return parse_r(text, strlen(text));
}

static void assert_host(const nsid_idmap *m, uint32_t ns, uint32_t host) {
        uint32_t v = 0;
        assert_int_equal(nsid_idmap_to_host(m, ns, &v), 0);
        assert_int_equal(v, host);
        assert_int_equal(nsid_idmap_to_host_munged(m, ns, &v), 0);
        assert_int_equal(v, host);
}

static void assert_ns(const nsid_idmap *m, uint32_t host, uint32_t ns) {
        uint32_t v = 0;
        assert_int_equal(nsid_idmap_to_ns(m, host, &v), 0);
        assert_int_equal(v, ns);
        assert_int_equal(nsid_idmap_to_ns_munged(m, host, &v), 0);
        assert_int_equal(v, ns);
}

static void assert_no_host(const nsid_idmap *m, uint32_t ns) {
        uint32_t v = 12345, ov;
        assert_int_equal(nsid_idmap_to_host(m, ns, &v), -ENOENT);
        assert_int_equal(v, 12345);
        assert_int_equal(nsid_idmap_get_overflow_id(m, &ov), 0);
        assert_int_equal(nsid_idmap_to_host_munged(m, ns, &v), 1);
        assert_int_equal(v, ov);
}

static void assert_no_ns(const nsid_idmap *m, uint32_t host) {
        uint32_t v = 12345, ov;
        assert_int_equal(nsid_idmap_to_ns(m, host, &v), -ENOENT);
        assert_int_equal(v, 12345);
        assert_int_equal(nsid_idmap_get_overflow_id(m, &ov), 0);
        assert_int_equal(nsid_idmap_to_ns_munged(m, host, &v), 1);
        assert_int_equal(v, ov);
}

/* Every boundary of every extent, both directions: first-1 (if not in a neighbour),
 * first, first+count-1, first+count. */
static void check_boundaries(const nsid_idmap *m) {
        int n = nsid_idmap_get_n_extents(m);
        assert_true(n >= 0);
        for (int i = 0; i < n; i++) {
                nsid_idmap_extent e;
                assert_int_equal(nsid_idmap_get_extent(m, (unsigned) i, &e), 0);
                uint32_t ns_last = e.ns_first + e.count - 1, host_last = e.host_first + e.count - 1;

                assert_host(m, e.ns_first, e.host_first);
                assert_host(m, ns_last, host_last);
                assert_ns(m, e.host_first, e.ns_first);
                assert_ns(m, host_last, ns_last);
                if (e.count > 2) {
                        assert_host(m, e.ns_first + 1, e.host_first + 1);
                        assert_ns(m, host_last - 1, ns_last - 1);
                }

                /* Just outside: unmapped unless a neighbouring extent starts/ends there. */
                uint32_t probe = ns_last + 1, v;
                if (probe != UINT32_MAX) {
                        int found = 0;
                        for (int j = 0; j < n; j++) {
                                nsid_idmap_extent f;
                                assert_int_equal(nsid_idmap_get_extent(m, (unsigned) j, &f), 0);
                                if (f.ns_first == probe) {
                                        assert_host(m, probe, f.host_first);
                                        found = 1;
                                }
                        }
                        if (!found)
                                assert_no_host(m, probe);
                } else
                        assert_no_host(m, probe);
                probe = host_last + 1;
                {
                        int found = 0;
                        for (int j = 0; j < n; j++) {
                                nsid_idmap_extent f;
                                assert_int_equal(nsid_idmap_get_extent(m, (unsigned) j, &f), 0);
                                if (f.host_first == probe) {
                                        assert_ns(m, probe, f.ns_first);
                                        found = 1;
                                }
                        }
                        if (!found)
                                assert_no_ns(m, probe);
                }
                if (e.ns_first > 0) {
                        probe = e.ns_first - 1;
                        int found = nsid_idmap_to_host(m, probe, &v) == 0;
                        for (int j = 0; j < n && found; j++) {
                                nsid_idmap_extent f;
                                assert_int_equal(nsid_idmap_get_extent(m, (unsigned) j, &f), 0);
                                if (f.ns_first + f.count - 1 == probe)
                                        found = 2;
                        }
                        assert_true(found != 1); /* mapped only when a neighbour ends there */
                }
        }
}

static void test_kernel_format(void **state) {
        /* Exactly what `cat /proc/PID/uid_map` prints for "0 100000 1000\n1000 200000 10". */
        nsid_idmap *m = parse_ok("         0     100000       1000\n"
                                 "      1000     200000         10\n");
        assert_int_equal(nsid_idmap_get_n_extents(m), 2);
        assert_int_equal(nsid_idmap_get_kind(m), NSID_IDMAP_UID);
        assert_int_equal(nsid_idmap_is_identity(m), 0);

        assert_host(m, 0, 100000);
        assert_host(m, 999, 100999);
        assert_host(m, 1000, 200000);
        assert_host(m, 1009, 200009);
        assert_no_host(m, 1010);
        assert_no_host(m, UINT32_MAX);
        assert_ns(m, 100000, 0);
        assert_ns(m, 100999, 999);
        assert_no_ns(m, 101000);
        assert_no_ns(m, 99999);
        assert_ns(m, 200000, 1000);
        assert_ns(m, 200009, 1009);
        assert_no_ns(m, 200010);
        assert_no_ns(m, 199999);
        assert_no_ns(m, 0);
        check_boundaries(m);

        /* format() gives the kernel's text back, and it parses to the same map. */
        char *text = NULL;
        assert_int_equal(nsid_idmap_format(m, &text), 0);
        assert_string_equal(text, "         0     100000       1000\n"
                                  "      1000     200000         10\n");
        nsid_idmap *m2 = parse_ok(text);
        free(text);
        assert_int_equal(nsid_idmap_get_n_extents(m2), 2);
        check_boundaries(m2);
        nsid_idmap_unref(m2);

        assert_ptr_equal(nsid_idmap_ref(m), m);
        assert_null(nsid_idmap_unref(m));
        assert_null(nsid_idmap_unref(m));
        assert_null(nsid_idmap_unref(NULL));
}

static void test_write_formats(void **state) {
        /* What the kernel accepts when the file is written. */
        nsid_idmap *m = parse_ok("0 1000 1");
        assert_host(m, 0, 1000);
        nsid_idmap_unref(m);
        m = parse_ok("0\t1000\t1\n");
        assert_host(m, 0, 1000);
        nsid_idmap_unref(m);
        m = parse_ok("0  1000 \t 1  \r\n5 7 1\n");
        assert_host(m, 5, 7);
        nsid_idmap_unref(m);
        m = parse_ok("00 01000 0001\n"); /* leading zeros: decimal, not octal */
        assert_host(m, 0, 1000);
        nsid_idmap_unref(m);

        /* Not NUL-terminated: only size bytes are parsed. */
        const char buf[] = "0 1000 1\n1 2000 1GARBAGE";
        nsid_idmap *m3 = NULL;
        assert_int_equal(idmap_parse_with_overflow(NSID_IDMAP_GID, buf, 9, 7, &m3), 0);
        assert_int_equal(nsid_idmap_get_n_extents(m3), 1);
        assert_int_equal(nsid_idmap_get_kind(m3), NSID_IDMAP_GID);
        uint32_t v;
        assert_int_equal(nsid_idmap_to_ns_munged(m3, 5, &v), 1);
        assert_int_equal(v, 7);
        nsid_idmap_unref(m3);
}

static void test_empty(void **state) {
        /* A user namespace whose map was not written yet reads as empty: nothing is mapped. */
        nsid_idmap *m = NULL;
        assert_int_equal(idmap_parse_with_overflow(NSID_IDMAP_UID, "", 0, 65534, &m), 0);
        assert_int_equal(nsid_idmap_get_n_extents(m), 0);
        assert_no_host(m, 0);
        assert_no_ns(m, 0);
        assert_int_equal(nsid_idmap_is_identity(m), 0);
        char *text = NULL;
        assert_int_equal(nsid_idmap_format(m, &text), 0);
        assert_string_equal(text, "");
        free(text);
        nsid_idmap_unref(m);
        m = NULL;
        assert_int_equal(idmap_parse_with_overflow(NSID_IDMAP_UID, NULL, 0, 65534, &m), 0);
        nsid_idmap_unref(m);
}

static void test_malformed(void **state) {
        static const char *const bad[] = {
                "\n",                          /* an empty line is not an extent */
                "0 1000 1\n\n",                /* empty line after the last */
                "0 1000 1\n\n1 2000 1\n",      /* empty line in the middle */
                "0 1000",                      /* missing count */
                "0",                           /* missing two fields */
                "0 1000 1 5",                  /* extra field */
                "0 1000 1 #comment",           /* no comments in maps */
                "0 1000 0",                    /* count 0 */
                "-1 1000 1",                   /* signs */
                "+0 1000 1",
                "0 -1000 1",
                "0 1000 +1",
                "0x0 1000 1",                  /* hex */
                "0 1000 1x",
                "a b c",
                "0,1000,1",
                "0 1000 1\x01",                /* control byte */
                "0 1000 \2401",                 /* Latin-1 nbsp (the kernel's isspace has it) */
                "4294967296 0 1",              /* above 2^32-1: kernel truncates, we refuse */
                "0 4294967296 1",
                "0 0 4294967296",
                "0 0 18446744073709551616",    /* above 2^64 */
                "0 0 99999999999999999999999999",
                "4294967295 0 1",              /* (u32)-1 as start: kernel refuses */
                "0 4294967295 1",
                "1 0 4294967295",              /* ns side wraps past 2^32-1 */
                "0 1 4294967295",              /* host side wraps */
                "4294967294 0 2",              /* ends at 2^32: first+count == 2^32 */
                "0 4294967294 2",
                "0 0 4294967295 ",             /* ok, see below: trailing blank allowed */
        };
        for (size_t i = 0; i + 1 < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = parse_s(bad[i]);
                if (r != -EINVAL)
                        fail_msg("map \"%s\" gave %d, expected -EINVAL", bad[i], r);
        }
        assert_int_equal(parse_s(bad[sizeof(bad) / sizeof(bad[0]) - 1]), 0);

        /* The highest ids that are still valid. */
        nsid_idmap *m = parse_ok("4294967294 0 1\n0 4294967294 1\n");
        assert_host(m, 4294967294u, 0);
        assert_ns(m, 4294967294u, 0);
        assert_no_host(m, 4294967295u);
        assert_no_ns(m, 4294967295u);
        nsid_idmap_unref(m);

        /* A NUL byte inside the text. */
        assert_int_equal(parse_r("0 1000 1\0\n1 2 1", 15), -EINVAL);
        assert_int_equal(parse_r("0 10\00000 1", 10), -EINVAL);
}

/* Regression (fuzz-idmap crash-6c2ae720): a number of more than 20 digits at the very end of
 * a text that is not NUL-terminated made parse_u64_n() read past the buffer. The buffer is
 * allocated to the exact size so that AddressSanitizer sees any overread. */
static void test_long_number_unterminated(void **state) {
        const size_t n = 95;
        char *buf = malloc(n);
        assert_non_null(buf);
        buf[0] = '\t';
        buf[1] = '\t';
        memset(buf + 2, '3', n - 2);
        assert_int_equal(parse_r(buf, n), -EINVAL);
        /* 21 digits in each position of a line */
        memcpy(buf, "0 0 ", 4);
        memset(buf + 4, '9', 21);
        assert_int_equal(parse_r(buf, 25), -EINVAL);
        memset(buf, '1', 21);
        assert_int_equal(parse_r(buf, 21), -EINVAL);
        free(buf);
}

static void test_overlap(void **state) {
        /* ns side overlap, host side overlap, containment, equal starts, in any order. */
        assert_int_equal(parse_s("0 1000 10\n9 5000 1\n"), -EINVAL);
        assert_int_equal(parse_s("9 5000 1\n0 1000 10\n"), -EINVAL);
        assert_int_equal(parse_s("0 1000 10\n100 1009 1\n"), -EINVAL);
        assert_int_equal(parse_s("100 1009 1\n0 1000 10\n"), -EINVAL);
        assert_int_equal(parse_s("0 1000 100\n50 5000 2\n"), -EINVAL);
        assert_int_equal(parse_s("0 1000 1\n0 2000 1\n"), -EINVAL);
        assert_int_equal(parse_s("0 1000 1\n1 1000 1\n"), -EINVAL);
        assert_int_equal(parse_s("5 5 1\n5 5 1\n"), -EINVAL);
        assert_int_equal(parse_s("0 0 4294967295\n4294967294 7 1\n"), -EINVAL);
        /* Adjacent is fine on both sides. */
        nsid_idmap *m = parse_ok("10 1010 10\n0 1000 10\n");
        assert_host(m, 9, 1009);
        assert_host(m, 10, 1010);
        assert_ns(m, 1009, 9);
        assert_ns(m, 1010, 10);
        check_boundaries(m);
        nsid_idmap_unref(m);
        /* Crossed: ns order differs from host order. */
        m = parse_ok("0 2000 10\n10 1000 10\n");
        assert_host(m, 0, 2000);
        assert_host(m, 10, 1000);
        assert_ns(m, 1009, 19);
        assert_ns(m, 2009, 9);
        assert_no_ns(m, 1999);
        check_boundaries(m);
        nsid_idmap_unref(m);
}

/* 340 extents (the kernel limit), in shuffled order with gaps, crossed between the two
 * sides so both binary searches matter; then 341 must be refused. */
static char *make_map(unsigned n) {
        size_t cap = (size_t) n * 40 + 1, off = 0;
        char *buf = malloc(cap);
        assert_non_null(buf);
        buf[0] = '\0';
        for (unsigned k = 0; k < n; k++) {
                unsigned i = (k * 7u) % n; /* 7 is coprime with 340 and 341: a permutation */
                uint32_t ns_first = i * 1000u, host_first = 100000u + (n - 1 - i) * 500u;
                uint32_t count = 1 + i % 400; /* < 500: no host overlap */
                off += (size_t) snprintf(buf + off, cap - off, "%10u %10u %10u\n", ns_first,
                                         host_first, count);
        }
        return buf;
}

static void test_max_extents(void **state) {
        char *text = make_map(NSID_IDMAP_MAX_EXTENTS);
        nsid_idmap *m = parse_ok(text);
        assert_int_equal(nsid_idmap_get_n_extents(m), 340);
        check_boundaries(m);
        /* A few explicit ones: extent i maps ns i*1000 to 100000+(339-i)*500. */
        assert_host(m, 0, 100000 + 339 * 500);
        assert_host(m, 339000, 100000);
        assert_host(m, 339000 + 338, 100000 + 338); /* count of extent 339 is 340 */
        assert_no_host(m, 339000 + 340);
        assert_no_host(m, 999);
        assert_ns(m, 100000 + 170 * 500, 169000);
        assert_no_ns(m, 99999);
        nsid_idmap_extent e;
        assert_int_equal(nsid_idmap_get_extent(m, 340, &e), -ERANGE);
        assert_int_equal(nsid_idmap_get_extent(m, 0, &e), 0);
        assert_int_equal(e.ns_first, 0); /* map order kept: line 1 is i = 0 */
        assert_int_equal(nsid_idmap_get_extent(m, 1, &e), 0);
        assert_int_equal(e.ns_first, 7000);
        nsid_idmap_unref(m);
        free(text);

        text = make_map(NSID_IDMAP_MAX_EXTENTS + 1);
        assert_int_equal(parse_s(text), -EINVAL);
        free(text);

        /* 340 lines plus a trailing newline is fine; a 341st empty line is not. */
        text = make_map(NSID_IDMAP_MAX_EXTENTS);
        size_t len = strlen(text);
        char *more = malloc(len + 2);
        assert_non_null(more);
        memcpy(more, text, len);
        more[len] = '\n';
        more[len + 1] = '\0';
        assert_int_equal(parse_s(more), -EINVAL);
        /* and without the final '\n' it is still 340 extents */
        text[len - 1] = '\0';
        m = parse_ok(text);
        assert_int_equal(nsid_idmap_get_n_extents(m), 340);
        nsid_idmap_unref(m);
        free(more);
        free(text);
}

static void test_many_single_extents(void **state) {
        /* 340 one-id extents packed next to each other on both sides, in reverse order: every
         * id is at a boundary. */
        char buf[340 * 40];
        size_t off = 0;
        for (int i = 339; i >= 0; i--)
                off += (size_t) snprintf(buf + off, sizeof(buf) - off, "%d %d 1\n", i * 2,
                                         5000 + i);
        nsid_idmap *m = parse_ok(buf);
        for (uint32_t i = 0; i < 340; i++) {
                assert_host(m, i * 2, 5000 + i);
                assert_no_host(m, i * 2 + 1);
                assert_ns(m, 5000 + i, i * 2);
        }
        assert_no_ns(m, 4999);
        assert_no_ns(m, 5340);
        check_boundaries(m);
        nsid_idmap_unref(m);
}

static void test_identity(void **state) {
        nsid_idmap *m = NULL;
        assert_int_equal(nsid_idmap_new_identity(NSID_IDMAP_GID, &m), 0);
        assert_int_equal(nsid_idmap_get_kind(m), NSID_IDMAP_GID);
        assert_int_equal(nsid_idmap_is_identity(m), 1);
        assert_int_equal(nsid_idmap_get_n_extents(m), 1);
        assert_host(m, 0, 0);
        assert_host(m, 1000, 1000);
        assert_host(m, 4294967294u, 4294967294u);
        assert_ns(m, 4294967294u, 4294967294u);
        assert_no_host(m, 4294967295u);
        assert_no_ns(m, 4294967295u);
        char *text = NULL;
        assert_int_equal(nsid_idmap_format(m, &text), 0);
        assert_string_equal(text, "         0          0 4294967295\n");
        free(text);
        nsid_idmap_unref(m);

        /* Split into adjacent pieces it is still the identity; shifted or short, it is not. */
        m = parse_ok("1000 1000 4294966295\n0 0 1000\n");
        assert_int_equal(nsid_idmap_is_identity(m), 1);
        nsid_idmap_unref(m);
        m = parse_ok("0 0 4294967294\n");
        assert_int_equal(nsid_idmap_is_identity(m), 0);
        nsid_idmap_unref(m);
        m = parse_ok("0 1 4294967294\n");
        assert_int_equal(nsid_idmap_is_identity(m), 0);
        nsid_idmap_unref(m);
}

static void test_overflow_id(void **state) {
        /* The public parser reads the kernel's overflow ids. */
        for (int k = 0; k < 2; k++) {
                const char *path = k ? "/proc/sys/kernel/overflowgid" : "/proc/sys/kernel/overflowuid";
                FILE *f = fopen(path, "re");
                unsigned expect = 65534;
                if (f) {
                        assert_int_equal(fscanf(f, "%u", &expect), 1);
                        fclose(f);
                }
                nsid_idmap *m = NULL;
                assert_int_equal(nsid_idmap_parse(k ? NSID_IDMAP_GID : NSID_IDMAP_UID,
                                                  "0 1000 10\n", 10, &m),
                                 0);
                uint32_t ov = 0, v = 0;
                assert_int_equal(nsid_idmap_get_overflow_id(m, &ov), 0);
                assert_int_equal(ov, expect);
                assert_int_equal(nsid_idmap_to_ns_munged(m, 999, &v), 1);
                assert_int_equal(v, expect);
                assert_int_equal(nsid_idmap_to_host_munged(m, 10, &v), 1);
                assert_int_equal(v, expect);
                nsid_idmap_unref(m);
        }
}

static void test_bad_args(void **state) {
        nsid_idmap *m = NULL;
        uint32_t v;
        nsid_idmap_extent e;
        char *s;
        assert_int_equal(nsid_idmap_parse(_NSID_IDMAP_KIND_MAX, "", 0, &m), -EINVAL);
        assert_int_equal(nsid_idmap_parse((nsid_idmap_kind) -1, "", 0, &m), -EINVAL);
        assert_int_equal(nsid_idmap_parse(NSID_IDMAP_UID, NULL, 1, &m), -EINVAL);
        assert_int_equal(nsid_idmap_parse(NSID_IDMAP_UID, "", 0, NULL), -EINVAL);
        assert_int_equal(nsid_idmap_new_identity(NSID_IDMAP_UID, NULL), -EINVAL);
        assert_int_equal(nsid_idmap_load_proc(NULL, NSID_IDMAP_UID, &m), -EINVAL);
        assert_int_equal(nsid_idmap_to_host(NULL, 0, &v), -EINVAL);
        assert_int_equal(nsid_idmap_to_ns(NULL, 0, &v), -EINVAL);
        assert_int_equal(nsid_idmap_to_host_munged(NULL, 0, &v), -EINVAL);
        assert_int_equal(nsid_idmap_to_ns_munged(NULL, 0, &v), -EINVAL);
        assert_int_equal(nsid_idmap_get_n_extents(NULL), -EINVAL);
        assert_int_equal(nsid_idmap_get_kind(NULL), -EINVAL);
        assert_int_equal(nsid_idmap_get_extent(NULL, 0, &e), -EINVAL);
        assert_int_equal(nsid_idmap_is_identity(NULL), -EINVAL);
        assert_int_equal(nsid_idmap_format(NULL, &s), -EINVAL);
        assert_int_equal(nsid_idmap_get_overflow_id(NULL, &v), -EINVAL);
        assert_null(m);
        assert_int_equal(nsid_idmap_new_identity(NSID_IDMAP_UID, &m), 0);
        assert_int_equal(nsid_idmap_to_host(m, 0, NULL), -EINVAL);
        assert_int_equal(nsid_idmap_get_extent(m, 0, NULL), -EINVAL);
        nsid_idmap_unref(m);
}

static void test_load_self(void **state) {
        /* This process's own maps, read through nsid_proc: whatever namespace the test runs
         * in, the text the kernel prints must parse, and agree with a direct read. */
        nsid_proc *p = NULL;
        assert_int_equal(nsid_proc_open_self(&p), 0);
        for (int k = 0; k < 2; k++) {
                nsid_idmap *m = NULL;
                assert_int_equal(nsid_idmap_load_proc(p, k ? NSID_IDMAP_GID : NSID_IDMAP_UID, &m),
                                 0);
                FILE *f = fopen(k ? "/proc/self/gid_map" : "/proc/self/uid_map", "re");
                assert_non_null(f);
                unsigned a, b, c, n = 0;
                while (fscanf(f, "%u %u %u", &a, &b, &c) == 3) {
                        nsid_idmap_extent e;
                        assert_int_equal(nsid_idmap_get_extent(m, n, &e), 0);
                        assert_int_equal(e.ns_first, a);
                        assert_int_equal(e.host_first, b);
                        assert_int_equal(e.count, c);
                        n++;
                }
                fclose(f);
                assert_int_equal(nsid_idmap_get_n_extents(m), (int) n);
                nsid_idmap_unref(m);
        }
        nsid_proc_unref(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kernel_format),  cmocka_unit_test(test_write_formats),
                cmocka_unit_test(test_empty),          cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_overlap),        cmocka_unit_test(test_max_extents),
                cmocka_unit_test(test_many_single_extents), cmocka_unit_test(test_identity),
                cmocka_unit_test(test_overflow_id),    cmocka_unit_test(test_bad_args),
                cmocka_unit_test(test_load_self),
                cmocka_unit_test(test_long_number_unterminated),
        };
        return run_test_group(tests, NULL, NULL);
}
