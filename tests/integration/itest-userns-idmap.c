/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ID translation against the kernel's own view, on a real user namespace (needs root).
 *
 * A child unshares CLONE_NEWUSER; the parent writes a uid_map and a gid_map with several
 * extents. Then:
 *  - the maps are loaded through nsid_proc_open(child) + nsid_idmap_load_proc();
 *  - host -> ns: the child stat()s files the parent chowned to host ids at every extent
 *    boundary; the owner the kernel shows inside the namespace must equal
 *    nsid_idmap_to_ns_munged() (the overflow id when unmapped);
 *  - ns -> host: grandchildren become a namespace id with setresuid()/setresgid() and create
 *    a file; the owner the host sees must equal nsid_idmap_to_host(); an id the library says
 *    is unmapped must be refused by the kernel (EINVAL), and the reverse;
 *  - /proc/PID/status of a process that became ns ids shows the host ids the library
 *    computes;
 *  - once the child is gone, loading fails with -ESRCH.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include "nsid/idmap.h"
#include "nsid/ns.h"

static const char uid_map[] = "0 100000 1000\n1000 200000 10\n";
static const char gid_map[] = "0 300000 500\n500 400000 20\n2000 2000 1\n";

/* Host ids whose files the child stats (boundaries of every extent and just outside). */
static const uint32_t host_uids[] = { 0,      99999,  100000, 100001, 100999, 101000,
                                      199999, 200000, 200009, 200010, 65534 };
static const uint32_t host_gids[] = { 0,      299999, 300000, 300499, 300500, 399999,
                                      400000, 400019, 400020, 1999,   2000,   2001 };
/* Namespace ids the grandchildren try to become. */
static const uint32_t ns_uids[] = { 0, 1, 999, 1000, 1009, 1010, 5000, 65534 };
static const uint32_t ns_gids[] = { 0, 499, 500, 519, 520, 2000, 2001, 1999 };

#define N_HOST_UIDS (sizeof(host_uids) / sizeof(host_uids[0]))
#define N_HOST_GIDS (sizeof(host_gids) / sizeof(host_gids[0]))
#define N_NS_UIDS (sizeof(ns_uids) / sizeof(ns_uids[0]))
#define N_NS_GIDS (sizeof(ns_gids) / sizeof(ns_gids[0]))

static char dir[64];

/* What the child reports. */
struct report {
        uint32_t seen_uid[N_HOST_UIDS]; /* st_uid of file "hu<i>" as seen inside */
        uint32_t seen_gid[N_HOST_GIDS];
        int become_uid[N_NS_UIDS]; /* 0 or the errno of setresuid() */
        int become_gid[N_NS_GIDS];
        int ok;
};

static void write_all(int fd, const void *buf, size_t size) {
        const char *p = buf;
        while (size > 0) {
                ssize_t n = write(fd, p, size);
                if (n <= 0)
                        _exit(90);
                p += n;
                size -= (size_t) n;
        }
}

static int read_all(int fd, void *buf, size_t size) {
        char *p = buf;
        while (size > 0) {
                ssize_t n = read(fd, p, size);
                if (n <= 0)
                        return -1;
                p += n;
                size -= (size_t) n;
        }
        return 0;
}

/* In a grandchild: become ns id (uid or gid) and create a file named after it. */
static int become(int is_gid, uint32_t id) {
        pid_t pid = fork();
        if (pid < 0)
                return errno;
        if (pid == 0) {
                char path[128];
                if (is_gid) {
                        (void) setgroups(0, NULL);
                        if (setresgid(id, id, id) < 0)
                                _exit(errno);
                } else if (setresuid(id, id, id) < 0)
                        _exit(errno);
                snprintf(path, sizeof(path), "%s/%s%u", dir, is_gid ? "ng" : "nu", id);
                int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
                if (fd < 0)
                        _exit(200);
                close(fd);
                _exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
                return 255;
        return WEXITSTATUS(status);
}

static void child(int rd, int wr) {
        struct report rep = {};
        char c;

        if (unshare(CLONE_NEWUSER) < 0)
                _exit(91);
        write_all(wr, "r", 1);
        if (read(rd, &c, 1) != 1) /* maps written */
                _exit(92);

        for (size_t i = 0; i < N_HOST_UIDS; i++) {
                char path[128];
                struct stat st;
                snprintf(path, sizeof(path), "%s/hu%zu", dir, i);
                if (stat(path, &st) < 0)
                        _exit(93);
                rep.seen_uid[i] = (uint32_t) st.st_uid;
        }
        for (size_t i = 0; i < N_HOST_GIDS; i++) {
                char path[128];
                struct stat st;
                snprintf(path, sizeof(path), "%s/hg%zu", dir, i);
                if (stat(path, &st) < 0)
                        _exit(94);
                rep.seen_gid[i] = (uint32_t) st.st_gid;
        }
        for (size_t i = 0; i < N_NS_UIDS; i++)
                rep.become_uid[i] = become(0, ns_uids[i]);
        for (size_t i = 0; i < N_NS_GIDS; i++)
                rep.become_gid[i] = become(1, ns_gids[i]);
        rep.ok = 1;
        write_all(wr, &rep, sizeof(rep));
        _exit(0);
}

static void write_map(pid_t pid, const char *name, const char *text) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static void check_extents(const nsid_idmap *m, const char *text) {
        /* The library's extents are those written, in order. */
        unsigned a, b, c, i = 0;
        int off = 0, k;
        while (sscanf(text + off, "%u %u %u\n%n", &a, &b, &c, &k) == 3) {
                nsid_idmap_extent e;
                assert_int_equal(nsid_idmap_get_extent(m, i, &e), 0);
                assert_int_equal(e.ns_first, a);
                assert_int_equal(e.host_first, b);
                assert_int_equal(e.count, c);
                off += k;
                i++;
        }
        assert_int_equal(nsid_idmap_get_n_extents(m), (int) i);
}

static uint32_t host_owner(const char *prefix, uint32_t id, int want_gid) {
        char path[128];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s%u", dir, prefix, id);
        assert_int_equal(stat(path, &st), 0);
        return want_gid ? (uint32_t) st.st_gid : (uint32_t) st.st_uid;
}

static void test_userns_maps(void **state) {
        int to_child[2], from_child[2];
        char c;

        strcpy(dir, "/tmp/nsid-itest-idmap.XXXXXX");
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0777), 0);
        for (size_t i = 0; i < N_HOST_UIDS; i++) {
                char path[128];
                snprintf(path, sizeof(path), "%s/hu%zu", dir, i);
                int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                assert_int_equal(fchown(fd, host_uids[i], 0), 0);
                close(fd);
        }
        for (size_t i = 0; i < N_HOST_GIDS; i++) {
                char path[128];
                snprintf(path, sizeof(path), "%s/hg%zu", dir, i);
                int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                assert_int_equal(fchown(fd, 0, host_gids[i]), 0);
                close(fd);
        }

        assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
        assert_int_equal(pipe2(from_child, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(to_child[1]);
                close(from_child[0]);
                child(to_child[0], from_child[1]);
        }
        close(to_child[0]);
        close(from_child[1]);
        assert_int_equal(read(from_child[0], &c, 1), 1);

        nsid_proc *p = NULL;
        nsid_idmap *um = NULL, *gm = NULL;
        assert_int_equal(nsid_proc_open(pid, &p), 0);

        /* Before the maps are written the kernel shows empty files: nothing is mapped. */
        assert_int_equal(nsid_idmap_load_proc(p, NSID_IDMAP_UID, &um), 0);
        assert_int_equal(nsid_idmap_get_n_extents(um), 0);
        um = nsid_idmap_unref(um);

        write_map(pid, "uid_map", uid_map);
        write_map(pid, "gid_map", gid_map);

        assert_int_equal(nsid_idmap_load_proc(p, NSID_IDMAP_UID, &um), 0);
        assert_int_equal(nsid_idmap_load_proc(p, NSID_IDMAP_GID, &gm), 0);
        check_extents(um, uid_map);
        check_extents(gm, gid_map);
        assert_int_equal(nsid_idmap_is_identity(um), 0);

        /* The library's text round trip agrees with what the kernel prints. */
        char *fmt = NULL, *kernel = NULL;
        size_t ksize = 0;
        assert_int_equal(nsid_idmap_format(um, &fmt), 0);
        assert_int_equal(nsid_proc_read_file(p, "uid_map", 65536, &kernel, &ksize), 0);
        assert_string_equal(fmt, kernel);
        free(fmt);
        free(kernel);

        write_all(to_child[1], "g", 1);
        struct report rep;
        assert_int_equal(read_all(from_child[0], &rep, sizeof(rep)), 0);
        assert_int_equal(rep.ok, 1);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        uint32_t ov_uid, ov_gid, v;
        assert_int_equal(nsid_idmap_get_overflow_id(um, &ov_uid), 0);
        assert_int_equal(nsid_idmap_get_overflow_id(gm, &ov_gid), 0);

        /* host -> ns: the kernel's from_kuid_munged() view inside the namespace. */
        for (size_t i = 0; i < N_HOST_UIDS; i++) {
                int r = nsid_idmap_to_ns_munged(um, host_uids[i], &v);
                assert_true(r == 0 || r == 1);
                if (v != rep.seen_uid[i])
                        fail_msg("host uid %u: kernel shows %u inside, library says %u",
                                 host_uids[i], rep.seen_uid[i], v);
                if (r == 1)
                        assert_int_equal(v, ov_uid);
        }
        for (size_t i = 0; i < N_HOST_GIDS; i++) {
                int r = nsid_idmap_to_ns_munged(gm, host_gids[i], &v);
                assert_true(r == 0 || r == 1);
                if (v != rep.seen_gid[i])
                        fail_msg("host gid %u: kernel shows %u inside, library says %u",
                                 host_gids[i], rep.seen_gid[i], v);
        }

        /* ns -> host: the kernel accepted exactly the ids the library maps, and files created
         * by them are owned by the host ids the library computes. */
        unsigned mapped = 0, unmapped = 0;
        for (size_t i = 0; i < N_NS_UIDS; i++) {
                int r = nsid_idmap_to_host(um, ns_uids[i], &v);
                if (r == -ENOENT) {
                        if (rep.become_uid[i] != EINVAL)
                                fail_msg("ns uid %u: library says unmapped, setresuid gave %d",
                                         ns_uids[i], rep.become_uid[i]);
                        unmapped++;
                        continue;
                }
                assert_int_equal(r, 0);
                if (rep.become_uid[i] != 0)
                        fail_msg("ns uid %u: library maps it to %u, setresuid gave %d",
                                 ns_uids[i], v, rep.become_uid[i]);
                assert_int_equal(host_owner("nu", ns_uids[i], 0), v);
                mapped++;
        }
        for (size_t i = 0; i < N_NS_GIDS; i++) {
                int r = nsid_idmap_to_host(gm, ns_gids[i], &v);
                if (r == -ENOENT) {
                        if (rep.become_gid[i] != EINVAL)
                                fail_msg("ns gid %u: library says unmapped, setresgid gave %d",
                                         ns_gids[i], rep.become_gid[i]);
                        unmapped++;
                        continue;
                }
                assert_int_equal(r, 0);
                if (rep.become_gid[i] != 0)
                        fail_msg("ns gid %u: library maps it to %u, setresgid gave %d",
                                 ns_gids[i], v, rep.become_gid[i]);
                assert_int_equal(host_owner("ng", ns_gids[i], 1), v);
                mapped++;
        }
        /* Both outcomes were exercised. */
        assert_true(mapped >= 8);
        assert_true(unmapped >= 5);

        /* The child is gone (reaped): loading its maps now fails cleanly. */
        nsid_idmap *gone = NULL;
        assert_int_equal(nsid_idmap_load_proc(p, NSID_IDMAP_UID, &gone), -ESRCH);
        assert_null(gone);

        nsid_idmap_unref(um);
        nsid_idmap_unref(gm);
        nsid_proc_unref(p);
        close(to_child[1]);
        close(from_child[0]);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* A process that stays in the namespace as ns uid 1005 / gid 505: the kernel's
 * /proc/PID/status (read from the host) shows host ids that the library computes. */
static void test_proc_status(void **state) {
        int sync[2];
        char c;
        assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
        int go[2];
        assert_int_equal(pipe2(go, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(1);
                write_all(sync[1], "r", 1);
                if (read(go[0], &c, 1) != 1)
                        _exit(2);
                (void) setgroups(0, NULL);
                if (setresgid(505, 505, 505) < 0 || setresuid(1005, 1005, 1005) < 0)
                        _exit(3);
                write_all(sync[1], "s", 1);
                (void) !read(go[0], &c, 1);
                _exit(0);
        }
        assert_int_equal(read(sync[0], &c, 1), 1);
        write_map(pid, "uid_map", uid_map);
        write_map(pid, "gid_map", gid_map);
        write_all(go[1], "g", 1);
        assert_int_equal(read(sync[0], &c, 1), 1);

        nsid_proc *p = NULL;
        nsid_idmap *um = NULL, *gm = NULL;
        assert_int_equal(nsid_proc_open(pid, &p), 0);
        assert_int_equal(nsid_idmap_load_proc(p, NSID_IDMAP_UID, &um), 0);
        assert_int_equal(nsid_idmap_load_proc(p, NSID_IDMAP_GID, &gm), 0);

        char *status = NULL;
        assert_int_equal(nsid_proc_read_file(p, "status", 65536, &status, NULL), 0);
        unsigned ru, eu, su, fu, rg, eg, sg, fg;
        const char *l = strstr(status, "\nUid:");
        assert_non_null(l);
        assert_int_equal(sscanf(l, "\nUid: %u %u %u %u", &ru, &eu, &su, &fu), 4);
        l = strstr(status, "\nGid:");
        assert_non_null(l);
        assert_int_equal(sscanf(l, "\nGid: %u %u %u %u", &rg, &eg, &sg, &fg), 4);
        free(status);

        uint32_t hu, hg, back;
        assert_int_equal(nsid_idmap_to_host(um, 1005, &hu), 0);
        assert_int_equal(nsid_idmap_to_host(gm, 505, &hg), 0);
        assert_int_equal(hu, 200005);
        assert_int_equal(hg, 400005);
        assert_int_equal(ru, hu);
        assert_int_equal(eu, hu);
        assert_int_equal(fu, hu);
        assert_int_equal(rg, hg);
        assert_int_equal(eg, hg);
        assert_int_equal(nsid_idmap_to_ns(um, ru, &back), 0);
        assert_int_equal(back, 1005);
        assert_int_equal(nsid_idmap_to_ns(gm, rg, &back), 0);
        assert_int_equal(back, 505);

        write_all(go[1], "x", 1);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        nsid_idmap_unref(um);
        nsid_idmap_unref(gm);
        nsid_proc_unref(p);
        close(sync[0]);
        close(sync[1]);
        close(go[0]);
        close(go[1]);
}

/*
 * The parser against the kernel's own map_write(): each text is written to the uid_map of a
 * fresh user namespace, and whether the kernel takes it must match whether
 * nsid_idmap_parse() takes it, apart from the documented differences (marked): nsid accepts
 * an empty map (what an unwritten uid_map reads as), and refuses what the kernel only takes
 * by accident (numbers above 2^32-1, which it truncates; NUL bytes, where it stops reading;
 * Latin-1 0xa0, which its isspace() counts as a blank). Accepted maps must read back from
 * the kernel as the library parsed them.
 */
enum { SAME, KERNEL_ONLY, NSID_ONLY };

static int kernel_accepts(const char *text, size_t size, nsid_idmap **ret_readback) {
        int sync[2], go[2];
        char c;
        assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
        assert_int_equal(pipe2(go, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(1);
                write_all(sync[1], "r", 1);
                (void) !read(go[0], &c, 1);
                _exit(0);
        }
        assert_int_equal(read(sync[0], &c, 1), 1);
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) pid);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        ssize_t n = write(fd, text, size);
        int err = n < 0 ? errno : 0;
        close(fd);
        if (n >= 0)
                assert_int_equal(n, (ssize_t) size);
        else
                assert_int_equal(err, EINVAL);

        nsid_proc *p = NULL;
        assert_int_equal(nsid_proc_open(pid, &p), 0);
        assert_int_equal(nsid_idmap_load_proc(p, NSID_IDMAP_UID, ret_readback), 0);
        nsid_proc_unref(p);

        write_all(go[1], "x", 1);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        close(sync[0]);
        close(sync[1]);
        close(go[0]);
        close(go[1]);
        return n >= 0;
}

static void check_agreement(const char *text, size_t size, int expect) {
        nsid_idmap *mine = NULL, *kernel = NULL;
        int lib_ok = nsid_idmap_parse(NSID_IDMAP_UID, text, size, &mine) == 0;
        int kern_ok = kernel_accepts(text, size, &kernel);
        int got = lib_ok == kern_ok ? SAME : kern_ok ? KERNEL_ONLY : NSID_ONLY;
        if (got != expect)
                fail_msg("map \"%.*s\" (%zu bytes): kernel %s, nsid %s", (int) (size > 60 ? 60 : size),
                         text, size, kern_ok ? "accepts" : "refuses", lib_ok ? "accepts" : "refuses");
        if (lib_ok && kern_ok) {
                int n = nsid_idmap_get_n_extents(mine);
                assert_int_equal(nsid_idmap_get_n_extents(kernel), n);
                for (int i = 0; i < n; i++) {
                        nsid_idmap_extent a, b;
                        assert_int_equal(nsid_idmap_get_extent(mine, (unsigned) i, &a), 0);
                        assert_int_equal(nsid_idmap_get_extent(kernel, (unsigned) i, &b), 0);
                        assert_int_equal(a.ns_first, b.ns_first);
                        assert_int_equal(a.host_first, b.host_first);
                        assert_int_equal(a.count, b.count);
                }
        }
        if (!kern_ok)
                assert_int_equal(nsid_idmap_get_n_extents(kernel), 0);
        nsid_idmap_unref(mine);
        nsid_idmap_unref(kernel);
}

static void test_parser_agrees_with_kernel(void **state) {
        static const struct {
                const char *text;
                int expect;
        } cases[] = {
                { "0 100000 1000\n1000 200000 10\n", SAME },
                { "0 100000 1000", SAME },
                { "0\t100000\t1000\n", SAME },
                { "0  100000   1000 \t\n", SAME },
                { "0 100000 1000\r\n", SAME },
                { "0 100000 1000\v\n", SAME },
                { "010 100000 1\n", SAME }, /* decimal, not octal */
                { "4294967294 100000 1\n", SAME },
                { "0 100000 0\n", SAME },
                { "0 100000\n", SAME },
                { "0\n", SAME },
                { "0 100000 1000 5\n", SAME },
                { "0 100000 1000\n\n", SAME },
                { "0 100000 1\n\n1 100001 1\n", SAME },
                { "0 100000 1000\n999 300000 1\n", SAME },   /* ns overlap */
                { "0 100000 1000\n5000 100999 1\n", SAME },  /* host overlap */
                { "0 100000 10\n10 100010 10\n", SAME },     /* adjacent */
                { "4294967295 100000 1\n", SAME },
                { "0 4294967295 1\n", SAME },
                { "1 100000 4294967295\n", SAME },           /* wraps */
                { "4294967294 100000 2\n", SAME },           /* ends at 2^32 */
                { "+0 100000 1\n", SAME },
                { "-1 100000 1\n", SAME },
                { "0x10 100000 1\n", SAME },
                { "0 100000 1#c\n", SAME },
                { "a b c\n", SAME },
                { " 0 100000 1\n", SAME },                   /* leading blanks (read format) */
                { "   \t0 100000 1\n", SAME },
                { "4294967296 100000 1\n", KERNEL_ONLY },    /* kernel truncates to 0 */
                { "0 100000 1\xa0\n", KERNEL_ONLY },         /* Latin-1 nbsp */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                check_agreement(cases[i].text, strlen(cases[i].text), cases[i].expect);

        /* Empty: the kernel refuses to write it, nsid takes it as "nothing mapped yet". */
        check_agreement("", 0, NSID_ONLY);
        /* A NUL byte: the kernel stops reading at it, nsid refuses the text. */
        check_agreement("0 100000 1\n\0garbage", 20, KERNEL_ONLY);

        /* 340 extents (written compactly: the kernel takes less than a page per write) are
         * accepted by both, 341 refused by both. */
        char buf[4096];
        size_t off = 0;
        for (int i = 0; i < 341; i++) {
                if (i == 340) {
                        assert_true(off < sizeof(buf));
                        check_agreement(buf, off, SAME);
                }
                off += (size_t) snprintf(buf + off, sizeof(buf) - off, "%d %d 1\n", i * 2,
                                         5000 + i);
        }
        assert_true(off < sizeof(buf));
        check_agreement(buf, off, SAME);
}

int main(void) {
        if (geteuid() != 0)
                skip_all("not root: the test chowns files to other users and writes uid maps "
                         "of other users (run as root)");
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_userns_maps),
                cmocka_unit_test(test_proc_status),
                cmocka_unit_test(test_parser_agrees_with_kernel),
        };
        return run_test_group(tests, NULL, NULL);
}
