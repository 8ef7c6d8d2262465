#!/bin/bash
# kernel-keyns: the NFS idmapper's key cache, stock module against nsid's patched module
# (kernel/patches/<series>/0001, built by kernel/build-nfsv4 into BUILD/kernel/<release>/),
# in one boot: the same checks on the stock nfsv4.ko, then on the patched one.
# lab-test: 6.1 6.12
# lab-timeout: 720
# lab-cost: 180
#
# nfs-utils alone, no nsid: name mapping on; knfsd in the guest's initial netns answers its
# channels with rpc.idmapd -S from the server's passwd; no request-key rule for id_resolver,
# so every lookup goes to the idmap pipe of its client's netns, answered there by nfs-utils'
# rpc.idmapd -C: one for the host (the guest's passwd) and one in each container c1, c2 (its
# own passwd). labalice is 1500 on the host and the server, 4001 in c1, 4002 in c2.
#   - each of host, c1, c2 stats a file of labalice, host first, then containers first;
#   - c1 and c2 stat files of ROUNDS new users (first argument, default 20: the stock module
#     gave the other's answer for 50 of 50 in every run seen, so 20 show it as surely; the
#     50 of before are `bench-kernel-keyns`) at the same moment, one process in each, in the
#     same order: how many answers are the other's;
#   - nfs-common's request-key rule (nfsidmap) on: the lookup works and the keys in the
#     .id_resolver keyring per name are counted;
#   - the module's taint.
# Then, patched module only: netns teardown frees its keys (CHURN containers, second
# argument, default 5, bench-kernel-keyns 10; 200 by hand: NSID_LAB_ARGS="50 200"; each mounts and looks one name
# up, then all go at once), and a host process that looks
# through a container's mount (patch 1 alone caches that answer under the host's tag).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
. "$LAB_LIB/demo-idmap.sh"

ROUNDS=${1:-20}  # NSID_LAB_ARGS="ROUNDS CHURN" when run by hand
CHURN=${2:-5}
REL=$(uname -r)
MOD=$LAB_BUILD/kernel/$REL/nfsv4.ko
W=/run/nsid-lab/keyns
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
note "kernel $REL; patched module $MOD"
[ -f "$MOD" ] || bail "no patched module for $REL at $MOD (ctest -R kernel-nfsv4 builds it)"

# The module is checked before it is loaded: for this kernel, or refused.
module_for_this_kernel() { # path
  local vm
  vm=$(modinfo -F vermagic "$1") || return 1
  [ "${vm%% *}" = "$REL" ] || { echo "$1 is built for '${vm%% *}', not $REL" >&2; return 1; }
}

# ---- users ------------------------------------------------------------------------------
# labalice (files of the order checks), labrk (request-key step), labtd (teardown),
# labpx (the /proc/PID/root lookup), and labuN for the rounds. Server and host agree (1500..);
# c1 and c2 have their own ids for every one of them.
spec_srv="labalice=1500 labrk=1503 labtd=1504 labpx=1505 labpy=1506"
spec_c1="labalice=4001 labrk=4031 labtd=4041 labpx=4051 labpy=4061"
spec_c2="labalice=4002 labrk=4032 labtd=4042 labpx=4052 labpy=4062"
for n in $(seq 1 "$ROUNDS"); do
  spec_srv+=" labu$n=$((20000 + n))"
  spec_c1+=" labu$n=$((30000 + n))"
  spec_c2+=" labu$n=$((40000 + n))"
done
demo_users_setup "$W" "$spec_srv" "$spec_c1" "$spec_c2" || bail "cannot write the users' files"

check "knfsd started" nfs_server_start off || bail "no server"
check "name mapping on; knfsd's channels answered by rpc.idmapd -S" \
  demo_idmap_on "$W/passwd-server" "$W/group-server" || bail "no server-side mapping"
check "no request-key rule for id_resolver (lookups go to the idmap pipes)" demo_rk_rule off
# the host's client pipes: nfs-utils' rpc.idmapd -C on the guest's rpc_pipefs
rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-host.log" &
HOST_IDMAPD=$!
check "rpc.idmapd -C for the host's idmap pipes" \
  wait_for 10 sh -c "ls -l /proc/$HOST_IDMAPD/fd 2>/dev/null | grep -q inotify"
for k in 1 2; do
  check "c$k created (own passwd), its rpc.idmapd -C on its own pipes" \
    demo_client_rpcidmapd "c$k" "$W/passwd-$k" "$W/group-$k" "$LOGS/rpc.idmapd-c$k.log" || bail "no c$k"
done

HMNT=/mnt/host-nfs
mounts_up() {
  mkdir -p "$HMNT"
  timeout 30 mount -t nfs4 -o vers=4.2 "$LAB_SERVER_IP:/" "$HMNT" || return 1
  container_mount c1 vers=4.2 && container_mount c2 vers=4.2
}
mounts_down() {
  umount "$HMNT" 2>/dev/null
  container_exec c1 umount /mnt/nfs 2>/dev/null
  container_exec c2 umount /mnt/nfs 2>/dev/null
  ! grep -q ' nfs4 ' /proc/mounts
}
# Where a stat that does not return is stuck, taken while it still hangs (stderr): every
# process of the lookup's path (stat, request-key, the helpers) with its kernel stack, the
# keys the host sees, and the RPC tasks of every client.
hang_snapshot() { # label
  local p c
  echo "---- hang snapshot: $1 ($(date +%s.%N))" >&2
  ps -eo pid,ppid,stat,wchan:32,etimes,args >&2
  for p in /proc/[0-9]*; do
    c=$(cat "$p/comm" 2>/dev/null) || continue
    case "$c" in
      stat|request-key|nsid-idmap*|nfsidmap|keyctl|rpc.idmapd) ;;
      *) grep -q '^State:.*D' "$p/status" 2>/dev/null || continue ;;  # (kworkers too)
    esac
    echo "-- ${p#/proc/} $c:" >&2
    cat "$p/stack" >&2 2>/dev/null
  done
  echo "-- /proc/keys:" >&2; cat /proc/keys >&2
  echo "-- $LAB_BRIDGE: $(cat "/sys/class/net/$LAB_BRIDGE/address" 2>/dev/null)" >&2
  for c in c1 c2; do
    echo "-- $c neighbours:" >&2; container_exec "$c" ip neigh show >&2 2>&1
  done
  mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
  for p in /sys/kernel/debug/sunrpc/rpc_clnt/*/tasks; do
    [ -s "$p" ] && { echo "-- $p:" >&2; cat "$p" >&2; }
  done
  echo "---- end of hang snapshot" >&2
}
uid_of() { # where(host|c1|c2) path-under-export; a failed stat is "?", and says why on stderr
  local out rc t0=$EPOCHREALTIME pid
  case "$1" in
    host) timeout 20 stat -c %u "$HMNT/$2" >"$W/uid_of.out.$1" 2>"$W/uid_of.err.$1" & ;;
    *) container_exec "$1" timeout 20 stat -c %u "/mnt/nfs/$2" >"$W/uid_of.out.$1" \
         2>"$W/uid_of.err.$1" & ;;
  esac
  pid=$!
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && hang_snapshot "uid_of $1 $2 still waiting after 8 s"
  wait "$pid"; rc=$?
  out=$(cat "$W/uid_of.out.$1")
  if [ "$rc" = 0 ]; then echo "$out"; return; fi
  echo "uid_of $1 $2: exit $rc, ${t0%.*}..${EPOCHREALTIME%.*} s: $(cat "$W/uid_of.err.$1")" >&2
  echo "?"
}
srv_file() { # path owner-uid
  mkdir -p "$LAB_EXPORT/${1%/*}"; echo x > "$LAB_EXPORT/$1"; chown "$2:$2" "$LAB_EXPORT/$1"
}
# The .id_resolver keyring (a keyring: visible in /proc/keys from every netns) and the
# descriptions of the keys in it, read from the keyring itself (tagged keys of another netns
# do not show in this netns's /proc/keys).
idres_keyring() { awk '$9 == ".id_resolver:" || $9 == ".id_resolver" {print $1; exit}' /proc/keys; }
idres_descs() {
  local kr s
  kr=$(idres_keyring) || return 1
  [ -n "$kr" ] || return 1
  for s in $(keyctl rlist "0x$kr" 2>/dev/null); do keyctl rdescribe "$s" 2>/dev/null; echo; done |
    awk -F';' 'NF >= 5 {print $1 " " $5}'
}
idres_count() { idres_descs | grep -c "$1"; }

phase() { # stock|patched
  local ph=$1 got h c1 c2 wrong errs n t0 taint p1 p2 r1 r2 k
  check "$ph: host, c1, c2 mount the export" mounts_up || { note "$ph: mounts failed"; return; }
  taint=$(cat /sys/module/nfsv4/taint 2>/dev/null)
  note "$ph: /sys/module/nfsv4/taint='$taint' /proc/sys/kernel/tainted=$(cat /proc/sys/kernel/tainted)"
  if [ "$ph" = patched ]; then
    check "patched: the module taints the kernel as out-of-tree and unsigned (taint '$taint')" \
      sh -c "[ '$taint' = OE ] || [ '$taint' = O ]"
  else
    check_eq "stock: the module does not taint the kernel" "" "$taint"
  fi

  # 1. host first, then the containers; 2. the containers first, then the host
  check "$ph: ID key cache empty" demo_keys_clear
  srv_file "$ph/o1/alice" 1500
  h=$(uid_of host "$ph/o1/alice"); c1=$(uid_of c1 "$ph/o1/alice"); c2=$(uid_of c2 "$ph/o1/alice")
  finding "$ph-host-first" "host=$h c1=$c1 c2=$c2 (own: 1500 4001 4002)"
  if [ "$ph" = patched ]; then
    check_eq "patched, host first: host, c1, c2 each see their own uid" "1500 4001 4002" "$h $c1 $c2"
  else
    check_eq "stock, host first: c1 and c2 see the host's answer" "1500 1500 1500" "$h $c1 $c2"
  fi
  check "$ph: ID key cache empty" demo_keys_clear
  srv_file "$ph/o2/alice" 1500
  c2=$(uid_of c2 "$ph/o2/alice"); c1=$(uid_of c1 "$ph/o2/alice"); h=$(uid_of host "$ph/o2/alice")
  finding "$ph-containers-first" "c2=$c2 c1=$c1 host=$h (own: 4002 4001 1500)"
  if [ "$ph" = patched ]; then
    check_eq "patched, c2 first: c2, c1, host each see their own uid" "4002 4001 1500" "$c2 $c1 $h"
  else
    check_eq "stock, c2 first: c1 and the host see c2's answer" "4002 4002 4002" "$c2 $c1 $h"
  fi

  # 3. the same new names from c1 and c2 at the same moment: one process in each stats
  #    ROUNDS files of ROUNDS new users in the same order, both started together (each
  #    polls for a "go" file every 5 ms), so that each name is asked by both within the
  #    same upcall
  local d=$ph/r
  mkdir -p "$LAB_EXPORT/$d"
  for n in $(seq 1 "$ROUNDS"); do srv_file "$d/u$n" $((20000 + n)); done
  rm -f "$W/go" "$W/r1.ready" "$W/r2.ready" "$W/r1" "$W/r2"
  for k in 1 2; do
    container_exec "c$k" timeout 120 python3 -c '
import os, sys, time
d, n, go, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
open(out + ".ready", "w").close()
while not os.path.exists(go):
    time.sleep(0.005)
uids = []
for i in range(1, n + 1):
    try:
        uids.append(str(os.stat(os.path.join(d, "u%d" % i)).st_uid))
    except OSError:
        uids.append("?")
open(out, "w").write(" ".join(uids) + "\n")' "/mnt/nfs/$d" "$ROUNDS" "$W/go" "$W/r$k" &
    eval "p$k=\$!"
  done
  wait_for 60 test -e "$W/r1.ready" -a -e "$W/r2.ready"
  t0=$(lab_ms)
  : > "$W/go"   # both start now
  wait "$p1" "$p2"
  read -ra r1 < "$W/r1"; read -ra r2 < "$W/r2"
  wrong=0 errs=0
  for n in $(seq 1 "$ROUNDS"); do
    got="${r1[n - 1]:-?} ${r2[n - 1]:-?}"
    case "$got" in
      "$((30000 + n)) $((40000 + n))") ;;
      *"?"*) errs=$((errs + 1)) ;;
      *) wrong=$((wrong + 1)) ;;
    esac
  done
  finding "$ph-simultaneous" "$ROUNDS new names asked by c1 and c2 at the same moment: $wrong with a wrong answer, $errs with a failed stat ($(( ($(lab_ms) - t0) / ROUNDS )) ms a name)"
  check_eq "$ph: no stat failed in the simultaneous lookups" 0 "$errs"
  if [ "$ph" = patched ]; then
    check_eq "patched: $ROUNDS names asked by c1 and c2 at once, no wrong answer" 0 "$wrong"
  else
    check "stock: names asked by c1 and c2 at once give wrong answers ($wrong of $ROUNDS)" test "$wrong" -gt 0
  fi

  # 4. the request-key path still works (nfsidmap answers from the host's passwd for all)
  check "$ph: nfs-common's request-key rule on" demo_rk_rule on
  srv_file "$ph/rk/f" 1503
  h=$(uid_of host "$ph/rk/f"); c1=$(uid_of c1 "$ph/rk/f"); c2=$(uid_of c2 "$ph/rk/f")
  check_eq "$ph: through request-key (nfsidmap) host, c1, c2 get the host's answer" "1503 1503 1503" "$h $c1 $c2"
  n=$(idres_count "^id_resolver uid:labrk@")
  idres_descs | grep 'labrk@' | while read -r l; do note "$ph: .id_resolver holds: $l"; done
  finding "$ph-requestkey-keys" "uid:labrk looked up from host, c1, c2 through nfsidmap: $n id_resolver key(s)"
  if [ "$ph" = patched ]; then
    check_eq "patched: one id_resolver key per namespace for uid:labrk" 3 "$n"
  else
    check_eq "stock: one id_resolver key for all namespaces for uid:labrk" 1 "$n"
  fi
  check "$ph: request-key rule off again" demo_rk_rule off
}


# ---- nsid as the package sets it up -----------------------------------------------------
# nsid-idmap as the id_resolver request-key helper (nfs-common's rule removed, as the
# package's diversion does), nsid-idmapd with no configuration (every default: host-pipes,
# isolate-keys, set-identifier), no rpc.idmapd. Then the pipe path alone (no id_resolver
# rule at all): whether the daemon invalidates keys. And nsidctl's verdict on the kernel.
NSIDCTL=$LAB_BUILD/nsidctl/nsidctl
NSID_RULE=/etc/request-key.d/nsid-idmap.conf
rpcidmapd_all() { # start|stop
  local k
  if [ "$1" = stop ]; then
    kill "$HOST_IDMAPD" 2>/dev/null; wait "$HOST_IDMAPD" 2>/dev/null
    for k in c1 c2; do demo_rpcidmapd_stop "$k" || return 1; done
    return 0
  fi
  rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-host.log" &
  HOST_IDMAPD=$!
  for k in c1 c2; do
    nsenter -t "$(container_pid "$k")" -m -u -n rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs \
      </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-$k.log" &
    echo $! > "$LAB_CROOT/$k/rpc.idmapd.pid"
  done
  wait_for 10 sh -c "ls -l /proc/$HOST_IDMAPD/fd 2>/dev/null | grep -q inotify"
}
invalidations() { # the daemon's keys_invalidated, summed over its namespaces
  "$DM_BIN" --socket="$DM_SOCK" --status --json |
    python3 -c 'import json,sys; print(sum(n["keys_invalidated"] for n in json.load(sys.stdin)["namespaces"]))'
}
nsid_part() { # stock|patched
  local ph=$1 h c1 c2 h1 c11 c21 h2 inv st js
  check "$ph/nsid: rpc.idmapd stopped (host, c1, c2)" rpcidmapd_all stop
  # the packaged rule, with the helper's log lines kept for this run
  sed "s|@NSID_IDMAP_PATH@|$LAB_BUILD/idmap/nsid-idmap --log-file=$LOGS/nsid-idmap-$ph.log|" \
    "$LAB_SRC/idmap/nsid-idmap.conf.in" > "$NSID_RULE"
  DM_SOCK=/run/nsid/idmapd.sock
  "$DM_BIN" -f </dev/null >/dev/null 2>>"$LOGS/nsid-idmapd-$ph.log" &
  DM_PID=$!
  check "$ph/nsid: nsid-idmapd up with the default configuration" dm_ready || return
  check "$ph/nsid: ID key cache empty" demo_keys_clear
  srv_file "$ph/n1/alice" 1500
  h1=$(uid_of host "$ph/n1/alice"); c11=$(uid_of c1 "$ph/n1/alice"); c21=$(uid_of c2 "$ph/n1/alice")
  finding "$ph-nsid-host-first" "nsid default set-up: host=$h1 c1=$c11 c2=$c21 (own: 1500 4001 4002)"
  check "$ph/nsid: ID key cache empty" demo_keys_clear
  srv_file "$ph/n2/alice" 1500
  c2=$(uid_of c2 "$ph/n2/alice"); c1=$(uid_of c1 "$ph/n2/alice"); h2=$(uid_of host "$ph/n2/alice")
  finding "$ph-nsid-containers-first" "nsid default set-up: c2=$c2 c1=$c1 host=$h2 (own: 4002 4001 1500)"
  # both modules since issue 19: on the stock one the helper hands the lookups to the pipes
  check_eq "$ph/nsid default set-up, host first: own uids" "1500 4001 4002" "$h1 $c11 $c21"
  check_eq "$ph/nsid default set-up, c2 first: own uids" "4002 4001 1500" "$c2 $c1 $h2"
  # the pipe path: no id_resolver rule at all, nsid-idmapd answers every namespace's pipe
  rm -f "$NSID_RULE"
  check "$ph/nsid: ID key cache empty" demo_keys_clear
  srv_file "$ph/n3/alice" 1500
  c1=$(uid_of c1 "$ph/n3/alice"); c2=$(uid_of c2 "$ph/n3/alice"); h=$(uid_of host "$ph/n3/alice")
  inv=$(invalidations)
  st=$("$DM_BIN" --socket="$DM_SOCK" --status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("kernel_idkeys_tagged"), "|", d.get("key_isolation"))')
  finding "$ph-nsid-pipes" "nsid-idmapd on the pipes alone: c1=$c1 c2=$c2 host=$h (own: 4001 4002 1500); keys invalidated: $inv; status: $st"
  if [ "$ph" = patched ]; then
    check_eq "patched/nsid: the pipes alone give c1, c2, host their own uids" "4001 4002 1500" "$c1 $c2 $h"
    check_eq "patched/nsid: nsid-idmapd invalidated no key" 0 "$inv"
    check "patched/nsid: its status says the kernel tags ID keys ($st)" sh -c "echo '$st' | grep -q '^True | not needed'"
  else
    # On the stock module the daemon can only invalidate a container's key once the kernel
    # has read it (isolate-keys, retried until the kernel allows it): a lookup from another
    # namespace inside that window gets the container's answer (issue 19). Seen in the tier
    # on 6.12 once: host 4002 after c2. Reported, not asserted.
    [ "$c1 $c2 $h" = "4001 4002 1500" ] ||
      note "stock/nsid: the pipes alone: a container's answer reached another namespace before its key was invalidated: c1=$c1 c2=$c2 host=$h"
    check "stock/nsid: nsid-idmapd invalidated the containers' keys ($inv)" test "$inv" -gt 0
    check "stock/nsid: its status says the kernel keeps one ID key cache ($st)" sh -c "echo '$st' | grep -q '^False | on '"
  fi
  # nsidctl's verdict
  js=$("$NSIDCTL" status --json 2>/dev/null | python3 -c 'import json,sys; k=json.load(sys.stdin)["kernel"]; print(k["nfs_idkeys_tagged"], k["nfs_idkeys_probe"])')
  note "$ph: nsidctl doctor: $("$NSIDCTL" doctor 2>&1 | grep -i 'ID-mapping' | head -n 2 | tr '\n' ' ')"
  if [ "$ph" = patched ]; then
    check_eq "patched: nsidctl status --json: kernel.nfs_idkeys_tagged" "True tagged" "$js"
    check "patched: nsidctl doctor says each namespace has its own ID cache" \
      sh -c "'$NSIDCTL' doctor 2>&1 | grep -q 'tags its ID-mapping keys by network namespace'"
  else
    check_eq "stock: nsidctl status --json: kernel.nfs_idkeys_tagged" "False untagged" "$js"
    check "stock: nsidctl doctor warns of one ID cache for all namespaces and names the fix" \
      sh -c "'$NSIDCTL' doctor 2>&1 | grep -q 'one ID-mapping cache for all network namespaces' && '$NSIDCTL' doctor 2>&1 | grep -q nsid-nfs-keyns-dkms"
  fi
  dm_stop   # (not under check: DM_PID is a child of this shell, not of check's subshell)
  check_eq "$ph/nsid: nsid-idmapd stopped, exit status" 0 "$?"
  check "$ph/nsid: rpc.idmapd back (host, c1, c2)" rpcidmapd_all start
}

# ---- stock ------------------------------------------------------------------------------
check "stock nfsv4 module loaded" sh -c "[ -d /sys/module/nfsv4 ] && modinfo -n nfsv4 | grep -q '^/lib/modules/$REL/kernel/'"
phase stock
nsid_part stock
check "stock: NFS unmounted" mounts_down
check "stock nfsv4 module unloaded" rmmod nfsv4

# ---- patched ----------------------------------------------------------------------------
check "the patched module is for this kernel ($REL)" module_for_this_kernel "$MOD" || bail "wrong module"
check "patched nfsv4 module loaded in place of the stock one" insmod "$MOD" || bail "the patched module does not load"
dmesg | grep -iE 'nfsv4|module verification|tainting' | tail -n 3 | while read -r l; do note "dmesg: $l"; done
phase patched

# A host process looks up a name through c1's mount first (the key is requested in c1's
# domain; patch 1 alone lets the keys core create it in the host's), then the host asks
# through its own mount.
check "patched: ID key cache empty" demo_keys_clear
srv_file patched/px/f 1505
px=$(timeout 20 stat -c %u "/proc/$(container_pid c1)/root/mnt/nfs/patched/px/f" 2>/dev/null || echo "?")
hx=$(uid_of host patched/px/f)
finding "patched-proc-root" "a host process stat through c1's mount: $px (c1's own: 4051); then the host's own mount: $hx (the host's own: 1505)"
check_eq "patched: a host process looking through c1's mount gets c1's answer" 4051 "$px"
if [ "$hx" = 1505 ]; then
  note "the host's next lookup got its own answer: this kernel creates requested keys in the requested domain (patch 2)"
else
  note "the host's next lookup got c1's answer ($hx): the keys core created c1's key in the host's domain (patch 1 alone; patch 2 fixes it)"
fi
check "patched: the /proc/PID/root answer is either the host's own (patch 2) or c1's (patch 1 alone)" \
  sh -c "[ '$hx' = 1505 ] || [ '$hx' = 4051 ]"

# Netns teardown frees the keys tagged with it. The keys are nfsidmap's (request-key rule
# on: positive, 600 s), so they do not expire during a run of the default size (with 200
# containers the churn takes about 600 s itself: the 200-container run of 6 Dec went from
# 404 keys to 0, the host's and c1's having expired by then); the host's and c1's keys of the
# same name, whose namespaces stay, must stay.
check "patched: ID key cache empty" demo_keys_clear
check "patched: nfs-common's request-key rule on (keys that live 600 s)" demo_rk_rule on
srv_file patched/td/f 1504
[ "$CHURN" -le 200 ] || bail "at most 200 churn containers (their addresses: .21 to .220)"
churn_one() { # n: a container that mounts and looks labtd up; its own address
  container_create "t$1" --ip "$LAB_NET_PREFIX.$((20 + $1))" --passwd "$W/passwd-1" \
    --group "$W/group-1" &&
  container_mount "t$1" vers=4.2,soft,timeo=50,retrans=1 &&
  container_exec "t$1" timeout 30 stat -c %u /mnt/nfs/patched/td/f >/dev/null
} 2>/dev/null
t0=$(lab_ms) churn_err=0
brmac() { cat "/sys/class/net/$LAB_BRIDGE/address"; }
c1neigh() { container_exec c1 ip neigh show "$LAB_SERVER_IP" | awk '{print $5, $NF}'; }
note "churn: $LAB_BRIDGE $(brmac) before; c1's neighbour entry for the server: $(c1neigh)"
for b in $(seq 1 5 "$CHURN"); do   # five at a time: the guest mostly waits on the network
  pids=()
  for n in $(seq "$b" $((b + 4 < CHURN ? b + 4 : CHURN))); do churn_one "$n" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || churn_err=$((churn_err + 1)); done
done
# the control: the host's and c1's keys of the same name, made last so that none of them
# expires before the end (with 200 containers the churn itself lasts about 600 s)
uid_of host patched/td/f >/dev/null; uid_of c1 patched/td/f >/dev/null
base=4
peak1=$(idres_count 'labtd@')
# all of them go at once, their mounts with them (the netns dies with its last mount)
destroyers=()
for n in $(seq 1 "$CHURN"); do container_destroy "t$n" & destroyers+=($!); done
wait "${destroyers[@]}"
note "churn: $LAB_BRIDGE $(brmac) after; c1's neighbour entry for the server: $(c1neigh)"
check_eq "the lab bridge keeps its address through the churn (lib/nfs.sh)" "$LAB_BRIDGE_MAC" "$(brmac)"
note "churn: $CHURN containers in $(( ($(lab_ms) - t0) / 1000 )) s, $churn_err failed; labtd keys with all of them and the host and c1 alive: $peak1"
check_eq "patched: every churn container mounted and looked up" 0 "$churn_err"
check_eq "patched: each churn namespace, the host and c1 have their own uid and gid keys" \
  $((base + 2 * CHURN)) "$peak1"
idres_back() { [ "$(idres_count 'labtd@')" -le "$1" ]; }
wait_for 60 idres_back "$base"
after=$(idres_count 'labtd@')
finding "patched-teardown" "$CHURN network namespaces created, used and destroyed: $peak1 labtd keys with them and the host and c1 alive, $after after (the host's and c1's: $base)"
check_eq "patched: the destroyed namespaces' keys are gone, the living ones' stay" "$base" "$after"
check "patched: request-key rule off again" demo_rk_rule off

nsid_part patched
check "patched: NFS unmounted" mounts_down
lab_done
