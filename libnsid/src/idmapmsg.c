/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* struct idmap_msg of the NFS client's idmap pipe: upcall validation, downcall encoding. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <nsid/idmapmsg.h>
#include <nsid/keyring.h>

#include "macro.h"
#include "parse-util.h"

/* The kernel's layout on every Linux ABI: byte fields, the name, then the aligned u32. */
_Static_assert(offsetof(nsid_idmap_msg, im_type) == 0, "im_type offset");
_Static_assert(offsetof(nsid_idmap_msg, im_conv) == 1, "im_conv offset");
_Static_assert(offsetof(nsid_idmap_msg, im_name) == 2, "im_name offset");
_Static_assert(offsetof(nsid_idmap_msg, im_id) == 132, "im_id offset");
_Static_assert(offsetof(nsid_idmap_msg, im_status) == 136, "im_status offset");
_Static_assert(sizeof(nsid_idmap_msg) == 140, "sizeof(struct idmap_msg) == 140");

static bool valid_type_conv(uint8_t type, uint8_t conv) {
        return (type == NSID_IDMAP_TYPE_USER || type == NSID_IDMAP_TYPE_GROUP) &&
               (conv == NSID_IDMAP_CONV_IDTONAME || conv == NSID_IDMAP_CONV_NAMETOID);
}

/* A name field: NUL-terminated within 128 bytes, non-empty; its length or -EINVAL. */
static int name_field_len(const char name[NSID_IDMAP_NAMESZ]) {
        size_t l = strnlen(name, NSID_IDMAP_NAMESZ);
        if (l == 0 || l == NSID_IDMAP_NAMESZ)
                return -EINVAL;
        return (int) l;
}

_public_ int nsid_idmap_msg_parse_upcall(const void *buf, size_t size, nsid_idmap_request *ret) {
        nsid_idmap_msg m;
        nsid_idmap_request rq = {};
        int l;

        assert_return(buf || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        if (size != sizeof(m))
                return -EBADMSG;
        memcpy(&m, buf, sizeof(m));
        if (!valid_type_conv(m.im_type, m.im_conv) || m.im_status != 0)
                return -EINVAL;
        rq.type = m.im_type;
        rq.conv = m.im_conv;
        if (m.im_conv == NSID_IDMAP_CONV_NAMETOID) {
                l = name_field_len(m.im_name);
                /* 127 bytes fill im_name up to its NUL: the kernel's match_strlcpy() cuts a
                 * longer owner to that length without a word, so the name may not be the
                 * one the key asks about (an answer for it would be cached for the other) */
                if (l < 0 || l == NSID_IDMAP_NAMESZ - 1 ||
                    nsid_idmap_name_check(m.im_name, (size_t) l) < 0 ||
                    !utf8_valid(m.im_name, (size_t) l))
                        return -EINVAL;
                memcpy(rq.name, m.im_name, (size_t) l + 1);
        } else {
                if (m.im_id == UINT32_MAX)
                        return -EINVAL;
                rq.id = m.im_id;
        }
        *ret = rq;
        return 0;
}

static int check_request(const nsid_idmap_request *req) {
        if (!valid_type_conv(req->type, req->conv))
                return -EINVAL;
        if (req->conv == NSID_IDMAP_CONV_NAMETOID && name_field_len(req->name) < 0)
                return -EINVAL;
        return 0;
}

_public_ int nsid_idmap_msg_build_reply(const nsid_idmap_request *req, uint32_t id,
                                        const char *name, nsid_idmap_msg *ret) {
        nsid_idmap_msg m;

        assert_return(req, -EINVAL);
        assert_return(ret, -EINVAL);
        if (check_request(req) < 0)
                return -EINVAL;
        memset(&m, 0, sizeof(m));
        m.im_type = req->type;
        m.im_conv = req->conv;
        if (req->conv == NSID_IDMAP_CONV_NAMETOID) {
                if (id == UINT32_MAX)
                        return -EINVAL;
                memcpy(m.im_name, req->name, strlen(req->name) + 1);
                m.im_id = id;
        } else {
                size_t l;
                if (!name)
                        return -EINVAL;
                l = strnlen(name, NSID_IDMAP_NAMESZ);
                if (l == 0 || l >= NSID_IDMAP_NAMESZ || nsid_idmap_name_check(name, l) < 0)
                        return -EINVAL;
                memcpy(m.im_name, name, l);
                m.im_id = req->id;
        }
        m.im_status = NSID_IDMAP_STATUS_SUCCESS;
        *ret = m;
        return 0;
}

_public_ int nsid_idmap_msg_build_failure(const nsid_idmap_request *req, uint8_t status,
                                          nsid_idmap_msg *ret) {
        nsid_idmap_msg m;

        assert_return(req, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(!(status & NSID_IDMAP_STATUS_SUCCESS), -EINVAL);
        if (check_request(req) < 0)
                return -EINVAL;
        memset(&m, 0, sizeof(m));
        m.im_type = req->type;
        m.im_conv = req->conv;
        if (req->conv == NSID_IDMAP_CONV_NAMETOID)
                memcpy(m.im_name, req->name, strlen(req->name) + 1);
        else
                m.im_id = req->id;
        m.im_status = status ? status : NSID_IDMAP_STATUS_LOOKUPFAIL;
        *ret = m;
        return 0;
}

_public_ int nsid_idmap_msg_build_failure_raw(const void *buf, size_t size, uint8_t status,
                                              nsid_idmap_msg *ret) {
        nsid_idmap_msg in, m;

        assert_return(buf || size == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        assert_return(!(status & NSID_IDMAP_STATUS_SUCCESS), -EINVAL);
        memset(&in, 0, sizeof(in));
        if (size > 0)
                memcpy(&in, buf, size < sizeof(in) ? size : sizeof(in));
        /* field by field: the padding after im_status stays 0 */
        memset(&m, 0, sizeof(m));
        m.im_type = in.im_type;
        m.im_conv = in.im_conv;
        memcpy(m.im_name, in.im_name, sizeof(m.im_name));
        m.im_id = in.im_id;
        m.im_status = status ? status : NSID_IDMAP_STATUS_LOOKUPFAIL;
        *ret = m;
        return 0;
}

_public_ int nsid_idmap_msg_check_reply(const nsid_idmap_request *req, const void *buf,
                                        size_t size, uint32_t *ret_id,
                                        char ret_name[NSID_IDMAP_NAMESZ]) {
        nsid_idmap_msg m;
        int l;

        assert_return(req, -EINVAL);
        assert_return(buf || size == 0, -EINVAL);
        if (size != sizeof(m))
                return -EBADMSG;
        memcpy(&m, buf, sizeof(m));
        if (!(m.im_status & NSID_IDMAP_STATUS_SUCCESS))
                return 0;
        l = name_field_len(m.im_name);
        if (l < 0)
                return -EINVAL;
        if (m.im_type != req->type || m.im_conv != req->conv)
                return -ENOKEY;
        if (req->conv == NSID_IDMAP_CONV_NAMETOID) {
                if (strcmp(m.im_name, req->name) != 0)
                        return -ESTALE;
                if (ret_id)
                        *ret_id = m.im_id;
        } else {
                if (m.im_id != req->id)
                        return -ESTALE;
                if (ret_name)
                        memcpy(ret_name, m.im_name, (size_t) l + 1);
        }
        return 1;
}
