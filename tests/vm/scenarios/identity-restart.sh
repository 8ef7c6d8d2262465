#!/bin/bash
# lab-test: 6.1 6.12
# identity-restart: a container stopped (its netns destroyed) and started again with the same
# container key gets the same identifier and presents the same owner string to the server; a
# different key gives a different one; a different host secret gives a different one for the
# same key.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
export NSID_STATE_DIR=/run/nsid-lab/state
mkdir -p "$NSID_STATE_DIR"

check "nsid-uniquifier built ($UNIQ)" test -x "$UNIQ" || bail "build nsid-uniquifier first"
check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"

hook() { # hook KEY CONTAINER-ID
  printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%s,"bundle":"/b/%s","annotations":{}}' \
    "$2" "$(container_pid "$1")" "$2" | "$UNIQ" -q oci-hook
}
netns_ino() { stat -L -c %i "/proc/$(container_pid "$1")/ns/net"; }

# ---- first life ------------------------------------------------------------------------------
container_create r1 --hostname web || bail "no container"
ino1=$(netns_ino r1)
check "r1: OCI hook with id ctr-A" hook r1 ctr-A
id1=$(container_identifier r1)
check "r1: identifier set" test "$id1" != "(null)"
check "r1 mounts" container_mount r1 vers=4.2,soft,timeo=50,retrans=2
nfs_server_wait_grace
check "r1 writes" container_exec r1 timeout 20 sh -c "echo one > /mnt/nfs/r1"
name1=$(nfs_server_clients | grep "$id1" | sed -n 's/^name=\(".*"\) status=confirmed.*/\1/p')
check_eq "server: r1's owner string carries its identifier" "\"Linux NFSv4.2 $id1/web\"" "$name1"

# ---- stop: unmount, destroy the netns -------------------------------------------------------
check "r1 unmounts" container_exec r1 umount /mnt/nfs
check "r1 stopped" container_destroy r1
check "r1's netns is gone" sh -c "! stat -L /proc/*/ns/net 2>/dev/null | grep -q 'Inode: $ino1 '"

# ---- second life, same key -----------------------------------------------------------------
check "r1 started again" container_create r1 --hostname web
ino2=$(netns_ino r1)
note "netns inode first life $ino1, second life $ino2"
check_eq "the new netns starts unset" "(null)" "$(container_identifier r1)"
check "r1: OCI hook with id ctr-A again" hook r1 ctr-A
id2=$(container_identifier r1)
check_eq "same container key: same identifier after the restart" "$id1" "$id2"
check "r1 mounts again" container_mount r1 vers=4.2,soft,timeo=50,retrans=2
check "r1 reads back what it wrote" container_exec r1 timeout 20 grep -q one /mnt/nfs/r1
check "r1 writes again" container_exec r1 timeout 20 sh -c "echo two > /mnt/nfs/r1"
name2=$(nfs_server_clients | grep "$id2" | grep 'status=confirmed' | sed -n 's/^name=\(".*"\) status=.*/\1/p' | sort -u)
check_eq "same owner string on the server after the restart" "$name1" "$name2"
finding identity-restart "ctr-A before: $name1 (netns $ino1); after the restart: $name2 (netns $ino2)"

# ---- a different key ------------------------------------------------------------------------
container_create r2 --hostname web || bail "no container r2"
check "r2: OCI hook with id ctr-B" hook r2 ctr-B
idB=$(container_identifier r2)
check "a different key gives a different identifier" test "$idB" != "$id1" -a "$idB" != "(null)"
check "r2 mounts" container_mount r2 vers=4.2,soft,timeo=50,retrans=2
check "r2 writes" container_exec r2 timeout 20 sh -c "echo b > /mnt/nfs/r2"
conf=$(nfs_server_confirmed "\"Linux NFSv4\\.2 ($id1|$idB)/web\"")
check_eq "server: 2 confirmed clients for ctr-A and ctr-B" 2 "$conf"

# ---- a different host secret ----------------------------------------------------------------
echo 00112233445566778899aabbccddeeff > /run/nsid-lab/other-machine-id
container_create r3 --hostname web || bail "no container r3"
printf '{"ociVersion":"1.0.2","id":"ctr-A","status":"creating","pid":%s,"bundle":"/b","annotations":{}}' \
  "$(container_pid r3)" | NSID_MACHINE_ID_FILE=/run/nsid-lab/other-machine-id \
  NSID_STATE_DIR=/run/nsid-lab/state-other "$UNIQ" -q oci-hook
check "r3 (another host secret): hook with id ctr-A exits 0" test $? = 0
idS=$(container_identifier r3)
check "another host secret gives a different identifier for the same key" test "$idS" != "$id1" -a "$idS" != "(null)"
check "the host's machine-id appears nowhere in the state" sh -c "! grep -rq \"\$(cat /etc/machine-id)\" $NSID_STATE_DIR /run/nsid-lab/state-other"
finding identity-restart-keys "ctr-A $id1, ctr-B $idB, ctr-A under another host secret $idS"

lab_done
