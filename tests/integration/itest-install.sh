#!/bin/bash
# Installs the build into a scratch DESTDIR, as `make install DESTDIR=...` does, and checks
# what a distribution packager and a library user see: the versioned library and its
# SONAME, only nsid_* exports all in LIBNSID_0.1, the headers, a working libnsid.pc, and a
# program built from the installed files that runs against the installed library.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
dest=$(mktemp -d /tmp/nsid-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR=$dest cmake --install "$build" --prefix /usr >/dev/null

libdir=$(find "$dest" -name 'libnsid.so.0' -printf '%h\n' | head -n1)
[ -n "$libdir" ] || fail "libnsid.so.0 not installed"
[ -L "$libdir/libnsid.so.0" ] || fail "libnsid.so.0 is not the SONAME symlink"
[ -e "$libdir/libnsid.so" ] || echo "note: no unversioned libnsid.so dev symlink" >&2
soname=$(objdump -p "$libdir/libnsid.so.0" | awk '/SONAME/ {print $2}')
[ "$soname" = libnsid.so.0 ] || fail "SONAME is '$soname', want libnsid.so.0"

# Exports: every defined dynamic symbol is nsid_* and in LIBNSID_0.1.
exports=$(nm -D --defined-only --with-symbol-versions "$libdir/libnsid.so.0" | awk '$2 ~ /^[TDBRW]$/ {print $3}')
[ -n "$exports" ] || fail "no exported symbols"
bad=$(echo "$exports" | grep -v -E '^nsid_[a-z0-9_]+@@?LIBNSID_0\.1$' | grep -v -E '^LIBNSID_0\.1@@LIBNSID_0\.1$' || true)
[ -z "$bad" ] || fail "unexpected exports: $bad"
count=$(echo "$exports" | grep -c '^nsid_')
echo "exports: $count nsid_* symbols, all in LIBNSID_0.1"

for h in ns.h log.h file.h worker.h common.h; do
  [ -f "$dest/usr/include/nsid/$h" ] || fail "header nsid/$h not installed"
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
LD_LIBRARY_PATH=$libdir ldd "$dest/user" | grep -q "libnsid.so.0 => $libdir/libnsid.so.0" || fail "not linked to the installed library"
echo "1 passed, 0 failed"
