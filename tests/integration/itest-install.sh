#!/bin/bash
# Installs the build into a scratch DESTDIR, as `make install PREFIX=/usr DESTDIR=...` does,
# and checks what a distribution packager and a library user see: every file where a
# distribution puts it (programs in /usr/sbin, the udev rule in udev's rules dir, request-key.d
# files, the OCI hooks.d entry, the LXC hook, systemd units in systemd's unit dir, every man
# page of doc/, headers, libnsid.pc), nothing under /usr/local or naming the build tree, the
# versioned library and its SONAME, only nsid_* exports all in LIBNSID_0.1, a working
# libnsid.pc, and a program built from the installed files that runs against the installed
# library.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
dest=$(mktemp -d /tmp/nsid-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR=$dest cmake --install "$build" --prefix /usr >/dev/null

# ---- layout ---------------------------------------------------------------------------------
src=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
problems=0
bad() { echo "FAIL: $*" >&2; problems=$((problems + 1)); }
have() { # have TEST PATH-under-dest WHAT
  test "$1" "$dest/$2" && echo "ok: $3: /$2" || bad "$3: /$2 missing (test $1)"
}
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
libdir_rel=$(cache CMAKE_INSTALL_LIBDIR)
case "$libdir_rel" in /*) libdir_rel=${libdir_rel#/} ;; *) libdir_rel=usr/$libdir_rel ;; esac
udevdir=$(pkg-config --variable=udevdir udev); udevdir=${udevdir:-/lib/udev}
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null); unitdir=${unitdir:-/lib/systemd/system}

# programs: every one the build made, in /usr/sbin, executable ELF files
progs="nsid-uniquifier nsid-idmap nsid-idmapd"
[ -x "$build/nsidctl/nsidctl" ] && progs="$progs nsidctl"
for p in $progs; do
  have -x "usr/sbin/$p" "program $p"
  [ -f "$dest/usr/sbin/$p" ] && { file -b "$dest/usr/sbin/$p" | grep -q '^ELF' || bad "/usr/sbin/$p is not an ELF executable"; }
done
have -f "$libdir_rel/libnsid.so.0.1.0" "shared library"
have -L "$libdir_rel/libnsid.so.0" "SONAME link"
have -L "$libdir_rel/libnsid.so" "development link"
have -f "$libdir_rel/pkgconfig/libnsid.pc" "pkg-config file"
for h in "$src"/libnsid/include/nsid/*.h; do
  have -f "usr/include/nsid/${h##*/}" "header"
done
have -f "${udevdir#/}/rules.d/90-nsid-uniquifier.rules" "udev rule in udev's rules dir"
have -f etc/request-key.d/nsid-idmap.conf "request-key.d id_resolver rule"
have -f etc/request-key.d/nsid-dns.conf "request-key.d dns_resolver rule"
have -f usr/share/containers/oci/hooks.d/nsid-uniquifier.json "OCI hooks.d entry"
have -x usr/share/lxc/hooks/nsid-uniquifier "LXC hook"
for u in nsid-idmapd.service nsid-uniquifier-reconcile.service nsid-uniquifier-reconcile.timer; do
  have -f "${unitdir#/}/$u" "systemd unit in systemd's unit dir"
done
# every man page in doc/ is installed in its section
for m in "$src"/doc/*.[1-8]; do
  [ -f "$m" ] || continue
  sec=${m##*.}
  have -f "usr/share/man/man$sec/${m##*/}" "man page"
done

# request-key lines: nfs-common's id_resolver line with only the program path changed, and the
# dns_resolver line, both naming the installed helper
rk=$(grep -v '^#' "$dest/etc/request-key.d/nsid-idmap.conf" | tr -s ' \t' ' ')
[ "$rk" = "create id_resolver * * /usr/sbin/nsid-idmap -t 600 %k %d" ] || bad "nsid-idmap.conf line is '$rk'"
rk=$(grep -v '^#' "$dest/etc/request-key.d/nsid-dns.conf" | tr -s ' \t' ' ')
[ "$rk" = "create dns_resolver * * /usr/sbin/nsid-idmap dns %k" ] || bad "nsid-dns.conf line is '$rk'"
# every unit's Exec lines start an installed program
for u in "$dest/${unitdir#/}"/*.service; do
  while IFS= read -r line; do
    exe=${line#*=}; exe=${exe#[-@:+!]}; exe=${exe%% *}
    case "$exe" in /bin/kill) continue ;; esac
    [ -x "$dest$exe" ] || bad "${u##*/}: $line: $exe is not installed"
  done < <(grep -E '^Exec(Start|StartPre|StartPost|Reload|Stop)=' "$u")
done
# nothing under /usr/local, no absolute path into the build or source tree
stray=$(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\./||' | grep -vE '^(usr/|etc/|lib/)' || true)
[ -z "$stray" ] || bad "installed outside /usr, /etc, /lib: $stray"
[ ! -e "$dest/usr/local" ] || bad "something installed under /usr/local with PREFIX=/usr: $(cd "$dest" && find usr/local -type f)"
leak=$(grep -rlI -e "$build" -e "$src/" -e /usr/local "$dest" 2>/dev/null | grep -v '/user\.c$' || true)
[ -z "$leak" ] || bad "installed files name the build tree, source tree or /usr/local: $leak"
# man pages render without warnings
for m in "$dest"/usr/share/man/man*/*; do
  w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
  [ -z "$w" ] || bad "man -l ${m#$dest} warns: $w"
done
echo "installed files:"; (cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort | sed 's/^/  /')
[ "$problems" = 0 ] || fail "$problems layout problem(s)"

libdir=$(find "$dest" -name 'libnsid.so.0' -printf '%h\n' | head -n1)
[ -n "$libdir" ] || fail "libnsid.so.0 not installed"
[ -L "$libdir/libnsid.so.0" ] || fail "libnsid.so.0 is not the SONAME symlink"
[ -L "$libdir/libnsid.so" ] || fail "no unversioned libnsid.so dev symlink"
soname=$(objdump -p "$libdir/libnsid.so.0" | awk '/SONAME/ {print $2}')
[ "$soname" = libnsid.so.0 ] || fail "SONAME is '$soname', want libnsid.so.0"

# Exports: every defined dynamic symbol is nsid_* and in LIBNSID_0.1 or NSID_PRIVATE (which
# of the two, by name: abi-symbols).
exports=$(nm -D --defined-only --with-symbol-versions "$libdir/libnsid.so.0" | awk '$2 ~ /^[TDBRW]$/ {print $3}')
[ -n "$exports" ] || fail "no exported symbols"
bad=$(echo "$exports" | grep -v -E '^nsid_[a-z0-9_]+@@?(LIBNSID_0\.1|NSID_PRIVATE)$' |
      grep -v -E '^(LIBNSID_0\.1|NSID_PRIVATE)@@(LIBNSID_0\.1|NSID_PRIVATE)$' || true)
[ -z "$bad" ] || fail "unexpected exports: $bad"
count=$(echo "$exports" | grep -c '^nsid_')
echo "exports: $count nsid_* symbols, all in LIBNSID_0.1 or NSID_PRIVATE"

for h in ns.h log.h file.h common.h; do
  [ -f "$dest/usr/include/nsid/$h" ] || fail "header nsid/$h not installed"
done
# the private protocols' headers are not (include-private/)
for h in "$src"/libnsid/include-private/nsid/*.h; do
  [ ! -e "$dest/usr/include/nsid/${h##*/}" ] || fail "private header nsid/${h##*/} installed"
done

pc=$(find "$dest" -name libnsid.pc | head -n1)
[ -n "$pc" ] || fail "libnsid.pc not installed"
export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$(dirname "$pc")
libs=$(pkg-config --libs libnsid) || fail "pkg-config --libs libnsid failed"
cflags=$(pkg-config --cflags libnsid)
echo "pkg-config: $cflags $libs"
grep -q '^prefix=/usr$' "$pc" || fail "libnsid.pc prefix is not the install prefix"

cat > "$dest/user.c" <<'C'
#include <stdio.h>
#include <nsid/ns.h>
int main(void) {
        nsid_ns *ns = NULL;
        int r = nsid_ns_open_path("/proc/self/ns/net", NSID_NS_NET, &ns);
        if (r < 0)
                return 1;
        printf("%s\n", nsid_ns_type_name(nsid_ns_get_type(ns)));
        nsid_ns_unref(ns);
        return 0;
}
C
cc -Wall -Werror $cflags "$dest/user.c" -o "$dest/user" $libs
out=$(LD_LIBRARY_PATH=$libdir "$dest/user")
[ "$out" = net ] || fail "program linked against the installed library printed '$out'"
# (ldd's output is captured first: grep -q closing the pipe early fails the pipeline under pipefail)
deps=$(LD_LIBRARY_PATH=$libdir ldd "$dest/user")
grep -q "libnsid.so.0 => $libdir/libnsid.so.0" <<<"$deps" || fail "not linked to the installed library: $deps"
echo "1 passed, 0 failed"
