/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid-idmapd control socket protocol: request and reply lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nsid/ctlproto.h>
#include <nsid/nfsdchan.h>

#include "macro.h"
#include "fmt-util.h"
#include "parse-util.h"

#define MAX_FIELDS 6

static bool field_is(const char *f, size_t l, const char *word) {
        return l == strlen(word) && memcmp(f, word, l) == 0;
}

/* The words of KIND and VIEW, for parsing and formatting alike. */
static const char *const kind_words[] = {
        [NSID_IDMAP_KEY_UID] = "uid",
        [NSID_IDMAP_KEY_GID] = "gid",
        [NSID_IDMAP_KEY_USER] = "user",
        [NSID_IDMAP_KEY_GROUP] = "group",
};
static const char *const view_words[_NSID_CTL_VIEW_MAX] = {
        [NSID_CTL_VIEW_HOST_IDS] = "host-ids",
        [NSID_CTL_VIEW_NS_IDS] = "ns-ids",
};

/* The index of the word f in words[n], or -EINVAL. */
static int word_index(const char *f, size_t l, const char *const *words, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (words[i] && field_is(f, l, words[i]))
                        return (int) i;
        return -EINVAL;
}

/* Canonical decimal of at most 19 digits (every number of the protocol fits in int64). */
static int parse_dec(const char *f, size_t l, uint64_t max, uint64_t *ret) {
        if (l > 19)
                return -EINVAL;
        return parse_u64_n_canonical(f, l, max, ret) < 0 ? -EINVAL : 0;
}

static int parse_target(const char *f, size_t l, bool allow_all, nsid_ctl_request *rq) {
        uint64_t v;

        if (field_is(f, l, "host"))
                rq->target = NSID_CTL_TARGET_HOST;
        else if (allow_all && field_is(f, l, "all"))
                rq->target = NSID_CTL_TARGET_ALL;
        else if (l > 4 && memcmp(f, "pid:", 4) == 0) {
                if (parse_dec(f + 4, l - 4, 4194304, &v) < 0 || v == 0)
                        return -EINVAL;
                rq->target = NSID_CTL_TARGET_PID;
                rq->pid = (pid_t) v;
        } else if (l > 6 && memcmp(f, "netns:", 6) == 0) {
                if (parse_dec(f + 6, l - 6, UINT64_MAX >> 1, &v) < 0 || v == 0)
                        return -EINVAL;
                rq->target = NSID_CTL_TARGET_NETNS;
                rq->netns_ino = v;
        } else
                return -EINVAL;
        return 0;
}

_public_ int nsid_ctl_request_parse(const char *line, size_t len, nsid_ctl_request *ret) {
        const char *f[MAX_FIELDS];
        size_t fl[MAX_FIELDS];
        nsid_ctl_request rq = {};
        uint64_t v;
        int n, r;

        assert_return(line || len == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        if (len > NSID_CTL_LINE_MAX)
                return -EINVAL;
        n = split_fields(line, len, f, fl, MAX_FIELDS);
        if (n < 0)
                return n;

        if (field_is(f[0], fl[0], "status")) {
                if (n != 1)
                        return -EINVAL;
                rq.command = NSID_CTL_STATUS;
        } else if (field_is(f[0], fl[0], "metrics")) {
                if (n != 1)
                        return -EINVAL;
                rq.command = NSID_CTL_METRICS;
        } else if (field_is(f[0], fl[0], "flush")) {
                if (n > 2)
                        return -EINVAL;
                rq.command = NSID_CTL_FLUSH;
                rq.target = NSID_CTL_TARGET_ALL;
                if (n == 2 && parse_target(f[1], fl[1], true, &rq) < 0)
                        return -EINVAL;
        } else if (field_is(f[0], fl[0], "register")) {
                if (n != 2 || parse_dec(f[1], fl[1], 4194304, &v) < 0 || v == 0)
                        return -EINVAL;
                rq.command = NSID_CTL_REGISTER;
                rq.target = NSID_CTL_TARGET_PID;
                rq.pid = (pid_t) v;
        } else if (field_is(f[0], fl[0], "route")) {
                if (n != 2)
                        return -EINVAL;
                rq.command = NSID_CTL_ROUTE;
                if (parse_target(f[1], fl[1], false, &rq) < 0)
                        return -EINVAL;
        } else if (field_is(f[0], fl[0], "lookup")) {
                if (n != 4 && n != 5)
                        return -EINVAL;
                rq.command = NSID_CTL_LOOKUP;
                if (parse_target(f[1], fl[1], false, &rq) < 0)
                        return -EINVAL;
                r = word_index(f[2], fl[2], kind_words, ELEMENTSOF(kind_words));
                if (r < 0)
                        return -EINVAL;
                rq.kind = (nsid_idmap_key_kind) r;
                if (rq.kind == NSID_IDMAP_KEY_UID || rq.kind == NSID_IDMAP_KEY_GID) {
                        r = nsid_qword_unescape(f[3], fl[3], rq.name, sizeof(rq.name));
                        if (r < 0)
                                return r;
                        if (nsid_idmap_name_check(rq.name, (size_t) r) < 0)
                                return -EINVAL;
                } else {
                        if (parse_dec(f[3], fl[3], UINT32_MAX - 1, &v) < 0)
                                return -EINVAL;
                        rq.id = (uint32_t) v;
                }
                if (n == 5) {
                        r = word_index(f[4], fl[4], view_words, ELEMENTSOF(view_words));
                        if (r < 0)
                                return -EINVAL;
                        rq.view = (nsid_ctl_view) r;
                }
        } else
                return -EOPNOTSUPP;
        *ret = rq;
        return 0;
}

/* (no printf here: nsid-idmap formats a lookup at every upcall, fmt-util.h) */
static int fmt_target(const nsid_ctl_request *rq, char *buf, size_t size) {
        char n[24];
        switch (rq->target) {
        case NSID_CTL_TARGET_ALL:
                return fmt_join(buf, size, "all", NULL);
        case NSID_CTL_TARGET_HOST:
                return fmt_join(buf, size, "host", NULL);
        case NSID_CTL_TARGET_PID:
                if (rq->pid <= 0)
                        return -EINVAL;
                fmt_u64(n, (uint64_t) rq->pid);
                return fmt_join(buf, size, "pid:", n, NULL);
        case NSID_CTL_TARGET_NETNS:
                if (rq->netns_ino == 0)
                        return -EINVAL;
                fmt_u64(n, rq->netns_ino);
                return fmt_join(buf, size, "netns:", n, NULL);
        default:
                return -EINVAL;
        }
}

_public_ int nsid_ctl_request_format(const nsid_ctl_request *rq, char *buf, size_t size) {
        char target[64], value[4 * NSID_CTL_VALUE_MAX + 1], n[24];
        const char *view;

        assert_return(rq, -EINVAL);
        assert_return(buf && size > 0, -EINVAL);
        switch (rq->command) {
        case NSID_CTL_STATUS:
                return fmt_join(buf, size, "status\n", NULL);
        case NSID_CTL_METRICS:
                return fmt_join(buf, size, "metrics\n", NULL);
        case NSID_CTL_FLUSH:
                if (fmt_target(rq, target, sizeof(target)) < 0)
                        return -EINVAL;
                return fmt_join(buf, size, "flush ", target, "\n", NULL);
        case NSID_CTL_REGISTER:
                if (rq->pid <= 0)
                        return -EINVAL;
                fmt_u64(n, (uint64_t) rq->pid);
                return fmt_join(buf, size, "register ", n, "\n", NULL);
        case NSID_CTL_ROUTE:
                if (rq->target == NSID_CTL_TARGET_ALL || fmt_target(rq, target, sizeof(target)) < 0)
                        return -EINVAL;
                return fmt_join(buf, size, "route ", target, "\n", NULL);
        case NSID_CTL_LOOKUP:
                if (rq->target == NSID_CTL_TARGET_ALL || fmt_target(rq, target, sizeof(target)) < 0)
                        return -EINVAL;
                if ((unsigned) rq->kind >= ELEMENTSOF(kind_words) || (unsigned) rq->view >= _NSID_CTL_VIEW_MAX)
                        return -EINVAL;
                if (rq->kind == NSID_IDMAP_KEY_UID || rq->kind == NSID_IDMAP_KEY_GID) {
                        size_t l = strnlen(rq->name, sizeof(rq->name));
                        if (l == sizeof(rq->name) || nsid_idmap_name_check(rq->name, l) < 0 ||
                            nsid_qword_escape(rq->name, l, value, sizeof(value)) < 0)
                                return -EINVAL;
                } else {
                        if (rq->id == UINT32_MAX)
                                return -EINVAL;
                        fmt_u64(value, rq->id);
                }
                view = view_words[rq->view];
                return fmt_join(buf, size, "lookup ", target, " ", kind_words[rq->kind], " ",
                                value, view ? " " : "", view ? view : "", "\n", NULL);
        default:
                return -EINVAL;
        }
}

_public_ int nsid_ctl_reply_parse(const char *line, size_t len, nsid_ctl_reply *ret) {
        nsid_ctl_reply rp = {};
        uint64_t v;

        assert_return(line || len == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        if (len > 0 && line[len - 1] == '\n')
                len--;
        if (len == 0 || memchr(line, '\n', len) || memchr(line, '\0', len))
                return -EINVAL;
        if (len == 2 && memcmp(line, "ok", 2) == 0) {
                rp.kind = NSID_CTL_REPLY_OK;
                rp.rest = line + 2;
        } else if (len > 3 && memcmp(line, "ok ", 3) == 0) {
                rp.kind = NSID_CTL_REPLY_OK;
                rp.rest = line + 3;
                rp.rest_len = len - 3;
        } else if (len > 9 && memcmp(line, "negative ", 9) == 0) {
                rp.kind = NSID_CTL_REPLY_NEGATIVE;
                if (parse_dec(line + 9, len - 9, UINT32_MAX, &v) < 0)
                        return -EINVAL;
                rp.ttl = (uint32_t) v;
        } else if (len > 6 && memcmp(line, "error ", 6) == 0) {
                const char *f[2];
                size_t fl[2];
                const char *p = line + 6;
                size_t l = len - 6;
                const char *sp = memchr(p, ' ', l);
                f[0] = p;
                fl[0] = sp ? (size_t) (sp - p) : l;
                if (parse_dec(f[0], fl[0], 4095, &v) < 0 || v == 0)
                        return -EINVAL;
                rp.kind = NSID_CTL_REPLY_ERROR;
                rp.error = (int) v;
                if (sp) {
                        f[1] = sp + 1;
                        fl[1] = l - fl[0] - 1;
                        char tmp[1024];
                        int r = nsid_qword_unescape(f[1], fl[1], tmp, sizeof(tmp));
                        if (r < 0)
                                return -EINVAL;
                        size_t ml = (size_t) r < sizeof(rp.message) - 1 ? (size_t) r
                                                                       : sizeof(rp.message) - 1;
                        memcpy(rp.message, tmp, ml);
                        rp.message[ml] = '\0';
                }
        } else
                return -EINVAL;
        *ret = rp;
        return 0;
}

_public_ int nsid_ctl_lookup_reply_parse(const nsid_ctl_reply *reply,
                                         char ret_value[NSID_CTL_VALUE_MAX], uint32_t *ret_ttl,
                                         bool *ret_cached) {
        const char *f[3];
        size_t fl[3];
        char value[NSID_CTL_VALUE_MAX];
        uint64_t v;
        bool cached;

        assert_return(reply, -EINVAL);
        if (reply->kind != NSID_CTL_REPLY_OK || !reply->rest)
                return -EINVAL;
        if (split_fields(reply->rest, reply->rest_len, f, fl, 3) != 3)
                return -EINVAL;
        if (nsid_qword_unescape(f[0], fl[0], value, sizeof(value)) < 0)
                return -EINVAL;
        if (parse_dec(f[1], fl[1], UINT32_MAX, &v) < 0)
                return -EINVAL;
        if (field_is(f[2], fl[2], "cache"))
                cached = true;
        else if (field_is(f[2], fl[2], "resolved"))
                cached = false;
        else
                return -EINVAL;
        if (ret_value)
                memcpy(ret_value, value, strlen(value) + 1);
        if (ret_ttl)
                *ret_ttl = (uint32_t) v;
        if (ret_cached)
                *ret_cached = cached;
        return 0;
}
