#!/bin/bash
# The shipped systemd units, and the transient unit the udev rule starts, scored by
# `systemd-analyze security` (issue #29, item 9), each against a bound, the figures printed:
#  - nsid-idmapd.service, nsid-uniquifier-reconcile.service, nsid-metrics.service,
#    nsid-server-watch.service as
#    installed (paths filled in);
#  - the udev rule's `systemd-run -p ...` properties, written out as the unit systemd-run
#    would make, scored the same way, and equal to the reconcile unit's hardening (one list);
#  - systemd-analyze verify accepts each unit.
# Offline scoring (--offline=true, systemd 250+) reads the unit files: no systemd as PID 1 is
# needed (itest-idmapd-caps.sh and itest-uniquifier.sh run the programs under the same
# capability bounds, no_new_privs and read-only system directories).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing (apt install systemd)"; exit 77; }
systemd-analyze security --help 2>/dev/null | grep -q -- --offline ||
        { echo "SKIP: systemd-analyze security has no --offline (systemd < 250)"; exit 77; }
T=$(mktemp -d /tmp/nsid-itest-units.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
# a stand-in program at the path the units name (verify wants it executable)
mkdir -p "$T/sbin"
for p in nsid-idmapd nsid-uniquifier nsidctl; do printf '#!/bin/sh\n' >"$T/sbin/$p"; chmod 755 "$T/sbin/$p"; done

sed "s|@NSID_IDMAPD_PATH@|$T/sbin/nsid-idmapd|" "$src/idmapd/nsid-idmapd.service.in" >"$T/nsid-idmapd.service"
sed "s|@SBINDIR@|$T/sbin|" "$src/udev-rules/nsid-uniquifier-reconcile.service.in" >"$T/nsid-uniquifier-reconcile.service"
sed "s|@SBINDIR@|$T/sbin|" "$src/nsidctl/nsid-metrics.service.in" >"$T/nsid-metrics.service"
sed "s|@SBINDIR@|$T/sbin|" "$src/nsidctl/nsid-server-watch.service.in" >"$T/nsid-server-watch.service"
sed "s|@SBINDIR@|$T/sbin|" "$src/nsidctl/nsid-metrics-http@.service.in" >"$T/nsid-metrics-http@.service"
# the rule's RUN: systemd-run's -p NAME=VALUE, as a unit file (quotes are udev's)
run=$(sed -n 's/.*RUN+="\(.*\)".*/\1/p' "$src/udev-rules/90-nsid-uniquifier.rules.in")
[ -n "$run" ] || { echo "FAIL: no RUN in the udev rule"; exit 1; }
python3 - "$run" "$T/sbin" >"$T/nsid-uniquifier-udev.service" <<'PY'
import shlex, sys
args = shlex.split(sys.argv[1])
assert args[0] == "/usr/bin/systemd-run", args[0]
props, i = [], 1
while i < len(args):
    if args[i] == "-p":
        props.append(args[i + 1]); i += 2
    elif args[i].startswith("--"):
        i += 1
    else:
        break
cmd = " ".join(args[i:]).replace("@SBINDIR@", sys.argv[2])
print("[Unit]\nDescription=the transient unit of 90-nsid-uniquifier.rules\n\n[Service]\nType=oneshot")
print("ExecStart=" + cmd)
for p in props:
    print(p)
PY

# hardening lines of the reconcile unit vs the rule's properties: one list
keys() { grep -E '^(UMask|CapabilityBoundingSet|NoNewPrivileges|Protect[A-Za-z]*|PrivateTmp|Restrict[A-Za-z]*|LockPersonality|MemoryDenyWriteExecute|SystemCall[A-Za-z]*)=' "$1" | sort; }
if diff <(keys "$T/nsid-uniquifier-reconcile.service") <(keys "$T/nsid-uniquifier-udev.service") >"$T/diff"; then
        pass "the udev rule's transient unit has the reconcile unit's hardening, line for line"
else
        fail "the rule's properties and the reconcile unit differ: $(cat "$T/diff")"
fi

score() { systemd-analyze security --offline=true "$1" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'; }
# RestrictSUIDSGID= makes systemd answer openat2() with ENOSYS, and nsid reads every
# container file with openat2(RESOLVE_IN_ROOT): none of the three may set it
for u in nsid-idmapd nsid-uniquifier-reconcile nsid-uniquifier-udev nsid-metrics nsid-server-watch nsid-metrics-http@; do
        if grep -qE '^RestrictSUIDSGID=' "$T/$u.service"; then
                fail "$u.service sets RestrictSUIDSGID= (openat2() would fail with ENOSYS)"
        else
                pass "$u.service: no RestrictSUIDSGID= (it would take openat2() away)"
        fi
done
# (0.1-0.2 above the bounds of 6 Dec: RestrictSUIDSGID= is left out since a real systemd
# showed it makes openat2() fail with ENOSYS, which every container file read needs)
for pair in nsid-idmapd:5.1 nsid-uniquifier-reconcile:4.5 nsid-uniquifier-udev:4.4 nsid-metrics:4.3 nsid-server-watch:3.0 nsid-metrics-http@:4.3; do
        u=${pair%%:*} bound=${pair#*:}
        s=$(score "$T/$u.service")
        echo "figure: systemd-analyze security $u.service: $s (bound $bound)"
        if [ -n "$s" ] && awk -v s="$s" -v b="$bound" 'BEGIN { exit !(s <= b) }'; then
                pass "$u.service: exposure $s <= $bound"
        else
                fail "$u.service: exposure '$s', bound $bound"
                systemd-analyze security --offline=true "$T/$u.service" 2>&1 | grep '✗' | head -20 >&2 || true
        fi
        out=$(systemd-analyze verify --man=no "$T/$u.service" 2>&1 || true)
        [ -z "$out" ] && pass "$u.service: systemd-analyze verify accepts it" || fail "$u.service: verify: $out"
done
echo "$fails failure(s)"
[ "$fails" = 0 ]
