#!/bin/bash
# idmap-default: nsid's ID mapping as the package installs it, on the stock nfsv4 module
# (no kernel tagging), with no setting changed: nsid's request-key rule (nsid-idmap.conf,
# nfs-common's id_resolver.conf diverted away), nsid-idmapd with no configuration file (every
# default: host-pipes, isolate-keys, set-identifier), no rpc.idmapd anywhere. labalice is 1500
# on the server and the host, 4001 in c1, 4002 in c2; labsame is 1510 on the host AND in c1,
# 4012 in c2.
#   - host, c1, c2 stat the same name: host first, then containers first, then the container
#     whose answer equals the host's followed by one whose answer differs;
#   - a network namespace made with `ip netns add` and found by nsid-idmapd before any process
#     is in it; then a process with its own passwd enters and mounts: its own answers;
#   - c1 and c2 stat files of ROUNDS new users (argument, default 50) at the same moment: the
#     wrong answers are counted and their rate reported (the kernel's one cache lets a
#     namespace that asks while another's key is under construction share that key);
#   - chown in c1 to its labalice (4001) stores the server's labalice (1500);
#   - the daemon stops: lookups work again through the helper (its markers are cleared), in
#     the host's context as nfsidmap answers (the daemon is what gives containers their own).
# lab-test: 6.1 6.12
# lab-timeout: 600
# lab-cost: 80
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
. "$LAB_LIB/demo-idmap.sh"

ROUNDS=${1:-50}
W=/run/nsid-lab/idmap-default
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
note "kernel $(uname -r): stock nfsv4 module"

spec_srv="labalice=1500 labsame=1510 labchown=1520 labnew=1530"
spec_c1="labalice=4001 labsame=1510 labchown=4021 labnew=4031"
spec_c2="labalice=4002 labsame=4012 labchown=4022 labnew=4032"
spec_c3="labalice=4003 labsame=4013 labchown=4023 labnew=4033"
for n in $(seq 1 "$ROUNDS"); do
  spec_srv+=" labu$n=$((20000 + n))"
  spec_c1+=" labu$n=$((30000 + n))"
  spec_c2+=" labu$n=$((40000 + n))"
done
demo_users_setup "$W" "$spec_srv" "$spec_c1" "$spec_c2" "$spec_c3" || bail "cannot write the users' files"

check "knfsd started" nfs_server_start off || bail "no server"
check "name mapping on; knfsd's channels answered by rpc.idmapd -S" \
  demo_idmap_on "$W/passwd-server" "$W/group-server" || bail "no server-side mapping"
check "nfs-common's id_resolver rule diverted away (as the package's preinst does)" demo_rk_rule off
NSID_RULE=/etc/request-key.d/nsid-idmap.conf
sed "s|@NSID_IDMAP_PATH@|$LAB_BUILD/idmap/nsid-idmap --log-file=$LOGS/nsid-idmap.log|" \
  "$LAB_SRC/idmap/nsid-idmap.conf.in" > "$NSID_RULE"
check "nsid's request-key rule installed (the package's nsid-idmap.conf)" \
  grep -q "^create[[:space:]]*id_resolver[[:space:]]*\*[[:space:]]*\*[[:space:]]*$LAB_BUILD/idmap/nsid-idmap .*-t 600 %k %d" "$NSID_RULE"
check "no /etc/nsid.conf: every default" test ! -e /etc/nsid.conf
for k in 1 2; do
  check "c$k created with its own passwd" \
    container_create "c$k" --passwd "$W/passwd-$k" --group "$W/group-$k" || bail "no c$k"
done
DM_SOCK=/run/nsid/idmapd.sock
"$DM_BIN" -f </dev/null >/dev/null 2>>"$LOGS/nsid-idmapd.log" &
DM_PID=$!
check "nsid-idmapd up, as its unit starts it (no option, no configuration)" dm_ready || bail "no daemon"

HMNT=/mnt/host-nfs
mkdir -p "$HMNT"
check "host, c1, c2 mount the export" sh -c "timeout 30 mount -t nfs4 -o vers=4.2 $LAB_SERVER_IP:/ $HMNT" &&
  check "c1 mounts" container_mount c1 vers=4.2 && check "c2 mounts" container_mount c2 vers=4.2 ||
  bail "mounts failed"
check "the module does not tag ID keys (stock)" \
  sh -c "'$DM_BIN' --socket='$DM_SOCK' --status --json | grep -q '\"kernel_idkeys_tagged\": *false'"

uid_of() { # where(host|c1|c2|late) path-under-export; a failed stat is "?", and says why
  local out rc
  case "$1" in
    host) out=$(timeout 20 stat -c %u "$HMNT/$2" 2>"$W/err.$1") ;;
    late) out=$(nsenter -t "$LATE_PID" -m -n timeout 20 stat -c %u "/mnt/nfs/$2" 2>"$W/err.$1") ;;
    *) out=$(container_exec "$1" timeout 20 stat -c %u "/mnt/nfs/$2" 2>"$W/err.$1") ;;
  esac
  rc=$?
  if [ "$rc" = 0 ]; then echo "$out"; return; fi
  echo "uid_of $1 $2: exit $rc: $(cat "$W/err.$1")" >&2
  echo "?"
}
srv_file() { # path owner-uid
  mkdir -p "$LAB_EXPORT/${1%/*}"; echo x > "$LAB_EXPORT/$1"; chown "$2:$2" "$LAB_EXPORT/$1"
}
# Each order on its own new name's files, from a cold ID cache: keys of earlier checks gone.
cold() { demo_keys_clear; }

# ---- the order checks ---------------------------------------------------------------------
cold; srv_file o1/alice 1500
h=$(uid_of host o1/alice); a=$(uid_of c1 o1/alice); b=$(uid_of c2 o1/alice)
check_eq "host first: host, c1, c2 each see their own uid" "1500 4001 4002" "$h $a $b"
cold; srv_file o2/alice 1500
b=$(uid_of c2 o2/alice); a=$(uid_of c1 o2/alice); h=$(uid_of host o2/alice)
check_eq "containers first: c2, c1, host each see their own uid" "4002 4001 1500" "$b $a $h"
cold; srv_file o3/same 1510
a=$(uid_of c1 o3/same); b=$(uid_of c2 o3/same); h=$(uid_of host o3/same)
check_eq "c1 (same answer as the host) first, then c2 (another): each its own" "1510 4012 1510" "$a $b $h"
# the same files again, after their attributes expired from the client's cache: answers
# that stayed in the kernel's cache would show now
sleep 4
a=$(uid_of c1 o1/alice); b=$(uid_of c2 o1/alice); h=$(uid_of host o1/alice)
check_eq "again later: each its own" "4001 4002 1500" "$a $b $h"

# ---- a netns made before its process --------------------------------------------------------
LIP=$(_c_next_ip)
check "ip netns add late (with a veth on the lab bridge)" sh -c "
  ip netns add late && ip link add v-late type veth peer name eth0 netns late &&
  ip link set v-late master $LAB_BRIDGE up && ip -n late link set lo up &&
  ip -n late addr add $LIP/24 dev eth0 && ip -n late link set eth0 up"
LINO=$(stat -L -c %i /run/netns/late)
check "nsid-idmapd found it with no process in it (host context)" \
  wait_for 15 sh -c "'$DM_BIN' --socket='$DM_SOCK' --status --json | grep -q 'netns:\\[$LINO\\].*host context'"
mkdir -p "$W/late"
nsenter --net=/run/netns/late unshare --mount --propagation private sh -c "
  mount --bind '$W/passwd-3' /etc/passwd && mount --bind '$W/group-3' /etc/group &&
  mkdir -p /mnt/nfs && exec sleep infinity" </dev/null >/dev/null 2>&1 &
LATE_PID=$!
check "its first process entered, with its own passwd" \
  wait_for 10 sh -c "[ /proc/$LATE_PID/exe -ef $(type -P sleep) ]"
check "it mounts the export" nsenter -t "$LATE_PID" -m -n timeout 30 mount -t nfs4 -o vers=4.2 "$LAB_SERVER_IP:/" /mnt/nfs
cold; srv_file l1/alice 1500
l=$(uid_of late l1/alice); h=$(uid_of host l1/alice)
check_eq "the late namespace sees its own uid, the host its own" "4003 1500" "$l $h"
note "daemon on the late netns: $(grep "netns:\[$LINO\]" "$LOGS/nsid-idmapd.log" | tail -n 3 | tr '\n' ' ')"

# ---- two containers at the same moment ------------------------------------------------------
cold
for n in $(seq 1 "$ROUNDS"); do srv_file "r/u$n" $((20000 + n)); done
sleep 1
list=$(for n in $(seq 1 "$ROUNDS"); do printf '/mnt/nfs/r/u%s ' "$n"; done)
container_exec c1 sh -c "stat -c %u $list" > "$W/r1" 2>"$W/r1.err" &
p1=$!
container_exec c2 sh -c "stat -c %u $list" > "$W/r2" 2>"$W/r2.err" &
p2=$!
wait "$p1"; wait "$p2"
wrong1=0 wrong2=0 bad=0
n=0
while read -r u; do n=$((n + 1)); [ "$u" = $((30000 + n)) ] || { wrong1=$((wrong1 + 1)); [ "$u" = $((40000 + n)) ] || bad=$((bad + 1)); }; done < "$W/r1"
n=0
while read -r u; do n=$((n + 1)); [ "$u" = $((40000 + n)) ] || { wrong2=$((wrong2 + 1)); [ "$u" = $((30000 + n)) ] || bad=$((bad + 1)); }; done < "$W/r2"
finding "default-concurrent" "c1 and c2 at the same moment, $ROUNDS names each: c1 wrong $wrong1, c2 wrong $wrong2 (rate $(( (wrong1 + wrong2) * 100 / (2 * ROUNDS) ))%); the patched module: 0 (kernel-keyns)"
check_eq "every answer of the concurrent run is one of the two containers'" 0 "$bad"
check_eq "both listed $ROUNDS owners" "$ROUNDS $ROUNDS" "$(wc -l < "$W/r1") $(wc -l < "$W/r2")"

# ---- chown from a container -----------------------------------------------------------------
srv_file ch/f 0
check "c1 chowns a file to its labalice (4001)" container_exec c1 chown 4001:4001 /mnt/nfs/ch/f
check_eq "the server stores its labalice (1500)" 1500 "$(stat -c %u "$LAB_EXPORT/ch/f")"
check_eq "c1 sees 4001, the host 1500" "4001 1500" "$(uid_of c1 ch/f) $(uid_of host ch/f)"

# ---- the helper's and the daemon's work, from their logs and status -------------------------
routed=$(grep -c 'handed to the idmap pipe' "$LOGS/nsid-idmap.log" 2>/dev/null)
inv=$("$DM_BIN" --socket="$DM_SOCK" --status --json |
  python3 -c 'import json,sys; print(sum(n["keys_invalidated"] for n in json.load(sys.stdin)["namespaces"]))')
note "nsid-idmap handed $routed lookups to the pipes; nsid-idmapd invalidated $inv keys"
check "nsid-idmap handed lookups to the namespaces' pipes ($routed)" test "${routed:-0}" -gt 0
check "nsid-idmapd invalidated answers once read ($inv)" test "${inv:-0}" -gt 0
legacy_left() { # the id_legacy keys .id_resolver still links that can be described (valid)
  local kr s
  kr=$(awk '$9 == ".id_resolver:" || $9 == ".id_resolver" {print $1; exit}' /proc/keys)
  [ -n "$kr" ] || { echo 0; return; }
  for s in $(keyctl rlist "0x$kr" 2>/dev/null); do keyctl rdescribe "$s" 2>/dev/null; echo; done |
    grep -c '^id_legacy;'
}
no_legacy_left() { [ "$(legacy_left)" = 0 ]; }
check "no valid id_legacy key is left in .id_resolver ($(legacy_left) now)" wait_for 5 no_legacy_left

# ---- the daemon stops: the helper answers again ---------------------------------------------
dm_stop
check_eq "nsid-idmapd stopped, exit status" 0 "$?"
check "its stop cleared .id_resolver (the markers that send lookups to the pipes)" \
  grep -q 'cleared .id_resolver: nsid-idmapd stops' "$LOGS/nsid-idmapd.log"
srv_file s1/new 1530
check_eq "without the daemon the host still maps names (the helper, host context)" 1530 "$(uid_of host s1/new)"

kill "$LATE_PID" 2>/dev/null
umount "$HMNT" 2>/dev/null
rm -f "$NSID_RULE"
lab_done
