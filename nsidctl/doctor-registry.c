/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl doctor: the identity registry, for what can really be wrong with it. The file: a
 * symbolic link (nsid-uniquifier refuses to open it, so nothing is recorded), not root's, or
 * writable by others (who could then decide which identity a namespace gets). The database:
 * not one SQLite can read, a schema newer than this nsid, SQLite's integrity check. The
 * records (nsid_registry_verify()): fields no nsid program writes (edited by hand), and
 * identities this host's secret does not derive from their keys (the machine-id changed, or
 * the registry comes from another machine). One identity bound to two namespaces is looked
 * for only where the tables lack UNIQUE (app, identity): with it the database refuses one. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nsid/identity.h>
#include <nsid/registry.h>

#include "doctor.h"

/* the most rows named one by one per kind; the rest are counted */
#define ROWS_NAMED 10

/* A value read from the database, for a terminal: control and non-ASCII bytes as '?', cut
 * after 64 characters. */
static const char *shown(const char *s, char *buf, size_t size) {
        size_t i = 0;

        if (!s)
                return "NULL";
        for (; s[i] && i + 4 < size && i < 64; i++)
                buf[i] = (unsigned char) s[i] < 0x20 || (unsigned char) s[i] > 0x7e ? '?' : s[i];
        if (s[i])
                buf[i++] = '~';
        buf[i] = '\0';
        return buf;
}

/* One file of the registry (the database, its -wal and -shm): 1 if something was found. */
static int check_file(const char *path, bool must_exist) {
        struct stat st;

        if (lstat(path, &st) < 0) {
                if (errno == ENOENT && !must_exist)
                        return 0;
                if (errno == ENOENT)
                        return -ENOENT;
                add_finding(SEV_WARNING, "registry-file", NULL, "cannot look at %s: %s", path,
                            strerror(errno));
                return 1;
        }
        if (S_ISLNK(st.st_mode)) {
                char msg[600];
                snprintf(msg, sizeof(msg),
                         "%s is a symbolic link: nsid-uniquifier does not follow one there "
                         "(O_NOFOLLOW), so it records nothing: random keys are new at every "
                         "run and nothing stops two namespaces from being given one key",
                         path);
                add_finding_fixf(SEV_ERROR, "registry-file", msg,
                                 "put the file itself there: mv \"$(readlink -f %s)\" %s", path,
                                 path);
                return 1;
        }
        if (!S_ISREG(st.st_mode)) {
                add_finding(SEV_ERROR, "registry-file", NULL,
                            "%s is not a regular file: nsid-uniquifier cannot record there", path);
                return 1;
        }
        if (st.st_uid != 0) {
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "%s belongs to uid %u, not root: that user can rewrite which identity "
                         "each namespace is given",
                         path, (unsigned) st.st_uid);
                add_finding_fixf(SEV_ERROR, "registry-file", msg, "chown root:root %s", path);
                return 1;
        }
        if (st.st_mode & 022) {
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "%s is writable by %s (mode %04o): anyone who can write it decides "
                         "which identity a namespace gets, or stops one from getting any",
                         path, st.st_mode & 002 ? "everyone" : "its group",
                         (unsigned) (st.st_mode & 07777));
                add_finding_fixf(SEV_ERROR, "registry-file", msg, "chmod 600 %s", path);
                return 1;
        }
        if (st.st_mode & 044) {
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "%s is readable by %s (mode %04o): container keys and names are "
                         "visible to them (nsid makes it 0600)",
                         path, st.st_mode & 004 ? "everyone" : "its group",
                         (unsigned) (st.st_mode & 07777));
                add_finding_fixf(SEV_WARNING, "registry-file", msg, "chmod 600 %s", path);
                return 1;
        }
        return 0;
}

/* The directory the registry is in: whoever may write there may replace the file. */
static int check_dir(const char *path) {
        char copy[4096], *slash;
        struct stat st;

        snprintf(copy, sizeof(copy), "%s", path);
        slash = strrchr(copy, '/');
        if (!slash)
                snprintf(copy, sizeof(copy), ".");
        else if (slash == copy)
                slash[1] = '\0';
        else
                *slash = '\0';
        if (stat(copy, &st) < 0 || !S_ISDIR(st.st_mode))
                return 0;
        if (st.st_uid == 0 && !(st.st_mode & 022))
                return 0;
        if ((st.st_mode & S_ISVTX) && st.st_uid == 0 && (st.st_mode & 022)) {
                /* like /tmp: others cannot replace root's file, but may make it before nsid */
                add_finding(SEV_WARNING, "registry-file",
                            "keep the registry in a directory of its own (the default, "
                            "/var/lib/nsid, is 0700)",
                            "%s is in %s, where everyone may create files", path, copy);
                return 1;
        }
        char msg[4400];
        snprintf(msg, sizeof(msg),
                 "%s is in %s, which %s: the registry can be replaced there", path, copy,
                 st.st_uid != 0 ? "does not belong to root" : "others may write to");
        add_finding_fixf(SEV_ERROR, "registry-file", msg, "chown root:root %s && chmod 700 %s",
                         copy, copy);
        return 1;
}

/* The host secret as nsid-uniquifier would load it, without creating one: -ENOENT when the
 * machine-id is unusable and there is no state file yet. */
static int load_secret(uint8_t secret[NSID_ID128_SIZE], nsid_host_secret_source *ret_src) {
        const char *mid = arg.machine_id ? arg.machine_id : "/etc/machine-id";
        uint8_t b[NSID_ID128_SIZE];
        char buf[64], path[4096];
        bool usable = false;
        int fd;

        fd = open(mid, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0) {
                ssize_t n = read(fd, buf, sizeof(buf));
                close(fd);
                usable = n > 0 && nsid_machine_id_parse(buf, (size_t) n, b) == 0;
                explicit_bzero(b, sizeof(b));
                explicit_bzero(buf, sizeof(buf));
        }
        /* (the state file's name: nsid/identity.h) */
        snprintf(path, sizeof(path), "%s/host-secret", ctx_state_dir());
        if (!usable && access(path, F_OK) < 0)
                return -ENOENT;
        return nsid_host_secret_load(arg.machine_id, ctx_state_dir(), secret, ret_src);
}

static void report_open_error(const char *path, int r) {
        char msg[600];

        switch (r) {
        case -EPROTO:
                add_finding(SEV_ERROR, "registry",
                            "run the nsid that wrote it (it was downgraded since?); this one "
                            "cannot record anything there",
                            "%s has a schema newer than this nsid knows", path);
                break;
        case -EBADMSG:
                snprintf(msg, sizeof(msg),
                         "%s is not an SQLite database, or it is damaged: nothing can be "
                         "recorded, random keys are new at every run",
                         path);
                add_finding_fixf(SEV_ERROR, "registry", msg,
                                 "move it aside (mv %s %s.bad); nsid-uniquifier makes a new one "
                                 "and derives the same identities from the same keys",
                                 path, path);
                break;
        case -ENOMEDIUM:
                snprintf(msg, sizeof(msg),
                         "%s is an SQLite database without nsid's tables: nsid-uniquifier "
                         "records nothing there",
                         path);
                add_finding_fixf(SEV_ERROR, "registry", msg,
                                 "check what it is; move it aside (mv %s %s.other)", path, path);
                break;
        case -EACCES:
        case -EPERM:
                add_finding(SEV_WARNING, "registry", "run nsidctl doctor as root",
                            "cannot read %s: %s", path, strerror(-r));
                break;
        default:
                add_finding(SEV_ERROR, "registry", NULL, "cannot open %s: %s", path,
                            strerror(-r));
        }
}

/* ", netns 4026532" for a binding, "" otherwise */
static const char *netns_part(const nsid_registry_problem *p, char *buf, size_t size) {
        if (p->netns_ino)
                snprintf(buf, size, ", netns %" PRIu64, p->netns_ino);
        else
                buf[0] = '\0';
        return buf;
}

static void report_problems(const char *path, const nsid_registry_problem *v, size_t n,
                            int rows, bool have_secret, nsid_host_secret_source src) {
        char a[80], k[80], id[80], ns[40], msg[1024], fix[1024];
        size_t not_derived = 0, malformed = 0, named = 0;

        for (size_t i = 0; i < n; i++) {
                const nsid_registry_problem *p = &v[i];

                switch (p->kind) {
                case NSID_REGISTRY_PROBLEM_SCHEMA:
                        snprintf(msg, sizeof(msg),
                                 "%s: %s: the database does not refuse what nsid relies on it "
                                 "to refuse (it was not made by nsid, or its tables were "
                                 "changed)",
                                 path, p->what);
                        snprintf(fix, sizeof(fix),
                                 "move it aside (mv %s %s.bad); nsid-uniquifier makes a new one "
                                 "and derives the same identities from the same keys",
                                 path, path);
                        add_finding(SEV_ERROR, "registry-schema", fix, "%s", msg);
                        break;
                case NSID_REGISTRY_PROBLEM_DUPLICATE:
                        add_finding(SEV_ERROR, "registry-schema",
                                    "remove all but the binding of the namespace that uses it "
                                    "(nsidctl status shows which)",
                                    "%s: %s: identity %s of app %s", path, p->what,
                                    shown(p->identity, id, sizeof(id)),
                                    shown(p->app, a, sizeof(a)));
                        break;
                case NSID_REGISTRY_PROBLEM_MALFORMED:
                        malformed++;
                        if (malformed > ROWS_NAMED)
                                break;
                        snprintf(msg, sizeof(msg),
                                 "%s: row %" PRId64 " of %s (app %s, key %s, identity %s%s): %s; "
                                 "no nsid program writes that (edited by hand?)%s",
                                 path, p->rowid, p->table, shown(p->app, a, sizeof(a)),
                                 shown(p->key, k, sizeof(k)), shown(p->identity, id, sizeof(id)),
                                 netns_part(p, ns, sizeof(ns)), p->what,
                                 strcmp(p->table, "bindings") == 0
                                         ? ": nsid-uniquifier cannot reuse this binding's key "
                                           "for its namespace"
                                         : "");
                        add_finding_fixf(SEV_ERROR, "registry-record", msg,
                                         "sqlite3 %s 'DELETE FROM %s WHERE rowid = %" PRId64 "'",
                                         path, p->table, p->rowid);
                        break;
                case NSID_REGISTRY_PROBLEM_NOT_DERIVED:
                        not_derived++;
                        break;
                }
        }
        if (malformed > ROWS_NAMED)
                add_finding(SEV_ERROR, "registry-record", NULL,
                            "%s: %zu more rows like these", path, malformed - ROWS_NAMED);

        if (not_derived > 0 && rows > 0 && not_derived == (size_t) rows) {
                snprintf(msg, sizeof(msg),
                         "%s: none of its %d records has the identity this host's secret "
                         "(%s) derives from its key: the secret changed since they were "
                         "recorded (a new /etc/machine-id: an image cloned and given its own?) "
                         "or the registry comes from another machine. Each namespace set again "
                         "gets another identity, and an NFS server sees it as a new client (its "
                         "opens and locks cannot be reclaimed)",
                         path, rows, nsid_host_secret_source_to_string(src));
                snprintf(fix, sizeof(fix),
                         "if the machine-id changed by mistake, put the old one back; otherwise "
                         "the recorded identities cannot come back: move the registry aside "
                         "(mv %s %s.old) and run nsid-uniquifier reconcile",
                         path, path);
                add_finding(SEV_ERROR, "registry-derivation", fix, "%s", msg);
        } else if (not_derived > 0) {
                for (size_t i = 0; i < n; i++) {
                        const nsid_registry_problem *p = &v[i];
                        if (p->kind != NSID_REGISTRY_PROBLEM_NOT_DERIVED)
                                continue;
                        if (++named > ROWS_NAMED)
                                break;
                        snprintf(msg, sizeof(msg),
                                 "%s: row %" PRId64 " of %s (app %s, key %s%s) records identity "
                                 "%s, which this host's secret does not derive from that key: "
                                 "edited by hand or written by another program (%zu of %d "
                                 "records)",
                                 path, p->rowid, p->table, shown(p->app, a, sizeof(a)),
                                 shown(p->key, k, sizeof(k)), netns_part(p, ns, sizeof(ns)),
                                 shown(p->identity, id, sizeof(id)), not_derived, rows);
                        add_finding_fixf(SEV_ERROR, "registry-derivation", msg,
                                         "sqlite3 %s 'DELETE FROM %s WHERE rowid = %" PRId64
                                         "'; nsid-uniquifier records the right one at its next "
                                         "set or reconcile",
                                         path, p->table, p->rowid);
                }
                if (not_derived > ROWS_NAMED)
                        add_finding(SEV_ERROR, "registry-derivation", NULL,
                                    "%s: %zu more rows like these", path,
                                    not_derived - ROWS_NAMED);
        }
        if (n == 0)
                add_finding(SEV_OK, "registry", NULL,
                            "%s: %d records, each well-formed%s", path, rows,
                            have_secret ? ", each identity derived from its key with this "
                                          "host's secret"
                                        : "");
}

void check_registry(void) {
        const char *path = ctx_registry_path();
        nsid_registry_problem *v = NULL;
        nsid_host_secret_source src = NSID_HOST_SECRET_MACHINE_ID;
        uint8_t secret[NSID_ID128_SIZE];
        nsid_registry *reg = NULL;
        bool have_secret;
        char wal[4200];
        size_t n = 0;
        int r, rows;

        r = check_file(path, true);
        if (r == -ENOENT) {
                add_finding(SEV_INFO, "registry", NULL,
                            "%s does not exist yet: nsid-uniquifier has recorded nothing", path);
                return;
        }
        (void) check_dir(path);
        snprintf(wal, sizeof(wal), "%s-wal", path);
        (void) check_file(wal, false);
        snprintf(wal, sizeof(wal), "%s-shm", path);
        (void) check_file(wal, false);

        out_log_quiet(true); /* the reasons are the findings below */
        r = nsid_registry_open(path, NSID_REGISTRY_READONLY, &reg);
        out_log_quiet(false);
        if (r < 0) {
                report_open_error(path, r);
                return;
        }
        r = nsid_registry_check_integrity(reg);
        if (r < 0) {
                char msg[1024];
                snprintf(msg, sizeof(msg),
                         "%s fails SQLite's integrity check (%s): the file is damaged", path,
                         nsid_registry_last_error(reg));
                add_finding_fixf(SEV_ERROR, "registry", msg,
                                 "keep what can be read (sqlite3 %s .recover | sqlite3 %s.new), "
                                 "or move it aside (mv %s %s.bad); nsid-uniquifier makes a new "
                                 "one",
                                 path, path, path, path);
                nsid_registry_unref(reg);
                return;
        }

        r = load_secret(secret, &src);
        have_secret = r >= 0;
        if (!have_secret)
                add_finding(SEV_WARNING, "registry-derivation",
                            r == -ENOENT ? "give the host a valid /etc/machine-id "
                                           "(systemd-machine-id-setup)"
                                         : NULL,
                            "the identities in %s cannot be checked: no host secret (%s)", path,
                            r == -ENOENT ? "/etc/machine-id is unusable and no state file yet"
                                         : strerror(-r));
        rows = nsid_registry_verify(reg, have_secret ? secret : NULL, &v, &n);
        explicit_bzero(secret, sizeof(secret));
        if (rows < 0)
                add_finding(SEV_ERROR, "registry", NULL, "%s cannot be read: %s (%s)", path,
                            strerror(-rows), nsid_registry_last_error(reg));
        else
                report_problems(path, v, n, rows, have_secret, src);
        nsid_registry_problems_free(v, n);
        nsid_registry_unref(reg);
}
