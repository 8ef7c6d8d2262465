#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The files that wire nsid-uniquifier into the system, as `make install` lays them out:
# udev rule, OCI hooks.d entry, LXC hook, systemd units, man page; they name the installed
# program and follow the formats their consumers read.
# usage: itest-uniquifier-install.sh BUILD_DIR
set -u
B=${1:?usage: $0 BUILD_DIR}
T=$(mktemp -d /tmp/itest-uniq-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0 failures=0
check() { local d=$1; shift; n=$((n + 1)); if "$@"; then echo "ok $n - $d"; else failures=$((failures + 1)); echo "not ok $n - $d"; fi; }

DESTDIR=$T cmake --install "$B" --prefix /usr > "$T/install.log" 2>&1
check "cmake --install succeeds" test $? = 0 || sed 's/^/# /' "$T/install.log" | tail -20
udevdir=$(pkg-config --variable=udevdir udev)
R=$T$udevdir/rules.d/90-nsid-uniquifier.rules
check "udev rule installed in udev's rules.d ($udevdir)" test -f "$R"
rule=$(grep -v '^#' "$R" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
check "udev rule matches ACTION add, KERNEL nfs_client" grep -q 'ACTION=="add".*KERNEL=="nfs_client"' <<<"$rule"
check "udev rule never writes ATTR{identifier} (host udev sees the host's)" bash -c "! grep -q 'ATTR{identifier}' <<<'$rule'"
check "udev rule runs the installed program's reconcile" grep -q '/usr/sbin/nsid-uniquifier --quiet reconcile' <<<"$rule"
J=$T/usr/share/containers/oci/hooks.d/nsid-uniquifier.json
check "OCI hooks.d entry installed" test -f "$J"
check "hooks.d entry follows the oci-hooks 1.0.0 schema, stage createRuntime" python3 - "$J" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
assert h["version"] == "1.0.0", h
assert h["stages"] == ["createRuntime"], h
assert h["hook"]["path"] == "/usr/sbin/nsid-uniquifier", h
assert h["hook"]["args"][0] == "nsid-uniquifier" and "oci-hook" in h["hook"]["args"], h
assert h["when"] == {"always": True}, h
assert isinstance(h["hook"].get("timeout", 1), int)
PY
L=$T/usr/share/lxc/hooks/nsid-uniquifier
check "LXC hook installed, executable" test -x "$L"
check "LXC hook execs the installed program's lxc-hook" grep -q '^exec /usr/sbin/nsid-uniquifier --quiet lxc-hook "\$@"$' "$L"
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
check "boot reconcile unit installed" grep -q '^ExecStart=/usr/sbin/nsid-uniquifier --quiet reconcile$' "$T$unitdir/nsid-uniquifier-reconcile.service"
check "reconcile timer installed" test -f "$T$unitdir/nsid-uniquifier-reconcile.timer"
check "program installed in sbin" test -x "$T/usr/sbin/nsid-uniquifier"
M=$T/usr/share/man/man8/nsid-uniquifier.8
check "man page installed in man8" test -s "$M"
w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$M" 2>&1 >/dev/null)
check "man page renders without warnings" test -z "$w"
[ -z "$w" ] || echo "# $w"
echo "1..$n"
[ "$failures" = 0 ]
