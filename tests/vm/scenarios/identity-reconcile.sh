#!/bin/bash
# lab-test: 6.1 6.12
# identity-reconcile: network namespaces made with `ip netns add` and with unshare get their
# identifier from `nsid-uniquifier reconcile`; one already set by someone else and the host's
# own are left alone; a second reconcile changes nothing. Then the udev path: a host listener
# for the nfs_client uevent (as the shipped udev rule) runs reconcile. From Linux 6.5 the
# event reaches the host and the new netns has its identifier before its first mount; before
# 6.5 it never arrives (why the container hooks are the primary trigger).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
LISTEN="$LAB_BUILD/tests/vm/nsid-uevent-listen"
export NSID_STATE_DIR=/run/nsid-lab/state
mkdir -p "$NSID_STATE_DIR"

check "nsid-uniquifier built ($UNIQ)" test -x "$UNIQ" || bail "build nsid-uniquifier first"
check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"
netns_ino() { stat -L -c %i "/proc/$(container_pid "$1")/ns/net"; }
row_of() { grep "^$1 " /run/nsid-lab/rec1; }   # row_of INODE

# ---- A. reconcile ---------------------------------------------------------------------------
check "ip netns add rn1" ip netns add rn1
check "ip netns add rn2" ip netns add rn2
container_create u1 --hostname web || bail "no container u1"
container_create u2 --hostname web || bail "no container u2"
check "u2: someone else sets its identifier first" container_set_identifier u2 preset-u2
host_before=$(cat /sys/fs/nfs/net/nfs_client/identifier)

"$UNIQ" reconcile > /run/nsid-lab/rec1 2>/run/nsid-lab/rec1.err; rc=$?
check_eq "reconcile exits 0" 0 "$rc"
while read -r l; do note "$l"; done < /run/nsid-lab/rec1
for n in rn1 rn2; do
  ino=$(stat -L -c %i /run/netns/$n)
  r=$(row_of "$ino")
  check "$n (ip netns add): set" grep -q " set$" <<<"$r"
  k=$(ip netns exec $n cat /sys/fs/nfs/net/nfs_client/identifier)
  check "$n: the kernel has the identifier the table shows" grep -q " $k random " <<<"$r"
done
r=$(row_of "$(netns_ino u1)")
check "u1 (unshare): set" grep -q " set$" <<<"$r"
k=$(container_identifier u1)
check "u1: the kernel has the identifier the table shows" grep -q " $k " <<<"$r"
r=$(row_of "$(netns_ino u2)")
check "u2: left alone (already set, not by nsid)" grep -q "already-set (not by nsid)$" <<<"$r"
check_eq "u2: still its own identifier" preset-u2 "$(container_identifier u2)"
check_eq "the host's own identifier is left alone" "$host_before" "$(cat /sys/fs/nfs/net/nfs_client/identifier)"

"$UNIQ" reconcile > /run/nsid-lab/rec2 2>&1
check_eq "a second reconcile sets nothing" 0 "$(grep -c ' set$' /run/nsid-lab/rec2)"
"$UNIQ" check > /run/nsid-lab/check 2>&1
check "check: exit 0" test $? = 0
ids=$(for n in rn1 rn2; do ip netns exec $n cat /sys/fs/nfs/net/nfs_client/identifier; done; container_identifier u1)
check_eq "3 distinct identifiers" 3 "$(printf '%s\n' "$ids" | sort -u | grep -c .)"

# ---- B. the udev path: a host uevent listener runs reconcile ---------------------------------
check "uevent listener built" test -x "$LISTEN" || bail "build nsid-uevent-listen first"
rm -f /run/nsid-lab/ue.ready
( "$LISTEN" --timeout 40 --match nfs_client --ready /run/nsid-lab/ue.ready |
    while read -r ev rest; do
      case "$ev" in add@*) "$UNIQ" -q reconcile >> /run/nsid-lab/ue-reconcile.out 2>&1 ;; esac
      echo "$ev" >> /run/nsid-lab/ue-events
    done ) &
upid=$!
check "listener ready" wait_for 10 test -e /run/nsid-lab/ue.ready
t0=$(lab_ms)
container_create l1 --hostname web || bail "no container l1"
if kernel_at_least 6 5; then
  check "6.5+: the new netns gets its identifier from the uevent-triggered reconcile" \
    wait_for 20 sh -c "[ \"\$(nsenter -t $(container_pid l1) -n unshare -m sh -c 'mount -t sysfs sysfs /sys && cat /sys/fs/nfs/net/nfs_client/identifier')\" != '(null)' ]"
  ms=$(( $(lab_ms) - t0 ))
  idl=$(container_identifier l1)
  check "l1 mounts (its first mount, after the identifier)" container_mount l1 vers=4.2,soft,timeo=50,retrans=2
  nfs_server_wait_grace
  check "l1 writes" container_exec l1 timeout 20 sh -c "echo l1 > /mnt/nfs/l1"
  has_client() { nfs_server_clients | grep -q "name=\"Linux NFSv4.2 $1/web\" status=confirmed"; }
  check "server: l1's owner string carries the identifier" has_client "$idl"
  finding identity-reconcile-udev "$(uname -r): uevent-triggered reconcile set the new netns's identifier $ms ms after creation, before its first mount"
else
  sleep 5
  events=$(grep -c . /run/nsid-lab/ue-events 2>/dev/null || echo 0)
  check_eq "before 6.5: no nfs_client uevent reaches the host" 0 "$events"
  check_eq "before 6.5: the new netns stays unset without a hook" "(null)" "$(container_identifier l1)"
  finding identity-reconcile-udev "$(uname -r): no host uevent for a new netns ($events seen); only hooks or a reconcile by hand/timer set it"
fi
kill "$upid" 2>/dev/null
lab_done
