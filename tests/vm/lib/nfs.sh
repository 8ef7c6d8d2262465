# nfs.sh: knfsd and NFS client fixtures for lab scenarios (bash, in the guest, as root).
#
#   nfs_modules [idmap=on|off]     load nfs, nfsv4, nfsd (lab_modprobe: built-in ones are
#                                  skipped); set nfs4_disable_idmapping on both
#   nfs_server_start [idmap=on|off] knfsd in the guest's initial netns on the lab bridge
#                                  (LAB_SERVER_IP), exporting a tmpfs at LAB_EXPORT as "/"
#   nfs_server_clients             the server's view, one line per client:
#                                  name="<co_ownerid>" status=<s> address=<ip:port> clientid=<id> minor=<v>
#   nfs_server_confirmed [PATTERN] number of confirmed clients (name matching grep -E PATTERN)
#   nfs_server_names [PATTERN]     distinct client names (quoted), one a line
# The server's lease and grace times are set to 10 s (the minimum) before nfsd starts so
# scenarios do not wait 90 s for grace to end.
LAB_BRIDGE=${LAB_BRIDGE:-labbr0}
LAB_SERVER_IP=${LAB_SERVER_IP:-192.0.2.1}
LAB_NET_PREFIX=${LAB_NET_PREFIX:-192.0.2}
LAB_EXPORT=${LAB_EXPORT:-/srv/nsid-lab-export}
LAB_DOMAIN=${LAB_DOMAIN:-lab.example}

_idmap_param() { # on -> N (idmapping enabled), off -> Y
  case "$1" in on) echo N ;; off) echo Y ;; *) echo "nfs.sh: idmap=on|off, got $1" >&2; return 1 ;; esac
}

nfs_modules() {
  local idmap=${1:-off} v
  v=$(_idmap_param "$idmap") || return 1
  lab_modprobe nfs nfsv4 nfsd bridge veth || return 1
  echo "$v" > /sys/module/nfs/parameters/nfs4_disable_idmapping || return 1
  echo "$v" > /sys/module/nfsd/parameters/nfs4_disable_idmapping || return 1
}

# The bridge gets an address of its own. A Linux bridge without one takes the lowest address
# of its ports and changes it as ports come and go; a container's neighbour entry for the
# server then names a port that is gone, and its NFS traffic is lost until that entry is
# probed again (tens of seconds). Seen in kernel-keyns: c1 refreshed its entry while a churn
# container's veth had the lowest address; after the churn its stat hung for 20 s.
LAB_BRIDGE_MAC=${LAB_BRIDGE_MAC:-02:6e:73:69:64:01}
lab_bridge_up() {
  ip link show "$LAB_BRIDGE" >/dev/null 2>&1 && return 0
  ip link add "$LAB_BRIDGE" address "$LAB_BRIDGE_MAC" type bridge || return 1
  ip addr add "$LAB_SERVER_IP/24" dev "$LAB_BRIDGE" || return 1
  ip link set "$LAB_BRIDGE" up
}

nfs_server_start() {
  local idmap=${1:-off}
  nfs_modules "$idmap" || return 1
  lab_bridge_up || return 1
  mkdir -p "$LAB_EXPORT" /var/lib/nfs/v4recovery
  mountpoint -q "$LAB_EXPORT" || mount -t tmpfs -o mode=0777 nsid-lab-export "$LAB_EXPORT" || return 1
  mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
  mountpoint -q /var/lib/nfs/rpc_pipefs || mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs
  echo 10 > /proc/fs/nfsd/nfsv4leasetime 2>/dev/null
  echo 10 > /proc/fs/nfsd/nfsv4gracetime 2>/dev/null
  : > /var/lib/nfs/etab; : > /var/lib/nfs/rmtab
  echo "$LAB_EXPORT $LAB_NET_PREFIX.0/24(rw,no_root_squash,fsid=0,no_subtree_check,insecure,sync)" > /etc/exports
  rm -f /etc/exports.d/* 2>/dev/null
  cat > /etc/idmapd.conf <<EOC
[General]
Domain = $LAB_DOMAIN
[Mapping]
Nobody-User = nobody
Nobody-Group = nogroup
EOC
  exportfs -ra || return 1
  rpc.mountd -N 2 -N 3 || return 1
  if [ "$idmap" = on ]; then
    rpc.idmapd -S -p /var/lib/nfs/rpc_pipefs || return 1
  fi
  rpc.nfsd -N 3 8 || return 1
  # grace ends 10 s after start; any state-creating op before then gets NFS4ERR_GRACE
  LAB_SERVER_STARTED=$EPOCHSECONDS
}

# Wait for the server's grace period (10 s) to be over: knfsd says so in v4_end_grace ("Y"
# once its laundromat has ended grace). Asking the kernel also works when nfs_server_start ran
# in a subshell (under `check`), where LAB_SERVER_STARTED never reached this shell.
nfs_server_wait_grace() {
  local i left
  if [ -r /proc/fs/nfsd/v4_end_grace ]; then
    for ((i = 0; i < 300; i++)); do
      [ "$(cat /proc/fs/nfsd/v4_end_grace 2>/dev/null)" = Y ] && return 0
      sleep 0.1
    done
    echo "nfs_server_wait_grace: grace not over after 30 s" >&2
    return 1
  fi
  left=$(( ${LAB_SERVER_STARTED:-0} + 11 - EPOCHSECONDS ))
  [ "$left" -gt 0 ] && sleep "$left"
  return 0
}

nfs_server_clients() {
  local d k v name status addr cid minor
  for d in /proc/fs/nfsd/clients/*/; do
    name="" status="" addr="" cid="" minor=""
    # the file can vanish while we read it (a client expired): then skip it
    while IFS= read -r line; do
      k=${line%%: *}; v=${line#*: }
      case "$k" in
        name) name=$v ;; status) status=$v ;; address) addr=${v//\"/} ;;
        clientid) cid=$v ;; "minor version") minor=$v ;;
      esac
    done < "$d/info" 2>/dev/null || continue
    [ -n "$cid" ] || continue
    printf 'name=%s status=%s address=%s clientid=%s minor=%s\n' "$name" "${status:-?}" "$addr" "$cid" "$minor"
  done
}
nfs_server_confirmed() {
  nfs_server_clients | grep ' status=confirmed ' | grep -cE -- "${1:-.}"
}
nfs_server_names() {
  nfs_server_clients | sed -n 's/^name=\(".*"\) status=.*/\1/p' | grep -E -- "${1:-.}" | sort -u
}
