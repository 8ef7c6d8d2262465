#!/bin/bash
# nsid-idmapd stopped (SIGTERM) while a resolver thread is still busy: a container whose
# /etc/passwd lies on a FUSE mount that never answers keeps its resolver waiting for the
# bounded worker that reads it. The daemon waits 2 s for its threads, then must leave
# without running the libraries' exit handlers under the busy thread: exit 0, its socket
# removed, one log line saying how many threads it left; never a crash (139).
# All real: the daemon and its control socket, a container made with unshare (own mount and
# network namespace), a FUSE mount (/dev/fuse, a server that never reads its requests).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmapd")
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd, namespaces, a FUSE mount (run as root)"; exit 77; }
[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse (modprobe fuse)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

T=$(mktemp -d /tmp/nsid-itest-shutdown.XXXXXX)
chmod 755 "$T"
S="$T/idmapd.sock"
pids=()
cleanup() {
        [ -n "${DPID:-}" ] && kill -9 "$DPID" 2>/dev/null || true
        [ -s "$T/fuse-pid" ] && pids+=("$(cat "$T/fuse-pid")")
        for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        # the FUSE mount lives in the container's mount namespace: gone with its processes
        rm -rf "$T"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
ctl() { "$bin" --socket="$S" --ctl="$1" || true; }

cat >"$T/nsid.conf" <<CONF
[idmapd]
request-timeout-ms = 300
set-identifier = no
state-dir = $T/state
CONF
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"

# the FUSE "server" (lib.sh): every lookup below the DIR it mounts waits
write_fuse_hang "$T/fuse-hang.py"
# the container's /etc: a directory whose passwd points into the hung mount
mkdir -p "$T/etc/hung"
ln -s hung/passwd "$T/etc/passwd"
printf 'root:x:0:\n' >"$T/etc/group"
printf '[General]\nDomain = c.test\n' >"$T/etc/idmapd.conf"
unshare -m -n --propagation private sh -c "
        mount --bind '$T/etc' /etc || exit 1
        python3 '$T/fuse-hang.py' /etc/hung '$T/fuse-ready' &
        echo \$! >'$T/fuse-pid'
        exec sleep 1000" </dev/null >"$T/container.out" 2>&1 &
CPID=$!
pids+=("$CPID")
for _ in $(seq 200); do [ -e "$T/fuse-ready" ] && break; sleep 0.05; done
[ -e "$T/fuse-ready" ] || { cat "$T/container.out"; echo "FAIL: the FUSE mount did not come up"; exit 1; }

"$bin" -f --config="$T/nsid.conf" --idmapd-conf="$T/host-idmapd.conf" --socket="$S" \
        2>"$T/daemon.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$S" ] && ctl status >/dev/null && break; sleep 0.05; done
[ -S "$S" ] || { cat "$T/daemon.log"; echo "FAIL: daemon did not start"; exit 1; }
pass "daemon started (pid $DPID)"

# the container's lookup: answered (an error) at the request timeout, its resolver still busy
got=$(ctl "lookup pid:$CPID uid alice@c.test")
case "$got" in "error 110 "*|"negative "*) pass "hung container: '$got'" ;; *) fail "hung container: '$got'" ;; esac
# the host's resolver is not held up
case "$(ctl "lookup host user 0")" in "ok root@host.test "*) pass "host answered meanwhile" ;; *) fail "host not answered" ;; esac

start=$(date +%s%N)
kill -TERM "$DPID"
wait "$DPID" && rc=0 || rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
DPID=
[ "$rc" = 0 ] && pass "SIGTERM with a busy resolver: exit 0 after $ms ms" || fail "SIGTERM with a busy resolver: exit $rc after $ms ms"
[ "$ms" -lt 10000 ] && pass "left within 10 s" || fail "took $ms ms to leave"
[ ! -e "$S" ] && pass "socket removed" || fail "socket left behind"
if grep -q "resolver thread(s) still busy after 2 s" "$T/daemon.log"; then
        pass "logged: $(grep -o '[0-9]* resolver thread(s) still busy[^;]*' "$T/daemon.log")"
else
        fail "no line about the busy thread"; tail -n 20 "$T/daemon.log" >&2
fi
echo "$fails failure(s)"
[ "$fails" = 0 ]
