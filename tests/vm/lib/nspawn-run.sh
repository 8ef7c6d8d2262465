#!/bin/bash
# nspawn-run.sh MODE NAME IP SERVER: the command of a lab systemd-nspawn container
# (tests/vm/lib/nspawn.sh), run inside it by bash. It brings its network up (host0 from
# --network-bridge, or eth0 in a netns given with --network-namespace-path), then mounts the
# server's export:
#   at-once  at once, as a container whose first act is the mount
#   online   after "network-online": its address is up and the server answers on port 2049
#            (what network-online.target gives a container that runs systemd-networkd)
#   go       after network-online (then it prints "nsid-run: online"), once the host
#            creates /shared/NAME.go
#   wait-id  after its identifier is set (at most 30 s), as a container would that cannot
#            know when the host sets it (the fix for a container that mounts at once)
# It writes "mount-rc=N id=ID at=A ms=T" to /shared/NAME.result (ID: its identifier just
# before the mount, when it can see it; A: the clock in ms then; T: ms from its start to the
# mount), holds the mount until /shared/NAME.stop
# exists (at most 120 s), unmounts and exits.
mode=$1 name=$2 ip=$3 srv=$4
t0=${EPOCHREALTIME/./}
ms() { local t=${EPOCHREALTIME/./}; echo $(( (t - t0) / 1000 )); }
dev=host0; [ -e /sys/class/net/host0 ] || dev=eth0
# (a netns made by the host comes with its address: then there is nothing to do)
if ! ip -4 addr show dev "$dev" 2>/dev/null | grep -q " $ip/"; then
  ip link set lo up && ip addr add "$ip/24" dev "$dev" && ip link set "$dev" up ||
    { echo "mount-rc=net id= ms=$(ms)" > "/shared/$name.result"; exit 1; }
fi
# (bash builtins in the loops, bounded by time: a fork costs 100s of ms under the lab's TCG)
online() {
  local end=$((EPOCHSECONDS + 30))
  until (: <"/dev/tcp/$srv/2049") 2>/dev/null; do [ "$EPOCHSECONDS" -ge "$end" ] && return 1; sleep 0.1; done
}
ident() { id=""; read -r id < /sys/fs/nfs/net/nfs_client/identifier 2>/dev/null; [ "$id" = "(null)" ] && id=""; }
case $mode in
  at-once) ;;
  online) online ;;
  go) online; echo "nsid-run: online"
      end=$((EPOCHSECONDS + 120)); until [ -e "/shared/$name.go" ] || [ "$EPOCHSECONDS" -ge "$end" ]; do sleep 0.1; done ;;
  wait-id) end=$((EPOCHSECONDS + 30)); ident; until [ -n "$id" ] || [ "$EPOCHSECONDS" -ge "$end" ]; do sleep 0.1; ident; done ;;
esac
ident
t=$(ms) at=${EPOCHREALTIME/./}
mount -t nfs4 -o vers=4.2,retrans=2,timeo=50 "$srv:/" /mnt/nfs
echo "mount-rc=$? id=$id at=$((at / 1000)) ms=$t" > "/shared/$name.result"
end=$((EPOCHSECONDS + 120)); until [ -e "/shared/$name.stop" ] || [ "$EPOCHSECONDS" -ge "$end" ]; do sleep 0.1; done

umount /mnt/nfs
exit 0
