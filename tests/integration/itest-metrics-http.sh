#!/bin/bash
# nsidctl metrics --http (issue #31, the opt-in listener) behind real socket activation:
# systemd-socket-activate --accept --inetd, the way nsid-metrics.socket (Accept=yes) hands
# each connection to nsid-metrics-http@.service. A scrape gets the same exposition as
# `nsidctl metrics` (promtool clean); HEAD no body; other methods 405, other paths 404; and
# what a hostile peer sends: garbage, control bytes, a head larger than 8 KiB, nothing at all
# (answered 400 within the read limit), twenty at once.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
build=$(realpath "$build")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsidctl metrics looks at every network namespace"; exit 77; }
command -v systemd-socket-activate >/dev/null || { echo "SKIP: systemd-socket-activate missing (apt install systemd)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl missing (apt install curl)"; exit 77; }
ctl=$build/nsidctl/nsidctl
T=$(mktemp -d /tmp/nsid-itest-mhttp.XXXXXX)
APID=''
cleanup() {
        [ -n "$APID" ] && kill "$APID" 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT
fails=0 passes=0 skips=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }
export NSID_STATE_DIR=$T/state
mkdir -p "$NSID_STATE_DIR"
# a port of its own: the first free one from 19853
port=19853
while (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
systemd-socket-activate -l "127.0.0.1:$port" --accept --inetd \
        "$ctl" --quiet --socket="$T/no-daemon.sock" metrics --http 2>"$T/activate.err" &
APID=$!
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
URL=http://127.0.0.1:$port

code=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' "$URL/metrics")
[ "$code" = 200 ] && pass "GET /metrics: 200" || fail "GET /metrics: $code"
grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$T/headers" &&
        pass "the exposition format's content type" || fail "headers: $(cat "$T/headers")"
"$ctl" --quiet --socket="$T/no-daemon.sock" metrics >"$T/direct" 2>/dev/null
if diff <(grep -v '^#' "$T/body" | cut -d' ' -f1 | sort) <(grep -v '^#' "$T/direct" | cut -d' ' -f1 | sort) >/dev/null; then
        pass "the same series as nsidctl metrics ($(grep -vc '^#' "$T/body"))"
else
        fail "the series differ from nsidctl metrics"
fi
grep -qx 'nsid_idmapd_up 0' "$T/body" && pass "no daemon: nsid_idmapd_up 0" || fail "nsid_idmapd_up"
len=$(sed -n 's/^Content-Length: \([0-9]*\)\r$/\1/Ip' "$T/headers")
[ "$len" = "$(stat -c %s "$T/body")" ] && pass "Content-Length is the body's ($len)" || fail "Content-Length $len, body $(stat -c %s "$T/body")"
if command -v promtool >/dev/null; then
        promtool check metrics <"$T/body" >"$T/promtool" 2>&1 && pass "promtool check metrics: clean" || fail "promtool: $(cat "$T/promtool")"
else
        skip "promtool missing"
fi
head_after=$(python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(15)
s.sendall(b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
r = b""
while True:
    k = s.recv(65536)
    if not k:
        break
    r += k
h, _, body = r.partition(b"\r\n\r\n")
print(h.split(b"\r\n")[0].decode(), len(body))
PY
)
[ "$head_after" = "HTTP/1.1 200 OK 0" ] && pass "HEAD /metrics: 200, no body" || fail "HEAD: $head_after"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics?x=1")
[ "$code" = 200 ] && pass "a query string is ignored" || fail "query: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/metrics")
[ "$code" = 405 ] && pass "POST: 405" || fail "POST: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/")
[ "$code" = 404 ] && pass "GET /: 404" || fail "GET /: $code"

# hostile peers, raw: what comes back, and how soon
raw() { # raw BYTES-PRINTF-FORMAT: the status line of the answer
        python3 - "$port" "$1" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(15)
data = sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1")
t = time.time()
if data:
    s.sendall(data)
try:
    r = s.recv(200)
except socket.timeout:
    r = b"TIMEOUT"
print(r.split(b"\r\n")[0].decode("latin-1", "replace"), round(time.time() - t, 1))
PY
}
set -- $(raw 'garbage\r\n\r\n')
[ "$2 $3" = "400 Bad" ] && pass "garbage: 400" || fail "garbage: $*"
set -- $(raw 'GET /metrics\x01 HTTP/1.1\r\n\r\n')
[ "$2" = 400 ] && pass "a control byte in the request line: 400" || fail "control byte: $*"
set -- $(raw "GET /metrics HTTP/1.1\\r\\nX: $(head -c 9000 /dev/zero | tr '\0' a)\\r\\n\\r\\n")
[ "$2" = 400 ] && pass "a head over 8 KiB: 400" || fail "long head: $*"
out=$(raw '')
set -- $out
[ "$2" = 400 ] && awk -v t="${*: -1}" 'BEGIN {exit !(t <= 7)}' && pass "a peer that sends nothing: 400 after ${*: -1} s" ||
        fail "silent peer: $out"
pids=()
for i in $(seq 20); do curl -s -m 60 -o "$T/par$i" -w '%{http_code}\n' "$URL/metrics" >"$T/code$i" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || true; done
ok=$(cat "$T"/code* | grep -c '^200$' || true)
[ "$ok" = 20 ] && pass "twenty scrapes at once: all 200" || fail "twenty at once: $ok answered 200"
echo "$passes passed, $fails failed, $skips skipped"
[ "$fails" = 0 ] || exit 1
