/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsid-uniquifier: one network namespace set, in three steps (prepare, apply, finish). */
#include "uniquifier.h"

/* ---- set one netns ---- */

const char *const state_words[] = {
        [ST_SET_NOW] = "set",          [ST_ALREADY_SET] = "already-set",
        [ST_WOULD_SET] = "would-set",  [ST_TOO_LATE] = "too-late",
        [ST_NOT_LOADED] = "no-nfs-client", [ST_REFUSED] = "refused",
        [ST_FAILED] = "failed",
};


/* known_nfs: whether the netns has NFS mounts if the caller already knows (a scan), or -1.
 * Returns false when there is nothing to apply (res says why). */
bool set_prepare(ctx *c, nsid_ns *netns, const nsid_proc *proc, const char *key,
                        nsid_key_source key_source, const char *name, unsigned flags,
                        int known_nfs, int mid_error, const char *mid_hex, set_job *job,
                        set_result *res) {
        nsid_ns_id nsid = {};
        unsigned id_flags = 0;
        int r;

        *res = (set_result) { .state = ST_FAILED, .source = NSID_KEY_AUTO };
        *job = (set_job) { .netns = netns, .flags = flags, .r = -EINVAL };
        (void) nsid_ns_get_id(netns, &nsid);

        if (flags & SET_REPLACE_KEY)
                id_flags |= NSID_IDENTITY_FOR_NS_REPLACE;
        /* reconcile read the machine-id already (in parallel) and failed: not again */
        if (mid_error < 0)
                id_flags |= NSID_IDENTITY_FOR_NS_NO_MACHINE_ID;
        /* reconcile read the machine-id already (in parallel): handed over, not read again */
        if (!key && mid_hex && proc) {
                key = mid_hex;
                key_source = NSID_KEY_MACHINE_ID;
        } else if (!key)
                key_source = NSID_KEY_AUTO;
        r = nsid_identity_for_ns_timeout(c->secret, c->reg, netns, proc, arg.app, key,
                                         key_source, name, id_flags, arg.timeout_ms, &job->id);
        if (r < 0) {
                res->error = r;
                if (r == -EADDRINUSE)
                        snprintf(res->why, sizeof(res->why),
                                 "the %s key gives an identity already used by another live "
                                 "network namespace",
                                 nsid_key_source_to_string(key_source));
                else
                        snprintf(res->why, sizeof(res->why), "cannot derive: %s", strerror(-r));
                if (!(flags & SET_DRY_RUN))
                        c->outcomes[r == -EADDRINUSE ? ST_REFUSED : ST_FAILED]++;
                return false;
        }
        snprintf(res->identity, sizeof(res->identity), "%s", nsid_identity_get_string(job->id));
        res->source = nsid_identity_get_source(job->id);
        res->id_flags = nsid_identity_get_flags(job->id);
        res->mid_error = mid_error < 0 ? mid_error : nsid_identity_get_machine_id_error(job->id);
        /* A container whose machine-id cannot be read in time (its /etc on a mount that does
         * not answer) costs its own netns the bound, and gets a random key: unique, though
         * not stable across restarts. Said loudly; other failures (no file...) are normal. */
        if (res->mid_error == -ETIMEDOUT && res->source == NSID_KEY_RANDOM)
                snprintf(res->why, sizeof(res->why),
                         "the container's /etc/machine-id was not read within %d ms (a mount "
                         "that does not answer?); a random key is used",
                         arg.timeout_ms);

        /* The kernel's list of the netns's NFS volumes, through the process when there is
         * one (one file); else every process of the host is looked at. */
        job->has_nfs = known_nfs;
        if (job->has_nfs < 0 && proc)
                job->has_nfs = nsid_netns_nfs_volumes(proc, netns);
        if (job->has_nfs < 0)
                job->has_nfs = nsid_netns_has_nfs_mounts(&nsid);
        /* nsid may replace what it set itself from a lower-priority key, but not under
         * existing NFS mounts (it would not take effect) unless forced. */
        job->replaceable = nsid_identity_get_replaced(job->id);
        if (job->has_nfs > 0 && !(flags & SET_FORCE))
                job->replaceable = NULL;
        return true;
}

void set_apply(set_job *job) {
        job->r = nsid_nfs_client_set_identifier(
                job->netns, nsid_identity_get_string(job->id), job->replaceable,
                ((job->flags & SET_FORCE) ? NSID_NFS_SET_FORCE : 0) |
                        ((job->flags & SET_DRY_RUN) ? NSID_NFS_SET_DRY_RUN : 0),
                arg.timeout_ms, &job->prev);
}

void set_finish(ctx *c, set_job *job, set_result *res) {
        int r = job->r;

        if (job->prev)
                snprintf(res->previous, sizeof(res->previous), "%s", job->prev);
        job->prev = mfree(job->prev);
        res->error = r < 0 ? r : 0;
        /* only what was written says "recorded": not with the registry unusable (it was not
         * passed at all), nor under --dry-run (read-only: looked up, never written) */
        res->recorded = c->reg && !(job->flags & SET_DRY_RUN) && res->identity[0] &&
                        !(res->id_flags & NSID_IDENTITY_UNRECORDED);
        if (r == 1)
                res->state = job->has_nfs > 0 ? ST_TOO_LATE : ST_SET_NOW;
        else if (r == 0)
                res->state = (job->flags & SET_DRY_RUN) &&
                                             strcmp(res->previous, res->identity) != 0
                                     ? ST_WOULD_SET
                                     : ST_ALREADY_SET;
        else if (r == -ENOENT) {
                res->state = ST_NOT_LOADED;
                snprintf(res->why, sizeof(res->why),
                         "no NFS client sysfs in this netns (nfs module not loaded)%s",
                         res->recorded ? "; identity recorded, a later reconcile sets it" : "");
        } else if (r == -EEXIST) {
                res->state = ST_REFUSED;
                snprintf(res->why, sizeof(res->why),
                         "a different identifier (%s) is already set%s; use --force to replace it",
                         res->previous, job->has_nfs > 0 ? " and NFS is mounted" : "");
                /* do not leave a binding that claims what the kernel does not have */
                if (c->reg)
                        (void) nsid_identity_forget(job->id, c->reg);
                res->recorded = false;
        } else {
                res->state = ST_FAILED;
                snprintf(res->why, sizeof(res->why), "cannot set the identifier: %s",
                         strerror(-r));
                if (c->reg)
                        (void) nsid_identity_forget(job->id, c->reg);
                res->recorded = false;
        }
        if (!(job->flags & SET_DRY_RUN))
                c->outcomes[res->state]++;
        job->id = nsid_identity_unref(job->id);
}

void set_one(ctx *c, nsid_ns *netns, const nsid_proc *proc, const char *key,
                    nsid_key_source key_source, const char *name, unsigned flags, int known_nfs,
                    set_result *res) {
        set_job job;

        if (!set_prepare(c, netns, proc, key, key_source, name, flags, known_nfs, 0, NULL, &job,
                         res))
                return;
        set_apply(&job);
        set_finish(c, &job, res);
}

static json_object *result_json(const nsid_ns_id *nsid, pid_t pid, const set_result *res) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "netns", json_object_new_uint64(nsid->ino));
        json_object_object_add(o, "netns_dev", json_object_new_uint64(nsid->dev));
        json_object_object_add(o, "pid", json_object_new_int(pid));
        json_object_object_add(o, "identifier",
                               res->identity[0] ? json_object_new_string(res->identity) : NULL);
        json_object_object_add(o, "source",
                               res->source != NSID_KEY_AUTO
                                       ? json_object_new_string(
                                                 nsid_key_source_to_string(res->source))
                                       : NULL);
        json_object_object_add(o, "state", json_object_new_string(state_words[res->state]));
        json_object_object_add(o, "previous", json_object_new_string(res->previous));
        json_object_object_add(o, "recorded", json_object_new_boolean(res->recorded));
        if (res->why[0])
                json_object_object_add(o, "why", json_object_new_string(res->why));
        return o;
}

void print_set_result(const nsid_ns_id *nsid, pid_t pid, const set_result *res) {
        if (arg.json) {
                json_object *o = result_json(nsid, pid, res);
                json_envelope_add(o, program, arg.command);
                puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(o);
        } else if (res->identity[0])
                printf("%s %s %s\n", res->identity, nsid_key_source_to_string(res->source),
                       state_words[res->state]);
        if (res->why[0] && !arg.quiet)
                notef(res->state == ST_FAILED ? LOG_ERR
                      : res->state == ST_TOO_LATE || res->state == ST_REFUSED ? LOG_WARNING
                                                                               : LOG_NOTICE,
                      "netns %" PRIu64 ": %s", nsid->ino, res->why);
        if (res->id_flags & NSID_IDENTITY_KEPT_EXISTING && res->state != ST_FAILED && !arg.quiet)
                notef(LOG_NOTICE, "netns %" PRIu64 ": kept the identity recorded for this netns "
                      "(its key ranks the same or higher); --replace-key to change it",
                      nsid->ino);
}

int exit_for(const set_result *res, bool hook) {
        switch (res->state) {
        case ST_SET_NOW:
        case ST_ALREADY_SET:
        case ST_WOULD_SET:
        case ST_NOT_LOADED:
                return EXIT_OK;
        case ST_TOO_LATE:
                return hook ? EXIT_OK : EXIT_TOO_LATE;
        case ST_REFUSED:
                /* a hook leaves an identifier someone else set alone and lets the container
                 * start: that netns already has a unique identity */
                return hook ? EXIT_OK : EXIT_REFUSED;
        default:
                return EXIT_FAIL;
        }
}
