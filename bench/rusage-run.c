/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rusage-run CMD ARGS...: run CMD, then print "wall_ms=N cpu_ms=N maxrss_kib=N status=N" to
 * stderr (wait4's rusage: user + system CPU time and the peak resident set of CMD).
 * Benchmarks' stopwatch and scale: on a loaded machine wall time is mostly waiting for a CPU,
 * CPU time is what the program costs. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct timespec t0, t1;
        struct rusage ru;
        int status = 0;
        pid_t pid;

        if (argc < 2) {
                fprintf(stderr, "usage: %s CMD [ARGS...]\n", argv[0]);
                return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                execvp(argv[1], argv + 1);
                _exit(127);
        }
        if (wait4(pid, &status, 0, &ru) < 0)
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "wall_ms=%lld cpu_ms=%lld maxrss_kib=%ld status=%d\n",
                (long long) (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000,
                (long long) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000,
                ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        return 0;
}
