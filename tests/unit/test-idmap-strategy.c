/* SPDX-License-Identifier: GPL-2.0-or-later */
/* idmap/idmap-strategy.c: the ways an id_resolver lookup of nsid-idmap goes, for each
 * kernel, nsid.conf and daemon situation, and for each way a strategy can end. The acts
 * themselves (keys, the daemon, workers) are tested for real by the integration tests
 * (itest-idmap-upcall.sh, itest-idmap-fastpath.sh) and the lab (idmap-default, kernel-keyns). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "idmap/idmap-strategy.h"

/* the strategies tried, in order, when each ends as outcomes[] says (the last one repeats);
 * "a > b > c" */
static const char *walk(const idmap_plan *p, const idmap_outcome *outcomes, size_t n) {
        static char buf[512];
        idmap_outcome o = IDMAP_NEXT;
        size_t i = 0;

        buf[0] = '\0';
        for (idmap_strategy s = idmap_strategy_next(p, IDMAP_START, o); s != IDMAP_END;
             s = idmap_strategy_next(p, s, o)) {
                assert_true(strlen(buf) < sizeof(buf) - 64);
                if (buf[0])
                        strcat(buf, " > ");
                strcat(buf, idmap_strategy_name(s));
                o = outcomes[i < n ? i : n - 1];
                i++;
                assert_true(i < 16); /* no loop */
        }
        return buf;
}
#define WALK(p, ...)                                                                             \
        walk(p, (const idmap_outcome[]) { __VA_ARGS__ },                                         \
             sizeof((const idmap_outcome[]) { __VA_ARGS__ }) / sizeof(idmap_outcome))

static void test_plan(void **state) {
        (void) state;
        idmap_plan p;

        /* Debian's kernel (one key cache), nsid-idmapd asked: the idmap pipe first */
        p = idmap_plan_make(false, false, false, 0, 400);
        assert_true(p.to_pipe && !p.per_ns_keys && !p.requester_context);
        /* no daemon to ask: nfsidmap's drop-in, the host's context */
        p = idmap_plan_make(false, false, false, 0, 0);
        assert_true(!p.to_pipe && !p.per_ns_keys && !p.requester_context);
        /* the probe failed (a negative errno): as a kernel without the fix */
        p = idmap_plan_make(false, false, false, -ENOENT, 400);
        assert_true(p.to_pipe && !p.per_ns_keys);
        /* a kernel with nsid's patch: each namespace in its own context, no pipe */
        p = idmap_plan_make(false, false, false, 1, 400);
        assert_true(!p.to_pipe && p.per_ns_keys && p.requester_context);
        /* nsid.conf requester-context = no, on either kernel: the host's answers */
        p = idmap_plan_make(true, false, false, 1, 400);
        assert_true(!p.to_pipe && !p.per_ns_keys && !p.requester_context);
        p = idmap_plan_make(true, false, false, 0, 400);
        assert_true(!p.to_pipe && !p.per_ns_keys && !p.requester_context);
        /* requester-context = yes: this helper answers from the requester's files */
        p = idmap_plan_make(true, true, false, 0, 400);
        assert_true(!p.to_pipe && !p.per_ns_keys && p.requester_context);
        /* test mode (--test-user-prefix) never hands over nor asks the kernel */
        p = idmap_plan_make(false, false, true, 1, 400);
        assert_true(!p.to_pipe && !p.per_ns_keys && !p.requester_context);
}

static void test_pipe(void **state) {
        (void) state;
        idmap_plan p = idmap_plan_make(false, false, false, 0, 400);

        /* handed over: nothing else */
        assert_string_equal(WALK(&p, IDMAP_DONE), "idmap pipe");
        /* no daemon there: the host's context, the daemon's cache then libnfsidmap */
        assert_string_equal(WALK(&p, IDMAP_NEXT, IDMAP_NEXT, IDMAP_ANSWERED, IDMAP_DONE),
                            "idmap pipe > nsid-idmapd, host context > host context > answer");
        assert_string_equal(WALK(&p, IDMAP_NEXT, IDMAP_ANSWERED, IDMAP_DONE),
                            "idmap pipe > nsid-idmapd, host context > answer");
        /* a daemon that did not take a container's lookup: the pipe strategy turns the
         * requester's context on; the requester's files, compared with the host's */
        p.requester_context = true;
        assert_int_equal(idmap_strategy_next(&p, IDMAP_PIPE, IDMAP_NEXT), IDMAP_HOST_LOCAL);
        assert_int_equal(idmap_strategy_next(&p, IDMAP_HOST_LOCAL, IDMAP_NEXT), IDMAP_REQUESTER);
        assert_int_equal(idmap_strategy_next(&p, IDMAP_REQUESTER, IDMAP_ANSWERED), IDMAP_ANSWER);
}

static void test_tagged_kernel(void **state) {
        (void) state;
        idmap_plan p = idmap_plan_make(false, false, false, 1, 400);

        assert_string_equal(WALK(&p, IDMAP_ANSWERED, IDMAP_DONE),
                            "nsid-idmapd, requester's namespace > answer");
        /* the daemon said there is no such owner there: rejected, nothing else */
        assert_string_equal(WALK(&p, IDMAP_DONE), "nsid-idmapd, requester's namespace");
        /* no daemon: the requester's files, with the host's answer to compare */
        assert_string_equal(WALK(&p, IDMAP_NEXT, IDMAP_NEXT, IDMAP_ANSWERED, IDMAP_DONE),
                            "nsid-idmapd, requester's namespace > host context > "
                            "requester's files > answer");
}

static void test_conf(void **state) {
        (void) state;
        idmap_plan p = idmap_plan_make(true, false, false, 0, 400);

        /* requester-context = no: the host's context, the daemon's cache first */
        assert_string_equal(WALK(&p, IDMAP_ANSWERED, IDMAP_DONE),
                            "nsid-idmapd, host context > answer");
        /* libnfsidmap has no mapping: rejected there */
        assert_string_equal(WALK(&p, IDMAP_NEXT, IDMAP_DONE),
                            "nsid-idmapd, host context > host context");
        /* requester-context = yes: the daemon is not asked */
        p = idmap_plan_make(true, true, false, 0, 400);
        assert_string_equal(WALK(&p, IDMAP_NEXT, IDMAP_ANSWERED, IDMAP_DONE),
                            "host context > requester's files > answer");
        /* the requester's files hang: rejected (EAGAIN), no answer */
        assert_string_equal(WALK(&p, IDMAP_NEXT, IDMAP_DONE), "host context > requester's files");
}

static void test_edges(void **state) {
        (void) state;
        idmap_plan p = idmap_plan_make(false, false, false, 0, 0);

        /* every strategy that settles the key ends the lookup; the answer always ends it */
        for (idmap_strategy s = IDMAP_START; s < IDMAP_END; s++) {
                assert_int_equal(idmap_strategy_next(&p, s, IDMAP_DONE), IDMAP_END);
                assert_non_null(idmap_strategy_name(s));
        }
        assert_int_equal(idmap_strategy_next(&p, IDMAP_ANSWER, IDMAP_NEXT), IDMAP_END);
        assert_int_equal(idmap_strategy_next(&p, IDMAP_END, IDMAP_NEXT), IDMAP_END);
        assert_int_equal(idmap_strategy_next(&p, (idmap_strategy) 99, IDMAP_ANSWERED), IDMAP_END);
        assert_null(idmap_strategy_name((idmap_strategy) 99));
        assert_null(idmap_strategy_name((idmap_strategy) -1));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plan),
                cmocka_unit_test(test_pipe),
                cmocka_unit_test(test_tagged_kernel),
                cmocka_unit_test(test_conf),
                cmocka_unit_test(test_edges),
        };
        return run_test_group(tests, NULL, NULL);
}
