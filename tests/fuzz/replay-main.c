/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Replays every file of the corpus directories given as arguments through the fuzz target,
 * so that `make test` runs the corpora without clang/libFuzzer. Fails when a directory is
 * missing or empty (a target without a corpus is a mistake). */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(int dfd, const char *name) {
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        size_t size = (size_t) st.st_size;
        uint8_t *buf = malloc(size ? size : 1);
        size_t got = 0;
        while (buf && got < size) {
                ssize_t n = read(fd, buf + got, size - got);
                if (n <= 0)
                        break;
                got += (size_t) n;
        }
        close(fd);
        if (!buf) {
                fprintf(stderr, "out of memory\n");
                exit(2);
        }
        LLVMFuzzerTestOneInput(buf, got);
        free(buf);
        return 1;
}

int main(int argc, char **argv) {
        unsigned total = 0;
        for (int i = 1; i < argc; i++) {
                DIR *d = opendir(argv[i]);
                if (!d) {
                        fprintf(stderr, "cannot open corpus %s\n", argv[i]);
                        return 1;
                }
                unsigned n = 0;
                struct dirent *de;
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.')
                                n += (unsigned) replay_file(dirfd(d), de->d_name);
                closedir(d);
                if (n == 0) {
                        fprintf(stderr, "corpus %s is empty\n", argv[i]);
                        return 1;
                }
                total += n;
        }
        printf("replayed %u inputs without a crash\n", total);
        return 0;
}
