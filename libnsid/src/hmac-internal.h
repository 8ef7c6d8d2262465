/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * HMAC-SHA256, for identity derivation and the host fingerprint.
 *
 * The kernel's hmac(sha256) through an AF_ALG socket when the kernel offers one, else
 * libcrypto's. Both compute the same function; the kernel's costs a process a few system
 * calls, where libcrypto's first use in a process initializes OpenSSL 3's providers (about
 * 2.5 ms natively, 50 ms in the TCG lab: most of what a container start hook paid).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define NSID_HMAC_SHA256_SIZE 32

typedef enum nsid_hmac_backend {
        NSID_HMAC_ANY,       /* the kernel's, else libcrypto's */
        NSID_HMAC_KERNEL,    /* the kernel's only (tests) */
        NSID_HMAC_LIBCRYPTO, /* libcrypto's only (tests) */
} nsid_hmac_backend;

/* HMAC-SHA256(key, the n pieces of iov one after the other) into ret. 0, or -EIO when no
 * backend could compute it; with NSID_HMAC_KERNEL the kernel's errno (-EAFNOSUPPORT when
 * the kernel has no AF_ALG, -ENOENT when it has no hmac(sha256)...). */
int nsid_hmac_sha256(nsid_hmac_backend backend, const void *key, size_t key_len,
                     const struct iovec *iov, size_t n, uint8_t ret[NSID_HMAC_SHA256_SIZE]);
