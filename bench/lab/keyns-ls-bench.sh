#!/bin/bash
# bench-keyns, guest side (a lab scenario run by path by bench/lab/keyns-ls-bench-run, not a
# test). What a user waits for: a cold `ls -ln` in a container of a directory of N files
# (default 300) with N distinct owners, each file its owner's group too (2N upcalls), over
# NFSv4.2 with name mapping on both sides (knfsd's channels answered by rpc.idmapd -S). In
# one boot, each variant in turn on its own directory and its own N users (nothing cached
# from an earlier variant: the kernel's keys, knfsd's caches, the daemons'), then the same
# listing again (warm):
#   stock module:   nfsidmap       nfs-common's request-key rule, as Debian ships it
#                   rpcidmapd      no id_resolver rule; rpc.idmapd -C in each container
#                   nsid           the nsid package's set-up: nsid-idmap as the rule,
#                                  nsid-idmapd with no configuration
#   patched module (kernel/patches, 0001): nfsidmap, nsid, and
#                   nsid-pipes     no id_resolver rule at all, nsid-idmapd answering every
#                                  namespace's pipe (what a tagging kernel makes safe)
# Each listing is checked: how many owners are the container's own (30000+i for lu<i>).
# Lines "# bench VARIANT cold_ms warm_ms right_of_N" go to the result for the table.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
. "$LAB_LIB/demo-idmap.sh"

N=${1:-300}
# (lists with commas, as NSID_LAB_ARGS passes them: "300 nfsidmap,rpcidmapd,nsid -"; "-" none)
VARIANTS_STOCK=${2:-"nfsidmap rpcidmapd nsid"}
VARIANTS_PATCHED=${3:-"nfsidmap nsid nsid-pipes"}
VARIANTS_STOCK=${VARIANTS_STOCK//,/ }; [ "$VARIANTS_STOCK" = - ] && VARIANTS_STOCK=
VARIANTS_PATCHED=${VARIANTS_PATCHED//,/ }; [ "$VARIANTS_PATCHED" = - ] && VARIANTS_PATCHED=
REL=$(uname -r)
MOD=$LAB_BUILD/kernel/$REL/nfsv4.ko
W=/run/nsid-lab/keyns-bench
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
[ -f "$MOD" ] || bail "no patched module at $MOD (kernel/build-nfsv4 $REL)"

ALL="$VARIANTS_STOCK $VARIANTS_PATCHED"
nv=$(echo $ALL | wc -w)
# users lu<v>_<i>: the server's (and the host's) uid 20000+1000v+i, c1's 30000+1000v+i
srv=$W/passwd-server c1p=$W/passwd-c1
{ cat /etc/passwd; for v in $(seq 1 "$nv"); do for i in $(seq 0 $((N - 1))); do
    echo "lu${v}_$i:x:$((20000 + 1000 * v + i)):$((20000 + 1000 * v + i))::/:/bin/sh"; done; done; } > "$srv"
{ cat /etc/group; for v in $(seq 1 "$nv"); do for i in $(seq 0 $((N - 1))); do
    echo "lu${v}_$i:x:$((20000 + 1000 * v + i)):"; done; done; } > "$W/group-server"
sed 's/^\(lu[0-9]*_[0-9]*\):x:2\([0-9]*\):2\([0-9]*\):/\1:x:3\2:3\3:/' "$srv" > "$c1p"
sed 's/^\(lu[0-9]*_[0-9]*\):x:2\([0-9]*\):/\1:x:3\2:/' "$W/group-server" > "$W/group-c1"
cp "$srv" /etc/passwd; cp "$W/group-server" /etc/group   # the host: as the server

check "knfsd started" nfs_server_start off || bail "no server"
check "name mapping on; knfsd's channels answered by rpc.idmapd -S" \
  demo_idmap_on "$srv" "$W/group-server" || bail "no server-side mapping"
check "container c1 with its own passwd" container_create c1 --passwd "$c1p" --group "$W/group-c1" || bail "no c1"
container_exec c1 mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs
check "files: $N per variant, each its own owner" python3 -c '
import os, sys
ex, n, nv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for v in range(1, nv + 1):
    d = os.path.join(ex, "v%d" % v); os.mkdir(d)
    for i in range(n):
        f = os.path.join(d, "f%d" % i); open(f, "w").close()
        os.chown(f, 20000 + 1000 * v + i, 20000 + 1000 * v + i)' "$LAB_EXPORT" "$N" "$nv"

NSID_RULE=/etc/request-key.d/nsid-idmap.conf
DM_SOCK=/run/nsid/idmapd.sock
RPCPID=
setup() { # variant
  rm -f "$NSID_RULE"; demo_rk_rule off >/dev/null
  case "$1" in
    nfsidmap) demo_rk_rule on ;;
    rpcidmapd)
      nsenter -t "$(container_pid c1)" -m -u -n rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs \
        </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-c1.log" &
      RPCPID=$!
      wait_for 10 sh -c "ls -l /proc/$RPCPID/fd 2>/dev/null | grep -q inotify" ;;
    nsid|nsid-pipes)
      [ "$1" = nsid ] &&
        sed "s|@NSID_IDMAP_PATH@|$LAB_BUILD/idmap/nsid-idmap|" "$LAB_SRC/idmap/nsid-idmap.conf.in" > "$NSID_RULE"
      "$DM_BIN" -f </dev/null >/dev/null 2>>"$LOGS/nsid-idmapd-$1.log" &
      DM_PID=$!
      dm_ready ;;
  esac
}
teardown() {
  [ -n "$RPCPID" ] && { kill "$RPCPID"; wait "$RPCPID" 2>/dev/null; RPCPID=; }
  [ -n "$DM_PID" ] && dm_stop
  rm -f "$NSID_RULE"
  return 0
}
listing() { # dir out: ms
  local t0 t1
  t0=$(lab_ms)
  container_exec c1 ls -ln "/mnt/nfs/$1" > "$2" 2>/dev/null
  t1=$(lab_ms)
  echo $((t1 - t0))
}
right() { # listing-file v: owners that are c1's own
  awk -v v="$2" 'NF >= 9 { sub(/^f/, "", $9); if ($3 == 30000 + 1000 * v + $9 && $4 == $3) n++ } END { print n + 0 }' "$1"
}

v=0
run_variants() { # module-label variants...
  local mod=$1 var cold warm ok; shift
  check "$mod: c1 mounts" container_mount c1 vers=4.2 || return
  for var in "$@"; do
    v=$((v + 1))
    check "$mod/$var: set up" setup "$var" || { teardown; continue; }
    demo_keys_clear
    cold=$(listing "v$v" "$W/ls-$v")
    ok=$(right "$W/ls-$v" "$v")
    warm=$(listing "v$v" "$W/ls-$v-warm")
    note "bench $mod-$var $cold $warm $ok $N"
    check "$mod/$var: listed $N files" test "$(grep -c ' f[0-9]*$' "$W/ls-$v")" = "$N"
    teardown
  done
  container_exec c1 umount /mnt/nfs
}

[ -n "$VARIANTS_STOCK" ] && run_variants stock $VARIANTS_STOCK
if [ -n "$VARIANTS_PATCHED" ]; then
  check "stock nfsv4 unloaded" rmmod nfsv4 || bail "rmmod"
  check "patched nfsv4 loaded" insmod "$MOD" || bail "insmod"
  run_variants patched $VARIANTS_PATCHED
fi
lab_done
