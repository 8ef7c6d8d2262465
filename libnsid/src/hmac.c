/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* HMAC-SHA256: the kernel's (AF_ALG) when it has one, else libcrypto's. */
#include <errno.h>
#include <linux/if_alg.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hmac-internal.h"
#include "log-internal.h"
#include "macro.h"

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

/* One operation on a fresh socket: bind the algorithm, set the key, one sendmsg() of every
 * piece without MSG_MORE (which finishes the hash), read the digest. Any failure leaves
 * nothing behind: the caller falls back to libcrypto. */
static int hmac_kernel(const void *key, size_t key_len, const struct iovec *iov, size_t n,
                       uint8_t ret[NSID_HMAC_SHA256_SIZE]) {
        struct sockaddr_alg sa = {
                .salg_family = AF_ALG,
                .salg_type = "hash",
                .salg_name = "hmac(sha256)",
        };
        struct msghdr msg = { .msg_iov = (struct iovec *) iov, .msg_iovlen = n };
        size_t total = 0;
        ssize_t k;
        int tfm, op = -1, r = 0;

        for (size_t i = 0; i < n; i++)
                total += iov[i].iov_len;
        tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (tfm < 0)
                return negative_errno();
        if (bind(tfm, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, (socklen_t) key_len) < 0) {
                r = negative_errno();
                goto out;
        }
        op = accept4(tfm, NULL, NULL, SOCK_CLOEXEC);
        if (op < 0) {
                r = negative_errno();
                goto out;
        }
        k = sendmsg(op, &msg, MSG_NOSIGNAL);
        if (k < 0 || (size_t) k != total) {
                r = k < 0 ? negative_errno() : -EIO;
                goto out;
        }
        k = read(op, ret, NSID_HMAC_SHA256_SIZE);
        if (k != NSID_HMAC_SHA256_SIZE)
                r = k < 0 ? negative_errno() : -EIO;
out:
        safe_close(op);
        safe_close(tfm);
        if (r < 0)
                OPENSSL_cleanse(ret, NSID_HMAC_SHA256_SIZE);
        return r;
}

static int hmac_libcrypto(const void *key, size_t key_len, const struct iovec *iov, size_t n,
                          uint8_t ret[NSID_HMAC_SHA256_SIZE]) {
        EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
        EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
        OSSL_PARAM params[] = {
                OSSL_PARAM_construct_utf8_string("digest", (char *) "SHA256", 0),
                OSSL_PARAM_construct_end(),
        };
        size_t outl = 0;
        int r = -EIO;

        if (!ctx || EVP_MAC_init(ctx, key, key_len, params) != 1)
                goto out;
        for (size_t i = 0; i < n; i++)
                if (EVP_MAC_update(ctx, iov[i].iov_base, iov[i].iov_len) != 1)
                        goto out;
        if (EVP_MAC_final(ctx, ret, &outl, NSID_HMAC_SHA256_SIZE) != 1 ||
            outl != NSID_HMAC_SHA256_SIZE)
                goto out;
        r = 0;
out:
        EVP_MAC_CTX_free(ctx);
        EVP_MAC_free(mac);
        return r;
}

int nsid_hmac_sha256(nsid_hmac_backend backend, const void *key, size_t key_len,
                     const struct iovec *iov, size_t n, uint8_t ret[NSID_HMAC_SHA256_SIZE]) {
        int r;

        assert_return(key && ret && (iov || n == 0), -EINVAL);
        if (backend != NSID_HMAC_LIBCRYPTO) {
                r = hmac_kernel(key, key_len, iov, n, ret);
                if (r >= 0 || backend == NSID_HMAC_KERNEL)
                        return r;
                log_debug_errno(r, "hmac(sha256) of the kernel (AF_ALG) not available (%s); "
                                "libcrypto's is used",
                                strerror(-r));
        }
        r = hmac_libcrypto(key, key_len, iov, n, ret);
        if (r < 0)
                log_debug("HMAC-SHA256 failed in libcrypto");
        return r;
}
