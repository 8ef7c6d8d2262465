/* nsid-fsopen-probe: can an NFS client be created from a filesystem context opened inside a
 * container's namespaces? A lab helper (tests/vm), not installed.
 *
 *   nsid-fsopen-probe --pid PID [--fstype nfs4] --source HOST:/PATH [--opt KEY[=VALUE]]...
 *                     [--mount DIR]
 *
 * A child joins the user (if different), mount and network namespaces of PID and calls
 * fsopen(FSTYPE); it passes the context fd to the parent over a socketpair. The parent,
 * which stays root in the initial namespaces, sets "source" and every --opt with fsconfig()
 * and runs FSCONFIG_CMD_CREATE. With --mount, a created superblock is mounted at DIR (in the
 * parent's mount namespace) with fsmount() + move_mount().
 * Prints one line per step: "fsopen: ok" or "fsopen: EPERM (Operation not permitted)", then
 * "create: ...", "mount: ...", and any "log: ..." messages the kernel left in the context.
 * Exit 0 when every requested step worked, 1 when one was refused, 2 on a usage error. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_OPTS 32

static void report(const char *step, int err) {
        if (err == 0)
                printf("%s: ok\n", step);
        else
                printf("%s: %s (%s)\n", step, strerrorname_np(err) ? strerrorname_np(err) : "E?", strerror(err));
        fflush(stdout);
}

static void drain_log(int fsfd) {
        char buf[512];
        ssize_t n;

        /* the context's message log: "e msg", "w msg", "i msg"; read fails with ENODATA when empty */
        while ((n = read(fsfd, buf, sizeof(buf) - 1)) > 0) {
                buf[n] = '\0';
                printf("log: %s\n", buf);
        }
        fflush(stdout);
}

static int join(pid_t pid, const char *ns, int nstype) {
        char path[64], self[64];
        struct stat a, b;
        int fd, r;

        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int) pid, ns);
        snprintf(self, sizeof(self), "/proc/self/ns/%s", ns);
        if (stat(path, &a) < 0)
                return -errno;
        if (stat(self, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
                return 0; /* already there (setns into one's own user ns fails) */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = setns(fd, nstype);
        r = r < 0 ? -errno : 0;
        close(fd);
        return r;
}

static int send_fd(int sock, int fd) {
        char dummy = 'x';
        struct iovec iov = { .iov_base = &dummy, .iov_len = 1 };
        union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u = {};
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        return sendmsg(sock, &msg, 0) < 0 ? -errno : 0;
}

static int recv_fd(int sock, int *ret_err) {
        char b = 0;
        struct iovec iov = { .iov_base = &b, .iov_len = 1 };
        union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u = {};
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *c;
        int fd = -1;

        if (recvmsg(sock, &msg, 0) <= 0) {
                *ret_err = EIO;
                return -1;
        }
        c = CMSG_FIRSTHDR(&msg);
        if (c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
                memcpy(&fd, CMSG_DATA(c), sizeof(int));
                return fd;
        }
        *ret_err = (unsigned char) b; /* the child sent its errno instead of an fd */
        return -1;
}

int main(int argc, char **argv) {
        static const struct option lopts[] = {
                { "pid", required_argument, NULL, 'p' },
                { "fstype", required_argument, NULL, 't' },
                { "source", required_argument, NULL, 's' },
                { "opt", required_argument, NULL, 'o' },
                { "mount", required_argument, NULL, 'M' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *fstype = "nfs4", *source = NULL, *mnt = NULL, *opts[MAX_OPTS];
        int nopts = 0, c, sp[2], fsfd, err = 0, status;
        pid_t pid = 0, child;

        while ((c = getopt_long(argc, argv, "p:t:s:o:M:h", lopts, NULL)) >= 0) {
                switch (c) {
                case 'p': {
                        char *end = NULL;
                        long v = strtol(optarg, &end, 10);
                        if (!end || *end || v <= 0 || v > 4194304) {
                                fprintf(stderr, "nsid-fsopen-probe: bad --pid '%s'\n", optarg);
                                return 2;
                        }
                        pid = (pid_t) v;
                        break;
                }
                case 't': fstype = optarg; break;
                case 's': source = optarg; break;
                case 'o':
                        if (nopts == MAX_OPTS) {
                                fprintf(stderr, "nsid-fsopen-probe: too many --opt\n");
                                return 2;
                        }
                        opts[nopts++] = optarg;
                        break;
                case 'M': mnt = optarg; break;
                case 'h':
                        printf("usage: %s --pid PID --source HOST:/PATH [--fstype T] [--opt K[=V]]... [--mount DIR]\n", argv[0]);
                        return 0;
                default: return 2;
                }
        }
        if (pid == 0 || !source) {
                fprintf(stderr, "nsid-fsopen-probe: --pid and --source are required\n");
                return 2;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
                perror("socketpair");
                return 2;
        }
        child = fork();
        if (child < 0) {
                perror("fork");
                return 2;
        }
        if (child == 0) {
                int r, fd;
                char e;

                close(sp[0]);
                /* user first: it gives the capabilities needed to join the others */
                r = join(pid, "user", CLONE_NEWUSER);
                if (r == 0)
                        r = join(pid, "mnt", CLONE_NEWNS);
                if (r == 0)
                        r = join(pid, "net", CLONE_NEWNET);
                if (r < 0) {
                        report("setns", -r);
                        e = (char) -r;
                        (void) !write(sp[1], &e, 1);
                        _exit(1);
                }
                fd = fsopen(fstype, FSOPEN_CLOEXEC);
                if (fd < 0) {
                        e = (char) errno;
                        report("fsopen", errno);
                        (void) !write(sp[1], &e, 1);
                        _exit(1);
                }
                report("fsopen", 0);
                _exit(send_fd(sp[1], fd) < 0 ? 1 : 0);
        }
        close(sp[1]);
        fsfd = recv_fd(sp[0], &err);
        (void) waitpid(child, &status, 0);
        if (fsfd < 0)
                return 1;

        if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0) < 0) {
                report("config source", errno);
                drain_log(fsfd);
                return 1;
        }
        for (int i = 0; i < nopts; i++) {
                char key[128];
                const char *eq = strchr(opts[i], '=');
                int r;

                if (eq) {
                        size_t kl = (size_t) (eq - opts[i]);
                        if (kl >= sizeof(key)) {
                                fprintf(stderr, "nsid-fsopen-probe: option key too long\n");
                                return 2;
                        }
                        memcpy(key, opts[i], kl);
                        key[kl] = '\0';
                        r = fsconfig(fsfd, FSCONFIG_SET_STRING, key, eq + 1, 0);
                } else
                        r = fsconfig(fsfd, FSCONFIG_SET_FLAG, opts[i], NULL, 0);
                if (r < 0) {
                        char step[160];
                        snprintf(step, sizeof(step), "config %s", opts[i]);
                        report(step, errno);
                        drain_log(fsfd);
                        return 1;
                }
        }
        if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                report("create", errno);
                drain_log(fsfd);
                return 1;
        }
        report("create", 0);
        drain_log(fsfd);
        if (mnt) {
                int mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
                if (mfd < 0) {
                        report("mount", errno);
                        return 1;
                }
                if (move_mount(mfd, "", AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
                        report("mount", errno);
                        return 1;
                }
                report("mount", 0);
        }
        return 0;
}
