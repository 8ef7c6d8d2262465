#!/bin/bash
# lab-test: 6.1 6.12
# lab-cost: 250
# fleet-clones (issue #22): two hosts cloned from one image run a container under the same
# key. Each "host" is a client network namespace with its own state dir and its own
# machine-id file, both files holding the image's machine-id. Phase 1, the machine-id as host
# secret: one identity on both, the server sees one owner string confirmed from two
# addresses, and nsidctl doctor on the server says so (and on a "host", that clones cannot be
# told apart). Phase 2, after the explicit 'nsidctl host-secret new' on each host: two
# identities for the same key, two clients, doctor on the server clean.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
C="$LAB_BUILD/nsidctl/nsidctl"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
R=/run/nsid-lab/fleet
mkdir -p "$R"
MOUNT_OPTS=vers=4.2,soft,timeo=50,retrans=2

check "nsidctl and nsid-uniquifier built" test -x "$C" -a -x "$UNIQ" || bail "build first"
check "jq available" command -v jq || bail "no jq"
check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"

# the image's machine-id, copied onto each clone; one product UUID file per host
echo 5a1fc0de5a1fc0de5a1fc0de5a1fc0de > "$R/image-machine-id"
for h in A B; do
  mkdir -p "$R/host$h"
  cp "$R/image-machine-id" "$R/host$h/machine-id"
done
echo 4c4c4544-0042-3510-8051-b2c04f4e3241 > "$R/hostA/product_uuid"
echo 4c4c4544-0042-3510-8051-b2c04f4e3242 > "$R/hostB/product_uuid"
# on_host H CMD...: run CMD as host H (its state dir, machine-id, platform id)
on_host() {
  local h=$1; shift
  NSID_STATE_DIR="$R/host$h/state" NSID_MACHINE_ID_FILE="$R/host$h/machine-id" \
    NSID_PLATFORM_ID_FILE="$R/host$h/product_uuid" "$@"
}
ip_of() { cat "$LAB_CROOT/$1/ip"; }
# server_doctor OUT WINDOW: nsidctl doctor --server --json, exit code in OUT.rc
server_doctor() {
  "$C" --json doctor --server --window="$2" > "$1"; echo $? > "$1.rc"
}
has_finding() { # has_finding FILE SEVERITY CHECK TEXT...
  local f=$1 sev=$2 chk=$3; shift 3
  local sel=".findings[] | select(.severity == \"$sev\" and .check == \"$chk\")"
  for t in "$@"; do sel="$sel | select(.message | contains(\"$t\"))"; done
  [ -n "$(jq -c "$sel" "$f")" ]
}
# writes_in_turn SECONDS CONTAINERS...: each writes once in turn until SECONDS have passed
writes_in_turn() {
  local end=$(( $(date +%s) + $1 )) c; shift
  while [ "$(date +%s)" -lt "$end" ]; do
    for c in "$@"; do
      container_exec "$c" timeout 10 sh -c "echo x > /mnt/nfs/$c-file" 2>/dev/null || :
    done
  done
}

# ---- phase 1: the machine-id as host secret -------------------------------------------------
for h in A B; do
  c=$(echo "$h" | tr AB ab)1
  container_create "$c" --hostname web || bail "no container $c"
  check "host $h: nsid-uniquifier sets $c (key app1)" \
    on_host "$h" "$UNIQ" -q set --pid "$(container_pid "$c")" --container-id app1
done
idA=$(container_identifier a1); idB=$(container_identifier b1)
note "phase 1: host A's identity $idA, host B's $idB"
check_eq "phase 1: the clones give key app1 one identity" "$idA" "$idB"
check_eq "phase 1: both hosts' secret is the machine-id" "machine-id machine-id" \
  "$(on_host A "$C" --json host-secret | jq -r .source) $(on_host B "$C" --json host-secret | jq -r .source)"
on_host A "$C" --json doctor > "$R/hostA-doctor.json"
check "phase 1: doctor on host A warns that clones share its secret, with the fix" \
  has_finding "$R/hostA-doctor.json" warning host-secret "/etc/machine-id"
check "phase 1: ... and the fix is the explicit step" \
  sh -c "jq -r '.findings[] | select(.check == \"host-secret\") | .fix' '$R/hostA-doctor.json' | grep -q 'nsidctl host-secret new'"

check "a1 mounts" container_mount a1 "$MOUNT_OPTS"
check "b1 mounts" container_mount b1 "$MOUNT_OPTS"
nfs_server_wait_grace
server_doctor "$R/srv1.json" 20 &
dpid=$!
writes_in_turn 18 a1 b1
wait "$dpid"
nfs_server_clients | grep "$idA" | while read -r l; do note "phase 1 server: $l"; done
while read -r l; do note "phase 1 doctor: $l"; done < <(jq -c '.findings[]' "$R/srv1.json")
check_eq "phase 1: doctor on the server exits 4 (errors)" 4 "$(cat "$R/srv1.json.rc")"
check "phase 1: doctor flags the owner string confirmed from both clones' addresses" \
  has_finding "$R/srv1.json" error nfsd-owner-multiple-addresses "Linux NFSv4.2 $idA/web" \
  "$(ip_of a1)" "$(ip_of b1)"
check "phase 1: the finding says what to do on the clients" \
  sh -c "jq -r '.findings[] | select(.check == \"nfsd-owner-multiple-addresses\") | .fix' '$R/srv1.json' | grep -q 'host-secret new'"
check_eq "phase 1: --json names the two addresses" "$(printf '%s\n' "$(ip_of a1)" "$(ip_of b1)" | sort | tr '\n' ' ')" \
  "$(jq -r '.findings[] | select(.check == "nfsd-owner-multiple-addresses") | .addresses[]' "$R/srv1.json" | sort | tr '\n' ' ')"
finding fleet-phase1 "two clones, key app1, machine-id secret: identity $idA on both; server doctor: $(jq -r '[.findings[] | select(.severity == "error") | .check] | join(",")' "$R/srv1.json")"

# ---- the explicit step on each clone, then phase 2 --------------------------------------------
for h in A B; do
  check "host $h: nsidctl host-secret new --yes" \
    on_host "$h" "$C" host-secret new --yes --reason "cloned from the lab image"
done
check_eq "phase 2: both hosts' secret is generated" "generated generated" \
  "$(on_host A "$C" --json host-secret | jq -r .source) $(on_host B "$C" --json host-secret | jq -r .source)"
check "phase 2: the step is logged on each host" \
  grep -q 'new replaced machine-id secret.*cloned from the lab image' "$R/hostA/state/host-secret.log" "$R/hostB/state/host-secret.log"
# the phase-1 clients leave the server: unmount; a client still listed is expired by hand
for c in a1 b1; do
  container_exec "$c" timeout 60 umount -f -l /mnt/nfs 2>/dev/null || note "$c: umount failed"
done
gone1() { ! nfs_server_clients | grep -q "$idA"; }
if ! wait_for 60 gone1; then
  note "phase-1 clients still listed after 60 s; expiring them through /proc/fs/nfsd/clients/*/ctl"
  for d in /proc/fs/nfsd/clients/*; do
    grep -q "$idA" "$d/info" 2>/dev/null && echo expire > "$d/ctl" 2>/dev/null
  done
fi
check "phase 1's owner string has left the server" wait_for 30 gone1

for h in A B; do
  c=$(echo "$h" | tr AB ab)2
  container_create "$c" --hostname web || bail "no container $c"
  check "host $h: nsid-uniquifier sets $c (the same key app1)" \
    on_host "$h" "$UNIQ" -q set --pid "$(container_pid "$c")" --container-id app1
done
idA2=$(container_identifier a2); idB2=$(container_identifier b2)
note "phase 2: host A's identity $idA2, host B's $idB2"
check "phase 2: the same key gives each clone its own identity" \
  test "$idA2" != "$idB2" -a "$idA2" != "(null)" -a "$idB2" != "(null)"
check "phase 2: neither is phase 1's" test "$idA2" != "$idA" -a "$idB2" != "$idA"
check "a2 mounts" container_mount a2 "$MOUNT_OPTS"
check "b2 mounts" container_mount b2 "$MOUNT_OPTS"
nfs_server_wait_grace
server_doctor "$R/srv2.json" 12 &
dpid=$!
writes_in_turn 10 a2 b2
wait "$dpid"
while read -r l; do note "phase 2 doctor: $l"; done < <(jq -c '.findings[]' "$R/srv2.json")
check_eq "phase 2: two confirmed clients, one per clone" 2 \
  "$(nfs_server_confirmed "\"Linux NFSv4\\.2 ($idA2|$idB2)/web\"")"
check_eq "phase 2: doctor on the server exits 0" 0 "$(cat "$R/srv2.json.rc")"
check "phase 2: doctor on the server says none collides" has_finding "$R/srv2.json" ok nfsd-clients "none collides"
check_eq "phase 2: no error or warning on the server" 0 \
  "$(jq '[.findings[] | select(.severity == "error" or .severity == "warning")] | length' "$R/srv2.json")"
finding fleet-phase2 "after host-secret new on each clone, key app1: $idA2 and $idB2; server doctor exit $(cat "$R/srv2.json.rc")"

lab_done
