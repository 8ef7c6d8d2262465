/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The NFS ID key cache file (kernel-keys-internal.h): one spelling per content, nothing
 * else accepted; and the srcversion file of a module. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "kernel-keys-internal.h"

#define BOOT "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define GOOD                                                                                   \
        "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion 5D3A9C0E7B1F2A4C6E8D0B1\ntagged 1\n"
#define WITH_BOOT(id) "nsid-nfs-idkeys 1\nboot-id " id "\nnfsv4-srcversion -\ntagged 0\n"
#define NONE "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged 0\n"

static int parse_str(const char *s, idkeys_cache *c) {
        return idkeys_cache_parse(s, strlen(s), c);
}

static void test_parse_good(void **state) {
        idkeys_cache c;
        (void) state;

        assert_int_equal(parse_str(GOOD, &c), 0);
        assert_string_equal(c.boot_id, BOOT);
        assert_string_equal(c.srcversion, "5D3A9C0E7B1F2A4C6E8D0B1");
        assert_int_equal(c.tagged, 1);

        assert_int_equal(parse_str(NONE, &c), 0);
        assert_string_equal(c.srcversion, "");
        assert_int_equal(c.tagged, 0);
}

static void test_parse_bad(void **state) {
        static const char *const bad[] = {
                "",
                "nsid-nfs-idkeys 1\n",
                /* the last newline missing, or something after it */
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged 0",
                NONE "\n",
                NONE "x",
                /* another version, magic, line order, spelling */
                "nsid-nfs-idkeys 2\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged 0\n",
                "nsid-nfs-idkeys 1\nnfsv4-srcversion -\nboot-id " BOOT "\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot_id " BOOT "\nnfsv4-srcversion -\ntagged 0\n",
                "nsid-nfs-idkeys 1\r\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\r\nnfsv4-srcversion -\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id  " BOOT "\nnfsv4-srcversion -\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT " \nnfsv4-srcversion -\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged 0 \n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\n",
                /* boot ids: upper case, a missing dash, short, long, not hex */
                WITH_BOOT("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"),
                WITH_BOOT("0f1e2d3c04b5a-6978-8796-a5b4c3d2e1f0"),
                WITH_BOOT("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f"),
                WITH_BOOT("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f00"),
                WITH_BOOT("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg"),
                "nsid-nfs-idkeys 1\nboot-id \nnfsv4-srcversion -\ntagged 0\n",
                /* srcversions: lower case, empty, 65 digits, "--", blank inside */
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion 5d3a\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion \ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion "
                "00000000000000000000000000000000000000000000000000000000000000000\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion --\ntagged 0\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion 5D3A 9C0E\ntagged 0\n",
                /* answers other than 0 and 1 */
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged 2\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged 01\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged -1\n",
                "nsid-nfs-idkeys 1\nboot-id " BOOT "\nnfsv4-srcversion -\ntagged yes\n",
        };
        idkeys_cache c = { .tagged = 7 };
        (void) state;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (parse_str(bad[i], &c) != -EINVAL)
                        fail_msg("accepted #%zu: \"%s\"", i, bad[i]);
                assert_int_equal(c.tagged, 7); /* untouched */
        }
        /* a NUL inside, counted by size */
        char withnul[] = NONE;
        withnul[30] = '\0';
        assert_int_equal(idkeys_cache_parse(withnul, sizeof(withnul) - 1, &c), -EINVAL);
        /* a good text cut short at any byte */
        for (size_t n = 0; n < strlen(GOOD); n++)
                assert_int_equal(idkeys_cache_parse(GOOD, n, &c), -EINVAL);
        assert_int_equal(idkeys_cache_parse(NULL, 0, &c), -EINVAL);
        assert_int_equal(idkeys_cache_parse(GOOD, strlen(GOOD), NULL), -EINVAL);
}

static void test_format(void **state) {
        char buf[IDKEYS_CACHE_MAX];
        idkeys_cache c, back;
        (void) state;

        assert_int_equal(parse_str(GOOD, &c), 0);
        assert_int_equal(idkeys_cache_format(&c, buf, sizeof(buf)), (int) strlen(GOOD));
        assert_string_equal(buf, GOOD);
        assert_int_equal(parse_str(NONE, &c), 0);
        assert_int_equal(idkeys_cache_format(&c, buf, sizeof(buf)), (int) strlen(NONE));
        assert_string_equal(buf, NONE);
        assert_int_equal(parse_str(buf, &back), 0);
        assert_memory_equal(&back, &c, sizeof(c));

        /* the longest valid file fits the reader's cap */
        memset(c.srcversion, 'F', IDKEYS_SRCVERSION_MAX);
        c.srcversion[IDKEYS_SRCVERSION_MAX] = '\0';
        assert_true(idkeys_cache_format(&c, buf, sizeof(buf)) > 0);
        assert_int_equal(parse_str(buf, &back), 0);
        assert_true(strlen(buf) < IDKEYS_CACHE_MAX);

        /* nothing is written that the parser would refuse */
        assert_int_equal(parse_str(NONE, &c), 0);
        c.tagged = 2;
        assert_int_equal(idkeys_cache_format(&c, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(parse_str(NONE, &c), 0);
        strcpy(c.srcversion, "abc");
        assert_int_equal(idkeys_cache_format(&c, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(parse_str(NONE, &c), 0);
        c.boot_id[3] = 'X';
        assert_int_equal(idkeys_cache_format(&c, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(parse_str(NONE, &c), 0);
        c.boot_id[20] = '\0';
        assert_int_equal(idkeys_cache_format(&c, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(parse_str(NONE, &c), 0);
        assert_int_equal(idkeys_cache_format(&c, buf, 20), -EINVAL); /* too small */
}

static void test_srcversion_file(void **state) {
        char dir[] = "/tmp/nsid-test-kernel-keys-XXXXXX", path[300], v[IDKEYS_SRCVERSION_MAX + 1];
        static const struct {
                const char *content;
                int r;
        } cases[] = {
                { "5D3A9C0E7B1F2A4C6E8D0B1\n", 0 },
                { "5D3A9C0E7B1F2A4C6E8D0B1", -EBADMSG },   /* no newline */
                { "5d3a9c0e\n", -EBADMSG },                 /* not as the kernel prints */
                { "\n", -EBADMSG },
                { "", -EBADMSG },
                { "5D3A\n\n", -EBADMSG },
                { "0000000000000000000000000000000000000000000000000000000000000000\n", 0 },
                { "00000000000000000000000000000000000000000000000000000000000000000\n",
                  -EBADMSG },
                { "00000000000000000000000000000000000000000000000000000000000000000000000\n",
                  -EBADMSG },
        };
        (void) state;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/srcversion", dir);
        assert_int_equal(idkeys_read_srcversion(path, v), -ENOENT);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                size_t l = strlen(cases[i].content);
                assert_int_equal(write(fd, cases[i].content, l), (ssize_t) l);
                close(fd);
                strcpy(v, "untouched");
                assert_int_equal(idkeys_read_srcversion(path, v), cases[i].r);
                if (cases[i].r == 0) {
                        assert_int_equal(strlen(v), l - 1);
                        assert_memory_equal(v, cases[i].content, l - 1);
                }
                else
                        assert_string_equal(v, "untouched");
        }
        unlink(path);
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_good),
                cmocka_unit_test(test_parse_bad),
                cmocka_unit_test(test_format),
                cmocka_unit_test(test_srcversion_file),
        };
        return run_test_group(tests, NULL, NULL);
}
