# podman.sh: Podman + crun from Debian's packages in the lab guest (bash, as root; source
# lab.sh and nfs.sh first). The guest has no systemd as PID 1, no network device and its /
# is the host's over 9p under a tmpfs overlay, so Podman is set up as test setup (files the
# scenario writes under /etc, never the product's):
#
#   podman_setup                  cgroup2 at /sys/fs/cgroup; /etc/containers/containers.conf
#                                 (cgroupfs manager, file events logger, crun, no default
#                                 network), storage.conf (overlay on a tmpfs at
#                                 /var/lib/containers, runroot on /run); prints podman's version
#   podman_image NAME PASSWD GROUP  a local image from a tarball made here: busybox-static
#                                 (its mount mounts NFSv4 given addr=, so nothing else is
#                                 needed), the given /etc/passwd and /etc/group, an idmapd.conf
#                                 with the lab's domain; `podman import` (no registry)
#   podman_netns KEY              a network namespace /run/netns/pod-KEY with a veth on the lab
#                                 bridge and the next free 192.0.2.x (kept per KEY, so a
#                                 re-created one gets its old address); for --network ns:PATH
#   podman_netns_del KEY          delete it (and its veth)
#   podman_run NAME KEY [ARGS...] podman run -d --privileged --name NAME --network
#                                 ns:/run/netns/pod-KEY ARGS... IMAGE sleep; prints the id
#   podman_pid NAME               the container's pid (podman inspect)
#   podman_mount NAME [OPTS]      mount -t nfs4 SERVER:/ /mnt/nfs inside (podman exec)
#   podman_identifier NAME        the NFS client identifier of the container's netns
#   podman_rm NAME                podman rm -f -t 0
PODMAN_IMAGE=${PODMAN_IMAGE:-localhost/nsid-lab:latest}
PODMAN_WORK=/run/nsid-lab/podman

podman_setup() {
  mkdir -p "$PODMAN_WORK" /etc/containers /var/lib/containers /run/netns || return 1
  mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup || return 1
  # the controllers crun asks for (pids, memory) must be enabled for the children of the root
  local c want=""
  for c in $(cat /sys/fs/cgroup/cgroup.controllers); do want="$want +$c"; done
  [ -z "$want" ] || echo "$want" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  mountpoint -q /var/lib/containers || mount -t tmpfs -o mode=0700 podman-storage /var/lib/containers || return 1
  cat > /etc/containers/containers.conf <<'EOC'
# nsid lab (tests/vm/lib/podman.sh): no systemd as PID 1, no journald, no network device
[containers]
log_driver = "k8s-file"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "crun"
[network]
network_backend = "cni"
EOC
  cat > /etc/containers/storage.conf <<'EOC'
[storage]
driver = "overlay"
graphroot = "/var/lib/containers/storage"
runroot = "/run/containers/storage"
EOC
  # libpod.conf (Podman's package ships one saying cgroup_manager = "systemd") still wins
  # over containers.conf where it exists; its settings are those of containers.conf here
  if [ -f /etc/containers/libpod.conf ]; then
    sed -i 's/^cgroup_manager = .*/cgroup_manager = "cgroupfs"/' /etc/containers/libpod.conf || return 1
  fi
  podman version --format '{{.Client.Version}}' || return 1
}

podman_image() { # name passwd group
  local name=$1 d="$PODMAN_WORK/rootfs-${1//[^a-z0-9]/_}" a
  rm -rf "$d"
  mkdir -p "$d"/{bin,sbin,etc,proc,sys,dev,tmp,mnt/nfs,run,var/lib/nfs} || return 1
  cp /bin/busybox "$d/bin/busybox" || return 1
  for a in sh ls cat stat mount umount sleep echo hostname chown id touch grep ip timeout true; do
    ln -s busybox "$d/bin/$a" || return 1
  done
  cp "$2" "$d/etc/passwd" && cp "$3" "$d/etc/group" || return 1
  printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' \
    "$LAB_DOMAIN" > "$d/etc/idmapd.conf"
  tar -C "$d" -cf "$PODMAN_WORK/${d##*/}.tar" . || return 1
  podman import --change 'CMD ["/bin/sh"]' "$PODMAN_WORK/${d##*/}.tar" "$name" >/dev/null
}

podman_netns() {
  local key=$1 ns="pod-$1" d="$PODMAN_WORK/net" ip n
  mkdir -p "$d"
  if [ -f "$d/$key.ip" ]; then ip=$(<"$d/$key.ip")
  else
    n=100; [ -f "$d/.next" ] && n=$(<"$d/.next")
    echo $((n + 1)) > "$d/.next"
    ip="$LAB_NET_PREFIX.$n"; echo "$ip" > "$d/$key.ip"
  fi
  local veth="vp-$key"; veth=${veth:0:15}
  ip netns add "$ns" || return 1
  ip link add "$veth" type veth peer name eth0 netns "$ns" || return 1
  ip link set "$veth" master "$LAB_BRIDGE" up || return 1
  printf 'link set lo up\naddr add %s/24 dev eth0\nlink set eth0 up\n' "$ip" | ip -n "$ns" -batch -
}
podman_netns_del() {
  local veth="vp-$1"; veth=${veth:0:15}
  ip netns del "pod-$1" 2>/dev/null
  wait_for 10 sh -c "! ip link show '$veth'"
}

podman_run() { # name netns-key args...
  local name=$1 key=$2; shift 2
  podman run -d --privileged --name "$name" --network "ns:/run/netns/pod-$key" "$@" \
    "$PODMAN_IMAGE" sleep 1000000
}
podman_pid() { podman inspect --format '{{.State.Pid}}' "$1"; }
podman_mount() {
  podman exec "$1" timeout 30 mount -t nfs4 -o "${2:-vers=4.2},addr=$LAB_SERVER_IP" \
    "$LAB_SERVER_IP:/" /mnt/nfs
}
podman_identifier() {
  local pid; pid=$(podman_pid "$1") || return 1
  nsenter -t "$pid" -n unshare -m sh -c 'mount -t sysfs sysfs /sys && cat /sys/fs/nfs/net/nfs_client/identifier'
}
podman_rm() { podman rm -f -t 0 "$1" >/dev/null; }

# lab_install_nsid: the project's files as `make install PREFIX=/usr` installs them (the same
# places as the Debian package: programs in /usr/sbin, the OCI hook entry in
# /usr/share/containers/oci/hooks.d, the request-key rules, ...), into the guest's overlay.
lab_install_nsid() {
  mkdir -p "$PODMAN_WORK" || return 1
  cmake --install "$LAB_BUILD" --prefix /usr > "$PODMAN_WORK/install.log" 2>&1 || {
    tail -n 20 "$PODMAN_WORK/install.log"; return 1; }
  ldconfig
}
