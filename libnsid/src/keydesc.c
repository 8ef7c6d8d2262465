/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* id_resolver key descriptions and KEYCTL_DESCRIBE text (nsid/keyring.h). */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include <nsid/keydesc.h>
#include <nsid/resolv.h>

#include "macro.h"
#include "parse-util.h"

static const char *const kind_names[_NSID_IDMAP_KEY_KIND_MAX] = {
        [NSID_IDMAP_KEY_UID] = "uid",
        [NSID_IDMAP_KEY_GID] = "gid",
        [NSID_IDMAP_KEY_USER] = "user",
        [NSID_IDMAP_KEY_GROUP] = "group",
};

_public_ const char *nsid_idmap_key_kind_name(nsid_idmap_key_kind kind) {
        if ((unsigned) kind >= _NSID_IDMAP_KEY_KIND_MAX)
                return NULL;
        return kind_names[kind];
}

_public_ int nsid_idmap_key_kind_answers_name(nsid_idmap_key_kind kind) {
        if ((unsigned) kind >= _NSID_IDMAP_KEY_KIND_MAX)
                return -EINVAL;
        return kind == NSID_IDMAP_KEY_USER || kind == NSID_IDMAP_KEY_GROUP;
}

_public_ int nsid_idmap_name_check(const char *name, size_t len) {
        assert_return(name, -EINVAL);
        if (len == 0)
                return -EINVAL;
        if (len > NSID_IDMAP_KEYDESC_NAME_MAX)
                return -ENAMETOOLONG;
        if (name[0] == '@' || name[len - 1] == '@')
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) name[i];
                if (c < 0x20 || c == 0x7f || c == ':')
                        return -EINVAL;
                if (c == '@' && i + 1 < len && name[i + 1] == '@')
                        return -EINVAL;
        }
        return 0;
}

/* Plain decimal, no leading zero (the kernel prints ids with %u), below (u32)-1. */
static int parse_id(const char *s, size_t len, uint32_t *ret) {
        uint64_t v;
        int r;

        r = parse_u64_n_canonical(s, len, UINT32_MAX - 1, &v);
        if (r < 0)
                return r;
        *ret = (uint32_t) v;
        return 0;
}

_public_ int nsid_idmap_keydesc_parse(const char *desc, size_t len, nsid_idmap_keydesc *ret) {
        const char *colon;
        size_t plen;
        nsid_idmap_key_kind kind = _NSID_IDMAP_KEY_KIND_MAX;
        int r;

        assert_return(desc, -EINVAL);
        assert_return(ret, -EINVAL);

        colon = memchr(desc, ':', len);
        if (!colon)
                return -EINVAL;
        plen = (size_t) (colon - desc);
        for (unsigned k = 0; k < _NSID_IDMAP_KEY_KIND_MAX; k++)
                if (strlen(kind_names[k]) == plen && memcmp(desc, kind_names[k], plen) == 0)
                        kind = (nsid_idmap_key_kind) k;
        if (kind == _NSID_IDMAP_KEY_KIND_MAX)
                return -EINVAL;

        const char *v = colon + 1;
        size_t vlen = len - plen - 1;

        if (kind == NSID_IDMAP_KEY_UID || kind == NSID_IDMAP_KEY_GID) {
                r = nsid_idmap_name_check(v, vlen);
                if (r < 0)
                        return r;
                ret->kind = kind;
                ret->id = 0;
                memcpy(ret->name, v, vlen);
                ret->name[vlen] = '\0';
                return 0;
        }

        uint32_t id;
        r = parse_id(v, vlen, &id);
        if (r < 0)
                return r;
        ret->kind = kind;
        ret->id = id;
        ret->name[0] = '\0';
        return 0;
}

static int parse_field_u32(const char *s, size_t len, int base, uint32_t *ret) {
        uint64_t v = 0;

        if (len == 0 || len > 10)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                unsigned d;
                char c = s[i];
                if (c >= '0' && c <= '9')
                        d = (unsigned) (c - '0');
                else if (base == 16 && c >= 'a' && c <= 'f')
                        d = (unsigned) (c - 'a' + 10);
                else
                        return -EINVAL;
                v = v * (unsigned) base + d;
        }
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

_public_ int nsid_key_describe_parse(const char *text, size_t len, nsid_key_describe *ret) {
        const char *f[4];
        size_t flen[4];
        const char *p = text, *end = text + len;
        nsid_key_describe d;

        assert_return(text, -EINVAL);
        assert_return(ret, -EINVAL);

        /* The kernel's reply may include its NUL. */
        if (len > 0 && text[len - 1] == '\0')
                end--;
        for (unsigned i = 0; i < 4; i++) {
                const char *semi = memchr(p, ';', (size_t) (end - p));
                if (!semi)
                        return -EINVAL;
                f[i] = p;
                flen[i] = (size_t) (semi - p);
                p = semi + 1;
        }
        if (flen[0] == 0 || memchr(f[0], '\0', flen[0]))
                return -EINVAL;
        d.type = f[0];
        d.type_len = flen[0];
        if (parse_field_u32(f[1], flen[1], 10, &d.uid) < 0 ||
            parse_field_u32(f[2], flen[2], 10, &d.gid) < 0 ||
            parse_field_u32(f[3], flen[3], 16, &d.perm) < 0)
                return -EINVAL;
        d.description = p;
        d.description_len = (size_t) (end - p);
        if (memchr(d.description, '\0', d.description_len))
                return -EINVAL;
        *ret = d;
        return 0;
}

_public_ int nsid_dns_request_parse(const char *desc, size_t desc_len, const char *callout,
                                    size_t callout_len, nsid_dns_request *ret) {
        nsid_dns_request req = {};
        const char *colon, *name = desc;
        size_t name_len = desc_len;

        assert_return(desc, -EINVAL);
        assert_return(callout || callout_len == 0, -EINVAL);
        assert_return(ret, -EINVAL);

        if (memchr(desc, '\0', desc_len))
                return -EINVAL;
        colon = memchr(desc, ':', desc_len);
        if (colon) {
                size_t tl = (size_t) (colon - desc);
                if (!((tl == 1 && strncasecmp(desc, "a", 1) == 0) ||
                      (tl == 4 && strncasecmp(desc, "aaaa", 4) == 0)))
                        return -EOPNOTSUPP;
                name = colon + 1;
                name_len = desc_len - tl - 1;
        }
        if (!nsid_dns_name_valid(name, name_len))
                return -EINVAL;
        /* A fully qualified name may end in a root dot; the dot adds nothing to the lookup
         * and a 253-character name plus its dot would not fit req.name with its NUL. */
        if (name_len > 0 && name[name_len - 1] == '.')
                name_len--;
        if (name_len == 0 || name_len >= sizeof(req.name))
                return -EINVAL;
        memcpy(req.name, name, name_len);
        req.name[name_len] = '\0';

        /* The kernel's callout string may carry its NUL. */
        while (callout_len > 0 && callout[callout_len - 1] == '\0')
                callout_len--;
        if (callout_len == 0) {
                req.want_ipv4 = true;
                *ret = req;
                return 0;
        }
        if (memchr(callout, '\0', callout_len))
                return -EINVAL;
        const char *p = callout, *end = callout + callout_len;
        while (p < end) {
                const char *sp = memchr(p, ' ', (size_t) (end - p));
                size_t l = sp ? (size_t) (sp - p) : (size_t) (end - p);
                const char *eq = memchr(p, '=', l);
                size_t kl = eq ? (size_t) (eq - p) : l;

                if (memchr(p, ',', l))
                        return -EINVAL;
                if (kl == 4 && memcmp(p, "ipv4", 4) == 0)
                        req.want_ipv4 = true;
                else if (kl == 4 && memcmp(p, "ipv6", 4) == 0)
                        req.want_ipv6 = true;
                else if (kl == 4 && memcmp(p, "list", 4) == 0)
                        req.list = true;
                p += l + (sp ? 1 : 0);
        }
        if (!req.want_ipv4 && !req.want_ipv6)
                req.want_ipv4 = req.want_ipv6 = true;
        *ret = req;
        return 0;
}
