/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SipHash-2-4 (Aumasson, Bernstein), written from the paper, and a random key for it: the
 * keyed hash of every table whose keys someone else chooses (a container's user names in
 * userdb.c, remote owner names in nsid-idmapd's answer cache), so that nobody can pick keys
 * that collide. Internal, and header-only: nsid-idmapd links the shared library, whose
 * internals are hidden, and includes this header from libnsid/src.
 */
#ifndef NSID_SIPHASH_H
#define NSID_SIPHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t siphash_rotl64(uint64_t x, unsigned b) {
        return (x << b) | (x >> (64 - b));
}

#define SIPHASH_ROUND                                                                          \
        do {                                                                                   \
                v0 += v1;                                                                      \
                v1 = siphash_rotl64(v1, 13);                                                   \
                v1 ^= v0;                                                                      \
                v0 = siphash_rotl64(v0, 32);                                                   \
                v2 += v3;                                                                      \
                v3 = siphash_rotl64(v3, 16);                                                   \
                v3 ^= v2;                                                                      \
                v0 += v3;                                                                      \
                v3 = siphash_rotl64(v3, 21);                                                   \
                v3 ^= v0;                                                                      \
                v2 += v1;                                                                      \
                v1 = siphash_rotl64(v1, 17);                                                   \
                v1 ^= v2;                                                                      \
                v2 = siphash_rotl64(v2, 32);                                                   \
        } while (0)

static inline uint64_t siphash_load_le64(const uint8_t *p) {
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--)
                v = (v << 8) | p[i];
        return v;
}

static inline uint64_t siphash24(const void *data, size_t len, const uint8_t key[16]) {
        const uint8_t *p = data, *end = p + (len & ~(size_t) 7);
        uint64_t k0 = siphash_load_le64(key), k1 = siphash_load_le64(key + 8);
        uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
        uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
        uint64_t b = (uint64_t) len << 56;

        for (; p != end; p += 8) {
                uint64_t m = siphash_load_le64(p);
                v3 ^= m;
                SIPHASH_ROUND;
                SIPHASH_ROUND;
                v0 ^= m;
        }
        for (size_t i = 0; i < (len & 7); i++)
                b |= (uint64_t) p[i] << (8 * i);
        v3 ^= b;
        SIPHASH_ROUND;
        SIPHASH_ROUND;
        v0 ^= b;
        v2 ^= 0xff;
        SIPHASH_ROUND;
        SIPHASH_ROUND;
        SIPHASH_ROUND;
        SIPHASH_ROUND;
        return v0 ^ v1 ^ v2 ^ v3;
}

/* A random SipHash key from getrandom(). */
static inline void siphash_random_key(uint8_t key[16]) {
        ssize_t n = getrandom(key, 16, GRND_NONBLOCK);
        if (n == 16)
                return;
        /* No entropy yet (early boot): still unpredictable enough to spread a table. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t a = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 32) ^ (uintptr_t) key;
        uint64_t b = (uint64_t) getpid() * 0x9e3779b97f4a7c15ULL ^ (uintptr_t) &ts;
        memcpy(key, &a, 8);
        memcpy(key + 8, &b, 8);
}

#endif
