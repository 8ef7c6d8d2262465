/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* knfsd idmap channel lines (nfs4.nametoid, nfs4.idtoname): parse requests, format replies. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <nsid/nfsdchan.h>

#include "macro.h"
#include "parse-util.h"

_public_ const char *nsid_nfsd_channel_name(nsid_nfsd_channel ch) {
        switch (ch) {
        case NSID_NFSD_NAMETOID:
                return "nfs4.nametoid";
        case NSID_NFSD_IDTONAME:
                return "nfs4.idtoname";
        default:
                return NULL;
        }
}

/* kernel_only: escape exactly what the kernel escapes (for the request formatter). */
static int escape(const char *s, size_t len, char *buf, size_t size, bool kernel_only) {
        size_t o = 0;

        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                bool esc = c == '\\' || c == ' ' || c == '\n' || c == '\t' ||
                           (!kernel_only && (c < 0x20 || c == 0x7f));
                if (esc) {
                        if (o + 4 >= size)
                                return -ENOBUFS;
                        buf[o++] = '\\';
                        buf[o++] = (char) ('0' + ((c >> 6) & 7));
                        buf[o++] = (char) ('0' + ((c >> 3) & 7));
                        buf[o++] = (char) ('0' + (c & 7));
                } else {
                        if (o + 1 >= size)
                                return -ENOBUFS;
                        buf[o++] = (char) c;
                }
        }
        buf[o] = '\0';
        return o > INT32_MAX ? -ENOBUFS : (int) o;
}

_public_ int nsid_qword_escape(const char *s, size_t len, char *buf, size_t size) {
        assert_return(s || len == 0, -EINVAL);
        assert_return(buf && size > 0, -EINVAL);
        return escape(s, len, buf, size, false);
}

static bool isodigit_(char c) {
        return c >= '0' && c <= '7';
}

_public_ int nsid_qword_unescape(const char *s, size_t len, char *buf, size_t size) {
        size_t o = 0;

        assert_return(s || len == 0, -EINVAL);
        assert_return(buf && size > 0, -EINVAL);
        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == ' ' || c == '\n' || c == '\0')
                        return -EINVAL;
                if (c == '\\') {
                        if (len - i < 4 || s[i + 1] < '0' || s[i + 1] > '3' ||
                            !isodigit_(s[i + 2]) || !isodigit_(s[i + 3]))
                                return -EINVAL;
                        c = (char) (((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
                                    (s[i + 3] - '0'));
                        if (c == '\0')
                                return -EINVAL;
                        i += 3;
                }
                if (o + 1 >= size)
                        return -ENAMETOOLONG;
                buf[o++] = c;
        }
        buf[o] = '\0';
        return (int) o;
}

static int parse_type(const char *f, size_t l, bool *ret_group) {
        if (l == 4 && memcmp(f, "user", 4) == 0)
                *ret_group = false;
        else if (l == 5 && memcmp(f, "group", 5) == 0)
                *ret_group = true;
        else
                return -EINVAL;
        return 0;
}

/* Plain decimal below 2^32, no leading zeros. */
static int parse_id_u32(const char *f, size_t l, uint32_t *ret) {
        uint64_t v;
        int r;

        r = parse_u64_n_canonical(f, l, UINT32_MAX, &v);
        if (r < 0)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

/* "<authname> <type> \n" (or without the newline): knfsd's nametoid request for an owner
 * that starts with a NUL byte. */
static bool empty_name_request(const char *line, size_t len) {
        const char *f[2];
        size_t fl[2];
        char a[NSID_NFSD_NAMESZ];
        bool group;

        if (len > 0 && line[len - 1] == '\n')
                len--;
        if (len < 2 || line[len - 1] != ' ')
                return false;
        return split_fields(line, len - 1, f, fl, 2) == 2 &&
               nsid_qword_unescape(f[0], fl[0], a, sizeof(a)) > 0 &&
               parse_type(f[1], fl[1], &group) == 0;
}

_public_ int nsid_nfsd_request_parse(nsid_nfsd_channel ch, const char *line, size_t len,
                                     nsid_nfsd_request *ret) {
        const char *f[3];
        size_t fl[3];
        nsid_nfsd_request rq = { .channel = ch };
        int r;

        assert_return(ch == NSID_NFSD_NAMETOID || ch == NSID_NFSD_IDTONAME, -EINVAL);
        assert_return(line || len == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        if (len > NSID_NFSD_LINE_MAX)
                return -EINVAL;
        if (split_fields(line, len, f, fl, 3) != 3)
                return ch == NSID_NFSD_NAMETOID && empty_name_request(line, len) ? -ENODATA
                                                                                 : -EINVAL;
        r = nsid_qword_unescape(f[0], fl[0], rq.authname, sizeof(rq.authname));
        if (r < 0)
                return r;
        r = parse_type(f[1], fl[1], &rq.group);
        if (r < 0)
                return r;
        if (ch == NSID_NFSD_NAMETOID) {
                r = nsid_qword_unescape(f[2], fl[2], rq.name, sizeof(rq.name));
                if (r < 0)
                        return r;
        } else {
                r = parse_id_u32(f[2], fl[2], &rq.id);
                if (r < 0)
                        return r;
        }
        *ret = rq;
        return 0;
}

static int valid_request(const nsid_nfsd_request *req) {
        if (req->channel != NSID_NFSD_NAMETOID && req->channel != NSID_NFSD_IDTONAME)
                return -EINVAL;
        size_t a = strnlen(req->authname, NSID_NFSD_NAMESZ);
        if (a == 0 || a == NSID_NFSD_NAMESZ)
                return -EINVAL;
        if (req->channel == NSID_NFSD_NAMETOID) {
                size_t n = strnlen(req->name, NSID_NFSD_NAMESZ);
                if (n == 0 || n == NSID_NFSD_NAMESZ)
                        return -EINVAL;
        }
        return 0;
}

/* Append a field (escaped when esc) and a separator. */
static int put(char *buf, size_t size, size_t *o, const char *s, size_t len, bool esc,
               bool kernel_only, char sep) {
        int r;

        if (*o >= size)
                return -ENOBUFS;
        if (esc) {
                r = escape(s, len, buf + *o, size - *o, kernel_only);
                if (r < 0)
                        return r;
                *o += (size_t) r;
        } else {
                if (*o + len + 1 > size)
                        return -ENOBUFS;
                memcpy(buf + *o, s, len);
                *o += len;
        }
        if (*o + 2 > size)
                return -ENOBUFS;
        buf[(*o)++] = sep;
        buf[*o] = '\0';
        return 0;
}

_public_ int nsid_nfsd_reply_format(const nsid_nfsd_request *req, int64_t expiry, bool negative,
                                    uint32_t id, const char *name, char *buf, size_t size) {
        char num[32];
        size_t o = 0, nl = 0;
        int r;

        assert_return(req, -EINVAL);
        assert_return(buf && size > 0, -EINVAL);
        assert_return(expiry > 0, -EINVAL);
        if (valid_request(req) < 0)
                return -EINVAL;
        if (!negative) {
                if (req->channel == NSID_NFSD_NAMETOID && id == UINT32_MAX)
                        return -EINVAL;
                if (req->channel == NSID_NFSD_IDTONAME) {
                        if (!name)
                                return -EINVAL;
                        nl = strnlen(name, NSID_NFSD_NAMESZ);
                        if (nl == 0 || nl == NSID_NFSD_NAMESZ)
                                return -EINVAL;
                }
        }
        const char *type = req->group ? "group" : "user";
        r = put(buf, size, &o, req->authname, strlen(req->authname), true, false, ' ');
        if (r >= 0)
                r = put(buf, size, &o, type, strlen(type), false, false, ' ');
        if (r < 0)
                return r;
        if (req->channel == NSID_NFSD_NAMETOID)
                r = put(buf, size, &o, req->name, strlen(req->name), true, false, ' ');
        else {
                snprintf(num, sizeof(num), "%" PRIu32, req->id);
                r = put(buf, size, &o, num, strlen(num), false, false, ' ');
        }
        if (r < 0)
                return r;
        snprintf(num, sizeof(num), "%" PRId64, expiry);
        bool last = negative;
        r = put(buf, size, &o, num, strlen(num), false, false, last ? '\n' : ' ');
        if (r < 0 || last)
                return r < 0 ? r : (int) o;
        if (req->channel == NSID_NFSD_NAMETOID) {
                /* get_int(): kstrtoint, so the u32 goes as a signed int like qword_addint */
                snprintf(num, sizeof(num), "%" PRId32, (int32_t) id);
                r = put(buf, size, &o, num, strlen(num), false, false, '\n');
        } else
                r = put(buf, size, &o, name, nl, true, false, '\n');
        return r < 0 ? r : (int) o;
}

_public_ int nsid_nfsd_request_format(const nsid_nfsd_request *req, char *buf, size_t size) {
        char num[16];
        size_t o = 0;
        int r;

        assert_return(req, -EINVAL);
        assert_return(buf && size > 0, -EINVAL);
        if (valid_request(req) < 0)
                return -EINVAL;
        const char *type = req->group ? "group" : "user";
        r = put(buf, size, &o, req->authname, strlen(req->authname), true, true, ' ');
        if (r >= 0)
                r = put(buf, size, &o, type, strlen(type), false, false, ' ');
        if (r < 0)
                return r;
        if (req->channel == NSID_NFSD_NAMETOID)
                r = put(buf, size, &o, req->name, strlen(req->name), true, true, '\n');
        else {
                snprintf(num, sizeof(num), "%" PRIu32, req->id);
                r = put(buf, size, &o, num, strlen(num), false, false, '\n');
        }
        return r < 0 ? r : (int) o;
}

/* Optional leading '-', decimal, within int32 (kstrtoint). */
static int parse_int32(const char *f, size_t l, int32_t *ret) {
        bool neg = l > 0 && f[0] == '-';
        uint64_t v;
        if (neg)
                f++, l--;
        if (l == 0 || l > 10 || parse_u64_n(f, l, neg ? 2147483648u : 2147483647u, &v) < 0)
                return -EINVAL;
        *ret = neg ? (int32_t) (-(int64_t) v) : (int32_t) v;
        return 0;
}

_public_ int nsid_nfsd_reply_parse(nsid_nfsd_channel ch, const char *line, size_t len,
                                   nsid_nfsd_reply *ret) {
        const char *f[5];
        size_t fl[5];
        nsid_nfsd_reply rp = { .key.channel = ch };
        uint64_t exp;
        int r;

        assert_return(ch == NSID_NFSD_NAMETOID || ch == NSID_NFSD_IDTONAME, -EINVAL);
        assert_return(line || len == 0, -EINVAL);
        assert_return(ret, -EINVAL);
        if (len == 0 || line[len - 1] != '\n' || len > NSID_NFSD_LINE_MAX)
                return -EINVAL; /* the kernel wants the newline */
        r = split_fields(line, len, f, fl, 5);
        if (r != 5) {
                if (r != 4)
                        return -EINVAL;
                rp.negative = true;
        }
        r = nsid_qword_unescape(f[0], fl[0], rp.key.authname, sizeof(rp.key.authname));
        if (r < 0)
                return -EINVAL;
        if (parse_type(f[1], fl[1], &rp.key.group) < 0)
                return -EINVAL;
        if (ch == NSID_NFSD_NAMETOID) {
                if (nsid_qword_unescape(f[2], fl[2], rp.key.name, sizeof(rp.key.name)) < 0)
                        return -EINVAL;
        } else if (parse_id_u32(f[2], fl[2], &rp.key.id) < 0)
                return -EINVAL;
        if (fl[3] > 19 || parse_u64_n(f[3], fl[3], INT64_MAX, &exp) < 0 || exp == 0)
                return -EINVAL;
        rp.expiry = (int64_t) exp;
        if (!rp.negative) {
                if (ch == NSID_NFSD_NAMETOID) {
                        int32_t v;
                        if (parse_int32(f[4], fl[4], &v) < 0)
                                return -EINVAL;
                        rp.id = (uint32_t) v;
                } else if (nsid_qword_unescape(f[4], fl[4], rp.name, sizeof(rp.name)) < 0)
                        return -EINVAL;
        }
        *ret = rp;
        return 0;
}
