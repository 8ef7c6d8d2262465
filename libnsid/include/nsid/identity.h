/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_IDENTITY_H
#define NSID_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>
#include <nsid/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Stable per-namespace identities (the NFSv4 client uniquifier, and the same for any other
 * filesystem that wants one: SMB client GUIDs, Ceph reclaim UUIDs...).
 *
 * identity = first 16 bytes of HMAC-SHA256(key = host secret, message), with the RFC 4122
 * version-4 and variant bits set, printed as 32 lowercase hex characters. The message is
 * versioned and unambiguous:
 *
 *     "nsid-id-v1" || u32be(len(app)) || app || u32be(len(key)) || key
 *
 * so app "nfs4" + key "x" never equals app "nfs" + key "4x". The same container key gives
 * unrelated identities for different apps and different hosts. The host secret is never
 * exposed: only the keyed hash leaves the host.
 *
 * Host secret: the 16 raw bytes of the host's /etc/machine-id (32 hex characters, strictly
 * parsed); if that file is missing, empty, "uninitialized" or malformed, a random secret
 * persisted (mode 0600) as STATE_DIR/host-secret.
 */

#define NSID_ID128_SIZE 16
/* 32 hex characters + NUL */
#define NSID_IDENTITY_STRING_SIZE 33
/* The app id of the NFSv4 client uniquifier. */
#define NSID_APP_NFS4 "nfs4"
/* Longest accepted app id and container key (bytes). */
#define NSID_APP_MAX 64
#define NSID_KEY_MAX 1024

typedef enum nsid_host_secret_source {
        NSID_HOST_SECRET_MACHINE_ID,   /* /etc/machine-id */
        NSID_HOST_SECRET_STATE_FILE,   /* STATE_DIR/host-secret (existing or just created) */
        _NSID_HOST_SECRET_SOURCE_MAX,
} nsid_host_secret_source;

/* Where the container key came from, in priority order. */
typedef enum nsid_key_source {
        NSID_KEY_EXPLICIT,     /* CLI flag, OCI annotation org.nsid.key, configuration */
        NSID_KEY_CONTAINER_ID, /* the OCI container id or LXC container name */
        NSID_KEY_MACHINE_ID,   /* the container's own /etc/machine-id */
        NSID_KEY_RANDOM,       /* random, kept in the registry for the netns's lifetime */
        _NSID_KEY_SOURCE_MAX,
        NSID_KEY_AUTO = -1,    /* let nsid_identity_for_ns() pick */
} nsid_key_source;

/* "explicit", "container-id", "machine-id", "random"; NULL for an invalid value. */
const char *nsid_key_source_to_string(nsid_key_source s);
/* The reverse; -EINVAL for an unknown name. */
int nsid_key_source_from_string(const char *s);
/* "machine-id", "state-file". */
const char *nsid_host_secret_source_to_string(nsid_host_secret_source s);

/*
 * Parse a machine-id file's contents: exactly 32 hex characters (either case), optionally
 * followed by one "\n". Rejects empty data, "uninitialized", all zeros and anything else with
 * -EINVAL (-ENOMEDIUM for empty or "uninitialized", so callers can tell "not set up" from
 * garbage). data need not be NUL-terminated.
 */
NSID_API_WARN_UNUSED int nsid_machine_id_parse(const char *data, size_t size,
                                               uint8_t ret[NSID_ID128_SIZE]);

/*
 * Load the host secret. machine_id_path NULL means /etc/machine-id; state_dir NULL means the
 * compiled-in default (NSID_STATE_DIR, /var/lib/nsid). The state file is created atomically
 * (0600, in a 0700 directory created if missing) only when the machine-id is unusable; a
 * concurrent creator's file wins and is used by both. An existing state file must be a
 * regular file of exactly 16 bytes owned by us and not readable by others (-EPERM
 * otherwise). ret_source may be NULL.
 */
NSID_API_WARN_UNUSED int nsid_host_secret_load(const char *machine_id_path,
                                               const char *state_dir,
                                               uint8_t ret_secret[NSID_ID128_SIZE],
                                               nsid_host_secret_source *ret_source);

/* An app id is 1..NSID_APP_MAX bytes of [a-z0-9._-]. 0 if valid, -EINVAL if not. */
int nsid_app_validate(const char *app);
/* A container key is 1..NSID_KEY_MAX bytes of printable ASCII (0x21..0x7e). */
int nsid_key_validate(const char *key);

/* Derive the identity of (app, key) under secret into ret (32 lowercase hex + NUL). Pure:
 * no I/O, no registry. -EINVAL for an invalid app or key, -EIO if the crypto library fails. */
NSID_API_WARN_UNUSED int nsid_identity_derive(const uint8_t secret[NSID_ID128_SIZE],
                                              const char *app, const char *key,
                                              char ret[NSID_IDENTITY_STRING_SIZE]);

/*
 * The identity of a network namespace: picks the container key, derives the identity and
 * records the binding in the registry.
 *
 * Key, first that exists:
 *  1. key with key_source NSID_KEY_EXPLICIT or NSID_KEY_CONTAINER_ID, if given, unless the
 *     registry already records for this very netns a key of the same or a higher priority
 *     (explicit > container-id > machine-id > random): then that recorded key is kept
 *     (NSID_IDENTITY_KEPT_EXISTING; e.g. the second container of a pod sharing the pod's
 *     netns; the binding keeps its recorded pid and name) unless flags has
 *     NSID_IDENTITY_FOR_NS_REPLACE;
 *  2. the key already recorded in the registry for this very netns (same (dev, ino) and the
 *     same netns cookie in this boot, so a reused inode number is not mistaken for it);
 *  3. the container's own /etc/machine-id (nsid_proc_read_machine_id(): in a worker, bounded
 *     by NSID_IDENTITY_READ_TIMEOUT_MS), if proc is given, the file is valid and read in
 *     time, it is not the host's machine-id and its identity is not bound to another live
 *     netns (skipped with NSID_IDENTITY_FOR_NS_NO_MACHINE_ID);
 *  4. a new random key (kept in the registry for this netns's lifetime).
 *
 * key_source NSID_KEY_MACHINE_ID with key: the container's machine-id as the caller already
 * read it with nsid_proc_read_machine_id() (32 lowercase hex; proc must be given), e.g. for
 * many namespaces in parallel: step 3 uses it instead of reading the file again. It is not a
 * given key: it counts only where step 3 would.
 *
 * registry may be NULL (or fail): derivation does not need it. Then step 2 is skipped, a
 * random key is not persistent, and the result says so (NSID_IDENTITY_UNRECORDED; the
 * registry's error is logged at LOG_ERR and available from nsid_identity_get_registry_error()).
 *
 * When the identity replaces another one recorded for this netns, that one is available from
 * nsid_identity_get_replaced() (the caller may overwrite it in the kernel: nsid set it).
 *
 * Errors: -EADDRINUSE when an explicit or container-id key derives an identity that the
 * registry has bound to another live network namespace (two containers given the same key);
 * -EINVAL for a bad app or key; -EBADF/-ESRCH for a dead namespace or process.
 */

typedef struct nsid_identity nsid_identity;
typedef struct nsid_registry nsid_registry;

enum {
        NSID_IDENTITY_REUSED = 1u << 0,     /* taken from the registry entry of this netns */
        NSID_IDENTITY_NEW_BINDING = 1u << 1, /* this call created the registry entry */
        NSID_IDENTITY_UNRECORDED = 1u << 2, /* the registry could not be read or written */
        NSID_IDENTITY_MACHINE_ID_SHARED = 1u << 3, /* machine-id skipped: host's or in use */
        NSID_IDENTITY_KEPT_EXISTING = 1u << 4, /* the given key lost to a recorded one */
};

/* flags of nsid_identity_for_ns() */
enum {
        NSID_IDENTITY_FOR_NS_REPLACE = 1u << 0, /* the given key replaces any recorded one */
        /* skip step 3 (the caller already tried nsid_proc_read_machine_id() and it failed) */
        NSID_IDENTITY_FOR_NS_NO_MACHINE_ID = 1u << 1,
};

/* The bound nsid_identity_for_ns() puts on reading the container's /etc/machine-id. */
#define NSID_IDENTITY_READ_TIMEOUT_MS 5000

NSID_API_WARN_UNUSED int nsid_identity_for_ns(const uint8_t secret[NSID_ID128_SIZE],
                                              nsid_registry *registry, nsid_ns *netns,
                                              const nsid_proc *proc, const char *app,
                                              const char *key, nsid_key_source key_source,
                                              const char *name, unsigned flags,
                                              nsid_identity **ret);
/* The same with the bound on reading the container's /etc/machine-id given (milliseconds,
 * > 0) instead of NSID_IDENTITY_READ_TIMEOUT_MS. A machine-id that cannot be read in time
 * (a container whose /etc is on a mount that never answers) is skipped like an unusable
 * one: a random key is used and nsid_identity_get_machine_id_error() says -ETIMEDOUT. */
NSID_API_WARN_UNUSED int nsid_identity_for_ns_timeout(const uint8_t secret[NSID_ID128_SIZE],
                                                      nsid_registry *registry, nsid_ns *netns,
                                                      const nsid_proc *proc, const char *app,
                                                      const char *key,
                                                      nsid_key_source key_source,
                                                      const char *name, unsigned flags,
                                                      int timeout_ms, nsid_identity **ret);

/*
 * Read a container's /etc/machine-id, bounded in time: in a worker (nsid/worker.h) that joins
 * proc's user and mount namespaces, chroot()s to its root, drops every capability (it reads
 * with the rights of the container's root, as that root could) and reads the file through
 * nsid/file.h (4 KiB cap, no FIFOs/devices/procfs, symlinks clamped to the root). The worker
 * is killed after timeout_ms, so a file on a mount that never answers costs timeout_ms, not a
 * hang. Its reply is untrusted and parsed here with nsid_machine_id_parse().
 *
 * Errors: -ETIMEDOUT (not read in time: a hung mount), -ENOMEDIUM (empty or "uninitialized"),
 * -EINVAL (malformed), the errors of nsid/file.h (-ENOENT, -ENXIO, -ELOOP, -EMEDIUMTYPE,
 * -EFBIG, -EACCES...), -ESRCH (the process exited), -EPROTO (the worker died), and the
 * worker's setup errors (e.g. -EPERM from setns() without privilege).
 */
NSID_API_WARN_UNUSED int nsid_proc_read_machine_id(const nsid_proc *proc, int timeout_ms,
                                                   uint8_t ret[NSID_ID128_SIZE]);

nsid_identity *nsid_identity_ref(nsid_identity *id);
nsid_identity *nsid_identity_unref(nsid_identity *id);
/* 32 lowercase hex characters. */
const char *nsid_identity_get_string(const nsid_identity *id);
const char *nsid_identity_get_app(const nsid_identity *id);
nsid_key_source nsid_identity_get_source(const nsid_identity *id);
/* NSID_IDENTITY_* bits. */
unsigned nsid_identity_get_flags(const nsid_identity *id);
/* 0, or the negative errno of the registry failure behind NSID_IDENTITY_UNRECORDED. */
int nsid_identity_get_registry_error(const nsid_identity *id);
/* The identity recorded for this netns before this call and replaced by it, or NULL. */
const char *nsid_identity_get_replaced(const nsid_identity *id);
/* 0, or the negative errno of reading the container's /etc/machine-id when step 3 was tried
 * and failed (-ETIMEDOUT: not read within the bound; -ENOENT, -ENXIO, -EINVAL...). */
int nsid_identity_get_machine_id_error(const nsid_identity *id);
/* The netns the identity was computed for. */
int nsid_identity_get_netns(const nsid_identity *id, nsid_ns_id *ret);
/* Remove the registry binding this call created (NSID_IDENTITY_NEW_BINDING), e.g. when the
 * identifier could not be set after all. 0, or -ENOENT if there is none. */
int nsid_identity_forget(nsid_identity *id, nsid_registry *registry);

#ifdef __cplusplus
}
#endif
#endif
