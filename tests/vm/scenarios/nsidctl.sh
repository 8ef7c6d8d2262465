#!/bin/bash
# lab-test: 6.1
# nsidctl against the real kernel: the identifier read from each netns's own
# /sys/fs/nfs/net/nfs_client/identifier, NFS mounts seen in the containers, and the owner
# string nsidctl computes compared with the name knfsd records for each client. Then doctor
# on the real thing: two containers named "web" without identifiers mounting one server
# (the collision), one with nsid-uniquifier's identifier (no problem).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
C="$LAB_BUILD/nsidctl/nsidctl"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
export NSID_STATE_DIR=/run/nsid-lab/state
mkdir -p "$NSID_STATE_DIR"
J=/run/nsid-lab/out.json
ino() { stat -L -c %i "/proc/$(container_pid "$1")/ns/net"; }
# field of the status row of a netns: jqns INODE FILTER
jqns() { jq -r --argjson n "$1" ".namespaces[] | select(.netns == \$n) | $2" "$J"; }
# doctor findings: has_finding SEVERITY CHECK TEXT...
has_finding() {
  local sev=$1 chk=$2; shift 2
  local sel=".findings[] | select(.severity == \"$sev\" and .check == \"$chk\")"
  for t in "$@"; do sel="$sel | select(.message | contains(\"$t\"))"; done
  [ -n "$(jq -c "$sel" "$J")" ]
}

check "nsidctl built ($C)" test -x "$C" || bail "build nsidctl first"
check "jq available" command -v jq || bail "no jq"
check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"
for c in c1 c2 c3; do
  container_create "$c" --hostname web || bail "no container $c"
done
check "c3: nsid-uniquifier set" "$UNIQ" -q set --pid "$(container_pid c3)"
id3=$(container_identifier c3)
note "c3 identifier $id3"

"$C" --json status > "$J"; rc=$?
check_eq "status: exit 0" 0 "$rc"
check_eq "status: nfs client sysfs seen" true "$(jq -r .kernel.nfs_client_sysfs "$J")"
check_eq "status: c1's identifier unset (read in its netns)" unset "$(jqns "$(ino c1)" .identifier_state)"
check_eq "status: c3's identifier as the kernel has it" "$id3" "$(jqns "$(ino c3)" .identifier)"
check_eq "status: c3's source from the registry" random "$(jqns "$(ino c3)" .source)"
check_eq "status: c1's hostname from its UTS namespace" web "$(jqns "$(ino c1)" .hostname)"
check_eq "status: c1 has no NFS mount yet" false "$(jqns "$(ino c1)" .nfs_mounted)"
"$C" --json doctor > "$J"; rc=$?
check "doctor before mounts: unset identifiers are warnings" has_finding warning uniquifier-unset "netns $(ino c1)"
check "doctor before mounts: no kernel problem" has_finding ok kernel

for c in c1 c2 c3; do
  check "$c mounts (vers=4.2)" container_mount "$c" vers=4.2,soft,timeo=50,retrans=2
done
nfs_server_clients | while read -r l; do note "server: $l"; done

"$C" --json status > "$J"
check_eq "status: c1 has NFS mounted" true "$(jqns "$(ino c1)" .nfs_mounted)"
o1=$(jqns "$(ino c1)" .nfs_owner)
o3=$(jqns "$(ino c3)" .nfs_owner)
check_eq "c1's owner string as nsidctl computes it" "Linux NFSv4.2 web" "$o1"
check "knfsd has a client named as nsidctl says for c1" grep -qF "name=\"$o1\" " <(nfs_server_clients)
check "knfsd has a client named as nsidctl says for c3" grep -qF "name=\"$o3\" " <(nfs_server_clients)
finding nsidctl-owner "$(uname -r): nsidctl's owner strings match knfsd's client names: \"$o1\", \"$o3\""

"$C" --json doctor > "$J"; rc=$?
check_eq "doctor after mounts: exit 4" 4 "$rc"
check "doctor: c1 without identifier under a mount is an error" has_finding error uniquifier-unset "netns $(ino c1)" "NFS is mounted"
check "doctor: c1 and c2 collide on the server" has_finding error owner-collision "netns $(ino c1)" "netns $(ino c2)" "Linux NFSv4.2 web"
check "doctor: c3 is in no problem" test -z "$(jq -c ".findings[] | select(.severity == \"error\" or .severity == \"warning\") | select(.message | contains(\"netns $(ino c3) \"))" "$J")"
"$C" doctor > /run/nsid-lab/doctor.txt 2>&1
while read -r l; do note "$l"; done < /run/nsid-lab/doctor.txt

lab_done
