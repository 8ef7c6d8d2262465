#!/bin/bash
# bench-idmapd, guest side (a lab scenario run by path, not a test: no "# lab-test:" line).
# Same guest, same workload, nfs-utils' rpc.idmapd vs nsid-idmapd:
#   - server container s1 runs its own knfsd (see tests/vm/lib/idmapd-server.sh) with
#     BENCH_N users; client container c1 mounts it; every file of a daemon's directory has its
#     own owner and group (2 x BENCH_N distinct names);
#   - rpc.idmapd: one -S inside s1 (netns + mount ns) and one -C inside c1 (its rpc_pipefs):
#     the per-container deployment; nsid-idmapd: one daemon for both (isolate-keys = no here,
#     so that client keys can be kept warm while the channels are measured; what isolation
#     costs is measured in tests/vm/scenarios/idmapd-pipes.sh);
#   - passes, each a cold `stat` of every file from c1 (one process, one file after the other):
#       both:     everything cold: knfsd asks the channels, the client asks its pipe
#                 (request_key(id_resolver) fails at once: /sbin/request-key is moved aside)
#       pipes:    client remounted, its id_legacy keys invalidated, knfsd's caches kept, the
#                 daemon's flushed: only pipe upcalls
#       channels: client remounted, its id_legacy keys kept, knfsd's caches and the
#                 daemon's flushed: only nfsd channel requests
#     and a chown pass (c1 chowns BENCH_CHOWN root-owned files to its users: the client asks
#     id -> name through its pipe, knfsd name -> id through its channel);
#   - latency of each upcall as the kernel sees it: kprobes on the request
#     (nfsd idtoname_upcall/nametoid_upcall, nfsv4 nfs_idmap_legacy_upcall) and on the answer
#     (nfsd idtoname_parse/nametoid_parse, nfsv4 idmap_pipe_downcall); one request at a time
#     (one client process, one nfs_client, knfsd waits for each), so they pair in order.
# Throughput: upcalls per second of the pass (end to end, what a user's `ls -l` sees) and the
# daemon-bound rate 1/mean latency (upcalls a second the daemon answers back to back).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
N=${BENCH_N:-100}
NC=${BENCH_CHOWN:-20}
W=/run/nsid-lab/bench
LOGS=/lab-out
[ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
mkdir -p "$W"
TR=/sys/kernel/tracing
R=$W/results
: > "$R"

{ cat /etc/passwd; for i in $(seq 0 $((N - 1))); do echo "bu$i:x:$((20000 + i)):$((20000 + i))::/:/bin/sh"; done; } > "$W/passwd-s1"
{ cat /etc/group; for i in $(seq 0 $((N - 1))); do echo "bg$i:x:$((20000 + i)):"; done; } > "$W/group-s1"
{ cat /etc/passwd; for i in $(seq 0 $((N - 1))); do echo "bu$i:x:$((30000 + i)):$((30000 + i))::/:/bin/sh"; done; } > "$W/passwd-c1"
{ cat /etc/group; for i in $(seq 0 $((N - 1))); do echo "bg$i:x:$((30000 + i)):"; done; } > "$W/group-c1"
for k in s1 c1; do
  mkdir -p "$LAB_CROOT/$k/etc"
  printf '[General]\nDomain = bench.example\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' > "$LAB_CROOT/$k/etc/idmapd.conf"
done
printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' "$LAB_DOMAIN" > /etc/idmapd.conf
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* /etc/request-key.d/*nsid* 2>/dev/null

check "modules (name mapping on)" nfs_modules on || bail "modules"
check "bridge" lab_bridge_up || bail "bridge"
check "server container s1 with its knfsd" srv_container_start s1 --passwd "$W/passwd-s1" --group "$W/group-s1" || bail "server"
check "client container c1" container_create c1 --passwd "$W/passwd-c1" --group "$W/group-c1" || bail "client"
sx() { container_exec s1 "$@"; }
cx() { container_exec c1 "$@"; }
check "files: $N per daemon, each with its own owner and group; $NC root-owned for chown" sx python3 -c '
import os, sys
ex, n, nc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in ("rpc", "nsid"):
    os.mkdir(os.path.join(ex, d)); os.mkdir(os.path.join(ex, "c" + d))
    for i in range(n):
        f = os.path.join(ex, d, "f%d" % i)
        open(f, "w").close()
        os.chown(f, 20000 + i, 20000 + i)
    for i in range(nc):
        open(os.path.join(ex, "c" + d, "f%d" % i), "w").close()' "$SRV_EXPORT" "$N" "$NC"
# /sbin/request-key moved aside in this guest: the kernel's request_key(id_resolver) then
# fails at once and falls back to the pipe; otherwise a usermode helper runs before every
# pipe upcall of a new name (the same cost for both daemons, and none of their work)
[ -e /sbin/request-key ] && mv /sbin/request-key /sbin/request-key.nsid-bench-off
cx mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs

mountpoint -q $TR || mount -t tracefs nodev $TR 2>/dev/null
KP=0
kp_setup() {
  echo > $TR/kprobe_events 2>/dev/null
  {
    echo 'p:nsidb/chan_up nfsd:idtoname_upcall'
    echo 'p:nsidb/chan_up2 nfsd:nametoid_upcall'
    echo 'p:nsidb/chan_down nfsd:idtoname_parse'
    echo 'p:nsidb/chan_down2 nfsd:nametoid_parse'
    echo 'p:nsidb/pipe_up nfsv4:nfs_idmap_legacy_upcall'
    echo 'p:nsidb/pipe_down nfsv4:idmap_pipe_downcall'
  } | while read -r l; do echo "$l" >> $TR/kprobe_events || exit 1; done || return 1
  echo 4096 > $TR/buffer_size_kb
  echo 1 > $TR/events/nsidb/enable
}
check "kprobes on the upcall and answer of both paths" kp_setup && KP=1
trace_reset() { [ $KP = 1 ] && echo > $TR/trace; }
trace_save() { [ $KP = 1 ] && cp $TR/trace "$W/trace-$1"; }

stat_pass() { # dir -> "<wall ms> <per-op us...>" on stdout
  cx python3 -c '
import os, sys, time
d = sys.argv[1]
# no readdir: it would fetch every owner at once, before the clock starts
names = ["f%d" % i for i in range(int(sys.argv[2]))]
lat = []
t0 = time.monotonic()
for n in names:
    a = time.monotonic()
    os.stat(os.path.join(d, n))
    lat.append(int((time.monotonic() - a) * 1e6))
print(int((time.monotonic() - t0) * 1000), *lat)' "$1" "$N"
}
chown_pass() { # dir
  cx python3 -c '
import os, sys, time
d = sys.argv[1]
n = int(sys.argv[2])
lat = []
t0 = time.monotonic()
for i in range(n):
    a = time.monotonic()
    os.chown(os.path.join(d, "f%d" % i), 30000 + i, 30000 + i)
    lat.append(int((time.monotonic() - a) * 1e6))
print(int((time.monotonic() - t0) * 1000), *lat)' "$1" "$NC"
}
remount() { cx umount /mnt/nfs 2>/dev/null; cli_mount c1 s1; }
invalidate_legacy_keys() { # one process (keyctl(1) per key would fork hundreds of times)
  python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for line in open("/proc/keys"):
    f = line.split()
    if len(f) > 7 and f[7] == "id_legacy":
        libc.syscall(250, 21, int(f[0], 16))  # keyctl(KEYCTL_INVALIDATE, serial)'
}
record() { # daemon pass wall_ms+lat...
  local d=$1 p=$2; shift 2
  echo "$d $p ops $*" >> "$R"
  trace_save "$d-$p"
  [ $KP = 1 ] && echo "$d $p trace $W/trace-$d-$p" >> "$R"
}

run_daemon() { # rpc|nsid
  local d=$1 out
  nfsidmap -c 2>/dev/null
  srv_flush s1
  if [ "$d" = rpc ]; then
    # (nsenter itself, not a shell function in a subshell: $! must be rpc.idmapd)
    nsenter -t "$(container_pid s1)" -m -u -n rpc.idmapd -f -S -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>"$LOGS/bench-rpc.idmapd-S.log" &
    RPS=$!
    nsenter -t "$(container_pid c1)" -m -u -n rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>"$LOGS/bench-rpc.idmapd-C.log" &
    RPC=$!
    sleep 1
    check "rpc.idmapd -S in s1 and -C in c1 running" kill -0 $RPS $RPC || return 1
  else
    cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
isolate-keys = no
rescan-interval = 2
state-dir = $W/state
CONF
    dm_start "$W/nsid.conf" "$LOGS/bench-nsid-idmapd.log"
    check "nsid-idmapd running" dm_ready || return 1
    for k in s1 c1; do "$DM_BIN" --socket="$DM_SOCK" --ctl="register $(container_pid $k)" >/dev/null; done
  fi
  check "$d: c1 mounts s1" remount || return 1
  srv_wait_grace
  [ "$d" = nsid ] && wait_for 10 grep -q "serving clnt" "$LOGS/bench-nsid-idmapd.log"
  # both cold
  trace_reset; out=$(stat_pass /mnt/nfs/$d); record $d both $out
  check_eq "$d: c1 sees its own uid for bu7 (both paths answered)" "bu7:bg7 30007:30007" "$(cx stat -c '%U:%G %u:%g' /mnt/nfs/$d/f7)"
  # pipes only; the daemon's own
  # cache cold, then warm (with isolate-keys = yes the kernel asks again for every answer
  # specific to a container, and nsid-idmapd answers those from its cache)
  remount; invalidate_legacy_keys
  [ "$d" = nsid ] && "$DM_BIN" --socket="$DM_SOCK" --ctl="flush all" >/dev/null
  trace_reset; out=$(stat_pass /mnt/nfs/$d); record $d pipes $out
  remount; invalidate_legacy_keys
  trace_reset; out=$(stat_pass /mnt/nfs/$d); record $d pipes-warm $out
  # channels only, the daemon's cache cold, then warm
  remount; srv_flush s1
  [ "$d" = nsid ] && "$DM_BIN" --socket="$DM_SOCK" --ctl="flush all" >/dev/null
  trace_reset; out=$(stat_pass /mnt/nfs/$d); record $d channels $out
  remount; srv_flush s1
  trace_reset; out=$(stat_pass /mnt/nfs/$d); record $d channels-warm $out
  # chown
  trace_reset; out=$(chown_pass /mnt/nfs/c$d); record $d chown $out
  check_eq "$d: chown reached s1 as s1's uid for bu$((NC - 1))" "$((20000 + NC - 1))" "$(sx stat -c %u "$SRV_EXPORT/c$d/f$((NC - 1))")"
  if [ "$d" = rpc ]; then
    kill -TERM $RPS $RPC; wait $RPS $RPC 2>/dev/null
  else
    "$DM_BIN" --socket="$DM_SOCK" --status > "$W/status.txt"
    while read -r l; do note "nsid-idmapd status: $l"; done < "$W/status.txt"
    dm_stop
  fi
  cx umount /mnt/nfs
  return 0
}

run_daemon rpc || bail "rpc.idmapd run"
run_daemon nsid || bail "nsid-idmapd run"

python3 - "$R" <<'PY' | while IFS= read -r l; do note "table: $l"; done
import re, sys
ops, traces = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[2] == "ops":
        ops[(f[0], f[1])] = (int(f[3]), [int(x) for x in f[4:]])
    else:
        traces[(f[0], f[1])] = f[3]
def events(path):
    ev = []
    for l in open(path):
        m = re.search(r"\s(\d+\.\d+): (chan_up2?|chan_down2?|pipe_up|pipe_down):", l)
        if m:
            ev.append((float(m.group(1)), m.group(2).rstrip("2")))
    return ev
def pair(ev, kind):
    lat, pend = [], []
    for t, e in ev:
        if e == kind + "_up":
            pend.append(t)
        elif e == kind + "_down" and pend:
            lat.append((t - pend.pop(0)) * 1e6)
    return lat
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else 0
print("%-19s %-12s %7s %8s %9s %9s %9s %10s %9s" % ("pass/path", "daemon", "upcalls", "wall ms",
      "upcalls/s", "p50 us", "p99 us", "1/mean /s", "op p99 ms"))
res = {}
for p in ("both", "pipes", "pipes-warm", "channels", "channels-warm", "chown"):
    for d in ("rpc", "nsid"):
        if (d, p) not in ops:
            continue
        wall, lat_ops = ops[(d, p)]
        name = {"rpc": "rpc.idmapd", "nsid": "nsid-idmapd"}[d]
        ev = events(traces[(d, p)]) if (d, p) in traces else []
        if not ev:  # no kprobes: the operations only
            print("%-19s %-12s %7s %8d %9s %9.0f %9.0f %10s %9.1f" % (p + "/ops", name, "-", wall, "-",
                  pct(lat_ops, 50), pct(lat_ops, 99), "-", pct(lat_ops, 99) / 1000))
        for kind in ("chan", "pipe"):
            lat = pair(ev, kind)
            if not lat:
                continue
            mean = sum(lat) / len(lat)
            row = (len(lat), wall, len(lat) / (wall / 1000), pct(lat, 50), pct(lat, 99), 1e6 / mean,
                   pct(lat_ops, 99) / 1000)
            res[(p, kind, d)] = row
            print("%-19s %-12s %7d %8d %9.1f %9.0f %9.0f %10.1f %9.1f" % (p + "/" + kind, name, *row))
print("ratios nsid-idmapd / rpc.idmapd (throughput: higher is better; p99: lower is better):")
for p, kind in (("pipes", "pipe"), ("pipes-warm", "pipe"), ("channels", "chan"),
                ("channels-warm", "chan"), ("chown", "chan"), ("chown", "pipe")):
    a, b = res.get((p, kind, "nsid")), res.get((p, kind, "rpc"))
    if a and b:
        print("  %-19s upcalls/s x%.2f   daemon-bound rate x%.2f   p99 x%.2f" % (p + "/" + kind, a[2] / b[2], a[5] / b[5], a[4] / b[4]))
PY
lab_done
