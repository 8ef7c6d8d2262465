/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The id_resolver upcall: "nsid-idmap [-t timeout] <key serial> <description>".
 *
 * One lookup: the key is read and checked (lookup_begin()), the plan is made from nsid.conf
 * and the kernel (lookup_plan(), idmap-strategy.c), and the strategies run in the order
 * idmap_strategy_next() gives, one function each: hand over to the requester's idmap pipe,
 * nsid-idmapd in the requester's namespace, nsid-idmapd in the host context, the host
 * context here (idmap-host.c), the requester's files (idmap-requester.c), and the answer.
 *
 * Every path ends the request: the key is instantiated, or rejected with a short negative
 * timeout; only when even the rejection fails (or the serial itself is unusable) does the
 * helper exit non-zero leaving the kernel to negate the key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include <keyutils.h>
#include <nsid/conffile.h>
#include <nsid/kernel.h>
#include <nsid/keyring.h>

#include "fmt-util.h"
#include "idmap-lookup.h"
#include "idmap-strategy.h"
#include "macro.h"
#include "nsid-idmap.h"

/* Configuration of the opt-in policy, from /etc/nsid.conf [idmap]. The timeout of answers
 * that differ from the host's is short (the cache is global) but not shorter than 2 s: the
 * kernel checks the key once the helper has been reaped, and the NFS client reads it right
 * after, and an already expired key fails the requester itself (seen with 1 s under load). */
typedef struct policy {
        bool requester_context;
        bool requester_context_set; /* nsid.conf says yes or no */
        unsigned differing_timeout; /* timeout of answers that differ from the host's */
} policy;

static void load_policy(const idmap_opts *o, policy *ret) {
        policy p = { .differing_timeout = 5 };
        char small[4096]; /* nsid.conf is that small, usually: read without an allocation */
        char *text = NULL, *heap = NULL, *v = NULL;
        size_t size = 0;
        int r;

        r = read_small_file(o->nsid_conf, small, sizeof(small));
        if (r >= 0) {
                text = small;
                size = (size_t) r;
        } else if (r == -EFBIG) {
                r = read_host_file(o->nsid_conf, 1024 * 1024, &heap, &size);
                text = heap;
        }
        if (r < 0) {
                if (r != -ENOENT)
                        logmsg(LOG_WARNING, "cannot read %s: %s; using the default policy",
                               o->nsid_conf, strerror(-r));
                *ret = p;
                return;
        }
        /* No [idmap] section without the word (section names compare case-insensitively):
         * nothing to look up, and libinih need not be loaded (libnsid/src/inih-internal.h). */
        bool named = false;
        for (size_t i = 0; i + 5 <= size && !named; i++)
                named = strncasecmp(text + i, "idmap", 5) == 0;
        if (!named) {
                free(heap);
                *ret = p;
                return;
        }
        if (nsid_conf_get(text, size, "idmap", "requester-context", &v) >= 0) {
                r = nsid_conf_parse_bool(v);
                if (r < 0)
                        logmsg(LOG_WARNING, "%s: [idmap] requester-context = \"%s\" is not a "
                               "boolean; ignored", o->nsid_conf, v);
                else {
                        p.requester_context = r;
                        p.requester_context_set = true;
                }
                free(v);
                v = NULL;
        }
        if (nsid_conf_get(text, size, "idmap", "requester-context-timeout", &v) >= 0) {
                uint64_t t;
                if (parse_uint_strict(v, 600, &t) < 0 || t < 2)
                        logmsg(LOG_WARNING, "%s: [idmap] requester-context-timeout = \"%s\" "
                               "is not 2..600; ignored", o->nsid_conf, v);
                else
                        p.differing_timeout = (unsigned) t;
                free(v);
        }
        free(heap);
        *ret = p;
}

/* One lookup: the key, what it asks, its requester, and what the strategies found. */
typedef struct lookup {
        const idmap_opts *o;
        key_serial_t key;
        char *desc_heap; /* the key's description, when longer than desc_buf */
        /* "id_resolver;UID;GID;PERM;" and a description of at most 1,024 bytes and its kind
         * fit here; a longer one is read into desc_heap (and then rejected by the parser) */
        char desc_buf[1280];
        const char *desc; /* what it asks, without the test prefix */
        size_t desc_len;
        nsid_idmap_keydesc kd;
        policy pol;
        idmap_plan plan;
        requester rq;
        int rq_r;
        /* nsid-idmapd's call: sent before the requester is looked for, read by a strategy */
        fastpath_call fc;
        int f;
        unsigned timeout; /* of the answer */
        answer host, ans;
        bool have_host;
        const char *source, *via; /* for the log line of the answer */
        char esc[1024], who[512];  /* what the log lines show */
        int status;                /* the exit status */
} lookup;

static void drop_all_caps(key_serial_t key) {
        int r = caps_keep(0, 0, NULL); /* idempotent: nothing changes after the first call */
        if (r < 0)
                logmsg(LOG_WARNING, "key %d: cannot drop capabilities: %s", key, strerror(-r));
}

/* A rejection with the short negative timeout, and the lookup is over. */
static idmap_outcome reject(lookup *l, unsigned error) {
        key_reject(l->key, IDMAP_NEGATIVE_TIMEOUT, error);
        return IDMAP_DONE;
}

/* nsid-idmapd's answer (checked by fastpath_finish()) as the helper's own */
static void answer_from_daemon(const fastpath_answer *fa, answer *ret) {
        ret->is_name = fa->is_name;
        ret->id = fa->id;
        if (fa->is_name)
                memcpy(ret->name, fa->name, strlen(fa->name) + 1);
}

/* A key that is not what the helper answers, or a description that is not the key's:
 * rejected as such, and the lookup is over. */
static int invalid(lookup *l) {
        key_reject(l->key, IDMAP_NEGATIVE_TIMEOUT, EKEYREJECTED);
        return -1;
}

/* The key read and checked: its type, its description (the argument request-key passed must
 * be the key's own), the test prefix, what it asks. 0, or -1: the key rejected, or no key
 * to reject (an unusable serial). */
static int lookup_begin(lookup *l, const char *serial_s, const char *desc_arg) {
        const idmap_opts *o = l->o;
        const char *want_type = o->test_prefix ? "user" : "id_resolver";
        nsid_key_describe kdesc;
        char *d = NULL;
        int r;

        r = parse_key_serial(serial_s, &l->key);
        if (r < 0) {
                logmsg(LOG_ERR, "invalid key serial \"%s\": %s; no key to answer (check the "
                       "request-key rule: \"%%k %%d\")", log_escape(serial_s, strlen(serial_s),
                                                                  l->esc, sizeof(l->esc)),
                       strerror(-r));
                return -1;
        }
        watchdog_arm(l->key, o->max_seconds, IDMAP_NEGATIVE_TIMEOUT, EAGAIN);
        r = keyctl_describe_buf(l->key, l->desc_buf, sizeof(l->desc_buf));
        if (r >= 0)
                d = l->desc_buf;
        else if (r == -ERANGE) {
                if (keyctl_describe_alloc(l->key, &l->desc_heap) < 0)
                        r = -errno;
                d = l->desc_heap;
        }
        if (!d) {
                logmsg(LOG_ERR, "key %d: cannot describe it: %s", l->key, strerror(-r));
                return invalid(l);
        }
        r = nsid_key_describe_parse(d, strlen(d), &kdesc);
        if (r < 0 || kdesc.type_len != strlen(want_type) ||
            memcmp(kdesc.type, want_type, kdesc.type_len) != 0) {
                logmsg(LOG_ERR, "key %d: rejected: type is not %s (\"%s\")", l->key, want_type,
                       log_escape(d, strlen(d), l->esc, sizeof(l->esc)));
                return invalid(l);
        }
        if (strlen(desc_arg) != kdesc.description_len ||
            memcmp(desc_arg, kdesc.description, kdesc.description_len) != 0) {
                logmsg(LOG_ERR, "key %d: rejected: description argument \"%s\" is not the "
                       "key's", l->key, log_escape(desc_arg, strlen(desc_arg), l->esc,
                                                   sizeof(l->esc)));
                return invalid(l);
        }
        l->desc = kdesc.description;
        l->desc_len = kdesc.description_len;
        if (o->test_prefix) {
                size_t pl = strlen(o->test_prefix);
                if (l->desc_len < pl || memcmp(l->desc, o->test_prefix, pl) != 0) {
                        logmsg(LOG_ERR, "key %d: rejected: test mode and the description "
                               "lacks the prefix", l->key);
                        return invalid(l);
                }
                l->desc += pl;
                l->desc_len -= pl;
        }
        r = nsid_idmap_keydesc_parse(l->desc, l->desc_len, &l->kd);
        if (r < 0) {
                logmsg(LOG_ERR, "key %d: rejected: invalid id_resolver description \"%s\" "
                       "(%zu bytes): %s", l->key,
                       log_escape(l->desc, l->desc_len, l->esc, sizeof(l->esc)), l->desc_len,
                       r == -ENAMETOOLONG ? "name longer than 1024 bytes"
                       : r == -ERANGE     ? "id out of range"
                                          : "expected uid:NAME, gid:NAME, user:ID or group:ID "
                                            "with a name without ':', '@@' or control "
                                            "characters, or a decimal id below 4294967295");
                return invalid(l);
        }
        return 0;
}

/* nsid.conf's policy and what the kernel does: the plan */
static void lookup_plan(lookup *l) {
        const idmap_opts *o = l->o;
        int tagged = 0;

        load_policy(o, &l->pol);
        if (!l->pol.requester_context_set && !o->test_prefix)
                tagged = nsid_kernel_nfs_idkeys_tagged_cached(NSID_RUN_DIR "/nfs-idkeys");
        l->plan = idmap_plan_make(l->pol.requester_context_set, l->pol.requester_context,
                                  o->test_prefix != NULL, tagged, o->daemon_timeout_ms);
}

/* The requester found (with the daemon's host-context lookup already on its way when that
 * is the plan's first answer, so the daemon answers meanwhile). */
static void lookup_find_requester(lookup *l) {
        if (!l->plan.requester_context && !l->plan.to_pipe)
                l->f = fastpath_start(l->o->daemon_socket, l->o->daemon_timeout_ms, &l->kd, 0,
                                      &l->fc);
        l->rq_r = requester_find(l->key, &l->rq);
        if (log_wanted(LOG_ERR)) { /* what the log lines show (nothing to build without a log) */
                log_escape(l->desc, l->desc_len, l->esc, sizeof(l->esc));
                requester_describe(&l->rq, l->rq_r, l->who, sizeof(l->who));
        }
}

/* the requester's pid for nsid-idmapd, 0 for the host's context (a requester in the
 * initial network namespace, or none found) */
static pid_t requester_target(const lookup *l) {
        return l->rq_r >= 0 && l->rq.net_initial != 1 ? l->rq.pid : 0;
}

/* The daemon's reply named a pid: it must still be the requester (pinned by its pidfd). */
static bool requester_still_there(lookup *l) {
        return requester_proc(&l->rq) >= 0 && nsid_proc_check_alive(l->rq.proc) >= 0;
}

/* ---- the strategies ---- */

/* A kernel that keeps one ID key cache for every namespace: this key is rejected (a marker
 * that lives as long as an answer would), the NFS client falls back to its network
 * namespace's idmap pipe, and nsid-idmapd answers there in that namespace's context and
 * invalidates the key once read. Only when nsid-idmapd says it holds that namespace's pipes
 * open ("route"; it attaches the namespace first): a pipe nobody reads fails the lookup, and
 * the kernel caches that failure for everyone. */
static idmap_outcome strategy_pipe(lookup *l) {
        const idmap_opts *o = l->o;
        /* an unknown requester: its client's pipe is answered if the daemon serves pipes at
         * all (the host's stand for that) */
        pid_t target = requester_target(l);
        unsigned rt = o->daemon_timeout_ms > IDMAP_ROUTE_TIMEOUT_MS ? o->daemon_timeout_ms
                                                                     : IDMAP_ROUTE_TIMEOUT_MS;
        int pipes = fastpath_route(o->daemon_socket, rt, target);
        int r;

        if (pipes > 0 && target > 0 && !requester_still_there(l))
                pipes = -ESRCH; /* the reply was about a pid that may be another's */
        if (pipes > 0) {
                drop_all_caps(l->key);
                r = key_reject(l->key, l->timeout, ENOKEY);
                if (r >= 0) {
                        if (log_wanted(LOG_INFO))
                                logmsg(LOG_INFO, "key %d: %s: handed to the idmap pipe of the "
                                       "requester's network namespace (nsid-idmapd); marker "
                                       "for %us; %s", l->key, l->esc, l->timeout, l->who);
                        l->status = 0;
                        return IDMAP_DONE;
                }
                logmsg(LOG_WARNING, "key %d: %s: cannot hand it to the idmap pipe: %s; "
                       "answering here", l->key, l->esc, strerror(-r));
        } else if (pipes != -ENOENT && pipes != -ECONNREFUSED)
                logmsg(pipes == 0 ? LOG_INFO : LOG_WARNING, "key %d: %s: nsid-idmapd %s; "
                       "answering here; %s", l->key, l->esc,
                       pipes == 0 ? "does not serve the requester's idmap pipes"
                       : pipes == -ETIMEDOUT ? "did not answer in time"
                                             : strerror(-pipes), l->who);
        /* Not handed over by a daemon that is there (slow, or not serving that namespace's
         * pipes): the host's answer would be cached for everyone and is the wrong one for a
         * requester in a container, which is answered from its own files instead (a worker,
         * as requester-context = yes), with the short timeout of answers that differ from
         * the host's. With no daemon at all the helper stays nfsidmap's drop-in: the host's
         * context. */
        if (target > 0 && pipes != -ENOENT && pipes != -ECONNREFUSED)
                l->plan.requester_context = true;
        if (!l->plan.requester_context)
                l->f = fastpath_start(o->daemon_socket, o->daemon_timeout_ms, &l->kd, 0, &l->fc);
        return IDMAP_NEXT;
}

/* Keys tagged by network namespace: the requester's namespace's answer from nsid-idmapd
 * (the host's own, for a requester in the initial network namespace). */
static idmap_outcome strategy_daemon_ns(lookup *l) {
        const idmap_opts *o = l->o;
        pid_t target = requester_target(l);
        fastpath_answer fa;
        int f;

        f = l->rq_r >= 0 ? fastpath_start(o->daemon_socket, o->daemon_timeout_ms, &l->kd,
                                          target, &l->fc)
                         : -ESRCH;
        if (f >= 0)
                f = fastpath_finish(&l->fc, &fa);
        if (f >= 0 && target > 0 && !requester_still_there(l))
                f = -ESRCH; /* answered for a pid that may name another process now */
        if (f >= 0 && fa.negative) {
                logmsg(LOG_WARNING, "key %d: %s: no mapping in the requester's context "
                       "(nsid-idmapd); rejected for %us; %s", l->key, l->esc,
                       IDMAP_NEGATIVE_TIMEOUT, l->who);
                return reject(l, ENOKEY);
        }
        if (f >= 0) {
                answer_from_daemon(&fa, &l->ans);
                l->source = target > 0 ? "requester" : "host";
                l->via = fa.cached ? ", nsid-idmapd cache" : ", nsid-idmapd";
                return IDMAP_ANSWERED;
        }
        if (f != -ENOENT && f != -ECONNREFUSED && f != -ESRCH)
                logmsg(LOG_WARNING, "key %d: nsid-idmapd at %s not used (%s); resolving here",
                       l->key, o->daemon_socket,
                       f == -ETIMEDOUT ? "no answer in time" : strerror(-f));
        return IDMAP_NEXT;
}

/* The host's context: nsid-idmapd's answer (its cache), the call sent before the requester
 * was looked for. */
static idmap_outcome strategy_host_fast(lookup *l) {
        fastpath_answer fa;
        int f = l->f;

        drop_all_caps(l->key); /* the requester is known: nothing privileged is left */
        if (f >= 0)
                f = fastpath_finish(&l->fc, &fa);
        if (f >= 0 && fa.negative) {
                logmsg(LOG_WARNING, "key %d: %s: no mapping (nsid-idmapd); rejected for %us; %s",
                       l->key, l->esc, IDMAP_NEGATIVE_TIMEOUT, l->who);
                return reject(l, ENOKEY);
        }
        if (f >= 0) {
                answer_from_daemon(&fa, &l->host);
                l->have_host = true;
                l->ans = l->host;
                l->via = fa.cached ? ", nsid-idmapd cache" : ", nsid-idmapd";
                return IDMAP_ANSWERED;
        }
        if (f != -ECANCELED)
                logmsg(f == -ENOENT || f == -ECONNREFUSED ? LOG_DEBUG : LOG_WARNING,
                       "key %d: nsid-idmapd at %s not used (%s); resolving here", l->key,
                       l->o->daemon_socket, f == -ETIMEDOUT ? "no answer in time" : strerror(-f));
        return IDMAP_NEXT;
}

/* The host's context, here: libnfsidmap with the host's idmapd.conf. In the requester's
 * context it is what the requester's answer is compared with. */
static idmap_outcome strategy_host_local(lookup *l) {
        int r = idmap_resolve_host(l->o, &l->kd, &l->host);

        l->have_host = r >= 0;
        if (l->plan.requester_context)
                return IDMAP_NEXT;
        if (r < 0) {
                logmsg(LOG_WARNING, "key %d: %s: no mapping in the host context (%s); "
                       "rejected for %us; %s", l->key, l->esc, strerror(-r),
                       IDMAP_NEGATIVE_TIMEOUT, l->who);
                return reject(l, ENOKEY);
        }
        l->ans = l->host;
        return IDMAP_ANSWERED;
}

/* The requester's own files (requester-context), where the kernel can use their answer: a
 * requester in the initial user namespace whose mount namespace is its own. */
static idmap_outcome strategy_requester(lookup *l) {
        const requester *rq = &l->rq;
        answer c;
        int r;

        l->ans = l->host;
        if (l->rq_r < 0)
                logmsg(LOG_WARNING, "key %d: requester-context: requester not found (%s); "
                       "answering in the host context", l->key, strerror(-l->rq_r));
        else if (rq->user_initial != 1 || rq->mnt_owner_initial != 1)
                logmsg(LOG_WARNING, "key %d: requester-context: requester pid %d %s; the "
                       "kernel interprets this answer in the initial user namespace, so the "
                       "host context is used", l->key, (int) rq->pid,
                       rq->user_initial != 1
                               ? "is in a non-initial user namespace"
                               : "has a mount namespace owned by a non-initial user "
                                 "namespace (its files hold another ID space)");
        else if (rq->mnt_initial != 1) {
                r = idmap_resolve_requester(l->o, &l->rq, &l->kd, &c);
                if (r >= 0) {
                        const answer *h = &l->host;
                        bool same = l->have_host && c.is_name == h->is_name &&
                                    (c.is_name ? strcmp(c.name, h->name) == 0 : c.id == h->id);
                        l->source = "requester";
                        /* The kernel caches this answer for everyone: keep a
                         * container-specific one short-lived. */
                        if (!same && !l->plan.per_ns_keys && l->timeout > l->pol.differing_timeout)
                                l->timeout = l->pol.differing_timeout;
                        l->ans = c;
                } else if (r == -ETIMEDOUT) {
                        /* Its files hang (a mount that never answers): no answer for this
                         * container now; the kernel asks again later. */
                        logmsg(LOG_WARNING, "key %d: %s: the requester's files did not answer in "
                               "time; rejected for %us (EAGAIN); %s", l->key, l->esc,
                               IDMAP_NEGATIVE_TIMEOUT, l->who);
                        return reject(l, EAGAIN);
                } else if (!l->have_host) {
                        logmsg(LOG_WARNING, "key %d: %s: no mapping in the requester's context "
                               "(%s) nor the host's; rejected for %us; %s", l->key, l->esc,
                               strerror(-r), IDMAP_NEGATIVE_TIMEOUT, l->who);
                        return reject(l, ENOKEY);
                }
        }
        if (!l->have_host && strcmp(l->source, "host") == 0) {
                logmsg(LOG_WARNING, "key %d: %s: no mapping in the host context; rejected for "
                       "%us; %s", l->key, l->esc, IDMAP_NEGATIVE_TIMEOUT, l->who);
                return reject(l, ENOKEY);
        }
        return IDMAP_ANSWERED;
}

/* The answer, checked as strictly as what came from the kernel, given to the kernel. */
static idmap_outcome strategy_answer(lookup *l) {
        const answer *ans = &l->ans;
        char payload[NAME_BUF + 16];
        size_t plen;
        int r;

        drop_all_caps(l->key);
        if (ans->is_name) {
                size_t nl = strnlen(ans->name, sizeof(ans->name));
                if (nl >= sizeof(ans->name) || nsid_idmap_name_check(ans->name, nl) < 0) {
                        logmsg(LOG_ERR, "key %d: %s: the %s answer is not a valid name; "
                               "rejected; %s", l->key, l->esc, l->source, l->who);
                        return reject(l, ENOKEY);
                }
                memcpy(payload, ans->name, nl);
                plen = nl; /* names without their NUL, as the kernel expects */
        } else {
                if (ans->id == UINT32_MAX) {
                        logmsg(LOG_ERR, "key %d: %s: the %s answer is the invalid id "
                               "4294967295; rejected; %s", l->key, l->esc, l->source, l->who);
                        return reject(l, ENOKEY);
                }
                plen = fmt_u64(payload, ans->id) + 1; /* ids as decimal with their NUL */
        }

        r = key_answer(l->key, payload, plen, l->timeout);
        if (r < 0) {
                /* No keyring clear on EDQUOT: that would drop every other user's mappings. */
                logmsg(LOG_ERR, "key %d: %s: cannot instantiate: %s%s; rejected; %s", l->key,
                       l->esc, strerror(-r), r == -EDQUOT ? " (key quota of root exhausted)" : "",
                       l->who);
                return reject(l, (unsigned) -r);
        }
        if (log_wanted(LOG_INFO)) {
                /* "key %d: %s -> \"%s\"|%u (%s context%s, timeout %us); %s", without printf */
                char ks[24], ids[24], ts[24];
                fmt_u64(ks, (uint64_t) l->key);
                fmt_u64(ids, ans->id);
                fmt_u64(ts, l->timeout);
                log_join(LOG_INFO, "key ", ks, ": ", l->esc, " -> ", ans->is_name ? "\"" : "",
                         ans->is_name ? ans->name : ids, ans->is_name ? "\"" : "", " (", l->source,
                         " context", l->via, ", timeout ", ts, "s); ", l->who, NULL);
        }
        if (strcmp(l->source, "requester") == 0 && l->have_host && !l->plan.per_ns_keys &&
            (ans->is_name ? strcmp(ans->name, l->host.name) != 0 : ans->id != l->host.id)) {
                char h[NAME_BUF + 2];
                if (l->host.is_name)
                        snprintf(h, sizeof(h), "\"%s\"", l->host.name);
                else
                        snprintf(h, sizeof(h), "%u", l->host.id);
                logmsg(LOG_NOTICE, "key %d: the requester's answer differs from the host's "
                       "(%s); the kernel caches it globally, so only for %us", l->key, h,
                       l->timeout);
        }
        l->status = 0;
        return IDMAP_DONE;
}

static idmap_outcome (*const strategies[_IDMAP_STRATEGY_MAX])(lookup *l) = {
        [IDMAP_PIPE] = strategy_pipe,
        [IDMAP_DAEMON_NS] = strategy_daemon_ns,
        [IDMAP_HOST_FAST] = strategy_host_fast,
        [IDMAP_HOST_LOCAL] = strategy_host_local,
        [IDMAP_REQUESTER] = strategy_requester,
        [IDMAP_ANSWER] = strategy_answer,
};

static void lookup_done(lookup *l) {
        fastpath_cancel(&l->fc);
        requester_done(&l->rq);
        free(l->desc_heap);
}

int idmap_upcall(const idmap_opts *o, const char *serial_s, const char *desc_arg) {
        _cleanup_(lookup_done) lookup l = {
                .o = o,
                .rq = { .pidfd = -1 },
                .rq_r = -ENODATA,
                .fc = { .fd = -EBADF },
                .f = -ECANCELED,
                .timeout = o->timeout,
                .source = "host",
                .via = "",
                .status = 1,
        };
        idmap_outcome outcome = IDMAP_NEXT;

        if (lookup_begin(&l, serial_s, desc_arg) < 0)
                return l.status;
        lookup_plan(&l);
        lookup_find_requester(&l);
        for (idmap_strategy s = idmap_strategy_next(&l.plan, IDMAP_START, outcome); s != IDMAP_END;
             s = idmap_strategy_next(&l.plan, s, outcome))
                outcome = strategies[s](&l);
        return l.status;
}
