#!/bin/bash
# `make install` and `make uninstall` as an administrator runs them on a host (issue #32),
# in a mount namespace of its own where /usr/local, /etc and /opt are overlays on tmpfs (the
# host's files stay as they are; what the install writes is visible only in there):
#  - make install (default PREFIX=/usr/local) installs nothing from the network: apt-get and
#    apt are shims that fail the test if run; the programs run from /usr/local/sbin against
#    the installed libnsid (ldconfig ran); the units and the udev rule are where systemd and
#    udev read local files (/usr/local/lib/...), the request-key rules in /etc/request-key.d;
#  - make uninstall leaves no file of it behind: the lists of files under /usr/local, /etc
#    and /opt before the install and after the uninstall are the same;
#  - PREFIX=/opt/nsid: the programs find libnsid through their RUNPATH (no ldconfig path).
set -u
B=$(realpath "${1:?usage: $0 BUILD_DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: mount namespaces and overlays (run as root)"; exit 77; }
T=$(mktemp -d /tmp/nsid-itest-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/shims"
for p in apt-get apt; do
        printf '#!/bin/sh\necho "%s $*" >> "%s/apt-called"\nexit 1\n' "$p" "$T" > "$T/shims/$p"
        chmod 755 "$T/shims/$p"
done

# the whole scenario in one private mount namespace; it prints TAP
unshare -m --propagation private bash -s "$B" "$src" "$T" <<'INNER'
set -u
B=$1 src=$2 T=$3
n=0 failures=0
check() { local d=$1; shift; n=$((n + 1)); if "$@"; then echo "ok $n - $d"; else failures=$((failures + 1)); echo "not ok $n - $d"; fi; }
for d in /usr/local /etc /opt; do
        w=$T/ov$(echo "$d" | tr / _)
        mkdir -p "$w/u" "$w/w" "$d"
        mount -t overlay -o "lowerdir=$d,upperdir=$w/u,workdir=$w/w" overlay "$d" || { echo "Bail out! overlay on $d"; exit 1; }
done
files() { find /usr/local /etc /opt \( -type f -o -type l \) 2>/dev/null | sort; }
files > "$T/before"
export PATH="$T/shims:$PATH"
rm -f "$B/install_manifest.txt"
make -C "$src" install BUILD="$B" > "$T/install.log" 2>&1; rc=$?
check "make install: exit 0" [ "$rc" = 0 ] || tail -20 "$T/install.log" | sed 's/^/# /'
check "make install ran neither apt-get nor apt" [ ! -e "$T/apt-called" ]
check "nsidctl runs from /usr/local/sbin with the installed libnsid" \
        sh -c "/usr/local/sbin/nsidctl --version &&
               l=\$(ldd /usr/local/sbin/nsidctl | sed -n 's/.*libnsid.so.0 => \([^ ]*\) .*/\1/p') &&
               realpath \"\$l\" | grep -q '^/usr/local/lib/'"
check "units and the udev rule where systemd and udev read local files" \
        test -f /usr/local/lib/systemd/system/nsid-idmapd.service -a -f /usr/local/lib/udev/rules.d/90-nsid-uniquifier.rules
check "the request-key rule names the installed program" \
        grep -q '^create.*id_resolver.*/usr/local/sbin/nsid-idmap ' /etc/request-key.d/nsid-idmap.conf
check "nothing under /lib/systemd or /lib/udev" sh -c "! grep -qE '^/(usr/)?lib/(systemd|udev)/' '$B/install_manifest.txt'"
make -C "$src" uninstall BUILD="$B" > "$T/uninstall.log" 2>&1; rc=$?
check "make uninstall: exit 0" [ "$rc" = 0 ] || tail -20 "$T/uninstall.log" | sed 's/^/# /'
ldconfig
files > "$T/after"
check "make uninstall leaves no file behind (/usr/local, /etc, /opt as before)" \
        diff "$T/before" "$T/after"
# (directories the install made are left when empty, as autotools' uninstall leaves them:
# which of them existed before is not known; nsid's own, include/nsid and libexec/nsid, go)
find /usr/local /etc /opt -type d -empty -newer "$T/before" 2>/dev/null | sed 's/^/# empty directory left: /'

make -C "$src" install BUILD="$B" PREFIX=/opt/nsid > "$T/install-opt.log" 2>&1; rc=$?
check "make install PREFIX=/opt/nsid: exit 0" [ "$rc" = 0 ] || tail -20 "$T/install-opt.log" | sed 's/^/# /'
check "/opt/nsid/sbin/nsidctl finds libnsid through its RUNPATH" \
        sh -c "readelf -d /opt/nsid/sbin/nsidctl | grep -q 'RUNPATH.*ORIGIN' && /opt/nsid/sbin/nsidctl --version"
make -C "$src" uninstall BUILD="$B" > /dev/null 2>&1
check "and its uninstall leaves no file behind" sh -c "files() { find /usr/local /etc /opt \( -type f -o -type l \) 2>/dev/null | sort; }; files | diff '$T/before' -"
# a missing build dependency (dpkg-query says libinih-dev is not installed): make build says
# which, and how to install it, and installs nothing
mkdir -p "$T/shim2"
printf '#!/bin/sh\nfor a; do last=$a; done\n[ "$last" = libinih-dev ] && exit 1\nexec /usr/bin/dpkg-query "$@"\n' > "$T/shim2/dpkg-query"
chmod 755 "$T/shim2/dpkg-query"
PATH="$T/shim2:$PATH" make -C "$src" build BUILD="$B" > "$T/build.log" 2>&1; rc=$?
check "make build with libinih-dev missing: fails, names it and the apt command, runs no apt" \
        sh -c "[ $rc != 0 ] && grep -q 'missing build dependencies: libinih-dev' '$T/build.log' &&
               grep -q 'apt install libinih-dev' '$T/build.log' && [ ! -e '$T/apt-called' ]"
echo "1..$n"
[ "$failures" = 0 ]
INNER
