#!/bin/bash
# What nsid-idmap writes to the syslog socket, read by a real listener on /dev/log.
#
# nsid-idmap sends each line as one datagram "<PRI>nsid-idmap[PID]: text" without glibc's
# time stamp (nsid-idmap(8), -v), and falls back to syslog(3) when /dev/log is a stream
# socket. The listener owns /dev/log in a private mount namespace with its own /dev (a
# tmpfs with /dev/null), so the host's logging is not touched; the helper runs in upcall
# mode (stderr not a terminal, no -v) with a key serial it must refuse, which it logs at
# LOG_ERR (facility daemon: <27>) and exits 1.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmap")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a private /dev)"; exit 0; }
command -v python3 >/dev/null || { echo "FAIL: python3 missing"; exit 1; }

T=$(mktemp -d /tmp/nsid-itest-syslog.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

cat >"$T/listen.py" <<'PY'
import os, socket, sys
kind, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o666)
if kind == "dgram":
    open(out + ".ready", "w").close()
    data = s.recv(65536)
else:
    s.listen(1)
    open(out + ".ready", "w").close()
    c, _ = s.accept()
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
open(out, "wb").write(data)
PY

# run KIND: the helper's message through a KIND (dgram|stream) listener into $T/KIND.out;
# its exit status into $T/KIND.rc
run() {
        unshare -m --propagation private bash -c '
                set -e
                mount -t tmpfs -o mode=0755 nsid-test-dev /dev
                mknod -m 666 /dev/null c 1 3
                python3 "$1/listen.py" "$2" /dev/log "$1/$2.out" & lp=$!
                for _ in $(seq 100); do [ -e "$1/$2.out.ready" ] && break; sleep 0.05; done
                rc=0
                "$3" -t 600 0 uid:someone@example.test </dev/null >/dev/null 2>/dev/null || rc=$?
                echo "$rc" >"$1/$2.rc"
                for _ in $(seq 100); do [ -e "$1/$2.out" ] && break; sleep 0.05; done
                kill "$lp" 2>/dev/null || true
        ' _ "$T" "$1" "$bin"
}

run dgram
out=$(tr '\0' '\n' <"$T/dgram.out" 2>/dev/null || true)
[ "$(cat "$T/dgram.rc")" = 1 ] && pass "refused serial: exit status 1" || fail "exit status $(cat "$T/dgram.rc")"
if [[ "$out" =~ ^'<27>nsid-idmap['[0-9]+']: invalid key serial "0": '.+$ ]]; then
        pass "datagram: $out"
else
        fail "datagram not '<27>nsid-idmap[PID]: invalid key serial \"0\": ...': '$out'"
fi
[ "$(wc -l <<<"$out")" = 1 ] && pass "one line, no time stamp, no trailing newline" ||
        fail "more than one line: '$out'"

# a stream /dev/log (older syslog daemons): glibc's syslog(), with its time stamp
run stream
out=$(tr '\0' '\n' <"$T/stream.out" 2>/dev/null | head -n 1 || true)
stamped='^<27>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]{8} nsid-idmap\[[0-9]+\]: invalid key serial "0": .+$'
if [[ "$out" =~ $stamped ]]; then
        pass "stream socket, through syslog(3): $out"
else
        fail "stream socket: '$out'"
fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
