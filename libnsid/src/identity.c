/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Identity derivation (HMAC-SHA256 keyed by the host secret), key selection for a netns. */
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "file-internal.h"
#include "hostsecret-internal.h"
#include "hmac-internal.h"
#include "log-internal.h"
#include "macro.h"
#include "nsid/file.h"
#include "nsid/identity.h"
#include "nsid/netns.h"
#include "nsid/registry.h"
#include "nsid/worker.h"
#include "parse-util.h"

#define IDENTITY_MSG_VERSION "nsid-id-v1"
/* what a container's /etc/machine-id may hold (33 bytes; the rest is refused by the parser) */
#define MACHINE_ID_FILE_MAX 4096

struct nsid_identity {
        unsigned n_ref;
        char string[NSID_IDENTITY_STRING_SIZE];
        char app[NSID_APP_MAX + 1];
        nsid_key_source source;
        unsigned flags;
        int registry_error;
        int machine_id_error;
        nsid_ns_id netns;
        char replaced[NSID_IDENTITY_STRING_SIZE];
};

static const char *const key_source_names[_NSID_KEY_SOURCE_MAX] = {
        [NSID_KEY_EXPLICIT] = "explicit",
        [NSID_KEY_CONTAINER_ID] = "container-id",
        [NSID_KEY_MACHINE_ID] = "machine-id",
        [NSID_KEY_RANDOM] = "random",
};

_public_ const char *nsid_key_source_to_string(nsid_key_source s) {
        if ((int) s < 0 || s >= _NSID_KEY_SOURCE_MAX)
                return NULL;
        return key_source_names[s];
}

_public_ int nsid_key_source_from_string(const char *s) {
        assert_return(s, -EINVAL);
        for (int i = 0; i < _NSID_KEY_SOURCE_MAX; i++)
                if (strcmp(key_source_names[i], s) == 0)
                        return i;
        return -EINVAL;
}

_public_ const char *nsid_host_secret_source_to_string(nsid_host_secret_source s) {
        switch (s) {
        case NSID_HOST_SECRET_MACHINE_ID:
                return "machine-id";
        case NSID_HOST_SECRET_STATE_FILE:
                return "state-file";
        case NSID_HOST_SECRET_GENERATED:
                return "generated";
        default:
                return NULL;
        }
}

_public_ int nsid_machine_id_parse(const char *data, size_t size, uint8_t ret[NSID_ID128_SIZE]) {
        uint8_t b[NSID_ID128_SIZE];
        bool nonzero = false;

        assert_return(data || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        if (size == 0 || (size == 1 && data[0] == '\n'))
                return -ENOMEDIUM;
        if ((size == 13 || size == 14) && memcmp(data, "uninitialized", 13) == 0 &&
            (size == 13 || data[13] == '\n'))
                return -ENOMEDIUM;
        if (size == 33) {
                if (data[32] != '\n')
                        return -EINVAL;
        } else if (size != 32)
                return -EINVAL;

        for (size_t i = 0; i < NSID_ID128_SIZE; i++) {
                int hi = unhexchar(data[2 * i]), lo = unhexchar(data[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                b[i] = (uint8_t) (hi << 4 | lo);
                nonzero = nonzero || b[i] != 0;
        }
        if (!nonzero)
                return -EINVAL;
        memcpy(ret, b, sizeof(b));
        OPENSSL_cleanse(b, sizeof(b));
        return 0;
}

_public_ int nsid_app_validate(const char *app) {
        size_t n;

        assert_return(app, -EINVAL);
        n = strlen(app);
        if (n == 0 || n > NSID_APP_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                char c = app[i];
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-'))
                        return -EINVAL;
        }
        return 0;
}

_public_ int nsid_key_validate(const char *key) {
        size_t n;

        assert_return(key, -EINVAL);
        n = strlen(key);
        if (n == 0 || n > NSID_KEY_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) key[i] < 0x21 || (unsigned char) key[i] > 0x7e)
                        return -EINVAL;
        return 0;
}

static void put_be32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) (v >> 24);
        p[1] = (uint8_t) (v >> 16);
        p[2] = (uint8_t) (v >> 8);
        p[3] = (uint8_t) v;
}

_public_ int nsid_identity_derive(const uint8_t secret[NSID_ID128_SIZE], const char *app,
                                  const char *key, char ret[NSID_IDENTITY_STRING_SIZE]) {
        static const char hex[] = "0123456789abcdef";
        uint8_t md[NSID_HMAC_SHA256_SIZE], app_len[4], key_len[4];
        int r;

        assert_return(secret, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(nsid_app_validate(app) == 0, -EINVAL);
        assert_return(nsid_key_validate(key) == 0, -EINVAL);

        put_be32(app_len, (uint32_t) strlen(app));
        put_be32(key_len, (uint32_t) strlen(key));
        {
                const struct iovec msg[] = {
                        { (void *) IDENTITY_MSG_VERSION, strlen(IDENTITY_MSG_VERSION) },
                        { app_len, 4 },
                        { (void *) app, strlen(app) },
                        { key_len, 4 },
                        { (void *) key, strlen(key) },
                };
                r = nsid_hmac_sha256(NSID_HMAC_ANY, secret, NSID_ID128_SIZE, msg,
                                     ELEMENTSOF(msg), md);
        }
        if (r < 0)
                return r;

        /* RFC 4122 version 4, variant 10xx, as systemd's app-specific ids. */
        md[6] = (uint8_t) ((md[6] & 0x0f) | 0x40);
        md[8] = (uint8_t) ((md[8] & 0x3f) | 0x80);
        for (size_t i = 0; i < 16; i++) {
                ret[2 * i] = hex[md[i] >> 4];
                ret[2 * i + 1] = hex[md[i] & 15];
        }
        ret[32] = '\0';
        OPENSSL_cleanse(md, sizeof(md));
        return 0;
}

/* ---- nsid_identity objects ---- */

_public_ nsid_identity *nsid_identity_ref(nsid_identity *id) {
        if (id)
                id->n_ref++;
        return id;
}

_public_ nsid_identity *nsid_identity_unref(nsid_identity *id) {
        if (!id)
                return NULL;
        if (--id->n_ref > 0)
                return NULL;
        free(id);
        return NULL;
}

DEFINE_UNREF_CLEANUP(nsid_identity, nsid_identity_unref)

_public_ const char *nsid_identity_get_string(const nsid_identity *id) {
        return id ? id->string : NULL;
}

_public_ const char *nsid_identity_get_app(const nsid_identity *id) {
        return id ? id->app : NULL;
}

_public_ nsid_key_source nsid_identity_get_source(const nsid_identity *id) {
        return id ? id->source : NSID_KEY_AUTO;
}

_public_ unsigned nsid_identity_get_flags(const nsid_identity *id) {
        return id ? id->flags : 0;
}

_public_ int nsid_identity_get_registry_error(const nsid_identity *id) {
        return id ? id->registry_error : -EINVAL;
}

_public_ int nsid_identity_get_machine_id_error(const nsid_identity *id) {
        return id ? id->machine_id_error : -EINVAL;
}

_public_ const char *nsid_identity_get_replaced(const nsid_identity *id) {
        return id && id->replaced[0] ? id->replaced : NULL;
}

_public_ int nsid_identity_get_netns(const nsid_identity *id, nsid_ns_id *ret) {
        assert_return(id, -EINVAL);
        assert_return(ret, -EINVAL);
        *ret = id->netns;
        return 0;
}

_public_ int nsid_identity_forget(nsid_identity *id, nsid_registry *registry) {
        int r;

        assert_return(id, -EINVAL);
        assert_return(registry, -EINVAL);
        if (!(id->flags & NSID_IDENTITY_NEW_BINDING))
                return -ENOENT;
        r = nsid_registry_unbind(registry, id->app, &id->netns, id->string);
        if (r >= 0)
                id->flags &= ~NSID_IDENTITY_NEW_BINDING;
        return r;
}

static int random_key(char ret[NSID_IDENTITY_STRING_SIZE]) {
        static const char hex[] = "0123456789abcdef";
        uint8_t b[16];

        if (RAND_bytes(b, sizeof(b)) != 1)
                return -EIO;
        for (size_t i = 0; i < 16; i++) {
                ret[2 * i] = hex[b[i] >> 4];
                ret[2 * i + 1] = hex[b[i] & 15];
        }
        ret[32] = '\0';
        return 0;
}

/* Runs in the worker: inside the container's user and mount namespaces, chroot()ed to its
 * root, without capabilities. Replies with the file's bytes (parsed by the caller). Nothing
 * here allocates: reconcile runs these workers from several threads at once, and a forked
 * child must not need a lock another thread held at the fork (an allocator without fork
 * handlers, like ASan's, then hangs the child until its timeout: a random key for a container
 * whose machine-id was fine). */
static int machine_id_worker(int reply_fd, void *userdata) {
        _cleanup_close_ int rootfd = -EBADF;
        char data[MACHINE_ID_FILE_MAX + 1];
        size_t size = 0, done = 0;
        int r;

        (void) userdata;
        rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return negative_errno();
        r = file_read_in_root_buf(rootfd, "/etc/machine-id", data, MACHINE_ID_FILE_MAX, &size);
        if (r < 0)
                return r;
        while (done < size) {
                ssize_t n = write(reply_fd, data + done, size - done);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        explicit_bzero(data, sizeof(data));
                        return r;
                }
                done += (size_t) n;
        }
        explicit_bzero(data, sizeof(data));
        return 0;
}

_public_ int nsid_proc_read_machine_id(const nsid_proc *proc, int timeout_ms,
                                       uint8_t ret[NSID_ID128_SIZE]) {
        _cleanup_free_ char *reply = NULL;
        size_t size = 0;
        int r;

        assert_return(proc, -EINVAL);
        assert_return(timeout_ms > 0, -EINVAL);
        assert_return(ret, -EINVAL);

        r = nsid_worker_run(proc, NSID_NS_MASK(NSID_NS_USER) | NSID_NS_MASK(NSID_NS_MNT), 0,
                            timeout_ms, machine_id_worker, NULL, MACHINE_ID_FILE_MAX, &reply,
                            &size);
        if (r == -ETIMEDOUT)
                return log_debug_errno(r,
                                       "identity: /etc/machine-id of pid %d not read within %d "
                                       "ms (a mount that does not answer?)",
                                       (int) nsid_proc_get_pid(proc), timeout_ms);
        if (r < 0)
                return log_debug_errno(r, "identity: no usable /etc/machine-id in pid %d: %s",
                                       (int) nsid_proc_get_pid(proc), strerror(-r));
        r = nsid_machine_id_parse(reply, size, ret);
        OPENSSL_cleanse(reply, size);
        if (r < 0)
                return log_debug_errno(r, "identity: /etc/machine-id of pid %d is %s",
                                       (int) nsid_proc_get_pid(proc),
                                       r == -ENOMEDIUM ? "empty or uninitialized" : "malformed");
        return 0;
}

/* The container's /etc/machine-id as a key (32 lowercase hex), or a negative errno. */
static int container_machine_id(const nsid_proc *proc, const char *given, int timeout_ms,
                                const uint8_t host_mid[NSID_ID128_SIZE], bool have_host_mid,
                                char ret[NSID_IDENTITY_STRING_SIZE]) {
        static const char hex[] = "0123456789abcdef";
        uint8_t mid[NSID_ID128_SIZE];
        int r;

        /* given: what the caller read with nsid_proc_read_machine_id() (validated) */
        r = given ? nsid_machine_id_parse(given, strlen(given), mid)
                  : nsid_proc_read_machine_id(proc, timeout_ms, mid);
        if (r < 0)
                return r;
        if (have_host_mid && CRYPTO_memcmp(mid, host_mid, NSID_ID128_SIZE) == 0) {
                OPENSSL_cleanse(mid, sizeof(mid));
                log_debug("identity: pid %d shares the host's machine-id; not used",
                          (int) nsid_proc_get_pid(proc));
                return -EADDRINUSE;
        }
        for (size_t i = 0; i < 16; i++) {
                ret[2 * i] = hex[mid[i] >> 4];
                ret[2 * i + 1] = hex[mid[i] & 15];
        }
        ret[32] = '\0';
        OPENSSL_cleanse(mid, sizeof(mid));
        return 0;
}

static void registry_failed(nsid_identity *id, nsid_registry *registry, int r) {
        if (id->flags & NSID_IDENTITY_UNRECORDED)
                return;
        id->flags |= NSID_IDENTITY_UNRECORDED;
        id->registry_error = r;
        log_error("registry %s: %s (%s); identity derived without it and not recorded",
                  nsid_registry_get_path(registry), nsid_registry_last_error(registry),
                  strerror(-r));
}

_public_ int nsid_identity_for_ns(const uint8_t secret[NSID_ID128_SIZE], nsid_registry *registry,
                                  nsid_ns *netns, const nsid_proc *proc, const char *app,
                                  const char *key, nsid_key_source key_source, const char *name,
                                  unsigned flags, nsid_identity **ret) {
        return nsid_identity_for_ns_timeout(secret, registry, netns, proc, app, key, key_source,
                                            name, flags, NSID_IDENTITY_READ_TIMEOUT_MS, ret);
}

_public_ int nsid_identity_for_ns_timeout(const uint8_t secret[NSID_ID128_SIZE],
                                          nsid_registry *registry, nsid_ns *netns,
                                          const nsid_proc *proc, const char *app,
                                          const char *key, nsid_key_source key_source,
                                          const char *name, unsigned flags, int timeout_ms,
                                          nsid_identity **ret) {
        _cleanup_(nsid_identity_unrefp) nsid_identity *id = NULL;
        nsid_registry_entry e = {}, conflict = {}, existing = {};
        char boot_id[37] = "", keybuf[NSID_IDENTITY_STRING_SIZE];
        uint8_t host_mid[NSID_ID128_SIZE];
        bool have_host_mid = false, have_marker = false, given_wins = false;
        const char *given_mid = NULL;
        uint64_t cookie = 0;
        int r;

        assert_return(secret, -EINVAL);
        assert_return(netns, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return((flags & ~(NSID_IDENTITY_FOR_NS_REPLACE |
                                 NSID_IDENTITY_FOR_NS_NO_MACHINE_ID)) == 0,
                      -EINVAL);
        assert_return(timeout_ms > 0, -EINVAL);
        assert_return(nsid_ns_get_type(netns) == NSID_NS_NET, -EINVAL);
        if (!app)
                app = NSID_APP_NFS4;
        assert_return(nsid_app_validate(app) == 0, -EINVAL);
        if (key && key_source == NSID_KEY_MACHINE_ID) {
                /* the container's machine-id, already read by the caller: step 3's input */
                uint8_t b[NSID_ID128_SIZE];
                assert_return(proc, -EINVAL);
                assert_return(strlen(key) == 32 && strspn(key, "0123456789abcdef") == 32,
                              -EINVAL);
                assert_return(nsid_machine_id_parse(key, 32, b) == 0, -EINVAL);
                OPENSSL_cleanse(b, sizeof(b));
                given_mid = key;
                key = NULL;
                key_source = NSID_KEY_AUTO;
        } else if (key) {
                assert_return(key_source == NSID_KEY_EXPLICIT ||
                                      key_source == NSID_KEY_CONTAINER_ID,
                              -EINVAL);
                assert_return(nsid_key_validate(key) == 0, -EINVAL);
        } else
                assert_return(key_source == NSID_KEY_AUTO, -EINVAL);

        id = calloc(1, sizeof(*id));
        if (!id)
                return -ENOMEM;
        id->n_ref = 1;
        snprintf(id->app, sizeof(id->app), "%s", app);
        r = nsid_ns_get_id(netns, &id->netns);
        if (r < 0)
                return r;

        /* The liveness marker of this netns: without it nothing can be recorded safely. */
        r = nsid_boot_id(boot_id);
        if (r >= 0)
                r = nsid_netns_get_cookie(netns, &cookie);
        if (r < 0)
                log_debug_errno(r, "identity: no netns cookie (%s); registry not used",
                                strerror(-r));
        else
                have_marker = true;

        if (registry && !have_marker) {
                id->flags |= NSID_IDENTITY_UNRECORDED;
                id->registry_error = r;
                registry = NULL;
        }

        /* 2. the key already recorded for this very netns */
        if (registry) {
                r = nsid_registry_lookup_netns(registry, app, &id->netns, boot_id, cookie,
                                               &existing);
                if (r >= 0) {
                        given_wins = key && ((flags & NSID_IDENTITY_FOR_NS_REPLACE) ||
                                             key_source < existing.source);
                        if (given_wins) {
                                snprintf(id->replaced, sizeof(id->replaced), "%s",
                                         existing.identity);
                        } else {
                                if (key && strcmp(key, existing.key) != 0)
                                        id->flags |= NSID_IDENTITY_KEPT_EXISTING;
                                id->flags |= NSID_IDENTITY_REUSED;
                                key = existing.key;
                                key_source = existing.source;
                        }
                } else if (r != -ENOENT) {
                        registry_failed(id, registry, r);
                        registry = NULL;
                }
        }

        for (int attempt = 0;; attempt++) {
                if (!key && proc && attempt == 0 &&
                    !(flags & NSID_IDENTITY_FOR_NS_NO_MACHINE_ID)) {
                        /* 3. the container's own machine-id (in a worker, bounded) */
                        have_host_mid = nsid_host_machine_id(NULL, host_mid) >= 0;
                        r = container_machine_id(proc, given_mid, timeout_ms, host_mid,
                                                 have_host_mid, keybuf);
                        OPENSSL_cleanse(host_mid, sizeof(host_mid));
                        if (r == -EADDRINUSE)
                                id->flags |= NSID_IDENTITY_MACHINE_ID_SHARED;
                        else if (r < 0)
                                id->machine_id_error = r;
                        if (r >= 0) {
                                key = keybuf;
                                key_source = NSID_KEY_MACHINE_ID;
                        }
                }
                if (!key) {
                        /* 4. random */
                        r = random_key(keybuf);
                        if (r < 0)
                                goto fail;
                        key = keybuf;
                        key_source = NSID_KEY_RANDOM;
                }

                r = nsid_identity_derive(secret, app, key, id->string);
                if (r < 0)
                        goto fail;
                id->source = key_source;
                /* a reused key re-derived under a changed host secret */
                if ((id->flags & NSID_IDENTITY_REUSED) && !id->replaced[0] &&
                    strcmp(existing.identity, id->string) != 0)
                        snprintf(id->replaced, sizeof(id->replaced), "%s", existing.identity);

                if (!registry)
                        break;

                e = (nsid_registry_entry) {
                        .app = (char *) app,
                        .identity = id->string,
                        .key = (char *) key,
                        .source = key_source,
                        .netns = id->netns,
                        .boot_id = boot_id,
                        .netns_cookie = cookie,
                        .pid = proc ? nsid_proc_get_pid(proc) : 0,
                        .name = (char *) name,
                };
                /* The given key lost to the recorded one (a pod's second container, or a hook
                 * handed another container's pid): the binding stays the recorded container's,
                 * with its process and name. */
                if (id->flags & NSID_IDENTITY_KEPT_EXISTING) {
                        e.pid = existing.pid;
                        e.name = NULL;
                }
                nsid_registry_entry_done(&conflict);
                /* REPLACE only when a key given now outranks what was recorded for this netns,
                 * or when a reused key re-derived under a changed host secret must be recorded;
                 * otherwise a binding made concurrently by another process wins (below). */
                r = nsid_registry_bind(registry, &e,
                                       given_wins || (id->flags & NSID_IDENTITY_REUSED)
                                               ? NSID_REGISTRY_BIND_REPLACE
                                               : 0,
                                       NULL, NULL, &conflict);
                if (r >= 0) {
                        if (r > 0)
                                id->flags |= NSID_IDENTITY_NEW_BINDING;
                        break;
                }
                if (r == -EEXIST && attempt < 3) {
                        /* Another process bound this netns since our lookup (two reconciles,
                         * or a hook and a reconcile): adopt its key, as step 2 would have. */
                        bool given = key_source == NSID_KEY_EXPLICIT ||
                                     key_source == NSID_KEY_CONTAINER_ID;
                        if (given && ((flags & NSID_IDENTITY_FOR_NS_REPLACE) ||
                                      key_source < conflict.source)) {
                                /* ours outranks it: replace it (and its identifier) */
                                given_wins = true;
                                snprintf(id->replaced, sizeof(id->replaced), "%s",
                                         conflict.identity);
                                continue;
                        }
                        log_debug("identity: netns %" PRIu64 " was bound concurrently; adopting "
                                  "its %s key",
                                  id->netns.ino, nsid_key_source_to_string(conflict.source));
                        if (key && strcmp(key, conflict.key) != 0 &&
                            (key_source == NSID_KEY_EXPLICIT || key_source == NSID_KEY_CONTAINER_ID))
                                id->flags |= NSID_IDENTITY_KEPT_EXISTING;
                        nsid_registry_entry_done(&existing);
                        existing = conflict;
                        conflict = (nsid_registry_entry) {};
                        key = existing.key;
                        key_source = existing.source;
                        id->flags |= NSID_IDENTITY_REUSED;
                        continue;
                }
                if (r == -EADDRINUSE) {
                        if (key_source == NSID_KEY_MACHINE_ID || key_source == NSID_KEY_RANDOM) {
                                if (key_source == NSID_KEY_MACHINE_ID)
                                        id->flags |= NSID_IDENTITY_MACHINE_ID_SHARED;
                                log_debug("identity: %s key of netns %" PRIu64
                                          " already used by live netns %" PRIu64 "; trying random",
                                          nsid_key_source_to_string(key_source), id->netns.ino,
                                          conflict.netns.ino);
                                if (attempt >= 3)
                                        goto fail;
                                key = NULL;
                                continue;
                        }
                        log_debug("identity: %s key derives identity %s, already bound to live "
                                  "netns %" PRIu64 " (pid %d, %s)",
                                  nsid_key_source_to_string(key_source), id->string,
                                  conflict.netns.ino, (int) conflict.pid,
                                  conflict.name ? conflict.name : "-");
                        goto fail;
                }
                if (r == -EROFS) {
                        /* a read-only registry (dry run): looked up, never written */
                        id->flags |= NSID_IDENTITY_UNRECORDED;
                        id->registry_error = r;
                        break;
                }
                registry_failed(id, registry, r);
                break;
        }

        nsid_registry_entry_done(&conflict);
        nsid_registry_entry_done(&existing);
        OPENSSL_cleanse(keybuf, sizeof(keybuf));
        *ret = TAKE_PTR(id);
        return 0;
fail:
        nsid_registry_entry_done(&conflict);
        nsid_registry_entry_done(&existing);
        OPENSSL_cleanse(keybuf, sizeof(keybuf));
        return r;
}
