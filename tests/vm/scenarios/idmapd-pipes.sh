#!/bin/bash
# lab-test: 6.1 6.12
# idmapd-pipes: nsid-idmapd answering the idmap pipes of several container netns, each from
# the container's own passwd (issue 6, proof "idmapd-pipes").
#   - knfsd in the guest's initial netns with name mapping on (its channels answered by the
#     guest's rpc.idmapd -S; nsid-idmapd is told to leave the initial netns alone:
#     host-pipes = no);
#   - no request-key rule for id_resolver, so container mounts (init user ns) fall back to
#     the pipe; nsid-idmapd mounts each netns's rpc_pipefs privately (no rpc.idmapd, no
#     rpc_pipefs mount in any container);
#   - labalice is 1500 on the server and 4001 / 4002 / 4003 in containers c1 / c2 / c3.
# Part 1 (baseline, isolate-keys = no): the kernel's global key cache serves b1's answer to b2.
# Part 2 (isolate-keys = yes): every container sees its own uid, in any order, on new files
# too; the window during which a container-specific key is visible in /proc/keys is measured,
# and the upcalls it costs (nsid-idmapd --status --json) are reported beside the baseline's.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
NSIDD="$LAB_BUILD/idmapd/nsid-idmapd"
W=/run/nsid-lab/idmapd
SOCK=$W/idmapd.sock
LOGS=/lab-out  # the daemon's logs come back to the host
[ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
mkdir -p "$W"

echo "labalice:x:1500:1500::/nonexistent:/usr/sbin/nologin" >> /etc/passwd
echo "labalice:x:1500:" >> /etc/group
check "knfsd started with idmapping on" nfs_server_start on || bail "no server"
check_eq "client nfs4_disable_idmapping" N "$(</sys/module/nfs/parameters/nfs4_disable_idmapping)"
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* /etc/request-key.d/*nsid* 2>/dev/null
nfsidmap -c 2>/dev/null
echo data > "$LAB_EXPORT/f1"
chown 1500:1500 "$LAB_EXPORT/f1"

for k in b1:4001 b2:4002 c1:4001 c2:4002 c3:4003; do
  n=${k%%:*} u=${k##*:}
  sed "s/^labalice:x:1500:1500:/labalice:x:$u:$u:/" /etc/passwd > "$W/passwd-$n"
  sed "s/^labalice:x:1500:/labalice:x:$u:/" /etc/group > "$W/group-$n"
done

keys_alice() { grep -cE " id_legacy +uid:labalice@" /proc/keys; }
DPID=
daemon_start() { # isolate-keys value
  cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
isolate-keys = $1
rescan-interval = 2
state-dir = $W/state
CONF
  # (not under check: it runs its command in $(...), which would wait for the daemon)
  "$NSIDD" -f --config="$W/nsid.conf" --socket="$SOCK" -v </dev/null >/dev/null \
    2>>"$LOGS/idmapd-daemon-$1.log" &
  DPID=$!
}
daemon_ready() {
  for _ in {1..200}; do timeout 5 "$NSIDD" --socket="$SOCK" --ctl=status >/dev/null 2>&1 && return 0; sleep 0.05; done
  return 1
}
daemon_stop() { kill -TERM "$DPID"; wait "$DPID"; }
upcalls() { # total pipe upcalls seen by the daemon
  "$NSIDD" --socket="$SOCK" --status --json | python3 -c '
import json, sys
print(sum(n["pipe_upcalls"] for n in json.load(sys.stdin)["namespaces"]))'
}
start_c() { # key
  container_create "$1" --passwd "$W/passwd-$1" --group "$W/group-$1" || return 1
  # discovery at once (also found by the periodic scan)
  "$NSIDD" --socket="$SOCK" --ctl="register $(container_pid "$1")" >/dev/null || return 1
  container_mount "$1" vers=4.2
}
owner() { container_exec "$1" stat -c %u "/mnt/nfs/$2"; }

# ---- part 1: baseline, no key isolation --------------------------------------------------------
daemon_start no
check "nsid-idmapd started (isolate-keys = no)" daemon_ready || bail "no daemon"
check "b1 created and mounted" start_c b1 || bail "b1"
check "b2 created and mounted" start_c b2 || bail "b2"
nfs_server_wait_grace
ub1=$(owner b1 f1)
ub2=$(owner b2 f1)
check_eq "baseline: b1 sees its own labalice (pipe answered by nsid-idmapd)" 4001 "$ub1"
note "baseline: b2 sees uid $ub2 (its own labalice is 4002)"
check_eq "baseline: the kernel's key cache served b1's answer to b2 (the leak)" 4001 "$ub2"
base_up=$(upcalls)
finding idmapd-leak-baseline "isolate-keys=no: b1 -> $ub1, then b2 -> $ub2 (own 4002); upcalls: $base_up"
"$NSIDD" --socket="$SOCK" --status > "$W/status-baseline.txt"
while read -r l; do note "status: $l"; done < "$W/status-baseline.txt"
daemon_stop
container_destroy b1
container_destroy b2
nfsidmap -c 2>/dev/null

# ---- part 2: isolation -----------------------------------------------------------------------
daemon_start yes
check "nsid-idmapd started (isolate-keys = yes)" daemon_ready || bail "no daemon"
for c in c1 c2 c3; do check "$c created and mounted" start_c "$c" || bail "$c"; done
nfs_server_wait_grace
for c in c2 c1 c3; do
  want=400${c#c}
  check_eq "isolated, first round: $c sees its own labalice" "$want" "$(owner "$c" f1)"
done
# measure the window: how long a container-specific key stays in /proc/keys after an answer
echo data > "$LAB_EXPORT/f2"
chown 1500:1500 "$LAB_EXPORT/f2"
t0=$(lab_ms)
u=$(owner c3 f2)
t1=$(lab_ms)
grep -E "id_|labalice" /proc/keys | while read -r l; do note "/proc/keys after c3: $l"; done
while [ "$(keys_alice)" -gt 0 ] && [ $(( $(lab_ms) - t1 )) -lt 5000 ]; do :; done
t2=$(lab_ms)
check_eq "isolated: c3 sees its own labalice on a new file" 4003 "$u"
check_eq "isolated: no id_legacy key for labalice left in the global cache" 0 "$(keys_alice)"
finding idmapd-leak-window "stat took $((t1 - t0)) ms; the container-specific key was visible for at most $((t2 - t1)) ms after stat returned (invalidation retried from the answer on)"
for c in c1 c2; do
  check_eq "isolated, new file after c3: $c sees its own labalice" "400${c#c}" "$(owner "$c" f2)"
done
echo data > "$LAB_EXPORT/f3"
chown 1500:1500 "$LAB_EXPORT/f3"
for c in c3 c2 c1; do
  check_eq "isolated, reverse order: $c" "400${c#c}" "$(owner "$c" f3)"
done
fix_up=$(upcalls)
finding idmapd-upcall-cost "without isolation: 2 containers x 1 file took $base_up pipe upcalls (the second container reused the first one's keys); with isolation: 3 containers x 3 files (9 stats, each mapping an owner and a group) took $fix_up pipe upcalls: container-specific keys are never reused, every stat asks again"
"$NSIDD" --socket="$SOCK" --status > "$W/status-isolated.txt"
while read -r l; do note "status: $l"; done < "$W/status-isolated.txt"
check "daemon log names each container netns" grep -q "serving clnt" "$LOGS/idmapd-daemon-yes.log"
daemon_stop
check_eq "nsid-idmapd exited cleanly on SIGTERM" 0 "$?"
while read -r l; do note "log: $l"; done < <(grep -v "no rpc_pipefs\|no knfsd" "$LOGS/idmapd-daemon-yes.log" | tail -40)
containers_destroy_all
lab_done
