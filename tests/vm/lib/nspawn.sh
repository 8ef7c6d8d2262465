# nspawn.sh: real systemd-nspawn containers (Debian's systemd-container) for lab scenarios
# (bash, in the guest, as root; source lab.sh and nfs.sh first; the lab bridge must be up).
# The guest's PID 1 is not systemd, so every container runs with --register=no (no
# systemd-machined) and --keep-unit (no transient scope from PID 1), in a cgroup of its own
# under the cgroup2 the scenario mounts. The container's command is a script, not an init.
#
#   nspawn_host_prepare            cgroup2 on /sys/fs/cgroup, NSPAWN_D/shared
#   nspawn_rootfs NAME             NSPAWN_D/NAME: a local rootfs directory (the host's /usr is
#                                  bound read-only at start, its own /etc with os-release,
#                                  hostname, a new machine-id; no image server is reachable)
#   nspawn_run NAME IP MODE [NETNS]
#                                  systemd-nspawn in the background, hostname app, the script
#                                  nspawn-run.sh as its command (MODE: at-once, online, go, as
#                                  there); network: --network-bridge=labbr0 (a veth made by
#                                  nspawn, host0 inside), or with NETNS (a path) the container
#                                  joins that namespace (--network-namespace-path, the only
#                                  network option it allows). Its log: NSPAWN_D/NAME.log
#   nspawn_result NAME             waits (60 s) for the script's line "mount-rc=N id=ID" (the
#                                  identifier the container saw just before its mount)
#   nspawn_stop NAME               let the script unmount and exit; wait (60 s) for nspawn to
#                                  end, else kill it (and fail)
NSPAWN_D=${NSPAWN_D:-/run/nsid-lab/nspawn}

nspawn_host_prepare() {
  mkdir -p "$NSPAWN_D/shared" /sys/fs/cgroup
  mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup || return 1
  cp "$LAB_SRC/tests/vm/lib/nspawn-run.sh" "$NSPAWN_D/shared/run.sh"
}

nspawn_rootfs() {
  local r=$NSPAWN_D/$1
  mkdir -p "$r"/{usr,etc,dev,proc,sys,tmp,run,mnt/nfs,root,shared} || return 1
  ln -s usr/bin "$r/bin"; ln -s usr/sbin "$r/sbin"; ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
  cp /usr/lib/os-release "$r/etc/os-release" && cp /etc/passwd /etc/group "$r/etc/" || return 1
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$r/etc/machine-id"; echo >> "$r/etc/machine-id"
  echo app > "$r/etc/hostname"
}

nspawn_run() {
  local name=$1 ip=$2 mode=$3 netns=${4:-} net
  rm -f "$NSPAWN_D/shared/$name".*
  [ -d "$NSPAWN_D/$name" ] || nspawn_rootfs "$name" || return 1
  if [ -n "$netns" ]; then net=--network-namespace-path=$netns; else net=--network-bridge=$LAB_BRIDGE; fi
  mkdir -p "/sys/fs/cgroup/nspawn-$name"
  # a cgroup of its own (--keep-unit: nspawn stays in the cgroup it was started in)
  ( echo "$BASHPID" > "/sys/fs/cgroup/nspawn-$name/cgroup.procs" &&
    exec systemd-nspawn --quiet --console=pipe --register=no --keep-unit -D "$NSPAWN_D/$name" \
      -M "$name" --hostname=app "$net" --bind-ro=/usr --bind="$NSPAWN_D/shared:/shared" \
      /usr/bin/bash /shared/run.sh "$mode" "$name" "$ip" "$LAB_SERVER_IP" \
      ) </dev/null >"$NSPAWN_D/$name.log" 2>&1 &
  echo $! > "$NSPAWN_D/$name.pid"
}

nspawn_result() {
  local f=$NSPAWN_D/shared/$1.result
  wait_for 60 test -s "$f" || { echo "no result from $1: $(tail -n 5 "$NSPAWN_D/$1.log")" >&2; return 1; }
  cat "$f"
}

nspawn_stop() {
  local pid
  : > "$NSPAWN_D/shared/$1.stop"
  pid=$(<"$NSPAWN_D/$1.pid") || return 1
  wait_for 60 sh -c "! kill -0 $pid 2>/dev/null" && return 0
  kill -9 "$pid" 2>/dev/null
  return 1
}
