/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging, strict numbers, key answers and requester discovery for nsid-idmap. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <paths.h>
#include <syslog.h>
#include <sys/stat.h>
#include <limits.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <keyutils.h>
#include <linux/capability.h>
#include <nsid/keyring.h>
#include <nsid/ns.h>

#include <ares.h>
#include <json-c/json.h>
#include <nfsidmap.h>

#include "fmt-util.h"
#include "nsid-idmap.h"
#include "parse-util.h"
#include "proc-util.h"
#define LAZY_WANT_NFSIDMAP
#define LAZY_WANT_CARES
#define LAZY_WANT_JSONC
#define LAZY_NO_REDIRECT
#include "lazylib.h"

static bool log_stderr;
static bool log_syslog;
static int log_fd = -1;
static int log_max = LOG_INFO;
static const char *log_ident = "nsid-idmap";
static int syslog_fd = -1;
static bool syslog_fallback; /* glibc's syslog() from now on */
static pid_t log_pid;        /* messages from any other process (a worker) are dropped */

static void syslog_connect(void);

void log_setup(const char *ident, bool to_stderr, const char *log_file, int max_priority) {
        log_ident = ident;
        log_stderr = to_stderr;
        log_max = max_priority;
        if (log_file) {
                log_fd = open(log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                              0600);
        }
        /* Without a syslog socket every message would be dropped: none is built. */
        log_syslog = !to_stderr && access(_PATH_LOG, F_OK) == 0;
        log_pid = getpid();
        if (log_syslog)
                syslog_connect();
}

bool log_wanted(int priority) {
        /* A worker (a fork()ed child, possibly in a container's root) logs nothing: its
         * /dev/log would be the container's. */
        if (getpid() != log_pid)
                return false;
        return priority <= log_max && (log_stderr || log_syslog || log_fd >= 0);
}

/* The syslog socket, connected once at start (log_setup()), while this process is in the
 * host's root: nothing later resolves /dev/log again, not even from a worker inside a
 * container's root (workers log nothing anyway: log_wanted()). A stream /dev/log
 * (EPROTOTYPE) is left to glibc's syslog(), opened and connected now (LOG_NDELAY), with its
 * time zone read now (tzset()): its time stamps never read /etc/localtime later. */
static void syslog_connect(void) {
        static const struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = _PATH_LOG };

        syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (syslog_fd < 0)
                return;
        if (connect(syslog_fd, (const struct sockaddr *) &sa, sizeof(sa)) >= 0)
                return;
        int e = errno;
        (void) close(syslog_fd);
        syslog_fd = -1;
        if (e == EPROTOTYPE) {
                tzset();
                openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
                syslog_fallback = true;
        }
}

/* One datagram to the syslog socket, "<PRI>IDENT[PID]: TEXT", without the time stamp
 * glibc's syslog() writes: that time stamp is formatted with localtime(), which reads and
 * parses /etc/localtime, in every process (this helper is a new one at every upcall: with
 * its vsnprintf, some 4,800 instructions of code run once, a fifth of an upcall in the
 * TCG lab). The time stamp is optional in the BSD syslog format; journald and rsyslog
 * stamp a message that has none with its time of arrival. Never blocks (a full journal
 * drops the line rather than hold the upcall). A syslog socket that is not a datagram one
 * (EPROTOTYPE) is left to glibc's syslog(), which knows the other kinds. */
static void syslog_send(int priority, const char *text, size_t len) {
        char buf[2200], pri[24], pid[24];
        size_t n = 0;

        if (!syslog_fallback) {
                fmt_u64(pri, (uint64_t) (LOG_DAEMON | LOG_PRI(priority)));
                fmt_u64(pid, (uint64_t) getpid());
                const char *parts[] = { "<", pri, ">", log_ident, "[", pid, "]: " };
                for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
                        size_t l = strnlen(parts[i], sizeof(buf) - n); /* (the ident) */
                        memcpy(buf + n, parts[i], l);
                        n += l;
                }
                if (len > sizeof(buf) - n)
                        len = sizeof(buf) - n;
                memcpy(buf + n, text, len);
                n += len;
                /* (no one listening, or full: glibc would drop it too) */
                if (syslog_fd >= 0)
                        (void) send(syslog_fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
                return;
        }
        syslog(priority, "%.*s", (int) (len > INT_MAX ? INT_MAX : len), text);
}

/* A whole line to every destination; no printf. */
static void log_text(int priority, const char *text) {
        size_t len = strlen(text);
        if (log_stderr) {
                struct iovec v[] = { { (void *) log_ident, strlen(log_ident) }, { ": ", 2 },
                                     { (void *) text, len }, { "\n", 1 } };
                (void) !writev(STDERR_FILENO, v, 4);
        } else if (log_syslog)
                syslog_send(priority, text, len);
        if (log_fd >= 0) {
                char pid[24];
                fmt_u64(pid, (uint64_t) getpid());
                struct iovec v[] = { { (void *) log_ident, strlen(log_ident) }, { "[", 1 },
                                     { pid, strlen(pid) }, { "]: ", 3 },
                                     { (void *) text, len }, { "\n", 1 } };
                (void) !writev(log_fd, v, 6);
        }
}

void (logmsg)(int priority, const char *format, ...) {
        char buf[2048];
        va_list ap;

        if (!log_wanted(priority))
                return; /* nowhere to go: not even formatted */
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        log_text(priority, buf);
}

void log_join(int priority, ...) {
        char buf[2048];
        va_list ap;
        size_t n = 0;
        const char *s;

        if (!log_wanted(priority))
                return;
        va_start(ap, priority);
        while ((s = va_arg(ap, const char *))) {
                size_t l = strnlen(s, sizeof(buf) - 1 - n);
                memcpy(buf + n, s, l);
                n += l;
        }
        va_end(ap);
        buf[n] = '\0';
        log_text(priority, buf);
}

int parse_key_serial(const char *s, key_serial_t *ret) {
        uint64_t v;
        int r = parse_uint_strict(s, INT32_MAX, &v);
        if (r < 0)
                return r;
        if (v == 0)
                return -ERANGE;
        *ret = (key_serial_t) v;
        return 0;
}

int read_host_file(const char *path, size_t max, char **ret_data, size_t *ret_size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        size_t size = 0, alloc = 4096;
        char *buf;

        if (fd < 0)
                return -errno;
        buf = malloc(alloc);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        for (;;) {
                if (size + 1 >= alloc) {
                        if (alloc > max + 1) {
                                free(buf);
                                close(fd);
                                return -EFBIG;
                        }
                        char *n = realloc(buf, alloc * 2);
                        if (!n) {
                                free(buf);
                                close(fd);
                                return -ENOMEM;
                        }
                        buf = n;
                        alloc *= 2;
                }
                ssize_t k = read(fd, buf + size, alloc - size - 1);
                if (k < 0) {
                        int e = -errno;
                        if (e == -EINTR)
                                continue;
                        free(buf);
                        close(fd);
                        return e;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
                if (size > max) {
                        free(buf);
                        close(fd);
                        return -EFBIG;
                }
        }
        close(fd);
        buf[size] = '\0';
        *ret_data = buf;
        if (ret_size)
                *ret_size = size;
        return 0;
}

int read_small_file(const char *path, char *buf, size_t size) {
        size_t n;
        int fd, r;

        if (size < 2 || size > INT32_MAX)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        r = read_fd_deadline(fd, size - 1, READ_NO_DEADLINE, false, buf, NULL, &n);
        close(fd);
        return r < 0 ? r : (int) n;
}

int key_reject(key_serial_t key, unsigned timeout, int error) {
        if (keyctl_reject(key, timeout, (unsigned) error, 0) < 0) {
                int e = errno;
                logmsg(LOG_ERR, "key %d: could not reject the key: %s (the kernel negates it "
                       "when this helper exits)", key, strerror(e));
                return -e;
        }
        return 0;
}

int key_answer(key_serial_t key, const void *payload, size_t len, unsigned timeout) {
        /* While the key is under construction the authority we hold lets us set its timeout;
         * after instantiation it would need possession. Instantiation keeps the expiry. */
        if (keyctl_set_timeout(key, timeout) < 0)
                return -errno;
        if (keyctl_instantiate(key, payload, len, 0) < 0)
                return -errno;
        return 0;
}

/* The serial of the .request_key_auth key for target: the one we were given authority by
 * request-key, else a search of our session keyring. Its description must be exactly the
 * target's serial in hex. */
static bool is_auth_key_for(key_serial_t k, const char *want) {
        char buf[256];
        nsid_key_describe kd;
        /* ".request_key_auth;UID;GID;PERM;HEX": far below 256 bytes; a longer description
         * is not the one we look for */
        int n = keyctl_describe_buf(k, buf, sizeof(buf));
        return n >= 0 && nsid_key_describe_parse(buf, (size_t) n, &kd) >= 0 &&
               kd.type_len == strlen(".request_key_auth") &&
               memcmp(kd.type, ".request_key_auth", kd.type_len) == 0 &&
               kd.description_len == strlen(want) &&
               memcmp(kd.description, want, kd.description_len) == 0;
}

static key_serial_t find_auth_key(key_serial_t target) {
        char want[17];
        key_serial_t k;
        void *list = NULL;
        int n;

        fmt_hex(want, (uint32_t) target, 0);

        k = keyctl_get_keyring_ID(KEY_SPEC_REQKEY_AUTH_KEY, 0);
        if (k > 0 && is_auth_key_for(k, want))
                return k;

        n = keyctl_read_alloc(KEY_SPEC_SESSION_KEYRING, &list);
        if (n < 0)
                return -ENOKEY;
        for (size_t i = 0; i < (size_t) n / sizeof(key_serial_t); i++) {
                key_serial_t c = ((key_serial_t *) list)[i];
                if (is_auth_key_for(c, want)) {
                        free(list);
                        return c;
                }
        }
        free(list);
        return -ENOKEY;
}

/* The requester's namespace of one type: its inode (a stat() of /proc/PID/ns/NAME, which
 * follows the link to the namespace) and whether it is the initial one (the reserved inode
 * of newer kernels, else the same as PID 1's). One or two system calls instead of opening
 * the namespace; the pid is checked to still be the requester's (its pidfd) once all are
 * read, in requester_find(). */
static int ns_info(pid_t pid, nsid_ns_type type, uint64_t *ret_ino, int *ret_initial) {
        const char *name = nsid_ns_type_name(type);
        uint32_t reserved = nsid_ns_type_initial_ino(type);
        char path[64], p[24];
        struct stat st, init;

        fmt_u64(p, (uint64_t) pid);
        if (fmt_join(path, sizeof(path), "/proc/", p, "/ns/", name, NULL) < 0)
                return -ENAMETOOLONG;
        if (stat(path, &st) < 0)
                return -errno;
        *ret_ino = (uint64_t) st.st_ino;
        if ((uint64_t) st.st_ino == reserved)
                *ret_initial = 1;
        else {
                (void) fmt_join(path, sizeof(path), "/proc/1/ns/", name, NULL);
                *ret_initial = stat(path, &init) < 0 ? -errno
                                                      : init.st_dev == st.st_dev &&
                                                                init.st_ino == st.st_ino;
        }
        return 0;
}

/* /proc/keys into buf (size bytes, NUL appended) when it fits, else into *ret_heap
 * (malloc'ed); *ret is whichever holds it. */
static int proc_keys_read(char *buf, size_t size, char **ret, char **ret_heap, size_t *ret_size) {
        int r = read_small_file("/proc/keys", buf, size);
        if (r >= 0) {
                *ret = buf;
                *ret_size = (size_t) r;
                return 0;
        }
        if (r != -EFBIG)
                return r;
        r = read_host_file("/proc/keys", 64u * 1024 * 1024, ret_heap, ret_size);
        if (r >= 0)
                *ret = *ret_heap;
        return r;
}

static int proc_keys_read_as_nobody(char *buf, size_t size, char **ret, char **ret_heap,
                                    size_t *ret_size) {
        uid_t fsuid = (uid_t) setfsuid(65534);
        bool changed = (uid_t) setfsuid((uid_t) -1) == 65534;
        int r = proc_keys_read(buf, size, ret, ret_heap, ret_size);
        if (changed)
                (void) setfsuid(fsuid);
        if (!changed || r >= 0)
                return r;
        /* a kernel or policy that refuses nobody /proc/keys: as ourselves */
        return proc_keys_read(buf, size, ret, ret_heap, ret_size);
}

/* The test seam --test-requester-pid-file: a pid written by the test, waited for up to
 * 3 s (the test starts the process it names after this helper). */
const char *requester_test_pid_file;

static int test_pid_from_file(const char *path, pid_t *ret) {
        char buf[32];
        for (int i = 0; i < 300; i++) {
                int n = read_small_file(path, buf, sizeof(buf));
                while (n > 0 && buf[n - 1] == '\n')
                        n--;
                if (n > 0) {
                        uint64_t v;
                        buf[n] = '\0';
                        if (parse_uint_strict(buf, 4194304, &v) < 0 || v == 0)
                                return -EINVAL;
                        *ret = (pid_t) v;
                        logmsg(LOG_WARNING, "test seam: requester pid %d from %s", (int) v, path);
                        return 0;
                }
                usleep(10000);
        }
        return -ETIMEDOUT;
}

/* The process (thread group) of task tid, from /proc/TID/status: /proc/TID exists for every
 * thread, listed or not. Its first 512 bytes hold the Tgid line (the fourth, after Name,
 * Umask and State). */
static int task_tgid(pid_t tid, pid_t *ret) {
        char path[64], p[24], buf[512];
        fmt_u64(p, (uint64_t) tid);
        (void) fmt_join(path, sizeof(path), "/proc/", p, "/status", NULL);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        ssize_t n = read(fd, buf, sizeof(buf));
        int e = n < 0 ? -errno : 0;
        close(fd);
        if (n < 0)
                return e == -ESRCH ? -ESRCH : e;
        return proc_status_parse_tgid(buf, (size_t) n, ret) < 0 ? -EBADMSG : 0;
}

/* The start time (clock ticks since boot) of thread tid of process tgid, from
 * /proc/TGID/task/TID/stat (-ENOENT when that process has no such thread); tgid 0: this
 * process's. */
static int task_starttime(pid_t tgid, pid_t tid, uint64_t *ret) {
        char path[96], a[24], b[24], buf[1024];
        if (tgid == 0)
                snprintf(path, sizeof(path), "/proc/self/stat");
        else {
                fmt_u64(a, (uint64_t) tgid);
                fmt_u64(b, (uint64_t) tid);
                (void) fmt_join(path, sizeof(path), "/proc/", a, "/task/", b, "/stat", NULL);
        }
        int n = read_small_file(path, buf, sizeof(buf));
        if (n < 0)
                return n;
        return proc_stat_parse_starttime(buf, (size_t) n, ret) < 0 ? -EBADMSG : 0;
}

int requester_find(key_serial_t target, requester *ret) {
        requester r = { .pidfd = -1, .net_initial = -ENODATA, .user_initial = -ENODATA,
                        .mnt_initial = -ENODATA, .mnt_owner_initial = -ENODATA };
        char keysbuf[16384]; /* as nobody, /proc/keys shows a few lines: no allocation */
        char *keys = NULL, *keys_heap = NULL;
        size_t size;
        char type[10];
        const char *desc;
        size_t desc_len;
        int32_t t;
        pid_t pid;
        int k;

        r.auth_key = find_auth_key(target);
        if (r.auth_key < 0)
                return -ENOKEY;
        /* /proc/keys is the only place the kernel shows the requester's pid. It shows every
         * key its opener may view, formatted line by line: as root, the whole .id_resolver
         * cache and every other root key, a cost growing with the cache at every upcall. It
         * is opened with the file-system uid of nobody (the opener's credentials decide what
         * it shows): then it shows the keys we possess, our session keyring with the
         * .request_key_auth key among them, and hardly anything else. (The kernel still
         * walks every key of the system and checks whether we possess it: measured on the
         * host, about 1 ms per read with 1,500 keys that are not ours, whether or not the
         * request's authority is assumed; not measured alone in the lab, where finding the
         * requester took 15-40 ms of an upcall under load.) */
        k = proc_keys_read_as_nobody(keysbuf, sizeof(keysbuf), &keys, &keys_heap, &size);
        if (k < 0)
                return k;
        /* (CAP_SETUID is kept for the workers' drop to nobody: nsid-idmap.c) */
        /* only the auth key's line, and of it only its type and description (a forged line
         * duplicating its serial makes it -ENOTUNIQ) */
        k = nsid_proc_keys_find_brief(keys, size, r.auth_key, type, &desc, &desc_len);
        if (k >= 0 && strcmp(type, ".request_") != 0)
                k = -EBADMSG;
        if (k >= 0)
                k = nsid_reqkey_auth_parse(desc, desc_len, &t, &pid, NULL);
        free(keys_heap);
        if (k < 0)
                return k;
        if (t != target)
                return -EBADMSG;
        if (requester_test_pid_file) {
                k = test_pid_from_file(requester_test_pid_file, &pid);
                if (k < 0)
                        return k;
        }
        /* The pid /proc/keys shows is the requesting thread's id (request_key_auth_new():
         * current->pid); the process is its thread group, and a pidfd pins only a thread
         * group leader on these kernels (EINVAL for another thread). Then the pid must
         * still be the requester's, not a recycled one (an authority key outlives a
         * requester killed during the upcall), by its start time. */
        pid_t tgid;
        k = task_tgid(pid, &tgid);
        if (k < 0)
                return k;
        /* pinned by a pidfd; a libnsid process object (an allocation and an open of its
         * /proc directory) only when its namespaces must be opened, requester_proc() */
        r.pidfd = (int) syscall(SYS_pidfd_open, tgid, 0);
        if (r.pidfd < 0)
                return errno == EINVAL ? -ESRCH : -errno;
        /* The pinned process must have that thread, started no later than this helper:
         * the kernel starts the helper while the requester waits in request_key(), so the
         * requesting thread is older than the helper, and any task started after the
         * helper cannot be it (its pid was recycled). The bound is the helper's own start
         * time: the authority key's creation, the tighter bound, is not shown to userspace
         * (neither KEYCTL_DESCRIBE nor /proc/keys has it). Both are clock ticks since boot
         * (10 ms): a task started in the helper's very tick passes, which would need the
         * pid allocator to come round to that pid within 10 ms of the requester's death. */
        uint64_t started, helper_started;
        k = task_starttime(tgid, pid, &started);
        if (k >= 0)
                k = task_starttime(0, 0, &helper_started);
        if (k >= 0 && started > helper_started) {
                logmsg(LOG_WARNING, "requester pid %d started after this helper (at tick %llu, "
                       "the helper at %llu): the requester has exited and its pid was "
                       "reused; not taken as the requester", (int) pid,
                       (unsigned long long) started, (unsigned long long) helper_started);
                k = -ESRCH;
        }
        if (k < 0) {
                close(r.pidfd);
                return k == -ENOENT ? -ESRCH : k;
        }
        /* The auth key must still be there once the pid is pinned: the pid we read belongs
         * to a task that was waiting for this very key. */
        if (keyctl_describe(r.auth_key, NULL, 0) < 0) {
                close(r.pidfd);
                return -EKEYREVOKED;
        }
        r.pid = tgid;
        r.tid = pid;
        pid = tgid;

        /* its name (at most 16 bytes and a newline: one read), for the log; like the
         * namespaces below, read by path and vouched for by the pidfd check after them */
        char path[64], comm[64], p[24];
        fmt_u64(p, (uint64_t) pid);
        (void) fmt_join(path, sizeof(path), "/proc/", p, "/comm", NULL);
        int cfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (cfd >= 0) {
                ssize_t cl = read(cfd, comm, sizeof(comm));
                close(cfd);
                while (cl > 0 && (comm[cl - 1] == '\n' || comm[cl - 1] == '\0'))
                        cl--;
                if (cl > 0)
                        log_escape(comm, (size_t) cl, r.comm, sizeof(r.comm));
        }
        /* (include/linux/proc_ns.h: the inodes of the initial namespaces; net and mnt
         * have theirs since 6.x, before that they are dynamic and compared with PID 1's) */
        (void) ns_info(pid, NSID_NS_NET, &r.net_ino, &r.net_initial);
        (void) ns_info(pid, NSID_NS_USER, &r.user_ino, &r.user_initial);
        (void) ns_info(pid, NSID_NS_MNT, &r.mnt_ino, &r.mnt_initial);
        if (pidfd_check_alive(r.pidfd) < 0) {
                close(r.pidfd);
                return -ESRCH;
        }
        if (r.mnt_initial == 1)
                r.mnt_owner_initial = 1;
        else {
                nsid_ns *mnt = NULL, *owner = NULL;
                if (requester_proc(&r) >= 0 && nsid_proc_open_ns(r.proc, NSID_NS_MNT, &mnt) >= 0 &&
                    nsid_ns_get_userns(mnt, &owner) >= 0)
                        r.mnt_owner_initial = nsid_ns_is_initial(owner);
                nsid_ns_unref(owner);
                nsid_ns_unref(mnt);
        }
        *ret = r;
        return 0;
}

int requester_proc(requester *r) {
        if (r->proc)
                return 0;
        if (r->pidfd < 0)
                return -ESRCH;
        return nsid_proc_open_pidfd(r->pidfd, &r->proc); /* (a copy of the pidfd) */
}

void requester_done(requester *r) {
        r->proc = nsid_proc_unref(r->proc);
        if (r->pidfd >= 0)
                close(r->pidfd);
        r->pidfd = -1;
}

const char *requester_describe(const requester *r, int find_error, char *buf, size_t size) {
        if (find_error < 0 || r->pidfd < 0) {
                snprintf(buf, size, "requester unknown (%s)", strerror(-find_error));
                return buf;
        }
        /* "requester pid %d (%s) net:[%llu]%s user:[%llu]%s mnt:[%llu]%s", without printf
         * (a line of every upcall) */
        char pid[24], tid[40] = "", net[24], user[24], mnt[24];
        fmt_u64(pid, (uint64_t) r->pid);
        if (r->tid > 0 && r->tid != r->pid) {
                memcpy(tid, " thread ", 8);
                fmt_u64(tid + 8, (uint64_t) r->tid);
        }
        fmt_u64(net, r->net_ino);
        fmt_u64(user, r->user_ino);
        fmt_u64(mnt, r->mnt_ino);
        if (fmt_join(buf, size, "requester pid ", pid, tid, " (", r->comm, ") net:[", net, "]",
                     r->net_initial == 1 ? "(host)" : "", " user:[", user, "]",
                     r->user_initial == 1 ? "(host)" : "", " mnt:[", mnt, "]",
                     r->mnt_initial == 1 ? "(host)" : "", NULL) < 0)
                snprintf(buf, size, "requester pid %d", (int) r->pid);
        return buf;
}

/* The watchdog: whatever hangs (an LDAP server behind libnfsidmap, a stuck resolver), the
 * request ends with a rejection when the time is up. Only async-signal-safe calls. */
static volatile sig_atomic_t watchdog_key;
static volatile sig_atomic_t watchdog_error;
static volatile sig_atomic_t watchdog_timeout;

static void watchdog_fired(int sig) {
        static const char msg[] = "time limit reached; rejecting the key\n";
        if (watchdog_key > 0)
                (void) syscall(SYS_keyctl, KEYCTL_REJECT, (long) watchdog_key,
                               (long) watchdog_timeout, (long) watchdog_error, 0L);
        if (log_fd >= 0)
                (void) !write(log_fd, msg, sizeof(msg) - 1);
        if (log_stderr)
                (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
        /* (no syslog(): not async-signal-safe) */
        _exit(1);
}

void watchdog_arm(key_serial_t key, unsigned seconds, unsigned neg_timeout, int error) {
        struct sigaction sa = { .sa_handler = watchdog_fired };
        watchdog_key = key;
        watchdog_error = error;
        watchdog_timeout = (sig_atomic_t) neg_timeout;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        alarm(seconds);
}

/* Lazily loaded libraries (lazylib.h). */
struct lazy_nfsidmap lazy_nfsidmap;
struct lazy_cares lazy_cares;
struct lazy_jsonc lazy_jsonc;

/* path: where the library was at build time (NULL: none known); loaded from there first, so
 * that the dynamic loader need not open and search /etc/ld.so.cache again (it unmapped it
 * after start-up), else by soname. */
static int lazy_load(const char *path, const char *soname, void **handle, int *state,
                     void *table, const char *const *names, size_t n) {
        if (*state != 0)
                return *state > 0 ? 0 : -ELIBACC;
        /* RTLD_GLOBAL: libnfsidmap's plugins (nsswitch.so, umich_ldap.so...) resolve its
         * symbols (conf_get_str...) from the global scope, as when it is linked in.
         * RTLD_LAZY: bind only what is used. */
        *handle = path ? dlopen(path, RTLD_LAZY | RTLD_GLOBAL) : NULL;
        if (!*handle)
                *handle = dlopen(soname, RTLD_LAZY | RTLD_GLOBAL);
        if (!*handle) {
                logmsg(LOG_ERR, "cannot load %s: %s", soname, dlerror());
                *state = -1;
                return -ELIBACC;
        }
        for (size_t i = 0; i < n; i++) {
                void *f = dlsym(*handle, names[i]);
                if (!f) {
                        logmsg(LOG_ERR, "%s: no symbol %s", soname, names[i]);
                        *state = -1;
                        return -ELIBACC;
                }
                memcpy((char *) table + i * sizeof(void *), &f, sizeof(void *));
        }
        *state = 1;
        return 0;
}

#define LAZY_NAME(f) #f,
int lazy_nfsidmap_load(void) {
        static const char *const names[] = { LAZY_NFSIDMAP_FNS(LAZY_NAME) };
        static void *handle;
        static int state;
        _Static_assert(sizeof(lazy_nfsidmap) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
                       "one pointer per name");
#ifdef NSID_NFSIDMAP_LIBDIR
        const char *path = NSID_NFSIDMAP_LIBDIR "/" LAZY_NFSIDMAP_SONAME;
#else
        const char *path = NULL;
#endif
        return lazy_load(path, LAZY_NFSIDMAP_SONAME, &handle, &state, &lazy_nfsidmap, names,
                         sizeof(names) / sizeof(names[0]));
}

int lazy_cares_load(void) {
        static const char *const names[] = { LAZY_CARES_FNS(LAZY_NAME) };
        static void *handle;
        static int state;
        _Static_assert(sizeof(lazy_cares) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
                       "one pointer per name");
        return lazy_load(NULL, LAZY_CARES_SONAME, &handle, &state, &lazy_cares, names,
                         sizeof(names) / sizeof(names[0]));
}

int lazy_jsonc_load(void) {
        static const char *const names[] = { LAZY_JSONC_FNS(LAZY_NAME) };
        static void *handle;
        static int state;
        _Static_assert(sizeof(lazy_jsonc) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
                       "one pointer per name");
        return lazy_load(NULL, LAZY_JSONC_SONAME, &handle, &state, &lazy_jsonc, names,
                         sizeof(names) / sizeof(names[0]));
}

/*
 * The few libkeyutils calls this program makes, as direct keyctl(2) system calls with
 * libkeyutils' own prototypes and semantics (<keyutils.h>): defined here, they keep
 * libkeyutils.so out of the program's DT_NEEDED (--as-needed), one library less for the
 * dynamic loader at every upcall (its relocations cost as much as libc's start-up).
 */
long keyctl(int cmd, ...) {
        va_list ap;
        unsigned long a2, a3, a4, a5;

        va_start(ap, cmd);
        a2 = va_arg(ap, unsigned long);
        a3 = va_arg(ap, unsigned long);
        a4 = va_arg(ap, unsigned long);
        a5 = va_arg(ap, unsigned long);
        va_end(ap);
        return syscall(SYS_keyctl, cmd, a2, a3, a4, a5);
}

key_serial_t keyctl_get_keyring_ID(key_serial_t id, int create) {
        return (key_serial_t) syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, (long) id, (long) create,
                                      0L, 0L);
}

long keyctl_revoke(key_serial_t id) {
        return syscall(SYS_keyctl, KEYCTL_REVOKE, (long) id, 0L, 0L, 0L);
}

long keyctl_describe(key_serial_t id, char *buffer, size_t buflen) {
        return syscall(SYS_keyctl, KEYCTL_DESCRIBE, (long) id, buffer, buflen, 0L);
}

long keyctl_clear(key_serial_t ringid) {
        return syscall(SYS_keyctl, KEYCTL_CLEAR, (long) ringid, 0L, 0L, 0L);
}

long keyctl_instantiate(key_serial_t id, const void *payload, size_t plen, key_serial_t ringid) {
        return syscall(SYS_keyctl, KEYCTL_INSTANTIATE, (long) id, payload, plen, (long) ringid);
}

long keyctl_set_timeout(key_serial_t key, unsigned timeout) {
        return syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, (long) key, (unsigned long) timeout, 0L, 0L);
}

long keyctl_reject(key_serial_t id, unsigned timeout, unsigned error, key_serial_t ringid) {
        return syscall(SYS_keyctl, KEYCTL_REJECT, (long) id, (unsigned long) timeout,
                       (unsigned long) error, (long) ringid);
}

long keyctl_invalidate(key_serial_t id) {
        return syscall(SYS_keyctl, KEYCTL_INVALIDATE, (long) id, 0L, 0L, 0L);
}

/* Both *_alloc: a malloc'ed copy with a NUL appended, the length without it; -1 and errno. */
static int keyctl_alloc(int op, key_serial_t id, char **ret) {
        /* a first guess that holds any id_resolver description and most key lists: one
         * system call instead of asking for the size first (a multiple of 4: a keyring's
         * read wants whole serials, EINVAL otherwise) */
        long n = 512;
        for (;;) {
                char *b = malloc((size_t) n + 1);
                if (!b)
                        return -1;
                long m = syscall(SYS_keyctl, op, (long) id, b, (unsigned long) n, 0L);
                if (m < 0) {
                        free(b);
                        return -1;
                }
                if (m <= n) { /* it fit (the key may have shrunk meanwhile) */
                        if (op == KEYCTL_DESCRIBE && m > 0)
                                m--; /* DESCRIBE counts its NUL */
                        b[m] = '\0';
                        *ret = b;
                        return (int) m;
                }
                free(b); /* too small: again with the size it needs */
                n = m;
        }
}

int keyctl_describe_buf(key_serial_t id, char *buf, size_t size) {
        long m = syscall(SYS_keyctl, KEYCTL_DESCRIBE, (long) id, buf, (unsigned long) size, 0L);
        if (m < 0)
                return -errno;
        if (m == 0 || (size_t) m > size)
                return -ERANGE; /* (the length counts the NUL) */
        buf[m - 1] = '\0';
        return (int) (m - 1);
}

int keyctl_describe_alloc(key_serial_t id, char **_buffer) {
        return keyctl_alloc(KEYCTL_DESCRIBE, id, _buffer);
}

int keyctl_read_alloc(key_serial_t id, void **_buffer) {
        char *b = NULL;
        int r = keyctl_alloc(KEYCTL_READ, id, &b);
        if (r >= 0)
                *_buffer = b;
        return r;
}
