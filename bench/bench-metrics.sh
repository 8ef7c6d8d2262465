#!/bin/bash
# bench-metrics (issue #31): what the metrics cost a lookup. nsid-idmapd of this tree against
# the same daemon built from the commit before its metrics (the parent of the commit that
# added idmapd/idmapd-metrics.c: no per-source, latency-sum or eviction counters, no totals
# kept for forgotten namespaces), in the same boot, alternately, on the same load: a
# container with 20,000 users, and one control connection sending 40,000 pipelined lookups
# (half of them names not seen before: resolved from the container's files; half cached).
# Prints the median time of each and their ratio (target: within 2%).
#   bench/bench-metrics.sh BUILD [BASE_REV]
set -euo pipefail
build=$(realpath "${1:?usage: $0 BUILD [BASE_REV]}")
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench-metrics: needs root (network namespaces)"; exit 77; }
first=$(git -C "$src" log --diff-filter=A --format=%H -- idmapd/idmapd-metrics.c | tail -n1)
base=${2:-$first~1}
T=$(mktemp -d /tmp/nsid-bench-metrics.XXXXXX)
chmod 755 "$T"
CPID='' DPID=''
cleanup() {
        [ -n "$DPID" ] && kill "$DPID" 2>/dev/null
        [ -n "$CPID" ] && { kill -9 "$CPID"; wait "$CPID"; } 2>/dev/null
        git -C "$src" worktree remove --force "$T/base" 2>/dev/null || true
        rm -rf "$T"
}
trap cleanup EXIT

echo "bench-metrics: building nsid-idmapd at $(git -C "$src" rev-parse --short "$base") (before the metrics)"
git -C "$src" worktree add --detach -q "$T/base" "$base"
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
# (the same build type as BUILD's: the two daemons differ by the metrics alone)
cmake -S "$T/base" -B "$T/base-build" -DCMAKE_BUILD_TYPE="$btype" -DNSID_VM_TESTS=OFF >/dev/null
cmake --build "$T/base-build" --target nsid-idmapd -j 2 >/dev/null
old=$T/base-build/idmapd/nsid-idmapd new=$build/idmapd/nsid-idmapd

awk 'BEGIN { print "root:x:0:0::/root:/bin/sh"; for (i = 0; i < 20000; i++) printf "u%d:x:%d:%d::/:/bin/sh\n", i, 10000 + i, 10000 + i }' >"$T/passwd"
printf 'root:x:0:\n' >"$T/group"
printf '[General]\nDomain = bench.test\n' >"$T/idmapd.conf"
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"
unshare -m -n --propagation private sh -c "
        mount --bind '$T/passwd' /etc/passwd && mount --bind '$T/group' /etc/group &&
        mount --bind '$T/idmapd.conf' /etc/idmapd.conf && touch '$T/ready' && exec sleep 100000" &
CPID=$!
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.05; done

# one run: a fresh daemon, 40,000 pipelined lookups on one connection; prints seconds
run() { # binary round
        rm -rf "$T/state"
        cat >"$T/nsid.conf" <<CONF
[idmapd]
set-identifier = no
rescan-interval = 60
cache-ttl = 600
state-dir = $T/state
CONF
        "$1" -f -q --config="$T/nsid.conf" --idmapd-conf="$T/host-idmapd.conf" --socket="$T/sock" 2>>"$T/daemon.log" &
        DPID=$!
        for _ in $(seq 200); do [ -S "$T/sock" ] && "$1" --socket="$T/sock" --ctl=status >/dev/null 2>&1 && break; sleep 0.05; done
        # the context loaded before the clock starts (the first lookup waits for it)
        "$1" --socket="$T/sock" --ctl="lookup pid:$CPID uid root@bench.test" >/dev/null
        python3 - "$T/sock" "$CPID" "$2" <<'PY'
import socket, sys, time
path, pid, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3])
# half new names (resolved from the files), half the same 100 names again (cached)
reqs = []
for i in range(20000):
    reqs.append(f"lookup pid:{pid} uid u{(i * 7919 + rnd) % 20000}@bench.test\n")
    reqs.append(f"lookup pid:{pid} user {10000 + (i % 100)}\n")
data = "".join(reqs).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
t0 = time.perf_counter()
s.sendall(data)
buf = b""
while buf.count(b"\n") < len(reqs):
    chunk = s.recv(1 << 20)
    if not chunk:
        break
    buf += chunk
t = time.perf_counter() - t0
lines = buf.split(b"\n")[:-1]
bad = [l for l in lines if not l.startswith(b"ok ")]
if len(lines) != len(reqs) or bad:
    sys.exit(f"{len(lines)} replies of {len(reqs)}, {len(bad)} not ok: {bad[:3]}")
print(f"{t:.4f}")
PY
        kill "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
        rm -f "$T/sock"
}

rounds=${NSID_BENCH_ROUNDS:-7}
o=() n=()
for r in $(seq "$rounds"); do
        # alternate which goes first
        if [ $((r % 2)) = 1 ]; then o+=("$(run "$old" "$r")"); n+=("$(run "$new" "$r")")
        else n+=("$(run "$new" "$r")"); o+=("$(run "$old" "$r")"); fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mo=$(median "${o[@]}") mn=$(median "${n[@]}")
echo "bench-metrics: 40,000 pipelined lookups (20,000 resolved from a 20,000-user container, 20,000 cached), $rounds rounds each, alternating"
echo "  before the metrics ($(git -C "$src" rev-parse --short "$base")): ${o[*]}"
echo "  with the metrics   (this tree):   ${n[*]}"
awk -v a="$mn" -v b="$mo" 'BEGIN { printf "figure: metrics on/off lookup time: %.3f s / %.3f s = %.3fx (target <= 1.02x)\n", a, b, a / b }'
