/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid-idmapd control socket: the helper's lookup as fixed-size frames (nsid/ctlframe.h). */
#include <errno.h>
#include <string.h>
#include <sys/types.h>

#include <nsid/ctlframe.h>

#include "macro.h"

static bool kind_valid(uint32_t kind) {
        return kind == NSID_IDMAP_KEY_UID || kind == NSID_IDMAP_KEY_GID ||
               kind == NSID_IDMAP_KEY_USER || kind == NSID_IDMAP_KEY_GROUP;
}

static bool kind_takes_name(uint32_t kind) {
        return kind == NSID_IDMAP_KEY_UID || kind == NSID_IDMAP_KEY_GID;
}

/* The string in a NUL-padded field: its length if it is NUL-terminated within the field and
 * every byte after it is NUL, else -1. */
static ssize_t padded_len(const char *f, size_t size) {
        size_t l = strnlen(f, size);
        if (l == size)
                return -1;
        for (size_t i = l + 1; i < size; i++)
                if (f[i] != '\0')
                        return -1;
        return (ssize_t) l;
}

/* A name that goes into a frame: 1..NSID_CTL_VALUE_MAX-1 bytes passing the name check. */
static int name_put(char dst[NSID_CTL_VALUE_MAX], const char *name, size_t len) {
        if (len >= NSID_CTL_VALUE_MAX)
                return -ENAMETOOLONG;
        if (nsid_idmap_name_check(name, len) < 0)
                return -EINVAL;
        memcpy(dst, name, len); /* the rest stays NUL */
        return 0;
}

_public_ int nsid_ctl_frame_request_init(nsid_ctl_frame_request *ret, nsid_idmap_key_kind kind,
                                         uint32_t id, const char *name, size_t len) {
        assert_return(ret, -EINVAL);

        memset(ret, 0, sizeof(*ret));
        memcpy(ret->magic, NSID_CTL_FRAME_MAGIC, sizeof(ret->magic));
        ret->kind = (uint32_t) kind;
        if (!kind_valid(kind))
                return -EINVAL;
        if (kind_takes_name(kind)) {
                assert_return(name, -EINVAL);
                return name_put(ret->name, name, len);
        }
        if (id == UINT32_MAX)
                return -EINVAL;
        ret->id = id;
        return 0;
}

_public_ int nsid_ctl_frame_request_parse(const void *buf, size_t len, nsid_ctl_request *ret) {
        nsid_ctl_frame_request f;

        assert_return(buf || len == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        if (len != sizeof(f))
                return -EBADMSG;
        memcpy(&f, buf, sizeof(f));
        if (memcmp(f.magic, NSID_CTL_FRAME_MAGIC, sizeof(f.magic)) != 0)
                return -EBADMSG;
        if (f.flags != 0 || !kind_valid(f.kind))
                return -EINVAL;
        ssize_t l = padded_len(f.name, sizeof(f.name));
        if (l < 0)
                return -EINVAL;
        nsid_ctl_request rq = { .command = NSID_CTL_LOOKUP, .target = NSID_CTL_TARGET_HOST,
                                .kind = (nsid_idmap_key_kind) f.kind,
                                .view = NSID_CTL_VIEW_HOST_IDS };
        if (kind_takes_name(f.kind)) {
                if (f.id != 0 || nsid_idmap_name_check(f.name, (size_t) l) < 0)
                        return -EINVAL;
                memcpy(rq.name, f.name, (size_t) l + 1);
        } else {
                if (l != 0 || f.id == UINT32_MAX)
                        return -EINVAL;
                rq.id = f.id;
        }
        *ret = rq;
        return 0;
}

_public_ int nsid_ctl_frame_reply_init(nsid_ctl_frame_reply *ret, nsid_idmap_key_kind kind,
                                       uint32_t status, uint32_t id, const char *name,
                                       uint32_t ttl, bool cached) {
        assert_return(ret, -EINVAL);

        memset(ret, 0, sizeof(*ret));
        memcpy(ret->magic, NSID_CTL_FRAME_MAGIC, sizeof(ret->magic));
        if (status > 4095 || !kind_valid(kind))
                return -EINVAL;
        ret->status = status;
        ret->ttl = ttl;
        ret->flags = cached ? NSID_CTL_FRAME_CACHED : 0;
        if (status != 0)
                return 0;
        if (kind_takes_name(kind)) {
                if (id == UINT32_MAX)
                        return -EINVAL;
                ret->id = id;
                return 0;
        }
        assert_return(name, -EINVAL);
        return name_put(ret->value, name, strlen(name));
}

_public_ int nsid_ctl_frame_reply_check(const void *buf, size_t len, nsid_idmap_key_kind kind) {
        nsid_ctl_frame_reply f;

        assert_return(buf || len == 0, -EINVAL);
        if (len != sizeof(f))
                return -EBADMSG;
        memcpy(&f, buf, sizeof(f));
        if (memcmp(f.magic, NSID_CTL_FRAME_MAGIC, sizeof(f.magic)) != 0 ||
            (f.flags & ~NSID_CTL_FRAME_CACHED) != 0 || f.status > 4095 || !kind_valid(kind))
                return -EBADMSG;
        ssize_t l = padded_len(f.value, sizeof(f.value));
        if (l < 0)
                return -EBADMSG;
        if (f.status != 0 || kind_takes_name(kind)) /* no name */
                return l == 0 && (f.status == 0 ? f.id != UINT32_MAX : f.id == 0) ? 0 : -EBADMSG;
        return f.id == 0 && nsid_idmap_name_check(f.value, (size_t) l) == 0 ? 0 : -EBADMSG;
}
