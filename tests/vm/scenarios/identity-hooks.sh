#!/bin/bash
# lab-test: 6.1 6.12
# identity-hooks: 8 containers with the same hostname, each started through nsid-uniquifier's
# OCI hook (the createRuntime state JSON on stdin, as runc/crun pass it; the 8 hooks run at
# once), mount one knfsd export concurrently. The server must list 8 confirmed clients with 8
# distinct names, each containing its container's identifier. For comparison in the same boot
# (collision-baseline shows it at length): 2 containers with the same hostname and no hook
# collapse into one client.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
export NSID_STATE_DIR=/run/nsid-lab/state
mkdir -p "$NSID_STATE_DIR"
N=8

check "nsid-uniquifier built ($UNIQ)" test -x "$UNIQ" || bail "build nsid-uniquifier first"
check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"

# ---- 8 containers through the OCI hook --------------------------------------------------------
for i in $(seq 1 $N); do
  container_create "h$i" --hostname web || bail "no container h$i"
done
check_eq "a fresh container netns reads (null)" "(null)" "$(container_identifier h1)"
for i in $(seq 1 $N); do
  printf '{"ociVersion":"1.0.2","id":"ctr-%s","status":"creating","pid":%s,"bundle":"/run/containers/ctr-%s/userdata","annotations":{"io.kubernetes.cri-o.ContainerType":"container"}}' \
    "$i" "$(container_pid "h$i")" "$i" | "$UNIQ" oci-hook > "/run/nsid-lab/hook$i.out" 2>&1 &
  hp[$i]=$!
done
for i in $(seq 1 $N); do
  wait "${hp[$i]}"; rc=$?
  check "hook for ctr-$i exits 0" test "$rc" = 0 || note "$(cat "/run/nsid-lab/hook$i.out")"
done
declare -A idof=()
for i in $(seq 1 $N); do
  idof[$i]=$(container_identifier "h$i")
  out=$(head -n1 "/run/nsid-lab/hook$i.out")
  check_eq "h$i: the kernel's identifier is the one the hook printed" "${out%% *}" "${idof[$i]}"
done
distinct=$(printf '%s\n' "${idof[@]}" | sort -u | grep -c '^[0-9a-f]\{32\}$')
check_eq "8 distinct identifiers" "$N" "$distinct"
# the registry agrees with the kernel
listed=$("$UNIQ" --json list 2>/dev/null | grep -c '"source": "container-id"')
check_eq "list shows 8 namespaces with a container-id identity" "$N" "$listed"

for i in $(seq 1 $N); do
  container_mount "h$i" vers=4.2,soft,timeo=50,retrans=2 > "/run/nsid-lab/mount$i.out" 2>&1 &
  mp[$i]=$!
done
for i in $(seq 1 $N); do
  wait "${mp[$i]}"; rc=$?
  check "h$i mounted (concurrently)" test "$rc" = 0 || note "$(cat "/run/nsid-lab/mount$i.out")"
done
nfs_server_wait_grace
for i in $(seq 1 $N); do
  check "h$i writes" container_exec "h$i" timeout 20 sh -c "echo h$i > /mnt/nfs/h$i"
done
nfs_server_clients | grep '/web"' | while read -r l; do note "$l"; done
conf=$(nfs_server_confirmed '"Linux NFSv4\.2 [0-9a-f]{32}/web"')
check_eq "8 confirmed clients, one per container" "$N" "$conf"
names=$(nfs_server_names '"Linux NFSv4\.2 [0-9a-f]{32}/web"' | grep -c .)
check_eq "8 distinct client names" "$N" "$names"
miss=0
for i in $(seq 1 $N); do
  nfs_server_clients | grep -q "name=\"Linux NFSv4\.2 ${idof[$i]}/web\" status=confirmed" || miss=$((miss + 1))
done
check_eq "each container's name on the server contains its identifier" 0 "$miss"
"$UNIQ" check > /run/nsid-lab/check.out 2>&1; rc=$?
check "nsid-uniquifier check: exit 0 (no duplicates, nothing unset under NFS)" test "$rc" = 0 ||
  note "$(cat /run/nsid-lab/check.out)"
finding identity-hooks "$N containers, hostname web, OCI hook each: $conf confirmed clients, $names distinct names, e.g. $(nfs_server_names '/web"' | head -n1)"

# ---- the same without nsid, in this boot ----------------------------------------------------
for i in 1 2; do
  container_create "b$i" --hostname dup || bail "no container b$i"
  check "b$i (no hook) mounts" container_mount "b$i" vers=4.2,soft,timeo=50,retrans=2
done
bconf=$(nfs_server_confirmed '"Linux NFSv4\.2 dup"')
check_eq "without nsid: 2 containers present one client" 1 "$bconf"
"$UNIQ" check > /run/nsid-lab/check2.out 2>&1; rc=$?
check_eq "nsid-uniquifier check now exits 5 (unset identifiers under NFS)" 5 "$rc"
grep -q "unset, NFS mounted" /run/nsid-lab/check2.out
check "... naming them" test $? = 0
# too late: b1 already mounted without an identifier; setting one now cannot change its client
"$UNIQ" set --pid "$(container_pid b1)" --key late-b1 > /run/nsid-lab/late.out 2>&1; rc=$?
check_eq "set on a netns with NFS already mounted: exit 4 (too late)" 4 "$rc"
check "... and says so" grep -q "too-late" /run/nsid-lab/late.out
# the OCI hook on a netns already mounted: the kernel's list of b2's NFS volumes says so
st=$(printf '{"ociVersion":"1.0.2","id":"late-b2","status":"creating","pid":%s,"bundle":"/run/x"}' "$(container_pid b2)")
"$UNIQ" oci-hook <<<"$st" > /run/nsid-lab/late2.out 2>&1; rc=$?
check_eq "oci-hook on a netns with NFS already mounted: exit 0 (the container starts)" 0 "$rc"
check "... and says too-late" grep -q "container-id too-late" /run/nsid-lab/late2.out
# the kernel's hmac(sha256) (AF_ALG), which derivation uses here, against libcrypto's
"$LAB_BUILD/tests/unit/unit-hmac" > /run/nsid-lab/hmac.out 2>&1; rc=$?
check_eq "unit-hmac in the guest: the kernel's HMAC-SHA256 = libcrypto's (exit 0, not 77)" 0 "$rc"
check "... none of its tests skipped" grep -q "4 passed, 0 failed, 0 skipped" /run/nsid-lab/hmac.out
finding identity-hooks-baseline "same boot, 2 containers hostname dup without nsid: $bconf confirmed client(s)"

lab_done
