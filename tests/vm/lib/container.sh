# container.sh: lab "containers" (bash, in the guest, as root). A container is a process
# (sleep infinity) in its own network, mount and UTS namespaces, optionally in its own user
# namespace (see --userns below), with its own /etc/passwd, /etc/group and /etc/idmapd.conf bind-mounted, and a veth joined to the
# lab bridge. It lives until container_destroy; its state is under /run/nsid-lab/c/KEY.
#
#   container_create KEY [--hostname H] [--userns] [--ip A.B.C.D] [--passwd FILE] [--group FILE]
#                  [--bind SRC:DST]...  also bind-mount SRC (a file or a directory) on DST in
#                                  the container's mount namespace, after the files above (so
#                                  --bind F:/etc/idmapd.conf replaces its default idmapd.conf);
#                                  a missing DST is made first (in the guest's root, which the
#                                  container shares: an empty file or directory)
#   container_pid KEY              the pid holding the namespaces
#   container_exec KEY cmd...      run cmd inside (nsenter -t PID [-U] -m -u -n)
#   container_mount KEY [OPTS] [MNT]  mount -t nfs4 -o OPTS SERVER:/ MNT inside (default
#                                  vers=4.2 at /mnt/nfs); the mount lives in the container
#   container_set_identifier KEY ID   write ID into the container netns's
#                                  /sys/fs/nfs/net/nfs_client/identifier (private sysfs)
#   container_identifier KEY       read it back
#   container_destroy KEY          kill the holder, wait for its netns to go
#   container_recreate KEY         destroy and create again with the same options and address
#
# --userns maps uid/gid 0 in the container to the guest's root (unshare --map-root-user),
# which is what an unprivileged runtime gives its own user; the netns, mount ns and UTS ns
# are then owned by that user namespace.
LAB_CROOT=/run/nsid-lab/c

_c_dir() { echo "$LAB_CROOT/$1"; }
container_pid() { local p; p=$(<"$LAB_CROOT/$1/pid") 2>/dev/null && echo "$p"; }
_c_nsenter_flags() {
  if [ -f "$LAB_CROOT/$1/userns" ]; then echo "-U --preserve-credentials -m -u -n"; else echo "-m -u -n"; fi
}

_c_next_ip() {
  local n
  mkdir -p "$LAB_CROOT"
  n=10; [ -f "$LAB_CROOT/.next" ] && n=$(<"$LAB_CROOT/.next")
  echo $((n + 1)) > "$LAB_CROOT/.next"
  echo "$LAB_NET_PREFIX.$n"
}

container_create() {
  local key=$1; shift
  local host=$key userns=0 ip="" passwd=/etc/passwd group=/etc/group binds=() b src dst mnts=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --hostname) host=$2; shift 2 ;;
      --userns) userns=1; shift ;;
      --ip) ip=$2; shift 2 ;;
      --passwd) passwd=$2; shift 2 ;;
      --group) group=$2; shift 2 ;;
      --bind) binds+=("$2"); shift 2 ;;
      *) echo "container_create: unknown option $1" >&2; return 1 ;;
    esac
  done
  local d; d=$(_c_dir "$key")
  [ -f "$d/pid" ] && kill -0 "$(<"$d/pid")" 2>/dev/null && { echo "container $key exists" >&2; return 1; }
  [ -d "$d/etc" ] || mkdir -p "$d/etc"
  [ -n "$ip" ] || { [ -f "$d/ip" ] && ip=$(<"$d/ip"); }
  [ -n "$ip" ] || ip=$(_c_next_ip)
  echo "$ip" > "$d/ip"
  echo "$host" > "$d/hostname"
  : > "$d/binds"
  for b in "${binds[@]}"; do
    src=${b%%:*} dst=${b#*:}
    [ -e "$src" ] && [ "${dst:0:1}" = / ] || { echo "container_create: bad --bind $b" >&2; return 1; }
    printf '%s\n' "$b" >> "$d/binds"
    if [ -d "$src" ]; then mnts+="mkdir -p '$dst' && "; else mnts+="{ [ -e '$dst' ] || : > '$dst'; } && "; fi
    mnts+="mount --bind '$src' '$dst' && "
  done
  [ "$passwd" -ef "$d/etc/passwd" ] || printf '%s\n' "$(<"$passwd")" > "$d/etc/passwd"
  [ "$group" -ef "$d/etc/group" ] || printf '%s\n' "$(<"$group")" > "$d/etc/group"
  [ -f "$d/etc/idmapd.conf" ] || printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' "$LAB_DOMAIN" > "$d/etc/idmapd.conf"
  local uflags=""
  if [ "$userns" = 1 ]; then uflags="--user --map-root-user"; : > "$d/userns"
  elif [ -f "$d/userns" ]; then rm -f "$d/userns"; fi
  # shellcheck disable=SC2086
  unshare $uflags --net --mount --uts --propagation private sleep infinity </dev/null >/dev/null 2>&1 &
  local pid=$!
  echo "$pid" > "$d/pid"
  # wait until unshare has exec'd sleep: the namespaces exist from then on
  local i sleepbin
  sleepbin=$(type -P sleep)
  for i in {1..200}; do
    [ "/proc/$pid/exe" -ef "$sleepbin" ] && break
    sleep 0.05
  done
  [ "/proc/$pid/ns/net" -ef /proc/self/ns/net ] && { echo "container $key: no netns" >&2; return 1; }
  local veth="v-$key"
  veth=${veth:0:15}
  ip link add "$veth" type veth peer name eth0 netns "$pid" || return 1
  ip link set "$veth" master "$LAB_BRIDGE" up || return 1
  # shellcheck disable=SC2046
  nsenter -t "$pid" $(_c_nsenter_flags "$key") sh -c "
    hostname '$host' &&
    mount --bind '$d/etc/passwd' /etc/passwd &&
    mount --bind '$d/etc/group' /etc/group &&
    mount --bind '$d/etc/idmapd.conf' /etc/idmapd.conf &&
    $mnts
    mkdir -p /mnt/nfs &&
    printf 'link set lo up\naddr add $ip/24 dev eth0\nlink set eth0 up\n' | ip -batch -" || return 1
}

container_exec() {
  local key=$1; shift
  local pid; pid=$(container_pid "$key") || return 1
  # shellcheck disable=SC2046
  nsenter -t "$pid" $(_c_nsenter_flags "$key") "$@"
}

container_mount() {
  local key=$1 opts=${2:-vers=4.2} mnt=${3:-/mnt/nfs}
  container_exec "$key" mkdir -p "$mnt" &&
  container_exec "$key" timeout 30 mount -t nfs4 -o "$opts" "$LAB_SERVER_IP:/" "$mnt"
}

# The identifier file is per netns; a sysfs mounted from inside the netns shows it. Join
# only the netns (stay in the init user ns), take a private mount ns, mount sysfs there.
container_set_identifier() {
  local pid; pid=$(container_pid "$1") || return 1
  nsenter -t "$pid" -n unshare -m sh -c 'mount -t sysfs sysfs /sys && printf "%s\n" "$1" > /sys/fs/nfs/net/nfs_client/identifier' sh "$2"
}
container_identifier() {
  local pid; pid=$(container_pid "$1") || return 1
  nsenter -t "$pid" -n unshare -m sh -c 'mount -t sysfs sysfs /sys && cat /sys/fs/nfs/net/nfs_client/identifier'
}

container_destroy() {
  local key=$1 d pid netns
  d=$(_c_dir "$key")
  pid=$(container_pid "$key") || return 0
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -f "$d/pid"
  local veth="v-$key"; veth=${veth:0:15}
  wait_for 10 sh -c "! ip link show '$veth'"
}

container_recreate() {
  local key=$1 d opts="" b
  d=$(_c_dir "$key")
  [ -f "$d/userns" ] && opts="--userns"
  [ -f "$d/binds" ] && while IFS= read -r b; do opts+=" --bind $b"; done < "$d/binds"
  container_destroy "$key" || return 1
  # shellcheck disable=SC2086
  container_create "$key" --hostname "$(cat "$d/hostname")" --ip "$(cat "$d/ip")" \
    --passwd "$d/etc/passwd" --group "$d/etc/group" $opts
}

containers_destroy_all() {
  local d
  for d in "$LAB_CROOT"/*/; do
    [ -d "$d" ] && container_destroy "$(basename "$d")"
  done
}
