#!/bin/bash
# bench-idmapd, guest side (a lab scenario run by path, not a test: no "# lab-test:" line).
# Same guest, same workload, nfs-utils' rpc.idmapd vs nsid-idmapd:
#   - server container s1 runs its own knfsd (see tests/vm/lib/idmapd-server.sh, 8 nfsd
#     threads); client containers c1..cK (K = BENCH_CLIENTS, 4) each mount it (one nfs_client,
#     one idmap pipe per container netns); every file has its own owner and group (distinct
#     names everywhere, so the kernel's global id_resolver key cache never answers one
#     container with another's key);
#   - rpc.idmapd as nfs-utils ships it, deployed per container: one -S inside s1 (netns +
#     mount ns) and one -C inside each client container (its rpc_pipefs); nsid-idmapd: one
#     daemon for all of them (isolate-keys = no here, as rpc.idmapd does not invalidate keys;
#     what isolation costs is measured in tests/vm/scenarios/idmapd-pipes.sh; host-pipes and
#     set-identifier off, as rpc.idmapd serves neither; everything else as shipped:
#     rescan-interval 10, refresh-interval 2, cache-ttl 600);
#   - serial passes (one process in c1, one cold `stat` after the other: latency as a user's
#     `ls -l` sees it, bounded by the NFS round trips, not by the daemon):
#       both:     everything cold: knfsd asks the channels, the client asks its pipe
#                 (request_key(id_resolver) fails at once: /sbin/request-key is moved aside)
#       pipes:    client remounted, its id_legacy keys invalidated, knfsd's caches kept, the
#                 daemon's flushed: only pipe upcalls (-warm: the daemon's cache kept)
#       channels: client remounted, its id_legacy keys kept, knfsd's caches and the
#                 daemon's flushed: only nfsd channel requests (-warm: the daemon's cache kept)
#       chown:    c1 chowns BENCH_CHOWN root-owned files to its users (client id -> name
#                 through its pipe, knfsd name -> id through its channel);
#   - saturated passes (throughput: requests queue up at the daemon): BENCH_PROCS processes in
#     each of the K clients start together (a FIFO opened at once) and stat BENCH_SAT files per
#     client, all distinct: K pipes busy at once, up to 8 knfsd threads waiting on channels:
#       sat-both, sat-pipes, sat-channels: as above, all clients at once;
#   - latency of each upcall as the kernel sees it, from kprobes, paired by object: a channel
#     request is knfsd's cache entry (nfsd idtoname_upcall/nametoid_upcall, answered when
#     sunrpc_cache_update gets that entry as the one to complete), a pipe upcall is the key
#     construction's authorisation key (nfsv4 nfs_idmap_legacy_upcall, answered by
#     complete_request_key with it);
#   - daemon CPU: run time of all the daemon's threads (/proc/PID/task/*/schedstat; for
#     rpc.idmapd the sum of its K+1 processes) over the pass.
# Arguments (NSID_LAB_ARGS): KEY=VALUE for BENCH_N, BENCH_CHOWN, BENCH_CLIENTS, BENCH_PROCS,
# BENCH_SAT, BENCH_PASSES ("serial sat" by default), BENCH_ORDER ("rpc nsid nsid rpc": each
# daemon's turns, every turn all the passes; the table pools a daemon's turns), BENCH_PERF=1
# (a diagnosis, not for the figures, which perf perturbs: perf samples the whole guest from
# 15 s before each saturated pass, its start-up time in TCG, to the pass's end; profiles by
# process and symbol in bench-data/perf-DAEMON-PASS-TURN.txt).
# Results: the table (bench/idmapd/bench-table.py) as "# table:" lines; raw results and traces
# in /lab-out/bench-data/ (the table can be recomputed on the host from them).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
for a in "$@"; do
  case $a in
    BENCH_N=*|BENCH_CHOWN=*|BENCH_CLIENTS=*|BENCH_PROCS=*|BENCH_SAT=*|BENCH_PASSES=*|BENCH_ORDER=*|BENCH_PERF=*) export "${a//,/ }" ;;
    *) bail "unknown argument $a" ;;
  esac
done
N=${BENCH_N:-100}
NC=${BENCH_CHOWN:-20}
K=${BENCH_CLIENTS:-4}
P=${BENCH_PROCS:-2}
M=${BENCH_SAT:-100}
PASSES=${BENCH_PASSES:-serial sat}
# ABBA: the guest's speed drifts with the host's load; run in this order it weighs the
# same on both daemons (a drift that is linear in time cancels out of the pooled numbers)
ORDER=${BENCH_ORDER:-rpc nsid nsid rpc}
DAEMONS=$(printf '%s\n' $ORDER | sort -u | xargs)
T=$((N + K * M)) # users bu0..bu(T-1): 0..N-1 serial files, then M per client
W=/run/nsid-lab/bench
LOGS=/lab-out
[ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
D=$LOGS/bench-data
mkdir -p "$W" "$D"
TR=/sys/kernel/tracing
R=$D/results
: > "$R"
has_pass() { [[ " $PASSES " == *" $1 "* ]]; }
clients() { local k; for k in $(seq 1 "$K"); do echo "c$k"; done; }

{ cat /etc/passwd; for i in $(seq 0 $((T - 1))); do echo "bu$i:x:$((20000 + i)):$((20000 + i))::/:/bin/sh"; done; } > "$W/passwd-s1"
{ cat /etc/group; for i in $(seq 0 $((T - 1))); do echo "bg$i:x:$((20000 + i)):"; done; } > "$W/group-s1"
{ cat /etc/passwd; for i in $(seq 0 $((T - 1))); do echo "bu$i:x:$((30000 + i)):$((30000 + i))::/:/bin/sh"; done; } > "$W/passwd-c"
{ cat /etc/group; for i in $(seq 0 $((T - 1))); do echo "bg$i:x:$((30000 + i)):"; done; } > "$W/group-c"
for k in s1 $(clients); do
  mkdir -p "$LAB_CROOT/$k/etc"
  printf '[General]\nDomain = bench.example\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' > "$LAB_CROOT/$k/etc/idmapd.conf"
done
printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' "$LAB_DOMAIN" > /etc/idmapd.conf
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* /etc/request-key.d/*nsid* 2>/dev/null

check "modules (name mapping on)" nfs_modules on || bail "modules"
check "bridge" lab_bridge_up || bail "bridge"
check "server container s1 with its knfsd" srv_container_start s1 --passwd "$W/passwd-s1" --group "$W/group-s1" || bail "server"
for c in $(clients); do
  check "client container $c" container_create "$c" --passwd "$W/passwd-c" --group "$W/group-c" || bail "client"
done
sx() { container_exec s1 "$@"; }
cx() { container_exec c1 "$@"; }
check "files: $N per daemon (serial), $M per client and daemon (saturated), each with its own owner and group; $NC root-owned for chown" sx python3 -c '
import os, sys
ex, (n, nc, k, m) = sys.argv[1], map(int, sys.argv[2:6])
for d in sys.argv[6:]:
    os.mkdir(os.path.join(ex, d)); os.mkdir(os.path.join(ex, "c" + d)); os.mkdir(os.path.join(ex, "s" + d))
    for i in range(n):
        f = os.path.join(ex, d, "f%d" % i)
        open(f, "w").close()
        os.chown(f, 20000 + i, 20000 + i)
    for i in range(nc):
        open(os.path.join(ex, "c" + d, "f%d" % i), "w").close()
    for c in range(k):
        sd = os.path.join(ex, "s" + d, "c%d" % (c + 1))
        os.mkdir(sd)
        for i in range(m):
            u = 20000 + n + c * m + i
            f = os.path.join(sd, "f%d" % i)
            open(f, "w").close()
            os.chown(f, u, u)' "$SRV_EXPORT" "$N" "$NC" "$K" "$M" $DAEMONS
# /sbin/request-key moved aside in this guest: the kernel's request_key(id_resolver) then
# fails at once and falls back to the pipe; otherwise a usermode helper runs before every
# pipe upcall of a new name (the same cost for both daemons, and none of their work)
[ -e /sbin/request-key ] && mv /sbin/request-key /sbin/request-key.nsid-bench-off
for c in $(clients); do container_exec "$c" mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs; done

mountpoint -q $TR || mount -t tracefs nodev $TR 2>/dev/null
KP=0
kp_setup() {
  local l ok=0
  echo > $TR/kprobe_events 2>/dev/null
  for l in 'p:nsidb/chan_up nfsd:idtoname_upcall h=%si:x64' \
           'p:nsidb/chan_up2 nfsd:nametoid_upcall h=%si:x64' \
           'p:nsidb/chan_down sunrpc:sunrpc_cache_update h=%dx:x64' \
           'p:nsidb/pipe_up nfsv4:nfs_idmap_legacy_upcall h=%di:x64' \
           'p:nsidb/pipe_down complete_request_key h=%di:x64'; do
    echo "$l" >> $TR/kprobe_events || { echo "kprobe refused: $l" >&2; return 1; }
  done
  echo 8192 > $TR/buffer_size_kb
  echo 1 > $TR/events/nsidb/enable
}
check "kprobes on the upcall and answer of both paths" kp_setup && KP=1
trace_reset() { [ $KP = 1 ] && echo > $TR/trace; }
# Uprobes on nsid-idmapd's periodic work, to see whether it stands in a request's way: the
# main thread's /proc rescan, the resolver threads' passwd/group check (entry and return;
# rare events, so they cost the measurement nothing).
up_setup() {
  local f lib s off
  f=$(realpath "$DM_BIN")
  lib=$(ldd "$f" 2>/dev/null | awk '/libnsid/ { print $3 }')
  echo > $TR/uprobe_events 2>/dev/null
  for s in "$f dm_ns_rescan" "$f refresh_check" "$lib nsid_netns_scan"; do
    set -- $s
    [ -n "$1" ] && [ -n "$2" ] || continue
    off=$(nm -D --defined-only "$1" 2>/dev/null; nm "$1" 2>/dev/null) 
    off=$(printf '%s\n' "$off" | awk -v s="$2" '$3 == s || index($3, s "@") == 1 { print $1; exit }')
    [ -n "$off" ] || { note "uprobe: no symbol $2 in $1 (inlined?): its calls are not counted"; continue; }
    { echo "p:nsidu/u_$2 $1:0x$off" && echo "r:nsidu/u_${2}_ret $1:0x$off"; } >> $TR/uprobe_events 2>/dev/null || return 0
  done
  echo 1 > $TR/events/nsidu/enable 2>/dev/null
  return 0
}
up_remove() { echo 0 > $TR/events/nsidu/enable 2>/dev/null; echo > $TR/uprobe_events 2>/dev/null; return 0; }

cat > "$W/worker.py" <<'PY'
# worker.py MODE DIR FIRST COUNT OUT [FIFO READY]: stat (or chown to the client's own uid
# 30000+i... given by FIRST) COUNT files, print "start_ns end_ns lat_us..." to OUT
import os, sys, time
mode, d, first, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
names = [os.path.join(d, "f%d" % i) for i in range(first, first + count)]
if len(sys.argv) > 7:
    open(sys.argv[7], "w").close()
    os.close(os.open(sys.argv[6], os.O_RDONLY))  # returns when the driver opens it: go
lat = []
t0 = time.monotonic_ns()
for i, n in enumerate(names):
    a = time.monotonic_ns()
    if mode == "stat":
        os.stat(n)  # no readdir: it would fetch every owner at once
    else:
        os.chown(n, 30000 + first + i, 30000 + first + i)
    lat.append((time.monotonic_ns() - a) // 1000)
t1 = time.monotonic_ns()
with open(out, "w") as f:
    print(t0, t1, *lat, file=f)
PY

DPIDS=
daemon_cpu_ns() { # run time of every thread of the daemon processes, ns
  local p t s=0 v
  for p in $DPIDS; do
    for t in /proc/$p/task/*/schedstat; do
      read -r v _ < "$t" 2>/dev/null && s=$((s + v))
    done
  done
  echo $s
}
guest_ticks() { # "busy total" clock ticks of all the guest's CPUs (/proc/stat)
  local _c u n sy id io irq sirq st _rest
  read -r _c u n sy id io irq sirq st _rest < /proc/stat
  echo "$((u + n + sy + irq + sirq + st)) $((u + n + sy + id + io + irq + sirq + st))"
}
CPU0=0 G0=
pass_start() { trace_reset; CPU0=$(daemon_cpu_ns); G0=$(guest_ticks); }
record() { # daemon pass outfile...: merge worker outputs, save the trace and daemon CPU
  local d=$1 p=$2; shift 2
  local cpu=$(( $(daemon_cpu_ns) - CPU0 )) g1 b0 t0 b1 t1
  g1=$(guest_ticks); read -r b0 t0 <<< "$G0"; read -r b1 t1 <<< "$g1"
  # the whole guest's CPU over the pass: how close to saturated it ran, and what the work
  # other than the daemon's costs (the bound on any daemon's end-to-end gain)
  echo "$d $p guestcpu $((b1 - b0)) $((t1 - t0)) $(getconf CLK_TCK)" >> "$R"
  python3 - "$d" "$p" "$cpu" "$@" >> "$R" <<'PY'
import sys
d, p, cpu = sys.argv[1:4]
t0, t1, lat = None, None, []
for f in sys.argv[4:]:
    v = open(f).read().split()
    a, b = int(v[0]), int(v[1])
    t0 = a if t0 is None else min(t0, a)
    t1 = b if t1 is None else max(t1, b)
    lat += v[2:]
print(d, p, "ops", len(sys.argv) - 4, cpu, (t1 - t0) // 1000, *lat)
PY
  [ $KP = 1 ] && cp $TR/trace "$D/trace-$d-$p-$TURN" && echo "$d $p trace trace-$d-$p-$TURN" >> "$R"
}
serial_pass() { # daemon pass mode dir count
  pass_start
  cx python3 "$W/worker.py" "$3" "$4" 0 "$5" "$W/out-serial"
  record "$1" "$2" "$W/out-serial"
}
sat_pass() { # daemon pass: K x P workers over the daemon's saturated files
  local d=$1 p=$2 c k j outs=() pids=() per=$((M / P)) first
  rm -f "$W"/ready-* "$W"/out-sat-* "$W/go"
  mkfifo "$W/go"
  for k in $(seq 1 "$K"); do
    for j in $(seq 0 $((P - 1))); do
      first=$((j * per)); [ "$j" = $((P - 1)) ] && per=$((M - first))
      container_exec "c$k" python3 "$W/worker.py" stat "/mnt/nfs/s$d/c$k" "$first" "$per" \
        "$W/out-sat-$k-$j" "$W/go" "$W/ready-$k-$j" &
      pids+=($!) outs+=("$W/out-sat-$k-$j")
      per=$((M / P))
    done
  done
  wait_for 60 sh -c "[ \$(ls '$W'/ready-* 2>/dev/null | wc -l) -ge $((K * P)) ]" ||
    note "$d $p: not every worker ready after 60 s"
  local perf=
  if [ "${BENCH_PERF:-0}" = 1 ]; then
    perf record -q -a -e cpu-clock -F 499 -o "$W/perf.data" -- sleep 600 2>"$W/perf.err" &
    perf=$!
    sleep 15
  fi
  pass_start
  exec 3> "$W/go"   # every worker's open() of the FIFO returns now
  wait "${pids[@]}"
  exec 3>&-
  if [ -n "$perf" ]; then
    pkill -INT -P "$perf" sleep 2>/dev/null; wait "$perf" 2>/dev/null
    { cat "$W/perf.err"; perf report -i "$W/perf.data" -n --sort comm --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30
      echo "--- kernel and user symbols, by process"
      perf report -i "$W/perf.data" -n --sort comm,dso,sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -300
    } > "$D/perf-$d-$p-$TURN.txt"
  fi
  record "$d" "$p" "${outs[@]}"
}
remount_all() { local c; for c in $(clients); do container_exec "$c" umount /mnt/nfs 2>/dev/null; cli_mount "$c" s1 || return 1; done; }
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
dflush() { [ "$1" = nsid ] && "$DM_BIN" --socket="$DM_SOCK" --ctl="flush all" >/dev/null; return 0; }

run_daemon() { # rpc|nsid
  local d=$1 c
  nfsidmap -c 2>/dev/null
  srv_flush s1
  if [ "$d" = rpc ]; then
    # (nsenter itself, not a shell function in a subshell: $! must be rpc.idmapd)
    nsenter -t "$(container_pid s1)" -m -u -n rpc.idmapd -f -S -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>"$LOGS/bench-rpc.idmapd-S-$TURN.log" &
    DPIDS=$!
    for c in $(clients); do
      nsenter -t "$(container_pid "$c")" -m -u -n rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>"$LOGS/bench-rpc.idmapd-C-$c-$TURN.log" &
      DPIDS="$DPIDS $!"
    done
    sleep 1
    # shellcheck disable=SC2086
    check "rpc.idmapd -S in s1 and -C in each of $(clients | xargs) running" kill -0 $DPIDS || return 1
  else
    cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
isolate-keys = no
state-dir = $W/state
CONF
    dm_start "$W/nsid.conf" "$LOGS/bench-nsid-idmapd-$TURN.log"
    DPIDS=$DM_PID
    [ $KP = 1 ] && up_setup
    check "nsid-idmapd running" dm_ready || return 1
    for c in s1 $(clients); do "$DM_BIN" --socket="$DM_SOCK" --ctl="register $(container_pid "$c")" >/dev/null; done
  fi
  check "$d: $(clients | xargs) mount s1" remount_all || return 1
  srv_wait_grace
  [ "$d" = nsid ] && wait_for 10 sh -c "[ \$(grep -c 'serving clnt' '$LOGS/bench-nsid-idmapd-$TURN.log') -ge $K ]"
  if has_pass serial; then
    serial_pass $d both stat /mnt/nfs/$d "$N"
    check_eq "$d: c1 sees its own uid for bu7 (both paths answered)" "bu7:bg7 30007:30007" "$(cx stat -c '%U:%G %u:%g' /mnt/nfs/$d/f7)"
    # pipes only; the daemon's own cache cold, then warm
    remount; invalidate_legacy_keys; dflush $d
    serial_pass $d pipes stat /mnt/nfs/$d "$N"
    remount; invalidate_legacy_keys
    serial_pass $d pipes-warm stat /mnt/nfs/$d "$N"
    # channels only, the daemon's cache cold, then warm
    remount; srv_flush s1; dflush $d
    serial_pass $d channels stat /mnt/nfs/$d "$N"
    remount; srv_flush s1
    serial_pass $d channels-warm stat /mnt/nfs/$d "$N"
    serial_pass $d chown chown /mnt/nfs/c$d "$NC"
    check_eq "$d: chown reached s1 as s1's uid for bu$((NC - 1))" "$((20000 + NC - 1))" "$(sx stat -c %u "$SRV_EXPORT/c$d/f$((NC - 1))")"
  fi
  if has_pass sat; then
    local last=$((N + K * M - 1))
    sat_pass $d sat-both
    check_eq "$d: c$K sees its own uid for bu$last (saturated, both paths)" "bu$last:bg$last $((30000 + last)):$((30000 + last))" \
      "$(container_exec "c$K" stat -c '%U:%G %u:%g' "/mnt/nfs/s$d/c$K/f$((M - 1))")"
    remount_all; invalidate_legacy_keys; dflush $d
    sat_pass $d sat-pipes
    remount_all; srv_flush s1; dflush $d
    sat_pass $d sat-channels
    check_eq "$d: c1 sees its own uid for bu$N after the saturated passes" "bu$N:bg$N $((30000 + N)):$((30000 + N))" \
      "$(cx stat -c '%U:%G %u:%g' "/mnt/nfs/s$d/c1/f0")"
  fi
  if [ "$d" = rpc ]; then
    # shellcheck disable=SC2086
    kill -TERM $DPIDS; wait $DPIDS 2>/dev/null
  else
    up_remove
    "$DM_BIN" --socket="$DM_SOCK" --status > "$W/status.txt"
    while read -r l; do note "nsid-idmapd status: $l"; done < "$W/status.txt"
    dm_stop
  fi
  for c in $(clients); do container_exec "$c" umount /mnt/nfs; done
  return 0
}

TURN=0
for d in $ORDER; do
  TURN=$((TURN + 1))
  note "turn $TURN: $d (load in the guest: $(cut -d' ' -f1-3 /proc/loadavg))"
  run_daemon "$d" || bail "$d run"
done
note "load in the guest at the end: $(cat /proc/loadavg)"
python3 "$LAB_SRC/bench/idmapd/bench-table.py" "$R" | while IFS= read -r l; do note "table: $l"; done
lab_done
