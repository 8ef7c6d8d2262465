/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nsid/conffile.h: nsid.conf on libinih (keys table, strict diagnostics, file trust) and the
 * generic INI lookup used for idmapd.conf. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-skip.h" /* after cmocka.h */

#include <nsid/conffile.h>

#define PARSE(text, c) assert_int_equal(nsid_conf_parse(text, strlen(text), "t.conf", c), 0)

/* The diagnostic of a line, or NULL. */
static const char *diag_of(nsid_conf *c, unsigned line, int *ret_prio) {
        nsid_conf_diagnostic d;
        for (size_t i = 0; nsid_conf_get_diagnostic(c, i, &d) == 0; i++)
                if (d.line == line) {
                        if (ret_prio)
                                *ret_prio = d.priority;
                        return d.message;
                }
        return NULL;
}

static void test_defaults(void **state) {
        nsid_conf *c = NULL;
        const nsid_conf_key *k;
        size_t n = 0;
        uint32_t u;
        bool b;

        PARSE("", &c);
        assert_int_equal(nsid_conf_get_n_diagnostics(c), 0);
        assert_int_equal(nsid_conf_get_n_entries(c), 0);
        k = nsid_conf_keys(&n);
        assert_true(n >= 12);
        for (size_t i = 0; i < n; i++) {
                /* every default is valid for its own type, documented, and in effect */
                assert_int_equal(nsid_conf_key_validate(&k[i], k[i].default_value), 0);
                assert_non_null(k[i].description);
                assert_non_null(nsid_conf_type_to_string(k[i].type));
                assert_string_equal(nsid_conf_get_value(c, k[i].section, k[i].name),
                                    k[i].default_value);
                assert_int_equal(nsid_conf_get_origin(c, k[i].section, k[i].name, NULL), 0);
                assert_ptr_equal(nsid_conf_key_lookup(k[i].section, k[i].name), &k[i]);
        }
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "cache-ttl", &u), 0);
        assert_int_equal(u, 600);
        assert_int_equal(nsid_conf_get_bool(c, "IDMAPD", "Isolate-Keys", &b), 0);
        assert_true(b);
        assert_int_equal(nsid_conf_get_bool(c, "idmap", "requester-context", &b), 0);
        assert_false(b);
        assert_int_equal(nsid_conf_get_bool(c, "idmapd", "cache-ttl", &b), -EINVAL);
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "nope", &u), -ENOENT);
        assert_null(nsid_conf_get_value(c, "nope", "cache-ttl"));
        assert_int_equal(nsid_conf_get_origin(c, "idmapd", "nope", NULL), -ENOENT);
        nsid_conf_unref(c);
}

static void test_values_and_origin(void **state) {
        nsid_conf *c = NULL;
        nsid_conf_entry e;
        unsigned line = 0;
        uint32_t u;
        bool b;
        const char *t = "# nsid.conf\n"
                        "[idmapd]\n"
                        "cache-ttl = 30\n"
                        "  isolate-keys=off\n" /* indented: a key, not a continuation */
                        "state-dir = /srv/nsid\n"
                        "\n"
                        "; a comment\n"
                        "[ idmap ]\n"
                        "requester-context: yes\n"
                        "requester-context-timeout = 9\n";

        PARSE(t, &c);
        assert_int_equal(nsid_conf_get_n_diagnostics(c), 0);
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "cache-ttl", &u), 0);
        assert_int_equal(u, 30);
        assert_int_equal(nsid_conf_get_origin(c, "idmapd", "cache-ttl", &line), 1);
        assert_int_equal(line, 3);
        assert_int_equal(nsid_conf_get_bool(c, "idmapd", "isolate-keys", &b), 0);
        assert_false(b);
        assert_int_equal(nsid_conf_get_origin(c, "idmapd", "isolate-keys", &line), 1);
        assert_int_equal(line, 4);
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "state-dir"), "/srv/nsid");
        assert_int_equal(nsid_conf_get_bool(c, "idmap", "requester-context", &b), 0);
        assert_true(b);
        assert_int_equal(nsid_conf_get_uint(c, "idmap", "requester-context-timeout", &u), 0);
        assert_int_equal(u, 9);
        assert_int_equal(nsid_conf_get_origin(c, "idmap", "requester-context-timeout", &line), 1);
        assert_int_equal(line, 10);
        /* untouched keys keep their defaults */
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "negative-ttl"), "60");
        assert_int_equal(nsid_conf_get_n_entries(c), 5);
        assert_int_equal(nsid_conf_get_entry(c, 3, &e), 0);
        assert_string_equal(e.section, "idmap"); /* blanks inside [ ] removed */
        assert_string_equal(e.name, "requester-context");
        assert_string_equal(e.value, "yes");
        assert_int_equal(e.line, 9);
        assert_true(e.used);
        assert_non_null(e.key);
        assert_int_equal(nsid_conf_get_entry(c, 5, &e), -ERANGE);
        nsid_conf_unref(c);
}

static void test_strict(void **state) {
        nsid_conf *c = NULL;
        nsid_conf_entry e;
        const char *m;
        int prio = 0;
        uint32_t u;
        const char *t = "stray = 1\n"                        /* 1 */
                        "[idmapd]\n"                         /* 2 */
                        "cache-ttl = 0\n"                    /* 3: out of range */
                        "negative-ttl = 12x\n"               /* 4: not a number */
                        "isolate-keys = maybe\n"             /* 5: not a boolean */
                        "state-dir = relative/dir\n"         /* 6: not absolute */
                        "cache-tll = 5\n"                    /* 7: typo */
                        "rescan-interval = 5\n"              /* 8 */
                        "rescan-interval = 7\n"              /* 9: again, wins */
                        "this line is junk\n"                /* 10: syntax */
                        "[idmpad]\n"                         /* 11 */
                        "cache-ttl = 5\n"                    /* 12: unknown section */
                        "[idmap\n"                           /* 13: no ] */
                        "requester-context = yes\n"          /* 14: in no section */
                        "[idmap]\n"                          /* 15 */
                        "requester-context-timeout = -3\n";  /* 16 */

        PARSE(t, &c);
        m = diag_of(c, 1, &prio);
        assert_non_null(m);
        assert_int_equal(prio, LOG_WARNING);
        assert_non_null(strstr(m, "t.conf:1: "));
        assert_non_null(strstr(m, "not in any valid [section]"));

        m = diag_of(c, 3, &prio);
        assert_non_null(m);
        assert_int_equal(prio, LOG_ERR);
        assert_non_null(strstr(m, "t.conf:3: [idmapd] cache-ttl = \"0\" is out of range 1..86400 s"));
        assert_non_null(strstr(m, "default 600"));
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "cache-ttl", &u), 0);
        assert_int_equal(u, 600); /* the bad value is not used */

        m = diag_of(c, 4, &prio);
        assert_int_equal(prio, LOG_ERR);
        assert_non_null(strstr(m, "not a whole number"));
        m = diag_of(c, 5, &prio);
        assert_int_equal(prio, LOG_ERR);
        assert_non_null(strstr(m, "not a boolean"));
        m = diag_of(c, 6, &prio);
        assert_int_equal(prio, LOG_ERR);
        assert_non_null(strstr(m, "not an absolute path"));
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "state-dir"), "/var/lib/nsid");

        m = diag_of(c, 7, &prio);
        assert_int_equal(prio, LOG_WARNING);
        assert_non_null(strstr(m, "unknown key \"cache-tll\" in [idmapd]"));
        assert_non_null(strstr(m, "did you mean \"cache-ttl\""));

        m = diag_of(c, 9, &prio);
        assert_int_equal(prio, LOG_WARNING);
        assert_non_null(strstr(m, "already set on line 8"));
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "rescan-interval", &u), 0);
        assert_int_equal(u, 7);
        assert_int_equal(nsid_conf_get_entry(c, 6, &e), 0);
        assert_int_equal(e.line, 8);
        assert_false(e.used);

        m = diag_of(c, 10, &prio);
        assert_int_equal(prio, LOG_ERR);
        assert_non_null(strstr(m, "syntax error"));

        m = diag_of(c, 12, &prio);
        assert_int_equal(prio, LOG_WARNING);
        assert_non_null(strstr(m, "unknown section [idmpad]"));
        assert_non_null(strstr(m, "did you mean [idmapd]"));

        m = diag_of(c, 13, &prio);
        assert_int_equal(prio, LOG_ERR);
        assert_non_null(strstr(m, "without \"]\""));
        assert_non_null(diag_of(c, 14, NULL));
        assert_string_equal(nsid_conf_get_value(c, "idmap", "requester-context"), "no");

        m = diag_of(c, 16, &prio);
        assert_int_equal(prio, LOG_ERR);

        assert_int_equal(nsid_conf_get_n_errors(c), 7);
        nsid_conf_unref(c);
}

static void test_bounds(void **state) {
        nsid_conf *c = NULL;
        char *big, *v = NULL;
        size_t n = NSID_CONF_LINE_MAX + 100;
        const char nul[] = "[idmapd]\ncache-ttl = 1\0 2\nnegative-ttl = 5\n";

        /* a NUL byte: that line is ignored (and reported), the next one still counts */
        assert_int_equal(nsid_conf_parse(nul, sizeof(nul) - 1, "t.conf", &c), 0);
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "cache-ttl"), "600");
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "negative-ttl"), "5");
        assert_non_null(strstr(diag_of(c, 2, NULL), "NUL"));
        c = nsid_conf_unref(c);

        /* a line of NSID_CONF_LINE_MAX bytes is read whole, a longer one is ignored */
        big = malloc(2 * n + 64);
        assert_non_null(big);
        strcpy(big, "[General]\nDomain = ");
        size_t l = strlen(big);
        memset(big + l, 'a', NSID_CONF_LINE_MAX - strlen("Domain = "));
        l += NSID_CONF_LINE_MAX - strlen("Domain = ");
        big[l] = '\0';
        assert_int_equal(nsid_conf_get(big, strlen(big), "General", "Domain", &v), 0);
        assert_int_equal(strlen(v), NSID_CONF_LINE_MAX - strlen("Domain = "));
        free(v);
        strcat(big, "b\n[idmapd]\ncache-ttl = 7\n");
        assert_int_equal(nsid_conf_get(big, strlen(big), "General", "Domain", &v), -ENOENT);
        assert_int_equal(nsid_conf_parse(big, strlen(big), "t.conf", &c), 0);
        assert_non_null(strstr(diag_of(c, 2, NULL), "too long"));
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "cache-ttl"), "7");
        c = nsid_conf_unref(c);
        free(big);

        /* no final newline, CRLF line ends */
        assert_int_equal(nsid_conf_get("[a]\r\nk = v\r\n[b]\nk=w", 19, "b", "k", &v), 0);
        assert_string_equal(v, "w");
        free(v);
        assert_int_equal(nsid_conf_get("[a]\r\nk = v\r\n", 12, "a", "k", &v), 0);
        assert_string_equal(v, "v");
        free(v);
        assert_int_equal(nsid_conf_get(NULL, 0, "a", "k", &v), -ENOENT);
        assert_int_equal(nsid_conf_get(NULL, 1, "a", "k", &v), -EINVAL);
        assert_int_equal(nsid_conf_parse(NULL, 1, NULL, &c), -EINVAL);
}

/* The idmapd.conf semantics the callers of nsid_conf_get() rely on. */
static void test_get_compat(void **state) {
        char *v = NULL;
        const char *t = "[General]\n"
                        "  Domain = example.test  \n"
                        "  Local-Realms = A.TEST\n" /* indented keys are keys */
                        "# Domain = commented\n"
                        "Pipefs-Directory = /run/x ; not a comment\n"
                        "[ Mapping ]\n"
                        "Nobody-User = nobody\n"
                        "[broken\n"
                        "Nobody-User = wrong\n";

        assert_int_equal(nsid_conf_get(t, strlen(t), "general", "DOMAIN", &v), 0);
        assert_string_equal(v, "example.test");
        free(v);
        assert_int_equal(nsid_conf_get(t, strlen(t), "General", "Local-Realms", &v), 0);
        assert_string_equal(v, "A.TEST");
        free(v);
        assert_int_equal(nsid_conf_get(t, strlen(t), "General", "Pipefs-Directory", &v), 0);
        assert_string_equal(v, "/run/x"); /* ';' starts a comment for nfs-utils too */
        free(v);
        assert_int_equal(nsid_conf_get(t, strlen(t), "Mapping", "Nobody-User", &v), 0);
        assert_string_equal(v, "nobody");
        free(v);
}

/* Values as nfs-utils reads them. Each expectation is what `nfsidmap -d` printed on Debian 12
 * (nfs-utils 2.6.2) for that Domain line in /etc/idmapd.conf (issue #32: nsidctl took the
 * comment of "Domain = example.org  # our domain" as part of the domain). */
static void test_values_as_nfs_utils(void **state) {
        static const struct {
                const char *line, *want; /* NULL: the line is ignored (config error) */
        } cases[] = {
                { "Domain = example.org  # our domain", "example.org" },
                { "Domain = example.org;x", "example.org" },
                { "Domain = a.org#c", "a.org" },
                { "Domain = x.org ; # y", "x.org" },
                { "Domain = tab.org\t", "tab.org" },
                { "Domain = \"quo#ted.org\" # c", "quo#ted.org" },
                { "Domain = 'sq.org' ; c", "sq.org" },
                { "Domain = \"a.org\" trailing", "a.org" },
                { "Domain =   \"sp ace.org\"", "sp ace.org" },
                { "Domain = \"\" # empty", "" },
                { "Domain = \"unclosed.org # c", NULL },
        };
        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char t[256], *v = NULL;
                snprintf(t, sizeof(t), "[General]\n%s\n", cases[i].line);
                int r = nsid_conf_get(t, strlen(t), "General", "Domain", &v);
                printf("%-40s -> %s\n", cases[i].line, r == 0 ? v : "(ignored)");
                if (cases[i].want) {
                        assert_int_equal(r, 0);
                        assert_string_equal(v, cases[i].want);
                } else {
                        assert_int_equal(r, -ENOENT);
                }
                free(v);
        }
        /* nsid.conf likewise: what `nsidctl config` prints ("600  # default") reads back */
        const char *conf = "[idmapd]\ncache-ttl = 600  # default\nisolate-keys = yes ; ok\n"
                           "state-dir = \"/var/lib/ns#id\"\n";
        nsid_conf *c = NULL;
        assert_int_equal(nsid_conf_parse(conf, strlen(conf), "test", &c), 0);
        assert_int_equal(nsid_conf_get_n_errors(c), 0);
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "cache-ttl"), "600");
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "isolate-keys"), "yes");
        assert_string_equal(nsid_conf_get_value(c, "idmapd", "state-dir"), "/var/lib/ns#id");
        nsid_conf_unref(c);
}

static void write_file(const char *path, const char *text, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(fchmod(fd, mode), 0);
        close(fd);
}

static void test_load(void **state) {
        char dir[] = "/tmp/test-conffile.XXXXXX", path[128], link[160];
        nsid_conf *c = NULL;
        uint32_t u;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/nsid.conf", dir);

        /* missing: defaults, no error */
        assert_int_equal(nsid_conf_load(path, &c), 0);
        assert_int_equal(nsid_conf_file_found(c), 0);
        assert_string_equal(nsid_conf_get_path(c), path);
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "cache-ttl", &u), 0);
        assert_int_equal(u, 600);
        c = nsid_conf_unref(c);

        write_file(path, "[idmapd]\ncache-ttl = 42\n", 0644);
        assert_int_equal(nsid_conf_load(path, &c), 0);
        assert_int_equal(nsid_conf_file_found(c), 1);
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "cache-ttl", &u), 0);
        assert_int_equal(u, 42);
        c = nsid_conf_unref(c);

        /* followed through a symlink; the target is what is checked */
        snprintf(link, sizeof(link), "%s/link.conf", dir);
        assert_int_equal(symlink(path, link), 0);
        assert_int_equal(nsid_conf_load(link, &c), 0);
        assert_int_equal(nsid_conf_get_uint(c, "idmapd", "cache-ttl", &u), 0);
        assert_int_equal(u, 42);
        c = nsid_conf_unref(c);

        /* writable by others: refused */
        assert_int_equal(chmod(path, 0646), 0);
        assert_int_equal(nsid_conf_load(path, &c), -EPERM);
        assert_int_equal(nsid_conf_load(link, &c), -EPERM);
        assert_int_equal(chmod(path, 0644), 0);

        /* not a regular file */
        assert_int_equal(nsid_conf_load(dir, &c), -EISDIR);
        assert_int_equal(nsid_conf_load("/dev/null", &c), -ENXIO);
        assert_null(c);

        /* too big */
        {
                int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_int_equal(ftruncate(fd, NSID_CONF_FILE_MAX + 1), 0);
                close(fd);
                assert_int_equal(nsid_conf_load(path, &c), -EFBIG);
        }

        unlink(link);
        unlink(path);
        rmdir(dir);
}

/* Who owns the file: chown() needs root. */
static void test_load_owner(void **state) {
        char dir[] = "/tmp/test-conffile.XXXXXX", path[128];
        nsid_conf *c = NULL;

        (void) state;
        if (getegid() != 0 || geteuid() != 0)
                test_skip("not root: the file's owner cannot be changed (chown; run as root)");
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/nsid.conf", dir);
        write_file(path, "[idmapd]\ncache-ttl = 42\n", 0644);

        /* group-writable: only for root's group */
        assert_int_equal(chmod(path, 0664), 0);
        assert_int_equal(chown(path, 0, 0), 0);
        assert_int_equal(nsid_conf_load(path, &c), 0);
        c = nsid_conf_unref(c);
        assert_int_equal(chown(path, 0, 65534), 0);
        assert_int_equal(nsid_conf_load(path, &c), -EPERM);
        /* owned by someone else: refused */
        assert_int_equal(chmod(path, 0644), 0);
        assert_int_equal(chown(path, 65534, 0), 0);
        assert_int_equal(nsid_conf_load(path, &c), -EPERM);
        assert_null(c);

        unlink(path);
        rmdir(dir);
}

static void test_refcount(void **state) {
        nsid_conf *c = NULL;

        PARSE("[idmapd]\n", &c);
        assert_ptr_equal(nsid_conf_ref(c), c);
        assert_null(nsid_conf_unref(c));
        assert_string_equal(nsid_conf_get_path(c), "t.conf");
        assert_null(nsid_conf_unref(c));
        assert_null(nsid_conf_unref(NULL));
        assert_null(nsid_conf_ref(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),   cmocka_unit_test(test_values_and_origin),
                cmocka_unit_test(test_strict),     cmocka_unit_test(test_bounds),
                cmocka_unit_test(test_get_compat), cmocka_unit_test(test_load),
                cmocka_unit_test(test_load_owner), cmocka_unit_test(test_refcount),
                cmocka_unit_test(test_values_as_nfs_utils),
        };
        return run_test_group(tests, NULL, NULL);
}
