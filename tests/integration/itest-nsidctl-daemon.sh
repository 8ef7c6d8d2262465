#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nsidctl with a real nsid-idmapd: its statistics over the control socket in `status`, the
# domain it uses for a container (its own idmapd.conf, bind-mounted in a real mount
# namespace), and `doctor` on rpc.idmapd and nsid-idmapd both serving the host.
#
# The daemon runs on a private socket with set-identifier = no and host-pipes = no, so it
# changes nothing on the host. FAKE: "rpc.idmapd" is a copy of sleep(1) under that name
# (doctor finds daemons by process name). The host has no nfs module: identifiers read
# through the test hook NSID_TEST_SYSFS_NFS_CLIENT_DIR (see itest-nsidctl.sh); none are
# asserted here.
#
# usage: itest-nsidctl-daemon.sh BUILD_DIR
set -u

B=${1:?usage: $0 BUILD_DIR}
C=$B/nsidctl/nsidctl
D=$B/idmapd/nsid-idmapd
for x in "$C" "$D"; do [ -x "$x" ] || { echo "Bail out! $x not built"; exit 1; }; done
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd, namespaces (run as root)"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

T=$(mktemp -d /tmp/itest-nsidctl-daemon.XXXXXX)
S=$T/idmapd.sock
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap "exit 1" INT TERM

export NSID_STATE_DIR=$T/state
export NSID_TEST_SYSFS_NFS_CLIENT_DIR=$T/fake
mkdir -p "$T/fake" "$T/c1"

n=0
failures=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
py() { "$PY" -c "import json,sys; j=json.load(open('$T/out')); sys.exit(0 if ($1) else 1)"; }
export T PY
export -f py

cat >"$T/nsid.conf" <<EOF
[idmapd]
rescan-interval = 1
refresh-interval = 1
set-identifier = no
host-pipes = no
state-dir = $T/state
idmapd-conf = $T/host-idmapd.conf
EOF
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"
printf 'root:x:0:0:root:/root:/bin/sh\nalice:x:4001:4001::/:/bin/sh\n' >"$T/c1/passwd"
printf 'root:x:0:\nalice:x:4001:\n' >"$T/c1/group"
printf '[General]\nDomain = c1.test\n' >"$T/c1/idmapd.conf"

# a container: its own mount and network namespaces with its own passwd, group, idmapd.conf
unshare -m -n --propagation private sh -c "
    mount --bind '$T/c1/passwd' /etc/passwd &&
    mount --bind '$T/c1/group' /etc/group &&
    mount --bind '$T/c1/idmapd.conf' /etc/idmapd.conf &&
    touch '$T/c1.ready' && exec sleep 100000" </dev/null >/dev/null 2>&1 &
CPID=$!
PIDS+=("$CPID")
for _ in $(seq 200); do [ -e "$T/c1.ready" ] && break; sleep 0.02; done
CINO=$(stat -L -c %i "/proc/$CPID/ns/net")

"$C" --json --socket="$S" status >"$T/out"
check "status without the daemon: not running, the reason" \
    py "not j['idmapd']['running'] and j['idmapd']['error'] and j['idmapd']['socket'] == '$S'"

"$D" -f --config="$T/nsid.conf" --socket="$S" 2>"$T/daemon.log" &
DPID=$!
PIDS+=("$DPID")
for _ in $(seq 200); do [ -S "$S" ] && "$D" --socket="$S" --ctl=status >/dev/null 2>&1 && break; sleep 0.05; done
[ -S "$S" ] || { cat "$T/daemon.log"; echo "Bail out! nsid-idmapd did not start"; exit 1; }
"$D" --socket="$S" --ctl="register $CPID" >/dev/null
"$D" --socket="$S" --ctl="lookup pid:$CPID uid alice@c1.test" >"$T/lookup"
check "the daemon answers for the container (alice = 4001 there)" grep -q '^ok 4001 ' "$T/lookup"

"$C" --json --socket="$S" --config="$T/nsid.conf" status >"$T/out"; r=$?
check "status: the daemon runs, its pid" bash -c "[ $r = 0 ] && py \"j['idmapd']['running'] and j['idmapd']['pid'] == $DPID\""
check "status: the container's statistics come from the daemon" \
    py "[x for x in j['namespaces'] if x['netns'] == $CINO][0]['idmapd']['ctl_lookups'] >= 1"
check "status: the container's idmap domain is the daemon's (its own idmapd.conf)" \
    py "[x for x in j['namespaces'] if x['netns'] == $CINO][0]['idmap_domain'] == 'c1.test' and [x for x in j['namespaces'] if x['netns'] == $CINO][0]['idmap_domain_source'] == 'nsid-idmapd'"
check "status: the host's domain from the configured idmapd.conf" py "j['host_idmap_domain'] == 'host.test'"
"$C" --socket="$S" --config="$T/nsid.conf" status >"$T/out"
check "status (text): statistics columns and the container's row" \
    bash -c "grep -q 'REQ' '$T/out' && grep -q '^$CINO .*c1.test' '$T/out' && grep -q 'nsid-idmapd.*running, pid $DPID' '$T/out'"

"$C" --json --socket="$S" --config="$T/nsid.conf" doctor >"$T/out"
check "doctor: nsid-idmapd answers" py "any(f['check'] == 'idmapd' and f['severity'] == 'ok' for f in j['findings'])"
check "doctor: the container's domain differs from the host's" \
    py "any(f['check'] == 'idmap-domain' and 'netns $CINO' in f['message'] and 'c1.test' in f['message'] for f in j['findings'])"

# rpc.idmapd on the host next to nsid-idmapd
cp "$(command -v sleep)" "$T/rpc.idmapd"
"$T/rpc.idmapd" 100000 </dev/null >/dev/null 2>&1 &
RPID=$!
PIDS+=("$RPID")
: >"$T/empty.conf"; chmod 644 "$T/empty.conf"
"$C" --json --socket="$S" --config="$T/empty.conf" doctor >"$T/out"; r=$?
check "doctor: rpc.idmapd and nsid-idmapd both serving the host: error naming both, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'idmapd' and f['severity'] == 'error' and '$RPID' in f['message'] and '$DPID' in f['message'] and 'host-pipes' in f['fix'] for f in j['findings'])\""
"$C" --json --socket="$S" --config="$T/nsid.conf" doctor >"$T/out"
check "doctor: with host-pipes = no they do not compete" \
    py "not any(f['check'] == 'idmapd' and f['severity'] == 'error' for f in j['findings'])"
{ kill -9 "$RPID"; wait "$RPID"; } 2>/dev/null

kill "$DPID"
wait "$DPID" 2>/dev/null
"$C" --json --socket="$S" --config="$T/nsid.conf" doctor >"$T/out"
check "doctor: the daemon gone" py "not any(f['check'] == 'idmapd' and f['severity'] == 'ok' for f in j['findings'])"

echo "1..$n"
[ "$failures" = 0 ]
