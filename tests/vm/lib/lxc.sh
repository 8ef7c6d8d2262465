# lxc.sh: real LXC containers (Debian's lxc package: lxc-start, lxc-attach, lxc-stop,
# lxc-destroy) for lab scenarios (bash, in the guest, as root; source lab.sh and nfs.sh
# first; the lab bridge must be up).
#
#   lxc_host_prepare               cgroup2 on /sys/fs/cgroup (the guest has no systemd to
#                                  mount it; lxc-start needs it)
#   lxc_make NAME [--hostname H] [--passwd F] [--group F] [--ip A.B.C.D] [--hook-args ARGS]
#                                  a privileged container NAME in LXC_P: a local rootfs
#                                  directory LXC_P/NAME/rootfs (no image server is reachable:
#                                  the host's /usr bound read-only, its own /etc with passwd,
#                                  group, idmapd.conf and a new /etc/machine-id), a veth on the
#                                  lab bridge (lxc.net.0.link), init `sleep infinity`, and the
#                                  installed hook as README says:
#                                    lxc.hook.start-host = /usr/share/lxc/hooks/nsid-uniquifier [ARGS]
#   lxc_start NAME                 lxc-start -d, wait until RUNNING
#   lxc_pid NAME                   its init's pid (lxc-info -p)
#   lxc_exec NAME cmd...           lxc-attach (every namespace of the container, its root)
#   lxc_mount NAME [OPTS]          mount -t nfs4 the lab's export at /mnt/nfs, from inside
#   lxc_identifier NAME            /sys/fs/nfs/net/nfs_client/identifier as the container
#                                  sees it (its own sysfs, mounted by LXC in its netns)
#   lxc_gone NAME                  unmount its NFS (as an init would), lxc-stop -k, lxc-destroy
#                                  (the rootfs goes with it)
LXC_P=${LXC_P:-/run/nsid-lab/lxc}
LXC_HOOK=${LXC_HOOK:-/usr/share/lxc/hooks/nsid-uniquifier}

lxc_host_prepare() {
  mkdir -p "$LXC_P" /sys/fs/cgroup
  mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup
}

lxc_make() {
  local name=$1; shift
  local host=$name passwd=/etc/passwd group=/etc/group ip="" hookargs=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --hostname) host=$2; shift 2 ;;
      --passwd) passwd=$2; shift 2 ;;
      --group) group=$2; shift 2 ;;
      --ip) ip=$2; shift 2 ;;
      --hook-args) hookargs=" $2"; shift 2 ;;
      *) echo "lxc_make: unknown option $1" >&2; return 1 ;;
    esac
  done
  local d=$LXC_P/$name r=$LXC_P/$name/rootfs
  [ -e "$d" ] && { echo "lxc_make: $d exists" >&2; return 1; }
  [ -n "$ip" ] || ip=$(_lxc_next_ip)
  mkdir -p "$r"/{usr,etc,dev,proc,sys,tmp,run,mnt/nfs,root,var/lib/nfs} || return 1
  ln -s usr/bin "$r/bin"; ln -s usr/sbin "$r/sbin"; ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
  cp "$passwd" "$r/etc/passwd" && cp "$group" "$r/etc/group" || return 1
  cp /etc/nsswitch.conf "$r/etc/" 2>/dev/null
  printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' \
    "$LAB_DOMAIN" > "$r/etc/idmapd.conf"
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$r/etc/machine-id"; echo >> "$r/etc/machine-id"
  echo "$host" > "$r/etc/hostname"
  cat > "$d/config" <<EOF
lxc.uts.name = $host
lxc.rootfs.path = dir:$r
lxc.mount.entry = /usr usr none bind,ro 0 0
lxc.mount.auto = proc:mixed sys:mixed
lxc.autodev = 1
lxc.tty.max = 0
lxc.pty.max = 16
lxc.apparmor.profile = unconfined
lxc.net.0.type = veth
lxc.net.0.link = $LAB_BRIDGE
lxc.net.0.name = eth0
lxc.net.0.flags = up
lxc.net.0.ipv4.address = $ip/24
lxc.init.cmd = /usr/bin/sleep infinity
lxc.log.file = $d/lxc.log
lxc.log.level = INFO
lxc.hook.start-host = $LXC_HOOK$hookargs
EOF
}

_lxc_next_ip() {
  local n=100
  [ -f "$LXC_P/.next" ] && n=$(<"$LXC_P/.next")
  echo $((n + 1)) > "$LXC_P/.next"
  echo "$LAB_NET_PREFIX.$n"
}

lxc_start() {
  lxc-start -n "$1" -P "$LXC_P" -d || { tail -n 20 "$LXC_P/$1/lxc.log" >&2; return 1; }
  lxc-wait -n "$1" -P "$LXC_P" -s RUNNING -t 30
}
lxc_pid() { lxc-info -n "$1" -P "$LXC_P" -p -H; }
lxc_exec() {
  local name=$1; shift
  lxc-attach -n "$name" -P "$LXC_P" -- "$@"
}
lxc_mount() {
  lxc_exec "$1" timeout 30 mount -t nfs4 -o "${2:-vers=4.2}" "$LAB_SERVER_IP:/" /mnt/nfs
}
lxc_identifier() { lxc_exec "$1" cat /sys/fs/nfs/net/nfs_client/identifier; }
lxc_gone() {
  # a real init unmounts remote file systems before it stops; LXC removes the veth when the
  # init dies, and an NFS client still mounted then waits minutes for its server (seen: 370 s)
  lxc_exec "$1" umount -a -t nfs4 2>/dev/null
  lxc-stop -n "$1" -P "$LXC_P" -k 2>/dev/null
  lxc-wait -n "$1" -P "$LXC_P" -s STOPPED -t 30 || return 1
  lxc-destroy -n "$1" -P "$LXC_P"
}
