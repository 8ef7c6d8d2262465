#!/bin/bash
# lab-test: 6.1 6.12
# collision-baseline: 4 containers with the same hostname and no uniquifier mount one knfsd
# export. What does the server see? Then the positive control: 4 containers with distinct
# identifiers in their netns's /sys/fs/nfs/net/nfs_client/identifier.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
C="$LAB_BUILD/nsidctl/nsidctl"
J=/run/nsid-lab/cb-doctor.json
# nsidctl doctor on the server (issue #22): has_finding SEVERITY CHECK TEXT...
has_finding() {
  local sev=$1 chk=$2; shift 2
  local sel=".findings[] | select(.severity == \"$sev\" and .check == \"$chk\")"
  for t in "$@"; do sel="$sel | select(.message | contains(\"$t\"))"; done
  [ -n "$(jq -c "$sel" "$J")" ]
}
# No teardown: containers die with the guest (tearing down a netns whose NFS client is
# flapping costs tens of seconds). Phases run control first, the collision last.

check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"

# ---- 1. Positive control: distinct identifiers -------------------------------------------------
for i in 1 2 3 4; do
  check "container u$i (hostname web) created" container_create "u$i" --hostname web
  check "u$i identifier set" container_set_identifier "u$i" "lab-ident-u$i"
  [ "$i" = 1 ] && check_eq "u1 identifier reads back" "lab-ident-u1" "$(container_identifier u1)"
  check "u$i mounts the export (vers=4.2)" container_mount "u$i" vers=4.2,soft,timeo=50,retrans=2
done
nfs_server_wait_grace
for i in 1 2 3 4; do
  check "u$i writes" container_exec "u$i" timeout 10 sh -c "echo x > /mnt/nfs/u$i-file"
done
nfs_server_clients | grep 'lab-ident' | while read -r l; do note "$l"; done
confu=$(nfs_server_confirmed 'lab-ident-u[1-4]/web"')
check_eq "4 confirmed clients with distinct identifiers" 4 "$confu"
check_eq "owner string format with a uniquifier" '"Linux NFSv4.2 lab-ident-u1/web"' "$(nfs_server_names 'lab-ident-u1/')"
finding control-v42 "4 containers, hostname web, distinct identifiers: $confu confirmed clients, e.g. $(nfs_server_names 'lab-ident-u1/')"
# with a uniquifier per netns (what nsid-uniquifier writes to the same file) the server is clean
if [ -x "$C" ] && command -v jq >/dev/null; then
  "$C" --json doctor --server --window=3 > "$J"; rc=$?
  while read -r l; do note "doctor (control): $l"; done < <(jq -c '.findings[]' "$J")
  check_eq "server doctor, distinct identifiers: exit 0" 0 "$rc"
  check "server doctor, distinct identifiers: none collides" has_finding ok nfsd-clients "none collides"
else
  note "nsidctl or jq missing: the server doctor is not checked"
fi
# ---- 2. NFSv4.0, same hostname (two containers are enough to show it) -------------------------
for i in 1 2; do
  container_create "d$i" --hostname web || bail "no container d$i"
  check "d$i mounts the export (vers=4.0)" container_mount "d$i" vers=4.0,soft,timeo=50,retrans=2
done
names40=$(nfs_server_names 'NFSv4\.0')
n40=$(printf '%s\n' "$names40" | grep -c .)
conf40=$(nfs_server_confirmed 'NFSv4\.0')
nfs_server_clients | grep 'NFSv4\.0' | while read -r l; do note "v4.0: $l"; done
finding collision-v40 "2 containers, hostname web, vers=4.0: $n40 distinct name(s), $conf40 confirmed: $(printf '%s' "$names40" | tr '\n' ' ')"
# The v4.0 string is "Linux NFSv4.0 <nodename>/<server address>" without a uniquifier: the
# client's own address is not in it, so v4.0 collides exactly like v4.1+.
check_eq "NFSv4.0: both containers present one owner string" '"Linux NFSv4.0 web/'"$LAB_SERVER_IP"'"' "$names40"
check_eq "NFSv4.0: one confirmed client for two containers" 1 "$conf40"

# ---- 3. NFSv4.2, same hostname, no identifier --------------------------------------------
for i in 1 2 3 4; do
  check "container c$i (hostname web) created" container_create "c$i" --hostname web || bail "no container"
done
check_eq "fresh container netns identifier reads (null)" "(null)" "$(container_identifier c1)"
for i in 1 2 3 4; do
  check "c$i mounts the export (vers=4.2)" container_mount "c$i" vers=4.2,soft,timeo=50,retrans=2
done
note "server view after 4 mounts:"
nfs_server_clients | sed 's/^/  /' | while read -r l; do note "$l"; done
names=$(nfs_server_names 'NFSv4\.2 web"')
check_eq "all 4 containers present one owner string" '"Linux NFSv4.2 web"' "$names"
conf=$(nfs_server_confirmed 'NFSv4\.2 web"')
finding collision-v42-confirmed "4 containers, hostname web, no uniquifier, vers=4.2: $conf confirmed client(s) named $names"
check "fewer confirmed clients than containers ($conf < 4)" test "$conf" -lt 4

nfs_server_wait_grace
# nsidctl doctor on the server watches while the containers take turns
dpid=""
if [ -x "$C" ] && command -v jq >/dev/null; then
  ( "$C" --json doctor --server --window=20 > "$J"; echo $? > "$J.rc" ) &
  dpid=$!
fi
# Each container now writes once, in turn; sample the server's view after every write.
declare -A seen=()
ioerr=0 slow=0
for round in 1; do
  for i in 1 2 3 4; do
    t0=$(date +%s%N)
    container_exec "c$i" timeout 10 sh -c "echo r$round > /mnt/nfs/c$i-file && cat /mnt/nfs/c$i-file >/dev/null" || ioerr=$((ioerr + 1))
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    [ "$ms" -ge 1000 ] && slow=$((slow + 1))
    while read -r l; do
      cid=$(printf '%s\n' "$l" | sed -n 's/.* clientid=\([^ ]*\) .*/\1/p')
      seen[$cid]=1
      note "round $round after c$i I/O (${ms} ms): $l"
    done < <(nfs_server_clients | grep 'NFSv4\.2 web".*status=confirmed')
  done
done
finding collision-v42-flapping "4 writes in turn from 4 colliding containers: ${#seen[@]} distinct confirmed clientid(s) seen for the one name, $ioerr write(s) failed, $slow took over 1 s"
check "the confirmed client behind the one name changes as containers take turns (flapping)" test "${#seen[@]}" -gt 1
if [ -n "$dpid" ]; then
  wait "$dpid"
  while read -r l; do note "doctor (collision): $l"; done < <(jq -c '.findings[]' "$J")
  check_eq "server doctor, colliding containers: exit 4" 4 "$(cat "$J.rc")"
  # owner: the owner string as the finding names it (jq --arg: no quoting inside the filter)
  has_owner() { [ -n "$(jq -c --arg c "$1" --arg o "$2" '.findings[] | select(.severity == "error" and .check == $c and .owner == $o)' "$J")" ]; }
  check "server doctor: \"Linux NFSv4.2 web\" carries no uniquifier (error)" \
    has_owner nfsd-owner-no-uniquifier "Linux NFSv4.2 web"
  check "server doctor: the NFSv4.0 string carries no uniquifier (error)" \
    has_owner nfsd-owner-no-uniquifier "Linux NFSv4.0 web/$LAB_SERVER_IP"
  addrs=$(jq -r '.findings[] | select(.check == "nfsd-owner-multiple-addresses" and .owner == "Linux NFSv4.2 web") | .addresses | length' "$J")
  finding collision-doctor "server doctor over 20 s of turns: $(jq -r '[.findings[] | select(.severity == "error") | .check] | join(",")' "$J"); \"Linux NFSv4.2 web\" confirmed from ${addrs:-0} addresses"
  check "server doctor: \"Linux NFSv4.2 web\" confirmed from several addresses (error)" \
    test "${addrs:-0}" -gt 1
fi
note "dmesg (nfs):"
dmesg | grep -iE 'nfs|clid|lease' | tail -n 15 | while read -r l; do note "  $l"; done

lab_done
