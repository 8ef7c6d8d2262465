# userns.sh: a knfsd server container whose processes run in their own user namespace
# (bash, in the guest, as root). Needs lab.sh and nfs.sh.
#
#   userns_server_create KEY IP UIDMAP  netns (owned by the initial user namespace, the only
#                                  kind whose nfsd fs can be mounted), mount and UTS ns made
#                                  by root; /proc/fs/nfsd and a private /var/lib/nfs mounted
#                                  inside (lease and grace 10 s),
#                                  own /etc/passwd, /etc/group, /etc/idmapd.conf from
#                                  $LAB_CROOT/KEY/etc; then a holder process in a new user
#                                  namespace with UIDMAP written to uid_map and gid_map
#                                  ("0 0 1,1 100001 65535": commas for newlines); the root-side
#                                  holder is killed, so every process left in the netns is in
#                                  the user namespace
#   userns_server_pid KEY          the user-namespaced holder
#   userns_server_exec KEY cmd...  run cmd as root of the user namespace, in the server's
#                                  namespaces (nsenter -U -m -u -n)
#   userns_server_root KEY cmd...  run cmd as the guest's root in the server's netns and mount
#                                  ns (initial user namespace)

userns_server_pid() { local p; p=$(<"$LAB_CROOT/$1/upid") 2>/dev/null && echo "$p"; }

_userns_wait_exec() { # pid: until it has exec'd sleep
  local i sleepbin; sleepbin=$(type -P sleep)
  for i in {1..200}; do
    [ "/proc/$1/exe" -ef "$sleepbin" ] && return 0
    sleep 0.05
  done
  return 1
}

# A map must be written with one write(2): bash's printf writes line by line, cat writes
# the file it read at once.
_userns_write_map() { # "a b c,d e f" FILE
  local t; t=$(mktemp) || return 1
  printf '%s\n' "${1//,/$'\n'}" > "$t"
  cat "$t" > "$2"; local rc=$?
  rm -f "$t"
  return $rc
}

userns_server_create() {
  local key=$1 ip=$2 map=$3 d p0 pu veth
  d="$LAB_CROOT/$key"
  mkdir -p "$d/etc"
  [ -f "$d/etc/passwd" ] || cp /etc/passwd "$d/etc/passwd"
  [ -f "$d/etc/group" ] || cp /etc/group "$d/etc/group"
  [ -f "$d/etc/idmapd.conf" ] || printf '[General]\nDomain = %s\n' "$LAB_DOMAIN" > "$d/etc/idmapd.conf"
  echo "$ip" > "$d/ip"
  unshare --net --mount --uts --propagation private sleep infinity </dev/null >/dev/null 2>&1 &
  p0=$!
  _userns_wait_exec "$p0" || { echo "no root-side holder" >&2; return 1; }
  echo "$p0" > "$d/pid0"
  veth="v-$key"; veth=${veth:0:15}
  ip link add "$veth" type veth peer name eth0 netns "$p0" || return 1
  ip link set "$veth" master "$LAB_BRIDGE" up || return 1
  nsenter -t "$p0" -m -u -n sh -c "
    hostname '$key' &&
    mount --bind '$d/etc/passwd' /etc/passwd &&
    mount --bind '$d/etc/group' /etc/group &&
    mount --bind '$d/etc/idmapd.conf' /etc/idmapd.conf &&
    mount -t tmpfs nsid-srv-varlib /var/lib/nfs &&
    mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery &&
    : > /var/lib/nfs/etab && : > /var/lib/nfs/rmtab &&
    mount -t nfsd nfsd /proc/fs/nfsd &&
    echo 10 > /proc/fs/nfsd/nfsv4leasetime &&
    echo 10 > /proc/fs/nfsd/nfsv4gracetime &&
    printf 'link set lo up\naddr add $ip/24 dev eth0\nlink set eth0 up\n' | ip -batch -" || return 1
  nsenter -t "$p0" -m -u -n unshare --user sleep infinity </dev/null >/dev/null 2>&1 &
  pu=$!
  _userns_wait_exec "$pu" || { echo "no user-namespaced holder" >&2; return 1; }
  _userns_write_map "$map" "/proc/$pu/uid_map" || return 1
  _userns_write_map "$map" "/proc/$pu/gid_map" || return 1
  echo "$pu" > "$d/upid"
}

# Drop the root-side holder: from then on the netns holds only user-namespaced processes.
userns_server_drop_root_holder() {
  local d="$LAB_CROOT/$1" p0
  p0=$(<"$d/pid0") || return 0
  kill -9 "$p0" 2>/dev/null
  wait "$p0" 2>/dev/null
  rm -f "$d/pid0"
}

userns_server_exec() {
  local key=$1; shift
  nsenter -t "$(userns_server_pid "$key")" -U -m -u -n "$@"
}

userns_server_root() {
  local key=$1; shift
  nsenter -t "$(userns_server_pid "$key")" -m -u -n "$@"
}

