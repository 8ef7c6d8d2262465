# idmapd-server.sh: knfsd inside a container netns, and the ID mapping daemons around it
# (bash, in the guest, as root; source lab.sh, nfs.sh and container.sh first).
#
#   srv_container_start KEY [container_create options]
#                            a container whose netns runs its own knfsd: nfsd filesystem
#                            mounted inside (so it is that netns's nfsd), private tmpfs on
#                            /var/lib/nfs, a tmpfs export at SRV_EXPORT as "/" (fsid=0) to
#                            the lab network, rpc.mountd and rpc.nfsd started inside; lease and
#                            grace 10 s. Name mapping must be on (nfs_modules on) before.
#   srv_wait_grace           wait until the last started server's grace period is over
#   srv_ip KEY               its address on the lab bridge
#   srv_flush KEY            flush knfsd's nfs4.idtoname/nametoid caches in its netns
#   cli_mount KEY SRVKEY [OPTS]   mount SRVKEY's export at /mnt/nfs in container KEY
#   dm_start CONF LOG        nsid-idmapd -f with CONF, socket $DM_SOCK; DM_PID
#   dm_ready / dm_stop       wait for its control socket / SIGTERM and wait
#   dm_ns_json INO FIELD     a field of the namespace with netns inode INO in --status --json
#   netns_ino KEY            the inode of a container's netns
SRV_EXPORT=${SRV_EXPORT:-/srv/nsid-srv-export}
DM_BIN=${DM_BIN:-$LAB_BUILD/idmapd/nsid-idmapd}
DM_SOCK=${DM_SOCK:-/run/nsid-lab/idmapd-srv.sock}

srv_container_start() {
  local key=$1; shift
  container_create "$key" "$@" || return 1
  container_exec "$key" sh -ec "
    mount -t tmpfs nsid-srv-varlib /var/lib/nfs
    mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery '$SRV_EXPORT'
    : > /var/lib/nfs/etab; : > /var/lib/nfs/rmtab
    mount -t nfsd nfsd /proc/fs/nfsd
    mount -t tmpfs -o mode=0777 nsid-srv-export '$SRV_EXPORT'
    echo 10 > /proc/fs/nfsd/nfsv4leasetime
    echo 10 > /proc/fs/nfsd/nfsv4gracetime
    exportfs -o rw,no_root_squash,fsid=0,no_subtree_check,insecure,sync '$LAB_NET_PREFIX.0/24:$SRV_EXPORT'
    rpc.mountd -N 2 -N 3
    rpc.nfsd -N 3 8" || return 1
  SRV_STARTED=$EPOCHSECONDS
}
srv_wait_grace() {
  local left=$(( SRV_STARTED + 11 - EPOCHSECONDS ))
  [ "$left" -gt 0 ] && sleep "$left"
  return 0
}
srv_ip() { cat "$LAB_CROOT/$1/ip"; }
srv_flush() {
  local c now=$EPOCHSECONDS
  for c in nfs4.idtoname nfs4.nametoid; do
    nsenter -t "$(container_pid "$1")" -n sh -c "echo $now > /proc/net/rpc/$c/flush" || return 1
  done
}
cli_mount() {
  local key=$1 srv=$2 opts=${3:-vers=4.2}
  container_exec "$key" mkdir -p /mnt/nfs &&
  container_exec "$key" timeout 30 mount -t nfs4 -o "$opts" "$(srv_ip "$srv"):/" /mnt/nfs
}
netns_ino() { local l; l=$(readlink "/proc/$(container_pid "$1")/ns/net"); l=${l#net:[}; echo "${l%]}"; }

DM_PID=
dm_start() { # conf log
  "$DM_BIN" -f --config="$1" --socket="$DM_SOCK" </dev/null >/dev/null 2>>"$2" &
  DM_PID=$!
}
dm_ready() {
  local i
  for i in {1..200}; do
    timeout 5 "$DM_BIN" --socket="$DM_SOCK" --ctl=status >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  return 1
}
dm_stop() { [ -n "$DM_PID" ] || return 0; kill -TERM "$DM_PID"; wait "$DM_PID"; local rc=$?; DM_PID=; return $rc; }
dm_ns_json() { # ino field
  "$DM_BIN" --socket="$DM_SOCK" --status --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["namespaces"]:
    if str(n["netns"]) == sys.argv[1]:
        print(n.get(sys.argv[2], ""))' "$1" "$2"
}
