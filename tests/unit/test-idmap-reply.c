/* SPDX-License-Identifier: GPL-2.0-or-later */
/* idmap/idmap-reply.c: the requester-context worker's reply, as nsid-idmap's privileged
 * parent parses it. The accepted replies are the ones requester_worker() writes
 * (idmap/idmap-upcall.c); the refused ones are what a worker subverted by a container's
 * passwd, group or idmapd.conf could write instead. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "idmap/idmap-reply.h"

static int parse(const char *text, idmap_reply *ret) {
        char buf[8192];
        size_t len = strlen(text);
        assert_true(len < sizeof(buf));
        memcpy(buf, text, len + 1);
        return idmap_parse_reply(buf, len, ret);
}

#define CREDS "creds=uid 65534 gid 65534 eff 00000000 prm 00000000 bnd 0 nnp 1 root 0 etc 2\n"

static void test_answers(void **state) {
        idmap_reply a;

        assert_int_equal(parse(CREDS "baddomain=1\nnobody=nobody\nid=65534\n", &a), 0);
        assert_true(a.have && !a.is_name);
        assert_int_equal(a.id, 65534);
        assert_int_equal(a.err, 0);
        assert_true(a.have_creds && a.baddomain && a.have_nobody);
        assert_string_equal(a.creds, "uid 65534 gid 65534 eff 00000000 prm 00000000 bnd 0 "
                                     "nnp 1 root 0 etc 2");
        assert_string_equal(a.nobody, "nobody");

        assert_int_equal(parse(CREDS "name=alice@example.test\n", &a), 0);
        assert_true(a.have && a.is_name && !a.baddomain && !a.have_nobody);
        assert_string_equal(a.name, "alice@example.test");

        assert_int_equal(parse("id=4294967294\n", &a), 0);
        assert_int_equal(a.id, UINT32_MAX - 1);

        /* failures: err and its stage (the last of each counts), no answer */
        assert_int_equal(parse("err=13\nstage=load\n", &a), 0);
        assert_true(!a.have && a.err == EACCES && a.stage_load);
        assert_int_equal(parse(CREDS "err=2\nstage=lookup\n", &a), 0);
        assert_true(!a.have && a.err == ENOENT && !a.stage_load);
        assert_int_equal(parse("err=1\nerr=4095\nstage=load\nstage=lookup\n", &a), 0);
        assert_true(a.err == 4095 && !a.stage_load);
        /* nothing at all: accepted, the caller refuses it */
        assert_int_equal(parse("", &a), 0);
        assert_false(a.have);

        /* the log texts, escaped and bounded */
        char longnote[600] = "nobody=";
        memset(longnote + 7, 'n', 300);
        strcpy(longnote + 307, "\nid=1\n");
        assert_int_equal(parse("nobody=\"a\\b\x7f\nid=1\n", &a), 0);
        assert_string_equal(a.nobody, "\\x22a\\x5cb\\x7f");
        assert_int_equal(parse(longnote, &a), 0);
        assert_int_equal(strlen(a.nobody), 163); /* 160 shown, then "..." */
}

static void refused(const char *text) {
        idmap_reply a;
        assert_int_equal(parse(text, &a), -EBADMSG);
}

static void test_refused(void **state) {
        refused("id=4294967295\n");        /* (u32)-1, the kernel's invalid id */
        refused("id=-1\n");
        refused("id=01\n");
        refused("id=\n");
        refused("id=1\nid=2\n");           /* two answers */
        refused("name=a@b\nid=2\n");
        refused("id=2\nname=a@b\n");
        refused("name=a@b\nname=c@d\n");
        refused("name=\n");
        refused("name=@b\n");              /* nsid_idmap_name_check() */
        refused("name=a@@b\n");
        refused("name=a:b\n");
        refused("name=a\tb\n");
        refused("err=0\n");
        refused("err=4096\n");
        refused("stage=parse\n");
        refused("id=1");                   /* last line unended */
        refused("id\n");
        refused("answer=1\n");
        /* a name one byte over NSID_IDMAP_KEYDESC_NAME_MAX, and one at it */
        char name[NSID_IDMAP_KEYDESC_NAME_MAX + 16] = "name=";
        memset(name + 5, 'x', NSID_IDMAP_KEYDESC_NAME_MAX + 1);
        strcpy(name + 5 + NSID_IDMAP_KEYDESC_NAME_MAX + 1, "\n");
        refused(name);
        strcpy(name + 5 + NSID_IDMAP_KEYDESC_NAME_MAX, "\n");
        idmap_reply a;
        assert_int_equal(parse(name, &a), 0);
        assert_int_equal(strlen(a.name), NSID_IDMAP_KEYDESC_NAME_MAX);

        /* a NUL inside */
        char nul[] = "id=1\n\0id=2\n";
        assert_int_equal(idmap_parse_reply(nul, sizeof(nul) - 1, &a), -EBADMSG);
        /* a refused reply still says what the lines before the refused one said (their
         * notes are logged) */
        assert_int_equal(parse(CREDS "nobody=nogroup\nbogus\nbaddomain=1\n", &a), -EBADMSG);
        assert_true(a.have_creds && a.have_nobody && !a.baddomain);
        assert_string_equal(a.nobody, "nogroup");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_answers),
                cmocka_unit_test(test_refused),
        };
        return run_test_group(tests, NULL, NULL);
}
