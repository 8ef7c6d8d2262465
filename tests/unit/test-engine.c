/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl/engine.c: the engine and container name of a cgroup path, Podman's conmon name. The
 * paths are the ones the engines make (the podman ones from the lab, tests/vm/scenarios/
 * podman-identity.sh); the conmon name is read from a fake /proc tree in a temporary
 * directory (a real conmon needs Podman). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsidctl/engine.h"

#define ID "c5cfef0140ca8ddaa170c11a4e6bdd36c79cb20234b050b8648d1af1dfe5f7ac"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void expect(const char *cg, const char *engine, const char *id, const char *name) {
        engine_ref r;
        int rc = engine_from_cgroup(cg, &r);
        if (!engine) {
                assert_int_equal(rc, -ENOENT);
                return;
        }
        assert_int_equal(rc, 0);
        assert_string_equal(r.engine, engine);
        assert_string_equal(r.id, id);
        assert_string_equal(r.name, name);
}

static void test_podman(void **state) {
        expect("/libpod_parent/libpod-" ID, "podman", ID, "");            /* cgroupfs */
        expect("/machine.slice/libpod-" ID ".scope", "podman", ID, "");   /* systemd */
        expect("/machine.slice/libpod-" ID ".scope/container", "podman", ID, "");
        expect("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
               "podman", ID, "");                                          /* rootless */
        expect("/machine.slice/libpod-conmon-" ID ".scope", NULL, NULL, NULL); /* its conmon */
        expect("/libpod_parent/libpod-" ID "0", NULL, NULL, NULL);          /* 65 hex */
        expect("/libpod_parent/libpod-"
               "C5CFEF0140CA8DDAA170C11A4E6BDD36C79CB20234B050B8648D1AF1DFE5F7AC",
               NULL, NULL, NULL); /* upper case: not an id Podman makes */
}

static void test_others(void **state) {
        expect("/system.slice/docker-" ID ".scope", "docker", ID, "");
        expect("/docker/" ID, "docker", ID, "");
        expect("/kubepods.slice/kubepods-besteffort.slice/crio-" ID ".scope", "cri-o", ID, "");
        expect("/kubepods.slice/crio-conmon-" ID ".scope", NULL, NULL, NULL);
        expect("/lxc.payload.web1", "lxc", "", "web1");
        expect("/lxc.payload.web1/init.scope", "lxc", "", "web1");
        expect("/lxc/web1", "lxc", "", "web1");
        expect("/lxc.monitor.web1", NULL, NULL, NULL);
        expect("/machine.slice/machine-web1.scope", "nspawn", "", "web1");
        expect("/machine.slice/machine-my\\x2dbox.scope/payload", "nspawn", "", "my-box");
        expect("/system.slice/system-systemd\\x2dnspawn.slice/systemd-nspawn@web1.service/payload",
               "nspawn", "", "web1");
        expect("/system.slice/systemd-nspawn@my\\x2dbox.service", "nspawn", "", "my-box");
        expect("/system.slice/systemd-nspawn@.service", NULL, NULL, NULL);
        expect("/system.slice/systemd-nspawn@a\\x0ab.service", NULL, NULL, NULL);
        expect("/machine.slice", NULL, NULL, NULL);
        expect("/machine.slice/machine-.scope", NULL, NULL, NULL);
        expect("/machine.slice/machine-a\\x0ab.scope", NULL, NULL, NULL); /* a newline */
        expect("/", NULL, NULL, NULL);
        expect("/user.slice/user-0.slice/session-1.scope", NULL, NULL, NULL);
}

static void test_outermost_wins(void **state) {
        /* below its own cgroup the container names cgroups as it likes */
        expect("/lxc.payload.real/libpod-" ID, "lxc", "", "real");
        expect("/libpod_parent/libpod-" ID "/lxc.payload.fake", "podman", ID, "");
        expect("/machine.slice/machine-real.scope/docker/" ID2, "nspawn", "", "real");
        /* /docker/<id> and /lxc/<name> only at the top */
        expect("/x/docker/" ID, NULL, NULL, NULL);
        expect("/x/lxc/name", NULL, NULL, NULL);
}

static void test_bad_input(void **state) {
        engine_ref r;
        char big[5000];
        assert_int_equal(engine_from_cgroup(NULL, &r), -EINVAL);
        assert_int_equal(engine_from_cgroup("libpod-" ID, &r), -EINVAL);
        assert_int_equal(engine_from_cgroup("", &r), -EINVAL);
        memset(big, 'a', sizeof(big));
        memcpy(big, "/lxc.payload.", 13);
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(engine_from_cgroup(big, &r), -ENOENT); /* name longer than 255 */
}

static void test_conmon_name(void **state) {
        static const char a[] = "/usr/bin/conmon\0--api-version\0"
                                "1\0-c\0" ID "\0-n\0web1\0-r\0/usr/bin/crun";
        static const char b[] = "conmon\0--name=db\0";
        static const char c[] = "conmon\0-n";
        static const char d[] = "conmon\0-n\0bad name\0";
        char buf[8];
        char big[ENGINE_NAME_MAX + 1];

        assert_int_equal(engine_conmon_name(a, sizeof(a), big, sizeof(big)), 0);
        assert_string_equal(big, "web1");
        assert_int_equal(engine_conmon_name(b, sizeof(b) - 1, big, sizeof(big)), 0);
        assert_string_equal(big, "db");
        assert_int_equal(engine_conmon_name(c, sizeof(c), big, sizeof(big)), -ENOENT);
        assert_int_equal(engine_conmon_name(d, sizeof(d), big, sizeof(big)), -ENOENT);
        assert_int_equal(engine_conmon_name("conmon\0-n\0verylongname", 23, buf, sizeof(buf)),
                         -ENAMETOOLONG);
}

static void put(const char *root, const char *rel, const char *data, size_t size) {
        char path[512];
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, size, f), size);
        fclose(f);
}

static void test_name_from_proc(void **state) {
        char root[] = "/tmp/nsid-test-engine-XXXXXX", p[600];
        static const char cmd[] = "/usr/bin/conmon\0-c\0" ID "\0-u\0" ID "\0-n\0web1\0";
        static const char other[] = "/usr/bin/conmon\0-c\0" ID2 "\0-u\0" ID2 "\0-n\0web2\0";
        /* the container's comm may hold ") 9 9" to fake a ppid: the last ")" counts */
        static const char stat[] = "42 (sl) 1 (x) S 41 42 1 0 -1 4194560 85 0 0 0\n";
        engine_ref r = { .engine = "podman" };

        assert_non_null(mkdtemp(root));
        snprintf(p, sizeof(p), "%s/42", root);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/41", root);
        assert_int_equal(mkdir(p, 0755), 0);
        put(root, "42/stat", stat, sizeof(stat) - 1);
        put(root, "41/comm", "conmon\n", 7);
        put(root, "41/cmdline", cmd, sizeof(cmd));
        memcpy(r.id, ID, sizeof(ID));
        assert_int_equal(engine_name_podman(root, 42, &r), 0);
        assert_string_equal(r.name, "web1");

        /* a conmon of another container does not name this one */
        put(root, "41/cmdline", other, sizeof(other));
        r.name[0] = '\0';
        assert_int_equal(engine_name_podman(root, 42, &r), -ENOENT);
        assert_string_equal(r.name, "");
        /* a parent that is not conmon */
        put(root, "41/cmdline", cmd, sizeof(cmd));
        put(root, "41/comm", "bash\n", 5);
        assert_int_equal(engine_name_podman(root, 42, &r), -ENOENT);
        /* no such process */
        assert_int_equal(engine_name_podman(root, 43, &r), -ESRCH);
        /* not podman */
        r.engine = "lxc";
        assert_int_equal(engine_name_podman(root, 42, &r), -EINVAL);

        snprintf(p, sizeof(p), "rm -rf '%s'", root);
        assert_int_equal(system(p), 0);
}

static void test_nspawn_name(void **state) {
        static const char m[] = "systemd-nspawn\0-q\0-M\0web1\0-D\0/var/lib/machines/x\0";
        static const char ml[] = "systemd-nspawn\0--machine=db\0";
        static const char d[] = "systemd-nspawn\0--directory\0/srv/ct/alpine//\0-b\0";
        static const char dl[] = "systemd-nspawn\0--directory=rel\0";
        static const char none[] = "systemd-nspawn\0-b\0";
        static const char bad[] = "systemd-nspawn\0-M\0a b\0";
        char buf[ENGINE_NAME_MAX + 1];

        (void) state;
        assert_int_equal(engine_nspawn_name(m, sizeof(m), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "web1");
        assert_int_equal(engine_nspawn_name(ml, sizeof(ml), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "db");
        assert_int_equal(engine_nspawn_name(d, sizeof(d), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "alpine");
        assert_int_equal(engine_nspawn_name(dl, sizeof(dl), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "rel");
        assert_int_equal(engine_nspawn_name(none, sizeof(none), buf, sizeof(buf)), -ENOENT);
        assert_int_equal(engine_nspawn_name(bad, sizeof(bad), buf, sizeof(buf)), -ENOENT);
        /* a trailing option without its value */
        assert_int_equal(engine_nspawn_name("systemd-nspawn\0-M", 18, buf, sizeof(buf)),
                         -ENOENT);
}

/* An unregistered nspawn container: no engine in the cgroup, the parent of its first process
 * is systemd-nspawn */
static void test_nspawn_parent(void **state) {
        char root[] = "/tmp/nsid-test-engine-XXXXXX", p[600];
        static const char cmd[] = "systemd-nspawn\0--register=no\0-D\0/srv/ct/payload\0";
        static const char stat[] = "52 (systemd) S 51 52 1 0 -1 4194560 85 0 0 0\n";
        engine_ref r = {};

        (void) state;
        assert_non_null(mkdtemp(root));
        snprintf(p, sizeof(p), "%s/52", root);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/51", root);
        assert_int_equal(mkdir(p, 0755), 0);
        put(root, "52/stat", stat, sizeof(stat) - 1);
        put(root, "51/comm", "systemd-nspawn\n", 15);
        put(root, "51/cmdline", cmd, sizeof(cmd));
        assert_int_equal(engine_from_nspawn_parent(root, 52, &r), 0);
        assert_string_equal(r.engine, "nspawn");
        assert_string_equal(r.name, "payload");
        /* a parent of another name is not nspawn */
        put(root, "51/comm", "sh\n", 3);
        assert_int_equal(engine_from_nspawn_parent(root, 52, &r), -ENOENT);
        /* a parent owned by another user (when asked by root) lends no name */
        put(root, "51/comm", "systemd-nspawn\n", 15);
        if (geteuid() == 0) {
                snprintf(p, sizeof(p), "%s/51", root);
                assert_int_equal(chown(p, 65534, 65534), 0);
                assert_int_equal(engine_from_nspawn_parent(root, 52, &r), -ENOENT);
        }
        assert_int_equal(engine_from_nspawn_parent(root, 53, &r), -ESRCH);
        snprintf(p, sizeof(p), "rm -rf '%s'", root);
        assert_int_equal(system(p), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_podman),
                cmocka_unit_test(test_others),
                cmocka_unit_test(test_outermost_wins),
                cmocka_unit_test(test_bad_input),
                cmocka_unit_test(test_conmon_name),
                cmocka_unit_test(test_name_from_proc),
                cmocka_unit_test(test_nspawn_name),
                cmocka_unit_test(test_nspawn_parent),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
