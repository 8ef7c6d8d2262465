/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_HOSTSECRET_H
#define NSID_HOSTSECRET_H

#include <stdbool.h>
#include <stdint.h>

#include <nsid/common.h>
#include <nsid/identity.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A host secret that tells cloned hosts apart (nsid_host_secret_new(3), doc/host-secret.md).
 *
 * nsid_host_secret_load() (nsid/identity.h) uses /etc/machine-id, which hosts cloned from one
 * image often share. nsid_host_secret_new() replaces it, as an explicit step, by 16 random
 * bytes generated here (STATE_DIR/host-secret, 0600) and records next to them the platform
 * they were made on (STATE_DIR/host-secret.fingerprint: keyed hashes of the DMI product UUID
 * and of the machine-id, never the values). From then on nsid_host_secret_load() returns that
 * secret (NSID_HOST_SECRET_GENERATED) whatever the machine-id, and
 * nsid_host_secret_inspect() says when the platform no longer matches: a clone made after
 * the secret (a new VM: another product UUID; an image whose machine-id was reset), or the
 * same host restored or moved onto other hardware. Nothing changes the secret by itself:
 * on a clone, nsid_host_secret_new() again; on the same host, nsid_host_secret_accept().
 *
 * Paths: machine_id_path NULL is /etc/machine-id, platform_id_path NULL is
 * /sys/class/dmi/id/product_uuid, state_dir NULL is NSID_STATE_DIR.
 */

#define NSID_HOST_SECRET_FINGERPRINT_FILE "host-secret.fingerprint"
#define NSID_HOST_SECRET_LOG_FILE "host-secret.log"

typedef struct nsid_host_secret_status {
        nsid_host_secret_source source;
        /* the platform has a usable product UUID now (readable, not all zeros or ones) */
        bool have_platform_id;
        /* NSID_HOST_SECRET_GENERATED only: the fingerprint's parts (false when a part was
         * not recorded, or cannot be read now) */
        bool platform_id_recorded;
        bool platform_id_changed;
        bool machine_id_recorded;
        bool machine_id_changed;
} nsid_host_secret_status;

/* Which secret nsid_host_secret_load() uses and whether this platform is the one it was made
 * on. Reads the secret but never creates or changes a file. */
NSID_API_WARN_UNUSED int nsid_host_secret_inspect(const char *machine_id_path,
                                                  const char *state_dir,
                                                  const char *platform_id_path,
                                                  nsid_host_secret_status *ret);

/*
 * Generate a new random host secret and its fingerprint; the previous STATE_DIR/host-secret
 * and fingerprint, if any, are kept as host-secret.old.<seconds since the epoch> (so the step
 * can be undone by hand). Appends one line to STATE_DIR/host-secret.log saying what was
 * replaced, and why (reason: free text, one line, may be NULL). Every identity derived from
 * now on differs from before. ret_previous (may be NULL): the source replaced.
 */
NSID_API_WARN_UNUSED int nsid_host_secret_new(const char *machine_id_path,
                                              const char *state_dir,
                                              const char *platform_id_path,
                                              const char *reason,
                                              nsid_host_secret_source *ret_previous);

/* Record the current platform as the generated secret's (the same host, moved or restored):
 * the secret and every identity stay. -ENOENT when there is no generated secret. Logged in
 * host-secret.log as above. */
NSID_API_WARN_UNUSED int nsid_host_secret_accept(const char *machine_id_path,
                                                 const char *state_dir,
                                                 const char *platform_id_path,
                                                 const char *reason);

#ifdef __cplusplus
}
#endif
#endif
