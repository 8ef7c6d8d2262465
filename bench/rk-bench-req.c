/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-idmap-helper's requester. For i in 0 .. COUNT-1 and for each helper (in an order
 * rotated at every i, so that every helper sees the same load of a busy host), it writes
 * the helper's request-key rule into RULEFILE and does one id_resolver lookup by
 * request_key(2) of "uid:b<TAG><i>@<DOMAIN>", a cache miss, so the kernel runs
 * /sbin/request-key and the helper once. One warm-up lookup per helper first (not counted).
 * Prints per helper: "<tag> <ok> <failed> <total us> <median us> <p90 us> <lone>", lone: its
 * failed lookups at an i where the first helper's lookup (the floor's) succeeded. (Under
 * heavy load the lab guest has failed every helper's lookups for a few seconds at a time,
 * the floor's included: those are the guest's, lone failures are the helper's.)
 *
 *   nsid-rk-bench-req DOMAIN COUNT RULEFILE TAG=PROGRAM-AND-ARGS...
 * (PROGRAM-AND-ARGS is what goes before "%k %d" in the rule.)
 * NSID_BENCH_KEEP_KEYS=1: the keys are linked into root's user keyring, so that they outlive
 * this run (a second phase then runs with the first one's keys still in the system).
 * NSID_BENCH_USER_PREFIX=P: asks "user" keys "P<desc>" instead (the host has no id_resolver
 * key type without the nfs modules; helpers then need their test prefix option), so the same
 * comparison runs on the host for profiling.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/keyctl.h>

#define MAXV 8

static long now_us(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static const char *user_prefix;

static int set_rule(const char *path, const char *prog) {
        char tmp[4096], line[4096];
        int n = user_prefix ? snprintf(line, sizeof(line), "create user %s* * %s %%k %%d\n",
                                       user_prefix, prog)
                            : snprintf(line, sizeof(line), "create id_resolver * * %s %%k %%d\n",
                                       prog);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, line, (size_t) n) != n || close(fd) < 0)
                return -1;
        return rename(tmp, path);
}

static int cmp_long(const void *a, const void *b) {
        long x = *(const long *) a, y = *(const long *) b;
        return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
        if (argc < 5 || argc - 4 > MAXV) {
                fprintf(stderr, "usage: %s DOMAIN COUNT RULEFILE TAG=PROGRAM...\n", argv[0]);
                return 2;
        }
        const char *domain = argv[1], *rule = argv[3];
        long count = strtol(argv[2], NULL, 10);
        int nv = argc - 4;
        user_prefix = getenv("NSID_BENCH_USER_PREFIX");
        const char *ktype = user_prefix ? "user" : "id_resolver";
        const char *up = user_prefix ? user_prefix : "";
        char tag[MAXV][16];
        const char *prog[MAXV];
        long *us[MAXV], ok[MAXV] = {}, bad[MAXV] = {}, total[MAXV] = {}, lone[MAXV] = {};
        char *failed[MAXV];
        char desc[256];

        for (int v = 0; v < nv; v++) {
                const char *eq = strchr(argv[4 + v], '=');
                if (!eq || eq - argv[4 + v] >= 15)
                        return 2;
                memcpy(tag[v], argv[4 + v], (size_t) (eq - argv[4 + v]));
                tag[v][eq - argv[4 + v]] = '\0';
                prog[v] = eq + 1;
                us[v] = calloc((size_t) count, sizeof(long));
                failed[v] = calloc((size_t) count, 1);
                if (!us[v] || !failed[v])
                        return 1;
        }
        /* a session keyring of our own: the keys land there, and go when we exit; with
         * NSID_BENCH_KEEP_KEYS=1 in root's user keyring, where they stay for the next run */
        syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0L, 0L, 0L, 0L);
        const char *keep = getenv("NSID_BENCH_KEEP_KEYS");
        long dest = keep && strcmp(keep, "1") == 0 ? KEY_SPEC_USER_KEYRING : 0L;
        for (long i = -1; i < count; i++) {
                for (int j = 0; j < nv; j++) {
                        int v = (int) ((j + (i < 0 ? 0 : i)) % nv);
                        if (set_rule(rule, prog[v]) < 0) {
                                perror(rule);
                                return 1;
                        }
                        if (i < 0)
                                snprintf(desc, sizeof(desc), "%suid:b%swarmup@%s", up, tag[v], domain);
                        else
                                snprintf(desc, sizeof(desc), "%suid:b%s%ld@%s", up, tag[v], i, domain);
                        long t0 = now_us();
                        long k = syscall(SYS_request_key, ktype, desc, "", dest);
                        long d = now_us() - t0;
                        if (i < 0)
                                continue;
                        us[v][i] = d;
                        total[v] += d;
                        if (k < 0) {
                                failed[v][i] = 1;
                                if (bad[v] < 3)
                                        fprintf(stderr, "%s: %s: %m\n", tag[v], desc);
                                bad[v]++;
                        } else
                                ok[v]++;
                }
        }
        for (int v = 0; v < nv; v++) {
                for (long i = 0; i < count; i++)
                        lone[v] += failed[v][i] && !failed[0][i];
                qsort(us[v], (size_t) count, sizeof(long), cmp_long);
                printf("%s %ld %ld %ld %ld %ld %ld\n", tag[v], ok[v], bad[v], total[v],
                       us[v][count / 2], us[v][count * 9 / 10], lone[v]);
        }
        return 0;
}
