/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsid_nfsconf_get() against libnfsidmap itself (issue #32: "idmapd.conf read exactly as
 * libnfsidmap reads it"). libnfsidmap exports no parser of its own, only
 * nfs4_init_name_mapping(path) and nfsidmap_config_get(section, tag) after it: each case is
 * written to a file and read by the real library (Debian's libnfsidmap1) in a child process
 * (the library keeps its configuration for the life of the process), and the answers of
 * both are compared.
 *
 * The cases: a fixed list of the forms idmapd.conf(5) files use and misuse, then 2,000
 * generated from a seeded generator mixing them (sections and subsections in every spelling,
 * quotes, comments, blanks, CRLF, duplicates, continuation backslashes, "key: value", empty
 * and unmatched values, "$name" values and an [environment] section, NUL bytes, a last line
 * without its newline). Not generated: "include" of a file that exists, which libnfsidmap
 * follows and nsid does not (nsid/nfsconf.h), and "$name" cycles, on which libnfsidmap
 * loops forever. Keys compared: [General] Domain, [Mapping] Nobody-User, [Translation]
 * Method is left out (the library loads the plugins it names), and a free key of a free
 * section, [Probe] Value, which the library only stores.
 *
 * A case whose text leaves Domain unset makes libnfsidmap ask DNS for a domain; here that
 * ends quickly (no network), and only the stored values are compared.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <nfsidmap.h>

#include <nsid/nfsconf.h>

/* exported by libnfsidmap (its plugins' way to read idmapd.conf), declared by no header */
extern const char *nfsidmap_config_get(const char *section, const char *tag);

#ifdef __SANITIZE_ADDRESS__
/* libnfsidmap (nfs-utils 2.6.2) given "include =" with an empty value reads the file's own
 * directory as a configuration file: it asks malloc() for SEEK_END of a directory (2^63
 * bytes), and without a sanitizer gets NULL and goes on. Under ASan the same call aborts the
 * child unless malloc may return NULL, as glibc's does. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "allocator_may_return_null=1";
}
#endif

static const struct {
        const char *section, *key;
} keys[] = {
        { "General", "Domain" },
        { "Mapping", "Nobody-User" },
        { "Probe", "Value" },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))
#define ABSENT "\x01(absent)"

static char dir[] = "/tmp/nsid-test-conf-nfsutils.XXXXXX";

/* libnfsidmap's answers for text: one per key, ABSENT when it has none. */
static void libnfsidmap_reads(const char *text, size_t len, char out[NKEYS][512]) {
        char path[sizeof(dir) + 16];
        int p[2];
        snprintf(path, sizeof(path), "%s/idmapd.conf", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(p[0]);
                /* (its log lines, about a domain it could not find, are not ours to show) */
                if (!getenv("NSID_CONF_DEBUG")) {
                        int null = open("/dev/null", O_WRONLY);
                        dup2(null, 2);
                }
                (void) nfs4_init_name_mapping(path);
                FILE *w = fdopen(p[1], "w");
                for (size_t i = 0; i < NKEYS; i++) {
                        const char *v = nfsidmap_config_get(keys[i].section, keys[i].key);
                        fprintf(w, "%s%c", v ? v : ABSENT, 0);
                }
                fclose(w);
                _exit(0);
        }
        close(p[1]);
        char buf[NKEYS * 512 + 16];
        size_t got = 0;
        ssize_t n;
        while ((n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
                got += (size_t) n;
        close(p[0]);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                print_message("libnfsidmap's child: %s %d on:\n%.*s\n---\n",
                              WIFEXITED(st) ? "exit" : "signal",
                              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), (int) len, text);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        const char *q = buf;
        for (size_t i = 0; i < NKEYS; i++) {
                assert_true(q < buf + got);
                size_t l = strlen(q);
                memcpy(out[i], q, l < 511 ? l : 511);
                out[i][l < 511 ? l : 511] = '\0';
                q += l + 1;
        }
}

/* 0 when they agree; else prints the case and both answers */
static int compare_len(const char *text, size_t len) {
        char theirs[NKEYS][512];
        int bad = 0;
        libnfsidmap_reads(text, len, theirs);
        for (size_t i = 0; i < NKEYS; i++) {
                char *ours = NULL;
                int r = nsid_nfsconf_get(text, len, keys[i].section, keys[i].key, &ours);
                const char *o = r == 0 ? ours : ABSENT;
                if (r != 0 && r != -ENOENT)
                        o = "(error)";
                if (strcmp(o, theirs[i]) != 0) {
                        if (!bad)
                                print_message("--- case (%zu bytes):\n%s\n---\n", len, text);
                        print_message("[%s] %s: libnfsidmap '%s', nsid '%s'\n", keys[i].section,
                                      keys[i].key, theirs[i][0] == 1 ? "(absent)" : theirs[i],
                                      o[0] == 1 ? "(absent)" : o);
                        bad = 1;
                }
                free(ours);
        }
        return bad;
}

static int compare(const char *text) {
        return compare_len(text, strlen(text));
}

static const char *const fixed[] = {
        "[General]\nDomain = example.org\n",
        "[General]\nDomain = example.org  # our domain\n",
        "[General]\nDomain = \"quo#ted.org\" ; c\n",
        "[General]\nDomain = 'sq.org'\n",
        "[General]\nDomain = \"unmatched.org\n",
        "[General]\nDomain =\n",
        "[General]\nDomain = first.org\nDomain = second.org\n",
        "[general]\ndomain = lower.org\n",
        "[ General ]\n  Domain=spaced.org\n",
        "[General]\r\nDomain = crlf.org\r\n",
        "[General]\nDomain: colon.org\n",
        "[General \"sub\"]\nDomain = sub.org\n",
        "[General\nDomain = noclose.org\n",
        "Domain = nosection.org\n",
        "[General]\n# Domain = commented.org\n; Domain = semi.org\n",
        "[General]\nDomain = a.org \\\n  b.org\n",
        "[Mapping]\nNobody-User = nfsnobody\n[Probe]\nValue = x y z\n",
        "[Probe]\nValue = \"a\"\"b\"\n",
        "[Probe]\nValue = 'it''s'\n",
        "[Probe]\nValue=\ttabbed\t \n",
        "[Probe]\nValue = = equals\n",
        "[Probe]\n Value = indented\n",
        "[Probe]\nvalue = one\n[PROBE]\nVALUE = two\n",
        "[General]\nDomain = last.org",
        "[General]\nDomain = a.org\nDomain =\n",
        "[General]\nDomain = a.org\n[General \"x\"]\nDomain = b.org\n",
        "[General \"x\"]\nDomain = b.org\n[General]\nDomain = a.org\n",
        "[General \"x]\nDomain = unclosed-arg.org\n",
        "[]\nDomain = empty-section.org\n",
        "[General]\nDomain = $dom\n[environment]\ndom = env.org\n",
        "[General]\nDomain = $a\n[environment]\na = $b\nb = chain.org\n",
        "[General]\nDomain = $nsidunsetvar\n",
        "[General]\nDomain =\r\n",
        "[General]\nDomain = x\\\n\\\ny.org\n",
        "[General]\ninclude = /nonexistent/idmapd.conf\nDomain = inc.org\n",
        "[General]\ninclude = # its own directory\nDomain = inc-dir.org\n",
        "[General]\nDomain x = spaced-tag.org\n = no-tag.org\n",
};

static void test_nul(void **state) {
        static const char t[] = "[General]\nDomain = before.org\n\0[General]\nDomain = after.org\n";
        assert_int_equal(compare_len(t, sizeof(t) - 1), 0);
}

static void test_fixed(void **state) {
        int bad = 0;
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
                bad += compare(fixed[i]);
        print_message("%zu fixed cases, %d differ\n", sizeof(fixed) / sizeof(fixed[0]), bad);
        assert_int_equal(bad, 0);
}

/* ---- generated cases ---- */

static uint64_t rng = 0x6e736964636f6e66ull; /* fixed seed: a failure is reproducible */

static unsigned pick(unsigned n) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (unsigned) (rng % n);
}

static const char *const sections[] = {
        "[General]", "[general]", "[ General ]", "[GENERAL]", "[General \"x\"]", "[General",
        "[Mapping]", "[Probe]", "[probe]", "[ Probe]", "[Probe \"sub\"]", "[]", "[Other]",
        "[environment]", "[General \"x]", "[Probe] trailing", "[\tProbe\t]",
};
static const char *const names[] = {
        "Domain", "domain", "DOMAIN", "Nobody-User", "nobody-user", "Value", "value", "Other",
        "e1", "e2", "include",
};
static const char *const seps[] = { " = ", "=", " =", "= ", "\t=\t", ": ", " : ", " ", "==" };
static const char *const values[] = {
        "example.org", "a.org # c", "a.org#c", "a.org;c", "a.org ; c", "\"q.org\"",
        "\"q#.org\" # c", "'s.org'", "'s.org' trailing", "\"open.org", "'open.org", "",
        "  ", "x y", "\"\"", "''", "\"a\"b\"", "tab\there", "v\\", "#only", ";only", "é.org",
        "$e1", "$e2", "$nsidunset", "\"$e1\"", "$", "a=b", "\v", "x\r",
};
static const char *const lines[] = {
        "", "# comment", "; comment", "   ", "\t", "#[Probe]", "include = /nonexistent.conf",
};

/* e1 and e2 never name each other in a cycle: e1's values never name e1, e2's none */
static bool cycles(const char *buf) {
        return strstr(buf, "e1") && strstr(buf, "e2") && strstr(buf, "$e1") && strstr(buf, "$e2");
}

static size_t gen(char *buf, size_t len) {
        size_t used = 0;
        unsigned n = 1 + pick(8);
        buf[0] = '\0';
        for (unsigned i = 0; i < n && used + 200 < len; i++) {
                const char *eol = pick(6) == 0 ? "\r\n" : "\n";
                const char *indent = pick(5) == 0 ? "  " : "";
                switch (pick(6)) {
                case 0:
                        used += (size_t) snprintf(buf + used, len - used, "%s%s%s", indent,
                                                  sections[pick(sizeof(sections) / sizeof(*sections))],
                                                  eol);
                        break;
                case 1:
                        used += (size_t) snprintf(buf + used, len - used, "%s%s",
                                                  lines[pick(sizeof(lines) / sizeof(*lines))], eol);
                        break;
                default:
                        used += (size_t) snprintf(buf + used, len - used, "%s%s%s%s%s", indent,
                                                  names[pick(sizeof(names) / sizeof(*names))],
                                                  seps[pick(sizeof(seps) / sizeof(*seps))],
                                                  values[pick(sizeof(values) / sizeof(*values))],
                                                  eol);
                        break;
                }
        }
        if (pick(4) == 0 && used > 0 && buf[used - 1] == '\n')
                buf[--used] = '\0'; /* no newline at the end */
        if (pick(20) == 0 && used > 2)
                buf[pick((unsigned) used)] = '\0'; /* a NUL byte */
        return used;
}

static void test_generated(void **state) {
        char text[4096];
        int bad = 0, n = getenv("NSID_CONF_CASES") ? atoi(getenv("NSID_CONF_CASES")) : 2000;
        for (int i = 0; i < n && bad < 10; i++) {
                size_t len = gen(text, sizeof(text));
                if (cycles(text) || strstr(text, "$e1\n") || strstr(text, "$e2\n")) {
                        i--; /* (a "$name" chain may loop: libnfsidmap would not return) */
                        continue;
                }
                bad += compare_len(text, len);
        }
        print_message("%d generated cases, %d differ (first 10 shown)\n", n, bad);
        assert_int_equal(bad, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixed),
                cmocka_unit_test(test_nul),
                cmocka_unit_test(test_generated),
        };
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        int r = cmocka_run_group_tests(tests, NULL, NULL);
        char path[sizeof(dir) + 16];
        snprintf(path, sizeof(path), "%s/idmapd.conf", dir);
        (void) unlink(path);
        (void) rmdir(dir);
        return r;
}
