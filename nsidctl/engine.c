/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: the container engine and container name of a process, from its cgroup (engine.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "parse-util.h"

static bool is_hex64(const char *s, size_t n) {
        if (n != ENGINE_ID_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

static bool has_prefix(const char *s, size_t n, const char *p) {
        size_t k = strlen(p);
        return n >= k && memcmp(s, p, k) == 0;
}

static bool has_suffix(const char *s, size_t n, const char *p) {
        size_t k = strlen(p);
        return n >= k && memcmp(s + n - k, p, k) == 0;
}

/* A name: printable ASCII, no "/" (it came from one path component), systemd's \xNN undone
 * when unescape. false if empty, too long or it would decode to something unprintable. */
static bool take_name(const char *s, size_t n, bool unescape, char out[ENGINE_NAME_MAX + 1]) {
        size_t k = 0;

        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                if (unescape && c == '\\' && i + 3 < n && s[i + 1] == 'x' &&
                    unhexchar(s[i + 2]) >= 0 && unhexchar(s[i + 3]) >= 0) {
                        c = (unsigned char) (unhexchar(s[i + 2]) * 16 + unhexchar(s[i + 3]));
                        i += 3;
                }
                if (c < 0x21 || c > 0x7e || k >= ENGINE_NAME_MAX)
                        return false;
                out[k++] = (char) c;
        }
        out[k] = '\0';
        return true;
}

static void set_id(engine_ref *r, const char *engine, const char *id) {
        r->engine = engine;
        memcpy(r->id, id, ENGINE_ID_MAX);
        r->id[ENGINE_ID_MAX] = '\0';
        r->name[0] = '\0';
}

/* One path component; prev is the one before it (or NULL) for /docker/<id> and /lxc/<name>. */
static bool match_component(const char *c, size_t n, const char *prev, size_t prev_n,
                            engine_ref *r) {
        const char *s = c;
        size_t m = n;

        if (has_suffix(s, m, ".scope"))
                m -= strlen(".scope");
        if (has_prefix(s, m, "libpod-") && !has_prefix(s, m, "libpod-conmon-") &&
            is_hex64(s + 7, m - 7)) {
                set_id(r, "podman", s + 7);
                return true;
        }
        if (has_prefix(s, m, "docker-") && is_hex64(s + 7, m - 7)) {
                set_id(r, "docker", s + 7);
                return true;
        }
        if (has_prefix(s, m, "crio-") && !has_prefix(s, m, "crio-conmon-") &&
            is_hex64(s + 5, m - 5)) {
                set_id(r, "cri-o", s + 5);
                return true;
        }
        if (m < n && has_prefix(s, m, "machine-") &&
            take_name(s + 8, m - 8, true, r->name)) {
                r->engine = "nspawn";
                r->id[0] = '\0';
                return true;
        }
        /* systemd-nspawn@NAME.service (machinectl start, the packaged unit); its payload is
         * the "payload" cgroup below it */
        if (n > strlen("systemd-nspawn@.service") && has_prefix(c, n, "systemd-nspawn@") &&
            has_suffix(c, n, ".service") &&
            take_name(c + 15, n - strlen("systemd-nspawn@.service"), true, r->name)) {
                r->engine = "nspawn";
                r->id[0] = '\0';
                return true;
        }
        if (has_prefix(c, n, "lxc.payload.") && take_name(c + 12, n - 12, false, r->name)) {
                r->engine = "lxc";
                r->id[0] = '\0';
                return true;
        }
        if (prev && prev_n == 6 && memcmp(prev, "docker", 6) == 0 && is_hex64(c, n)) {
                set_id(r, "docker", c);
                return true;
        }
        if (prev && prev_n == 3 && memcmp(prev, "lxc", 3) == 0 &&
            take_name(c, n, false, r->name)) {
                r->engine = "lxc";
                r->id[0] = '\0';
                return true;
        }
        return false;
}

int engine_from_cgroup(const char *cgroup, engine_ref *ret) {
        const char *p, *prev = NULL;
        size_t prev_n = 0;

        if (!cgroup || !ret || cgroup[0] != '/')
                return -EINVAL;
        for (p = cgroup; *p;) {
                const char *c;
                size_t n;

                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                c = p;
                n = strcspn(c, "/");
                p = c + n;
                /* /docker/<id> and /lxc/<name> only at the top, where those engines put them
                 * without systemd; deeper they could be the container's own */
                if (match_component(c, n, prev == cgroup + 1 ? prev : NULL, prev_n, ret))
                        return 0;
                prev = c;
                prev_n = n;
        }
        return -ENOENT;
}

/* The value of an option in a NUL-separated argv: "SHORT VALUE", "LONG VALUE" or
 * "LONG=VALUE" (the first one given). NULL if none; *ret_len its length. */
static const char *argv_option(const char *cmdline, size_t size, const char *shortopt,
                               const char *longopt, size_t *ret_len) {
        const char *p = cmdline, *end = cmdline + size, *val = NULL;
        size_t ll = strlen(longopt);

        while (p < end) {
                size_t n = strnlen(p, (size_t) (end - p));
                const char *next = p + n + 1;

                if ((n == strlen(shortopt) && memcmp(p, shortopt, n) == 0) ||
                    (n == ll && memcmp(p, longopt, ll) == 0)) {
                        if (next < end)
                                val = next;
                        break;
                }
                if (n > ll + 1 && memcmp(p, longopt, ll) == 0 && p[ll] == '=') {
                        val = p + ll + 1;
                        break;
                }
                p = next;
        }
        if (!val)
                return NULL;
        *ret_len = strnlen(val, (size_t) (end - val));
        return val;
}

/* A name of printable characters without blanks, copied into buf. */
static int take_arg_name(const char *val, size_t n, char *buf, size_t bufsize) {
        if (!val || n == 0)
                return -ENOENT;
        if (n >= bufsize)
                return -ENAMETOOLONG;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) val[i] < 0x21 || (unsigned char) val[i] > 0x7e)
                        return -ENOENT;
        memcpy(buf, val, n);
        buf[n] = '\0';
        return 0;
}

int engine_conmon_name(const char *cmdline, size_t size, char *buf, size_t bufsize) {
        size_t n = 0;
        const char *val = argv_option(cmdline, size, "-n", "--name", &n);

        return take_arg_name(val, n, buf, bufsize);
}

int engine_nspawn_name(const char *cmdline, size_t size, char *buf, size_t bufsize) {
        size_t n = 0;
        const char *val = argv_option(cmdline, size, "-M", "--machine", &n);

        if (val)
                return take_arg_name(val, n, buf, bufsize);
        /* without a machine name, nspawn names the container after its directory */
        val = argv_option(cmdline, size, "-D", "--directory", &n);
        if (!val)
                return -ENOENT;
        while (n > 1 && val[n - 1] == '/')
                n--;
        for (size_t i = n; i > 0; i--)
                if (val[i - 1] == '/') {
                        val += i;
                        n -= i;
                        break;
                }
        return take_arg_name(val, n, buf, bufsize);
}

static ssize_t read_at(const char *proc_root, pid_t pid, const char *file, char *buf,
                       size_t size) {
        char path[256];
        ssize_t n, len = 0;
        int fd;

        snprintf(path, sizeof(path), "%s/%d/%s", proc_root, (int) pid, file);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        while ((size_t) len < size - 1) {
                n = read(fd, buf + len, size - 1 - (size_t) len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += n;
        }
        close(fd);
        buf[len] = '\0';
        return len;
}

/* The ppid of /proc/PID/stat: after the last ")" (comm is the process's own choice and may
 * hold spaces and parentheses), " S PPID ". */
static pid_t stat_ppid(const char *stat) {
        const char *p = strrchr(stat, ')');
        char state;
        int ppid;

        if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2 || ppid <= 0)
                return 0;
        return (pid_t) ppid;
}

int engine_name_podman(const char *proc_root, pid_t pid, engine_ref *ref) {
        char stat[1024], comm[32], cmd[16384], uid[ENGINE_ID_MAX + 1];
        ssize_t n;
        pid_t ppid;
        const char *p, *end;
        bool id_ok = false;

        if (!ref->engine || strcmp(ref->engine, "podman") != 0 || !ref->id[0])
                return -EINVAL;
        if (read_at(proc_root, pid, "stat", stat, sizeof(stat)) <= 0)
                return -ESRCH;
        ppid = stat_ppid(stat);
        if (!ppid)
                return -ENOENT;
        if (read_at(proc_root, ppid, "comm", comm, sizeof(comm)) <= 0 ||
            strcmp(comm, "conmon\n") != 0)
                return -ENOENT;
        n = read_at(proc_root, ppid, "cmdline", cmd, sizeof(cmd));
        if (n <= 0)
                return -ENOENT;
        /* conmon's "-u ID" / "-c ID" must be this container's: another container's conmon
         * cannot lend its name */
        for (p = cmd, end = cmd + n; p < end; p += strnlen(p, (size_t) (end - p)) + 1) {
                size_t k = strnlen(p, (size_t) (end - p));
                if ((k == 2 && (memcmp(p, "-u", 2) == 0 || memcmp(p, "-c", 2) == 0)) &&
                    p + k + 1 < end) {
                        snprintf(uid, sizeof(uid), "%s", p + k + 1);
                        if (strcmp(uid, ref->id) == 0)
                                id_ok = true;
                }
        }
        if (!id_ok)
                return -ENOENT;
        return engine_conmon_name(cmd, (size_t) n, ref->name, sizeof(ref->name));
}

int engine_from_nspawn_parent(const char *proc_root, pid_t pid, engine_ref *ret) {
        char stat_text[1024], comm[32], cmd[16384], path[256];
        struct stat st;
        ssize_t n;
        pid_t ppid;

        if (read_at(proc_root, pid, "stat", stat_text, sizeof(stat_text)) <= 0)
                return -ESRCH;
        ppid = stat_ppid(stat_text);
        if (!ppid)
                return -ENOENT;
        /* comm is any process's own choice: the parent must also run as root (or as the
         * user asking), so that no other user can lend a name */
        snprintf(path, sizeof(path), "%s/%d", proc_root, (int) ppid);
        if (stat(path, &st) < 0 || (st.st_uid != 0 && st.st_uid != geteuid()))
                return -ENOENT;
        if (read_at(proc_root, ppid, "comm", comm, sizeof(comm)) <= 0 ||
            strcmp(comm, "systemd-nspawn\n") != 0)
                return -ENOENT;
        *ret = (engine_ref) { .engine = "nspawn" };
        n = read_at(proc_root, ppid, "cmdline", cmd, sizeof(cmd));
        if (n > 0)
                (void) engine_nspawn_name(cmd, (size_t) n, ret->name, sizeof(ret->name));
        return 0;
}
