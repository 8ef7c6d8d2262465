#!/bin/bash
# lab-test: 6.1 6.12
# idmapd-churn: 50 container network namespaces created and destroyed while lookups run
# (issue 6, proof "idmapd-churn"): no fd, mount or thread leak in nsid-idmapd, no crash, no
# wrong answer.
#   - knfsd in the guest's initial netns with name mapping on (channels: rpc.idmapd -S); no
#     request-key rule for id_resolver, so container mounts use their idmap pipe;
#   - CHURN_TOTAL (50) namespaces in CHURN_ROUNDS rounds (2), each round creating its share
#     and destroying it: in the first round CHURN_NFS (2) containers with a veth and an NFS
#     mount (each idmap pipe is served from a private rpc_pipefs the daemon makes in that
#     netns), in each round CHURN_LIGHT (3) light containers (unshare: own netns and mount
#     namespace, own /etc/passwd) and the rest `ip netns add` namespaces (host context; one
#     `ip -batch` per round). Container i has labalice as uid 5000+i; the server and the host
#     have 1500;
#   - meanwhile a client on the control socket asks, in a loop, for labalice in the host,
#     in every live `ip netns` (by netns inode) and in every live container (by pid), and
#     checks every answer (a namespace that died meanwhile may answer "no such namespace"
#     or fail; it must never give another namespace's uid);
#   - each NFS container stats a file owned by labalice through its pipe: its own uid.
# Before and after (all destroyed, the daemon's rescan has forgotten them): the daemon's
# fds, its fds on rpc_pipefs (private mounts and idmap pipes), its threads, its
# /proc/PID/mountinfo and the guest's mount table must be back where they were.
# Sized for TCG: every process start costs 0.1-1 s in the guest (5-10 s when the host is
# loaded: seen with 7 guests on 2 cores) and an NFS container 10-80 s (veth, namespaces,
# mount); 40 `ip netns add` in one `ip -batch` cost 2 s. So 2 NFS mounts, 6 light containers
# and 42 `ip netns`, in 2 rounds; each round notes its time per phase.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
NSIDD="$LAB_BUILD/idmapd/nsid-idmapd"
W=/run/nsid-lab/idmapd
SOCK=$W/idmapd.sock
LOGS=/lab-out
[ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
mkdir -p "$W"
ROUNDS=${CHURN_ROUNDS:-2}
TOTAL=${CHURN_TOTAL:-50}
NFS=${CHURN_NFS:-2}       # containers with an NFS mount (first round)
LIGHT=${CHURN_LIGHT:-3}   # light containers per round

echo "labalice:x:1500:1500::/nonexistent:/usr/sbin/nologin" >> /etc/passwd
echo "labalice:x:1500:" >> /etc/group
check "knfsd started with idmapping on" nfs_server_start on || bail "no server"
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* /etc/request-key.d/*nsid* 2>/dev/null
nfsidmap -c 2>/dev/null
echo data > "$LAB_EXPORT/f1"
chown 1500:1500 "$LAB_EXPORT/f1"

cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
isolate-keys = yes
rescan-interval = 1
state-dir = $W/state
CONF
"$NSIDD" -f --config="$W/nsid.conf" --socket="$SOCK" </dev/null >/dev/null 2>>"$LOGS/idmapd-churn.log" &
DPID=$!
daemon_ready() {
  for _ in {1..200}; do timeout 5 "$NSIDD" --socket="$SOCK" --ctl=status >/dev/null 2>&1 && return 0; sleep 0.05; done
  return 1
}
check "nsid-idmapd started" daemon_ready || bail "no daemon"
check_eq "host lookup" "ok 1500" "$("$NSIDD" --socket="$SOCK" --ctl='lookup host uid labalice@lab.example' | cut -d' ' -f1-2)"

# (--json is pretty-printed: one "netns" key per namespace and line; no python start-up,
# which costs seconds under TCG)
n_ns() { "$NSIDD" --socket="$SOCK" --status --json | grep -c '"netns":'; }
ns_ge() { [ "$(n_ns)" -ge "$1" ]; }
n_fds() { local a=(/proc/$DPID/fd/*); echo ${#a[@]}; }
n_threads() { local l; while read -r l; do [[ $l == Threads:* ]] && { echo "${l##*[[:space:]]}"; return; }; done < /proc/$DPID/status; }
n_lines() { local n=0; while read -r _; do n=$((n + 1)); done < "$1"; echo $n; }
# the daemon's fds on rpc_pipefs (0x67596969): its private mounts and the idmap pipes in them
n_pipefs() { stat -L -f -c %t /proc/$DPID/fd/* 2>/dev/null | grep -c '^67596969$'; }
# The daemon closes a control client's fd when it reads the client's EOF, a moment after the
# client (n_ns, the --ctl calls) has exited: under TCG that moment has been seen to fall on a
# count (one fd more, before or after). Count once two samples 0.2 s apart agree.
n_fds_settled() {
  local a b
  a=$(n_fds)
  for _ in {1..25}; do sleep 0.2; b=$(n_fds); [ "$a" = "$b" ] && break; a=$b; done
  echo "$b"
}
snapshot() { echo "fds=$(n_fds_settled) pipefs=$(n_pipefs) threads=$(n_threads) mountinfo=$(n_lines /proc/$DPID/mountinfo) guest_mounts=$(n_lines /proc/self/mountinfo) namespaces=$(n_ns)"; }
# first use of `ip netns` makes /run/netns a mount point of its own, for good: before counting
ns_start=$(n_ns)
thr_start=$(n_threads)
ns_is() { [ "$(n_ns)" = "$1" ]; }
threads_le() { [ "$(n_threads)" -le "$1" ]; }
# churn0 lives until the daemon has found it, then goes; the baseline is taken once the daemon
# is back where it was: churn0 forgotten, its resolver thread ended (its fds are counted once
# settled, in snapshot)
ip netns add churn0
wait_for 10 ns_ge $((ns_start + 1)) || note "the daemon did not list churn0 within 10 s"
ip netns del churn0
wait_for 10 ns_is "$ns_start" || note "the daemon still lists churn0 after 10 s"
wait_for 10 threads_le "$thr_start" || note "the daemon has $(n_threads) threads 10 s after churn0, $thr_start before"
before=$(snapshot)
note "before: $before"

# ---- the lookup client ----------------------------------------------------------------------
: > "$W/live"
cat > "$W/client.py" <<'PY'
import os, socket, sys, time
sock, live, stop, out = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX); s.connect(sock); f = s.makefile("rwb")
n = {"ok": 0, "gone": 0, "failed": 0, "wrong": 0}
wrong = []
fails = []
def ask(target, want):
    f.write(b"lookup %s uid labalice@lab.example\n" % target.encode()); f.flush()
    r = f.readline().decode().split()
    if r and r[0] == "ok":
        if r[1] == want: n["ok"] += 1
        else:
            n["wrong"] += 1; wrong.append("%s: %s (want %s)" % (target, " ".join(r), want))
    elif r[:2] == ["error", "3"]: n["gone"] += 1        # no such namespace (died)
    else:
        n["failed"] += 1                                # its process died mid-resolution, ...
        if len(fails) < 5 and " ".join(r) not in fails: fails.append(" ".join(r))
while not os.path.exists(stop):
    ask("host", "1500")
    try: lines = open(live).read().split("\n")
    except OSError: lines = []
    for l in lines:
        if l: t, w = l.split(); ask(t, w)
    time.sleep(0.3)
with open(out, "w") as o:
    o.write("%d %d %d %d\n" % (n["ok"], n["gone"], n["failed"], n["wrong"]))
    for w in wrong[:10]: o.write("wrong: " + w + "\n")
    for f in fails: o.write("failed: " + f + "\n")
PY
python3 "$W/client.py" "$SOCK" "$W/live" "$W/stop" "$W/client.out" 2>"$W/client.err" &
CLIENT=$!
declare -A LIVE
live_publish() { local k; for k in "${!LIVE[@]}"; do echo "$k ${LIVE[$k]}"; done > "$W/live.tmp"; mv "$W/live.tmp" "$W/live"; }

# ---- the churn -----------------------------------------------------------------------------
sed_user() { sed "s/^labalice:x:1500:1500:/labalice:x:$1:$1:/" /etc/passwd; }
light_start() { # index: a light container (own netns and mount namespace, own passwd)
  local d=$W/l$1
  mkdir -p "$d"
  sed_user $((5000 + $1)) > "$d/passwd"
  rm -f "$d/ready"
  unshare --net --mount --propagation private sh -c "mount --bind '$d/passwd' /etc/passwd && : > '$d/ready' && exec sleep infinity" </dev/null >/dev/null 2>&1 &
  echo $! > "$d/pid"
}
idx=0 stats_ok=0 stats_bad=0 t_churn=$(lab_ms) created=0 mounted=0 nfs_made=0
phase() { local now; now=$(lab_ms); times+=" $1 $((now - t_phase))"; t_phase=$now; }
for ((round = 1; round <= ROUNDS; round++)); do
  lights=() nets=() nfs=() times="" t_phase=$(lab_ms)
  per=$(( TOTAL / ROUNDS + (round <= TOTAL % ROUNDS ? 1 : 0) ))
  # the NFS containers in the first round: own passwd, registered, mounted; each stats
  # through its idmap pipe
  for ((k = 0; round == 1 && k < NFS; k++)); do
    idx=$((idx + 1)); c=n$idx; nfs_made=$((nfs_made + 1))
    sed_user $((5000 + idx)) > "$W/passwd-$c"
    if container_create "$c" --passwd "$W/passwd-$c" >/dev/null 2>&1 &&
       "$NSIDD" --socket="$SOCK" --ctl="register $(container_pid "$c")" >/dev/null &&
       container_mount "$c" vers=4.2; then
      created=$((created + 1)) mounted=$((mounted + 1)) nfs+=("$c")
      LIVE[pid:$(container_pid "$c")]=$((5000 + idx))
    else
      note "round $round: NFS container $c failed"
    fi
  done
  phase nfs
  for ((k = 0; k < LIGHT; k++)); do idx=$((idx + 1)); light_start $idx; lights+=($idx); done
  # the rest of the round's share as `ip netns add` namespaces, made by one ip process
  batch=""
  for ((k = ${#lights[@]} + (round == 1 ? NFS : 0); k < per; k++)); do
    idx=$((idx + 1)); nets+=("churn$idx"); batch+="netns add churn$idx"$'\n'
  done
  printf '%s' "$batch" | ip -batch - || note "round $round: ip netns add failed"
  phase ip
  for i in "${lights[@]}"; do
    wait_for 30 test -e "$W/l$i/ready" && { LIVE[pid:$(<"$W/l$i/pid")]=$((5000 + i)); created=$((created + 1)); }
  done
  phase light
  for n in "${nets[@]}"; do
    ino=$(stat -L -c %i "/run/netns/$n") && { LIVE[netns:$ino]=1500; created=$((created + 1)); }
  done
  live_publish
  [ $round = 1 ] && nfs_server_wait_grace
  for c in "${nfs[@]}"; do
    u=$(timeout 30 nsenter -t "$(container_pid "$c")" -m -u -n stat -c %u /mnt/nfs/f1)
    if [ "$u" = $((5000 + ${c#n})) ]; then stats_ok=$((stats_ok + 1))
    else stats_bad=$((stats_bad + 1)); note "round $round: $c stat shows '$u', want $((5000 + ${c#n}))"; fi
  done
  phase stat
  wait_for 10 ns_ge $(( ${#LIVE[@]} + 1 ))   # the daemon has found them all
  sleep 1   # lookups against them all
  note "round $round, all $per alive: $(snapshot)"
  phase snapshot
  # destroy while the client still asks about them (it must get "no such namespace" or a
  # failure, never another namespace's answer); out of its list afterwards
  lpids=()
  for i in "${lights[@]}"; do lpids+=("$(<"$W/l$i/pid")"); done
  kill -9 "${lpids[@]}" 2>/dev/null
  printf 'netns del %s\n' "${nets[@]}" | ip -batch -
  for c in "${nfs[@]}"; do container_destroy "$c"; done
  wait "${lpids[@]}" 2>/dev/null
  sleep 0.5
  LIVE=()
  live_publish
  phase destroy
  note "round $round: ms per phase:$times"
done
t_churn=$(( $(lab_ms) - t_churn ))
: > "$W/stop"
wait_for 10 test -s "$W/client.out"
read -r c_ok c_gone c_failed c_wrong < "$W/client.out"
kill "$CLIENT" 2>/dev/null

check_eq "all $TOTAL namespaces created" "$TOTAL" "$created"
check_eq "every NFS container saw its own labalice through its pipe" "$nfs_made/0" "$stats_ok/$stats_bad"
check "lookups answered during the churn ($c_ok ok, $c_gone gone, $c_failed failed)" test "${c_ok:-0}" -gt "$TOTAL"
check_eq "no wrong answer during the churn" 0 "${c_wrong:-?}"
while read -r l; do note "client: $l"; done < <(tail -n +2 "$W/client.out")
[ -s "$W/client.err" ] && while read -r l; do note "client: $l"; done < "$W/client.err"
check "nsid-idmapd survived the churn" kill -0 "$DPID"

# ---- after: everything forgotten, nothing left ---------------------------------------------
ns0=${before##*namespaces=}
check "the daemon forgot every dead namespace (back to $ns0)" wait_for 20 ns_is "$ns0"
# resolver threads of forgotten namespaces end on their own
thr0=${before#*threads=}; thr0=${thr0%% *}
wait_for 10 threads_le "$thr0"
fds0=${before#*fds=}; fds0=${fds0%% *}
fds_is() { [ "$(n_fds)" = "$1" ]; }
wait_for 5 fds_is "$fds0"   # a leak stays; a client's fd in flight goes
after=$(snapshot)
note "after:  $after"
field() { local v=${2#*$1=}; echo "${v%% *}"; }
for k in fds pipefs threads mountinfo guest_mounts namespaces; do
  check_eq "$k back to where it was" "$(field $k "$before")" "$(field $k "$after")"
done
[ "$(field fds "$before")" = "$(field fds "$after")" ] || ls -l /proc/$DPID/fd | while read -r l; do note "fd: $l"; done
finding idmapd-churn "$TOTAL namespaces ($mounted with an NFS mount and pipe) created and destroyed in $t_churn ms; lookups during it: $c_ok ok, $c_gone gone, $c_failed failed, $c_wrong wrong; before: $before; after: $after"
check_eq "host lookup after the churn" "ok 1500" "$("$NSIDD" --socket="$SOCK" --ctl='lookup host uid labalice@lab.example' | cut -d' ' -f1-2)"
grep -ciE "assert|sanitizer|segfault" "$LOGS/idmapd-churn.log" >/dev/null && note "daemon log mentions a crash"
kill -TERM "$DPID"
wait "$DPID"
check_eq "nsid-idmapd exits cleanly on SIGTERM after the churn" 0 "$?"
lab_done
