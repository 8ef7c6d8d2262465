/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The parser of knfsd's client info files: the owner string is client-chosen bytes. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "nfsdinfo-internal.h"
#include "parse-util.h"

/* v[0..len) is '"' escaped-bytes '"'; decode into out (at most max bytes). */
static int parse_quoted(const char *v, size_t len, uint8_t *out, size_t max, size_t *ret_len) {
        size_t n = 0;

        if (len < 2 || v[0] != '"' || v[len - 1] != '"')
                return -EBADMSG;
        for (size_t i = 1; i < len - 1; i++) {
                unsigned char c = (unsigned char) v[i];
                if (c == '"')
                        return -EBADMSG;
                if (c == '\\') {
                        if (i + 1 >= len - 1)
                                return -EBADMSG;
                        if (v[i + 1] == 'x') {
                                int hi, lo;
                                if (i + 3 > len - 2) /* \xHH must end before the quote */
                                        return -EBADMSG;
                                hi = unhexchar(v[i + 2]);
                                lo = unhexchar(v[i + 3]);
                                if (hi < 0 || lo < 0)
                                        return -EBADMSG;
                                c = (unsigned char) (hi << 4 | lo);
                                i += 3;
                        } else if (v[i + 1] == '\\' || v[i + 1] == '"') {
                                /* seq_escape_mem_ascii() of older kernels wrote "\\" */
                                c = (unsigned char) v[i + 1];
                                i += 1;
                        } else
                                return -EBADMSG;
                }
                if (n >= max)
                        return -EBADMSG;
                out[n++] = c;
        }
        *ret_len = n;
        return 0;
}

/* "ip:port", "[ipv6]:port", quoted or not: the normalized ip into host, the port (-1: none)
 * into *ret_port. */
static int parse_address(const char *v, size_t len, char host[NFSD_HOST_MAX], int *ret_port) {
        char buf[64];
        const char *h, *end;
        unsigned char bin[16];
        int af;

        if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
                v++;
                len -= 2;
        }
        if (len == 0 || len >= sizeof(buf))
                return -EBADMSG;
        if (v[0] == '[') {
                end = memchr(v, ']', len);
                if (!end || end == v + 1)
                        return -EBADMSG;
                h = v + 1;
                af = AF_INET6;
                if ((size_t) (end + 1 - v) != len && end[1] != ':')
                        return -EBADMSG;
        } else {
                h = v;
                end = memrchr(v, ':', len);
                if (!end)
                        end = v + len;
                af = AF_INET;
        }
        memcpy(buf, h, (size_t) (end - h));
        buf[end - h] = 0;
        if (inet_pton(af, buf, bin) != 1)
                return -EBADMSG;
        if (!inet_ntop(af, bin, host, NFSD_HOST_MAX))
                return -EBADMSG;
        /* (end may be v + len, one past the value, for an address without a port: only
         * looked at inside the value; it was read at the end of the buffer, issue #29) */
        if (end < v + len && (*end == ':' || (*end == ']' && (size_t) (end + 1 - v) < len))) {
                const char *p = *end == ']' ? end + 2 : end + 1;
                uint64_t port;
                if (parse_u64_n(p, (size_t) (v + len - p), 65535, &port) < 0)
                        return -EBADMSG;
                *ret_port = (int) port;
        }
        return 0;
}

static bool key_is(const char *k, size_t kl, const char *want) {
        return strlen(want) == kl && memcmp(k, want, kl) == 0;
}

int nfsd_info_parse(const char *data, size_t size, nfsd_info *ret) {
        bool have_name = false, have_addr = false, have_status = false;
        nfsd_info info = { .minor = -1, .port = -1 };
        const char *p = data, *end = data + size;

        if (!data || !ret)
                return -EINVAL;
        if (memchr(data, 0, size))
                return -EBADMSG;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *le = nl ? nl : end, *colon, *v;
                size_t kl, vl;

                colon = memchr(p, ':', (size_t) (le - p));
                if (!colon) {
                        if (le == p) { /* empty line */
                                p = le + 1;
                                continue;
                        }
                        return -EBADMSG;
                }
                kl = (size_t) (colon - p);
                v = colon + 1;
                if (v < le && *v == ' ')
                        v++;
                vl = (size_t) (le - v);

                if (key_is(p, kl, "name")) {
                        if (have_name || parse_quoted(v, vl, info.name, sizeof(info.name),
                                                      &info.name_len) < 0)
                                return -EBADMSG;
                        have_name = true;
                } else if (key_is(p, kl, "address")) {
                        if (have_addr || parse_address(v, vl, info.host, &info.port) < 0)
                                return -EBADMSG;
                        have_addr = true;
                } else if (key_is(p, kl, "status")) {
                        if (have_status)
                                return -EBADMSG;
                        have_status = true;
                        if (key_is(v, vl, "confirmed"))
                                info.status = NFSD_STATUS_CONFIRMED;
                        else if (key_is(v, vl, "unconfirmed"))
                                info.status = NFSD_STATUS_UNCONFIRMED;
                        else if (key_is(v, vl, "courtesy"))
                                info.status = NFSD_STATUS_COURTESY;
                        else if (key_is(v, vl, "expirable"))
                                info.status = NFSD_STATUS_EXPIRABLE;
                } else if (key_is(p, kl, "minor version")) {
                        uint64_t m;
                        if (info.minor >= 0 || parse_u64_n(v, vl, 255, &m) < 0)
                                return -EBADMSG;
                        info.minor = (int) m;
                } else if (key_is(p, kl, "clientid")) {
                        uint64_t id = 0;
                        if (info.have_clientid || vl < 3 || vl > 18 || v[0] != '0' || v[1] != 'x')
                                return -EBADMSG;
                        for (size_t i = 2; i < vl; i++) {
                                int d = unhexchar(v[i]);
                                if (d < 0)
                                        return -EBADMSG;
                                id = id << 4 | (uint64_t) d;
                        }
                        info.clientid = id;
                        info.have_clientid = true;
                }
                /* anything else (Implementation *, callback *, renew time...) is not used */
                p = nl ? nl + 1 : end;
        }
        if (!have_name || !have_addr)
                return -EBADMSG;
        *ret = info;
        return 0;
}

bool nfsd_status_confirmed(nfsd_status s) {
        return s == NFSD_STATUS_CONFIRMED || s == NFSD_STATUS_COURTESY ||
               s == NFSD_STATUS_EXPIRABLE;
}

int nfsd_owner_has_uniquifier(const uint8_t *name, size_t len) {
        static const char prefix[] = "Linux NFSv4.";
        const size_t pl = sizeof(prefix) - 1;
        size_t i = pl, slashes = 0;
        unsigned minor = 0;

        if (len < pl + 3 || memcmp(name, prefix, pl) != 0)
                return -1;
        if (name[i] < '0' || name[i] > '9')
                return -1;
        while (i < len && name[i] >= '0' && name[i] <= '9' && minor < 1000)
                minor = minor * 10 + (unsigned) (name[i++] - '0');
        if (i >= len || name[i] != ' ' || i + 1 >= len)
                return -1;
        for (i++; i < len; i++)
                slashes += name[i] == '/';
        /* 4.0: "<nodename>/<uniquifier>/<server>" or "<nodename>/<server>";
         * 4.1+: "<uniquifier>/<nodename>" or "<nodename>" */
        return minor == 0 ? slashes >= 2 : slashes >= 1;
}

