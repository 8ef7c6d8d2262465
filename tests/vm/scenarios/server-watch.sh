#!/bin/bash
# lab-test: 6.1 6.12
# lab-cost: 150
# server-watch (issue #31): `nsidctl watch --server` follows knfsd's client-id tracepoints.
# 1. The collision: two containers with one owner string (same hostname, no uniquifier)
#    write in turn, each turn taking the server's record from the other. The watcher must
#    record every takeover knfsd traced (counted apart, in a tracefs instance of the test's
#    own), with the owner string and the two addresses; a one-shot doctor between two turns
#    sees one client; doctor --server afterwards reads the history and names the owner;
#    nsidctl metrics counts them.
# 2. The same with nsid's identities (the OCI hook in each container): no takeover.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
C="$LAB_BUILD/nsidctl/nsidctl"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
W=/run/nsid-lab/sw
mkdir -p "$W"
T=/sys/kernel/tracing
REF=$T/instances/lab-ref

check "nsidctl built" test -x "$C" || bail "no nsidctl"
command -v jq >/dev/null || bail "no jq"
check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"
[ -d "$T/instances" ] || mount -t tracefs nodev "$T"
check "tracefs mounted" test -d "$T/instances" || bail "no tracefs"

# The reference: knfsd's own record of the replacements, in an instance of the test's own
# (the text trace: the owner strings here are the test's, so forged lines are no concern).
ref_start() {
  rmdir "$REF" 2>/dev/null; mkdir "$REF" &&
  echo 4096 > "$REF/buffer_size_kb" &&
  echo 1 > "$REF/events/nfsd/nfsd_clid_replaced/enable" &&
  echo 1 > "$REF/events/nfsd/nfsd_clid_verf_mismatch/enable"
}
ref_count() { grep -c ": $1:" "$REF/trace"; }
ref_stop() { echo 0 > "$REF/tracing_on"; }

watch_start() { # watch_start NAME: the watcher in the background, its JSON lines in $W/NAME.jsonl
  rm -f "$W/$1.db"*
  "$C" --json watch --server --history="$W/$1.db" > "$W/$1.jsonl" 2> "$W/$1.err" &
  WPID=$!
}
watch_ready() { wait_for 20 grep -q "following knfsd" "$W/$1.err"; } # it says so on stderr
watch_stop() {
  kill -TERM "$WPID" 2>/dev/null
  wait "$WPID"; WRC=$?
  while read -r l; do note "watcher: $l"; done < "$W/$1.err"
}
turns() { # turns A B N: N writes, alternating between containers A and B
  local n=$3 k who
  for ((k = 0; k < n; k++)); do
    if ((k % 2 == 0)); then who=$1; else who=$2; fi
    container_exec "$who" timeout 30 sh -c "echo $k > /mnt/nfs/$who-file && sync /mnt/nfs/$who-file" ||
      note "turn $k: $who's write failed"
    sleep 1
  done
}

# ---- 1. the collision --------------------------------------------------------------------------
check "reference trace instance" ref_start || bail "no reference instance"
watch_start collide
check "watcher started" watch_ready collide || bail "watcher did not start: $(cat "$W/collide.err")"
check "no other watcher can start beside it" \
  sh -c "! '$C' watch --server --history='$W/other.db' --duration=2 2>'$W/other.err'"
note "second watcher: $(cat "$W/other.err")"
for c in w1 w2; do
  check "container $c (hostname web, no identifier)" container_create "$c" --hostname web || bail "no container"
  check "$c mounts (vers=4.2)" container_mount "$c" vers=4.2,soft,timeo=50,retrans=2
done
nfs_server_wait_grace
ip1=$(container_exec w1 ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)
ip2=$(container_exec w2 ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)
note "w1 $ip1, w2 $ip2"
turns w1 w2 6
# a one-shot doctor between two turns: one client holds the name in any one reading
"$C" --json doctor --server --window=0 --history="$W/none.db" > "$W/oneshot.json"
multi=$(jq '[.findings[] | select(.check == "nfsd-owner-multiple-addresses")] | length' "$W/oneshot.json")
check_eq "one-shot doctor between two turns: no owner string seen at several addresses" 0 "$multi"
turns w1 w2 4
sleep 2
ref_stop
watch_stop collide
check_eq "watcher exit status 0 (nothing lost)" 0 "$WRC"
replaced=$(ref_count nfsd_clid_replaced)
mism=$(ref_count nfsd_clid_verf_mismatch)
takeovers=$(jq -s '[.[] | select(.kind == "takeover")] | length' "$W/collide.jsonl")
changes=$(jq -s 'length' "$W/collide.jsonl")
finding watch-collision "two colliding containers, 10 turns: knfsd traced $replaced replacements ($mism verifier mismatches); the watcher recorded $changes changes, $takeovers takeovers"
check "knfsd replaced the record several times" test "$replaced" -ge 3
check_eq "the watcher recorded every replacement knfsd traced" "$replaced" "$changes"
check_eq "each was a takeover" "$replaced" "$takeovers"
check_eq "every takeover names the owner string" "$takeovers" \
  "$(jq -s '[.[] | select(.kind == "takeover" and .owner == "Linux NFSv4.2 web")] | length' "$W/collide.jsonl")"
pairs=$(jq -r 'select(.kind == "takeover") | "\(.from | sub(":[0-9]+$"; "")) \(.to | sub(":[0-9]+$"; ""))"' "$W/collide.jsonl" | sort -u | tr '\n' ';')
note "takeover pairs: $pairs"
check_eq "takeovers go both ways between the two containers" "$ip1 $ip2;$ip2 $ip1;" "$pairs"
# doctor reads the history
"$C" --json doctor --server --window=0 --history="$W/collide.db" > "$W/doctor.json"; drc=$?
while read -r l; do note "doctor: $l"; done < <(jq -c '.findings[] | select(.check | startswith("nfsd"))' "$W/doctor.json")
check_eq "doctor --server with the history: exit 4" 4 "$drc"
hist=$(jq -c '.findings[] | select(.check == "nfsd-takeovers" and .severity == "error" and .owner == "Linux NFSv4.2 web")' "$W/doctor.json")
check "doctor names the owner string taken over (error nfsd-takeovers)" test -n "$hist"
check_eq "doctor counts every takeover" "$takeovers" "$(printf '%s' "$hist" | jq '.takeovers')"
# metrics read it too
"$C" metrics --history="$W/collide.db" > "$W/metrics.prom" 2>/dev/null
check_eq "metrics: nsid_server_changes_total{kind=\"takeover\"}" "$takeovers" \
  "$(sed -n 's/^nsid_server_changes_total{kind="takeover"} //p' "$W/metrics.prom")"
check_eq "metrics: the owner string's takeovers" "$takeovers" \
  "$(sed -n 's/^nsid_server_owner_takeovers_total{owner="Linux NFSv4.2 web"} //p' "$W/metrics.prom")"

# the colliding clients go (their unmount ends their leases); a steal still under way then is
# theirs, and told apart below by its owner string
for c in w1 w2; do container_exec "$c" umount -l /mnt/nfs; done
sleep 3

# ---- 2. with nsid's identities -----------------------------------------------------------------
hook() { # hook KEY CONTAINER-ID
  printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%s,"bundle":"/b/%s","annotations":{}}' \
    "$2" "$(container_pid "$1")" "$2" | "$UNIQ" -q oci-hook
}
check "reference trace instance (identities)" ref_start
watch_start ident
check "watcher started (identities)" watch_ready ident
for c in i1 i2; do
  check "container $c (hostname web)" container_create "$c" --hostname web || bail "no container"
  check "$c: nsid-uniquifier's OCI hook" hook "$c" "ctr-$c"
  check "$c mounts (vers=4.2)" container_mount "$c" vers=4.2,soft,timeo=50,retrans=2
done
turns i1 i2 6
sleep 2
ref_stop
watch_stop ident
left=$(jq -s '[.[] | select(.owner == "Linux NFSv4.2 web")] | length' "$W/ident.jsonl")
note "replacements of the colliding pair's record after their unmount: $left"
check_eq "identities: every replacement knfsd traced is the colliding pair's, none of i1's or i2's" \
  "$left" "$(ref_count nfsd_clid_replaced)"
check_eq "identities: the watcher recorded no takeover of another owner string" 0 \
  "$(jq -s '[.[] | select(.kind == "takeover" and .owner != "Linux NFSv4.2 web")] | length' "$W/ident.jsonl")"
"$C" --json doctor --server --window=0 --history="$W/ident.db" > "$W/doctor2.json"
check_eq "identities: doctor finds no takeover of i1's or i2's owner string in the history" 0 \
  "$(jq '[.findings[] | select(.check == "nfsd-takeovers" and .severity == "error" and .owner != "Linux NFSv4.2 web")] | length' "$W/doctor2.json")"
rmdir "$REF" 2>/dev/null
lab_done
