/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NSID_IDMAPMSG_H
#define NSID_IDMAPMSG_H

#include <stddef.h>
#include <stdint.h>

#include <nsid/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The NFS client's legacy idmap pipe (<rpc_pipefs>/nfs/clnt<N>/idmap), include/uapi/linux/
 * nfs_idmap.h:
 *
 *     struct idmap_msg { __u8 im_type; __u8 im_conv; char im_name[128]; __u32 im_id;
 *                        __u8 im_status; };     (140 bytes with padding, host byte order)
 *
 * The kernel writes one upcall (memset to 0, then type, conv and either the name for
 * name-to-id or the id for id-to-name) and accepts a downcall only when (fs/nfs/nfs4idmap.c,
 * idmap_pipe_downcall): the write is exactly 140 bytes; im_status has SUCCESS (otherwise the
 * key is negated: the failure answer); im_name is NUL-terminated within 128 bytes and not
 * empty; type and conv equal the upcall's; for name-to-id the name equals the upcall's (the
 * kernel instantiates "%d" of im_id), for id-to-name the id equals the upcall's (the kernel
 * instantiates im_name). One upcall per nfs_client is outstanding at a time.
 */

#define NSID_IDMAP_MSG_SIZE 140u
#define NSID_IDMAP_NAMESZ 128u

enum {
        NSID_IDMAP_TYPE_USER = 0,
        NSID_IDMAP_TYPE_GROUP = 1,
        NSID_IDMAP_CONV_IDTONAME = 0,
        NSID_IDMAP_CONV_NAMETOID = 1,
        NSID_IDMAP_STATUS_INVALIDMSG = 0x01,
        NSID_IDMAP_STATUS_AGAIN = 0x02,
        NSID_IDMAP_STATUS_LOOKUPFAIL = 0x04,
        NSID_IDMAP_STATUS_SUCCESS = 0x08,
};

/* The wire layout, exactly as the kernel's (sizeof 140 is asserted where it is defined). */
typedef struct nsid_idmap_msg {
        uint8_t im_type;
        uint8_t im_conv;
        char im_name[NSID_IDMAP_NAMESZ];
        uint32_t im_id;
        uint8_t im_status;
} nsid_idmap_msg;

#ifndef __cplusplus
_Static_assert(sizeof(nsid_idmap_msg) == NSID_IDMAP_MSG_SIZE, "struct idmap_msg is 140 bytes");
#endif

/* A validated upcall. */
typedef struct nsid_idmap_request {
        uint8_t type;                   /* NSID_IDMAP_TYPE_* */
        uint8_t conv;                   /* NSID_IDMAP_CONV_* */
        uint32_t id;                    /* IDTONAME: the id asked about; NAMETOID: 0 */
        char name[NSID_IDMAP_NAMESZ];   /* NAMETOID: the name asked about; IDTONAME: "" */
} nsid_idmap_request;

/*
 * Validate an upcall of size bytes. Accepted: exactly 140 bytes; type USER or GROUP; conv
 * IDTONAME or NAMETOID; status 0 (the kernel never sets it in an upcall); for NAMETOID a
 * name of 1..126 bytes NUL-terminated within 128 bytes (127 bytes are refused: the kernel
 * cuts a longer owner to that length silently, so such a name may not be the one asked
 * about) that passes nsid_idmap_name_check()
 * (no control bytes, no ':', no "@@", no leading or trailing '@') and is valid UTF-8 (an
 * NFSv4 owner string is UTF-8, RFC 7530 section 5.9; no name nsid serves is anything else);
 * for IDTONAME an id other than 4294967295. Errors: -EBADMSG (size), -EINVAL (anything
 * else). A refused upcall must still be answered: nsid_idmap_msg_build_failure_raw().
 */
NSID_API_WARN_UNUSED int nsid_idmap_msg_parse_upcall(const void *buf, size_t size,
                                                     nsid_idmap_request *ret);

/*
 * Build the success downcall for req: for NAMETOID the answer is id (not 4294967295), for
 * IDTONAME it is name (1..127 bytes passing nsid_idmap_name_check()); the other argument is
 * ignored. Type, conv and the upcall's name or id are copied, status is SUCCESS, every other
 * byte is 0. -EINVAL when the answer is not acceptable (send the failure instead).
 */
NSID_API_WARN_UNUSED int nsid_idmap_msg_build_reply(const nsid_idmap_request *req, uint32_t id,
                                                    const char *name, nsid_idmap_msg *ret);

/* Build a failure downcall (status LOOKUPFAIL, or another NSID_IDMAP_STATUS_* without
 * SUCCESS) matching req. */
NSID_API_WARN_UNUSED int nsid_idmap_msg_build_failure(const nsid_idmap_request *req,
                                                      uint8_t status, nsid_idmap_msg *ret);

/*
 * Build the failure downcall for an upcall that nsid_idmap_msg_parse_upcall() refused: any
 * size bytes (buf may be NULL when size is 0). im_type, im_conv, im_name (all 128 bytes, as
 * they are) and im_id are copied from the upcall as far as it has them, im_status is status
 * (LOOKUPFAIL when 0; never SUCCESS), every other byte is 0. The kernel keeps one upcall per
 * NFS client outstanding, and that client's lookups wait until a downcall completes it: a
 * 140-byte downcall without the SUCCESS bit completes it with -ENOKEY whatever its other
 * fields hold (fs/nfs/nfs4idmap.c, idmap_pipe_downcall); they are echoed so that the answer
 * names the request it fails. -EINVAL only for a status with SUCCESS.
 */
NSID_API_WARN_UNUSED int nsid_idmap_msg_build_failure_raw(const void *buf, size_t size,
                                                          uint8_t status, nsid_idmap_msg *ret);

/*
 * Check a downcall against an upcall the way the kernel does: 1 when the kernel would accept
 * it as a success answer (ret_id / ret_name, each may be NULL, receive the answer), 0 when it
 * is a well-formed failure (no SUCCESS bit: the kernel negates the key), -EBADMSG for a
 * wrong size, -EINVAL for an empty or unterminated name, -ENOKEY for a type/conv mismatch,
 * -ESTALE for a name or id that does not match the upcall.
 */
int nsid_idmap_msg_check_reply(const nsid_idmap_request *req, const void *buf, size_t size,
                               uint32_t *ret_id, char ret_name[NSID_IDMAP_NAMESZ]);

#ifdef __cplusplus
}
#endif
#endif
