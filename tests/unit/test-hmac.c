/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* HMAC-SHA256 (libnsid/src/hmac.c): RFC 4231's vectors through each backend, and the
 * kernel's (AF_ALG) against libcrypto's on random keys and messages cut into random pieces.
 * The kernel's cases are skipped where the running kernel offers no hmac(sha256) to
 * AF_ALG (the build hosts' kernel has none; the lab's 6.1 and 6.12 have: tests/vm runs this
 * program there). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <cmocka.h>

#include "hmac-internal.h"
#include "test-skip.h"

static void hex(const uint8_t *b, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", b[i]);
}

/* RFC 4231 section 4, test cases 1, 2 and 6 (6: a key longer than the block size) */
static const struct vec {
        const char *key_hex, *data, *mac;
} vectors[] = {
        { "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "Hi There",
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
        { "4a656665", "what do ya want for nothing?",
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
        { NULL, /* 131 bytes of 0xaa */
          "Test Using Larger Than Block-Size Key - Hash Key First",
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
};

static size_t unhex(const char *h, uint8_t *out) {
        size_t n = strlen(h) / 2;
        for (size_t i = 0; i < n; i++)
                sscanf(h + 2 * i, "%2hhx", &out[i]);
        return n;
}

/* 0, or the errno the kernel's answered with */
static int kernel_hmac_error(void) {
        uint8_t md[NSID_HMAC_SHA256_SIZE];
        struct iovec iov = { (void *) "x", 1 };
        int r = nsid_hmac_sha256(NSID_HMAC_KERNEL, "k", 1, &iov, 1, md);
        return r < 0 ? -r : 0;
}

#define need_kernel_hmac()                                                                     \
        do {                                                                                   \
                int e_ = kernel_hmac_error();                                                  \
                if (e_)                                                                        \
                        test_skip("the running kernel offers no hmac(sha256) to AF_ALG (%s; "  \
                                  "modprobe algif_hash)",                                      \
                                  strerror(e_));                                               \
        } while (0)

static void check_vectors(nsid_hmac_backend b) {
        for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
                uint8_t key[256], md[NSID_HMAC_SHA256_SIZE];
                char got[2 * NSID_HMAC_SHA256_SIZE + 1];
                size_t kl = vectors[i].key_hex ? unhex(vectors[i].key_hex, key) : 131;
                struct iovec iov = { (void *) vectors[i].data, strlen(vectors[i].data) };

                if (!vectors[i].key_hex)
                        memset(key, 0xaa, kl);

                assert_int_equal(nsid_hmac_sha256(b, key, kl, &iov, 1, md), 0);
                hex(md, sizeof(md), got);
                assert_string_equal(got, vectors[i].mac);
        }
}

static void test_vectors_libcrypto(void **state) {
        (void) state;
        check_vectors(NSID_HMAC_LIBCRYPTO);
}

static void test_vectors_kernel(void **state) {
        (void) state;
        need_kernel_hmac();
        check_vectors(NSID_HMAC_KERNEL);
        check_vectors(NSID_HMAC_ANY);
}

/* Identity derivation hashes 5 pieces; random pieces of 0..300 bytes, keys of 1..100 */
static void test_kernel_equals_libcrypto(void **state) {
        (void) state;
        need_kernel_hmac();
        for (int round = 0; round < 2000; round++) {
                uint8_t key[100], buf[1600], a[NSID_HMAC_SHA256_SIZE], b[NSID_HMAC_SHA256_SIZE];
                struct iovec iov[5];
                uint16_t len[6];
                size_t n, off = 0;

                assert_int_equal(getrandom(len, sizeof(len), 0), (ssize_t) sizeof(len));
                assert_int_equal(getrandom(key, sizeof(key), 0), (ssize_t) sizeof(key));
                assert_int_equal(getrandom(buf, sizeof(buf), 0), (ssize_t) sizeof(buf));
                n = 1 + len[5] % 5;
                for (size_t i = 0; i < n; i++) {
                        iov[i] = (struct iovec) { buf + off, len[i] % 301 };
                        off += iov[i].iov_len;
                }
                assert_int_equal(nsid_hmac_sha256(NSID_HMAC_KERNEL, key, 1 + len[4] % 100, iov,
                                                  n, a),
                                 0);
                assert_int_equal(nsid_hmac_sha256(NSID_HMAC_LIBCRYPTO, key, 1 + len[4] % 100,
                                                  iov, n, b),
                                 0);
                assert_memory_equal(a, b, sizeof(a));
        }
}

/* Without the kernel's, the default is libcrypto's: never an error */
static void test_any_always_answers(void **state) {
        uint8_t md[NSID_HMAC_SHA256_SIZE];
        struct iovec iov = { (void *) "Hi There", 8 };
        char got[2 * NSID_HMAC_SHA256_SIZE + 1];
        uint8_t key[20];

        (void) state;
        memset(key, 0x0b, sizeof(key));
        assert_int_equal(nsid_hmac_sha256(NSID_HMAC_ANY, key, sizeof(key), &iov, 1, md), 0);
        hex(md, sizeof(md), got);
        assert_string_equal(got, vectors[0].mac);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vectors_libcrypto),
                cmocka_unit_test(test_vectors_kernel),
                cmocka_unit_test(test_kernel_equals_libcrypto),
                cmocka_unit_test(test_any_always_answers),
        };
        return run_test_group(tests, NULL, NULL);
}
