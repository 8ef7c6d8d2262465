#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nsid-idmapd memory: the daemon's RSS with 100 network namespaces and 100,000 cached answers
# (target < 16 MiB). Runs on this host (no NFS needed): 100 real containers (unshare -m -n,
# each with its own /etc/passwd, /etc/group and idmapd.conf bind-mounted in its own mount
# namespace), each asked 1,000 distinct questions (uid/gid by name, user/group by id) over the
# control socket, the same lookup the kernel's upcalls go through (cache, per-namespace
# resolver thread). Prints RSS before and after, and where it goes (smaps_rollup, arenas).
#
# usage: bench-idmapd-mem.sh BUILD_DIR   (env BENCH_NS=100, BENCH_PER_NS=1000)
set -u
B=${1:?usage: $0 BUILD_DIR}
D=$(realpath "$B/idmapd/nsid-idmapd")
N=${BENCH_NS:-100}
PER=${BENCH_PER_NS:-1000}
[ -x "$D" ] || { echo "bench: $D not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench: needs root (namespaces)" >&2; exit 1; }

T=$(mktemp -d /tmp/nsid-bench-idmapd.XXXXXX)
chmod 755 "$T"
S=$T/idmapd.sock
pids=()
DPID=
cleanup() {
        {
                [ -n "$DPID" ] && kill -9 "$DPID"
                for p in "${pids[@]}"; do kill -9 "$p"; done
                wait
        } 2>/dev/null
        rm -rf "$T"
}
# BENCH_DEBUG=1 leaves the daemon, the containers and the directory behind for inspection
[ -n "${BENCH_DEBUG:-}" ] || trap cleanup EXIT INT TERM

users=$((PER / 4))
cat >"$T/nsid.conf" <<CONF
[idmapd]
cache-ttl = 3600
negative-ttl = 3600
request-timeout-ms = 10000
rescan-interval = 3600
refresh-interval = 3600
set-identifier = no
host-pipes = no
state-dir = $T/state
CONF
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"
# the containers' files: $users users and groups each, the same names, other ids per container
mkdir -p "$T/ready"
for i in $(seq 1 "$N"); do
        d=$T/c$i
        mkdir -p "$d"
        awk -v n="$users" -v base=$((100000 + i * 1000)) 'BEGIN {
                print "root:x:0:0:root:/root:/bin/sh"
                for (u = 0; u < n; u++) printf "user%d:x:%d:%d::/home/user%d:/bin/sh\n", u, base + u, base + u, u }' >"$d/passwd"
        awk -v n="$users" -v base=$((100000 + i * 1000)) 'BEGIN {
                print "root:x:0:"
                for (u = 0; u < n; u++) printf "group%d:x:%d:user%d\n", u, base + u, u }' >"$d/group"
        printf '[General]\nDomain = c%d.bench.test\n' "$i" >"$d/idmapd.conf"
done

"$D" -f --config="$T/nsid.conf" --idmapd-conf="$T/host-idmapd.conf" --socket="$S" 2>"$T/daemon.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$S" ] && "$D" --socket="$S" --ctl=status >/dev/null 2>&1 && break; sleep 0.05; done
[ -S "$S" ] || { cat "$T/daemon.log" >&2; echo "bench: daemon did not start" >&2; exit 1; }

rss() { awk '/^VmRSS:/ {print $2}' /proc/$DPID/status; }
rss_start=$(rss)

for i in $(seq 1 "$N"); do
        d=$T/c$i
        # (in a subshell: not a job of this shell, which would report each one killed)
        (unshare -m -n --propagation private sh -c "
                mount --bind '$d/passwd' /etc/passwd &&
                mount --bind '$d/group' /etc/group &&
                mount --bind '$d/idmapd.conf' /etc/idmapd.conf &&
                echo \$\$ >'$T/ready/c$i' && exec sleep 100000" </dev/null >/dev/null 2>&1 &)
done
for _ in $(seq 400); do [ "$(ls "$T/ready" | wc -l)" -ge "$N" ] && break; sleep 0.05; done
for i in $(seq 1 "$N"); do pids+=("$(cat "$T/ready/c$i")"); done
printf '%s\n' "${pids[@]}" >"$T/pids"

# one question per namespace first: discovery, resolver threads and user databases loaded
python3 - "$S" "$T/pids" <<'PY' || { echo "bench: first lookups failed" >&2; exit 1; }
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rwb")
for i, pid in enumerate(open(sys.argv[2]).read().split(), 1):
    # (a name first: the very first id -> name question of a namespace is answered negative,
    # its uid_map read only after it was needed; reported against idmapd-resolve.c)
    f.write(b"lookup pid:%s uid user0@c%d.bench.test\n" % (pid.encode(), i))
    f.flush()
    r = f.readline()
    assert r.startswith(b"ok %d " % (100000 + i * 1000)), r
PY
sleep 1
rss_loaded=$(rss)
"$D" --socket="$S" --ctl="flush all" >/dev/null

t0=$(date +%s%N)
python3 - "$S" "$T/pids" "$users" <<'PY' || { echo "bench: lookups failed" >&2; exit 1; }
import socket, sys
sock, pidfile, users = sys.argv[1], sys.argv[2], int(sys.argv[3])
pids = open(pidfile).read().split()
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
f = s.makefile("rwb")
bad = 0
for i, pid in enumerate(pids, 1):
    dom = "c%d.bench.test" % i
    base = 100000 + i * 1000
    reqs = []
    for u in range(users):
        reqs.append(b"lookup pid:%s uid user%d@%s\n" % (pid.encode(), u, dom.encode()))
        reqs.append(b"lookup pid:%s gid group%d@%s\n" % (pid.encode(), u, dom.encode()))
        reqs.append(b"lookup pid:%s user %d\n" % (pid.encode(), base + u))
        reqs.append(b"lookup pid:%s group %d\n" % (pid.encode(), base + u))
    f.write(b"".join(reqs))
    f.flush()
    for _ in reqs:
        r = f.readline()
        if not r.startswith(b"ok "):
            bad += 1
if bad:
    print("bench: %d lookups did not answer ok" % bad, file=sys.stderr)
    sys.exit(1)
PY
t1=$(date +%s%N)
sleep 1
rss_full=$(rss)
hwm=$(awk '/^VmHWM:/ {print $2}' /proc/$DPID/status)
threads=$(awk '/^Threads:/ {print $2}' /proc/$DPID/status)
"$D" --socket="$S" --status --json >"$T/status.json"
read -r nns entries <<<"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ns = [n for n in d["namespaces"] if n.get("context") == "container"]
print(len(ns), sum(n["cache_entries"] for n in ns))' "$T/status.json")"
anon=$(awk '/^Anonymous:/ {print $2}' /proc/$DPID/smaps_rollup)
file=$(awk '/^Rss:/ {r=$2} /^Anonymous:/ {a=$2} END {print r - a}' /proc/$DPID/smaps_rollup)
heap=$(awk '/\[heap\]/ {h=1; next} /^[0-9a-f]+-/ {h=0} h && /^Rss:/ {s+=$2} END {print s+0}' /proc/$DPID/smaps)
# anonymous mappings that are not the main heap or a stack: thread stacks and malloc arenas
other=$((anon - heap))
[ -n "${BENCH_SMAPS:-}" ] && cp /proc/$DPID/smaps "$BENCH_SMAPS"
# BENCH_MALLOC_STATS=1: glibc's own account of the heap (in use vs free), through gdb
if [ -n "${BENCH_MALLOC_STATS:-}" ]; then
        gdb -p "$DPID" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1
        sleep 0.2
        grep -A3 "^Total (incl. mmap)" "$T/daemon.log" | sed 's/^/malloc_stats: /'
fi
"$D" --socket="$S" --ctl="flush all" >/dev/null
sleep 1
rss_flushed=$(rss)

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
echo
echo "nsid-idmapd memory, $(uname -r), $N container namespaces x $PER lookups"
echo "lookups: $((N * PER)) in $(( (t1 - t0) / 1000000 )) ms; namespaces served: $nns; cached entries: $entries; threads: $threads"
printf '%-44s %12s\n' "state" "RSS"
printf '%-44s %12s\n' "started, no namespace" "$(mib "$rss_start")"
printf '%-44s %12s\n' "$N namespaces, databases loaded, no cache" "$(mib "$rss_loaded")"
printf '%-44s %12s\n' "$nns namespaces, $entries entries cached" "$(mib "$rss_full")"
printf '%-44s %12s\n' "  of which file-backed (code, libraries)" "$(mib "$file")"
printf '%-44s %12s\n' "  of which [heap] (main arena)" "$(mib "$heap")"
printf '%-44s %12s\n' "  of which other anonymous (stacks, arenas)" "$(mib "$other")"
printf '%-44s %12s\n' "peak (VmHWM)" "$(mib "$hwm")"
printf '%-44s %12s\n' "after flush all" "$(mib "$rss_flushed")"
verdict=PASS
[ "$rss_full" -lt 16384 ] || verdict=FAIL
echo "target: RSS < 16 MiB with $N namespaces and 100,000 cached entries: $verdict"
[ "$entries" -ge $((N * PER)) ] || echo "NOTE: only $entries entries cached (expected $((N * PER)))"
