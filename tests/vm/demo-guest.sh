#!/bin/bash
# The guest half of `make demo` (tests/vm/demo.sh): several containers with the same hostname
# mount one knfsd export, first without nsid, then with nsid-uniquifier setting each
# container's NFS client identifier before its mount. Writes a before/after table to
# $LAB_OUT/demo.txt; the checks go to stdout like any scenario.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
N=3
T="$LAB_OUT/demo.txt"
say() { printf '%s\n' "$*" >> "$T"; }
: > "$T"
row() { printf '  %-44s %-10s %s\n' "$1" "$2" "$3" >> "$T"; }

check "knfsd started" nfs_server_start off || bail "no server"

# ---- without nsid ----------------------------------------------------------------------------
for i in $(seq 1 $N); do
  container_create "w$i" --hostname app || bail "no container"
  check "w$i (hostname app, no nsid) mounts" container_mount "w$i" vers=4.2,soft,timeo=50,retrans=2
done
nfs_server_wait_grace
for i in $(seq 1 $N); do
  container_exec "w$i" timeout 10 sh -c "echo w$i > /mnt/nfs/w$i" || true
done
before=$(nfs_server_confirmed '"Linux NFSv4\.2 app"')
names_before=$(nfs_server_names '"Linux NFSv4\.2 app"' | tr '\n' ' ')
check "without nsid: fewer confirmed clients than containers" test "$before" -lt "$N"

# ---- with nsid -------------------------------------------------------------------------------
have_uniq=0
[ -x "$UNIQ" ] && have_uniq=1
after="" names_after="" stable="" restart_conf=""
if [ "$have_uniq" = 1 ]; then
  export NSID_STATE_DIR=/run/nsid-demo-state
  mkdir -p "$NSID_STATE_DIR"
  for i in $(seq 1 $N); do
    container_create "n$i" --hostname app || bail "no container"
    outp=$("$UNIQ" set --pid "$(container_pid "n$i")" --key "demo-n$i" 2>&1); rc=$?
    check "nsid-uniquifier set --pid <n$i> --key demo-n$i" test "$rc" = 0
    printf '%s\n' "$outp" | while read -r l; do note "n$i: $l"; done
    echo "$outp" > "/run/nsid-lab/n$i.uniq"
    check "n$i mounts" container_mount "n$i" vers=4.2,soft,timeo=50,retrans=2
  done
  for i in $(seq 1 $N); do
    container_exec "n$i" timeout 10 sh -c "echo n$i > /mnt/nfs/n$i" || true
  done
  ids_before=$(for i in $(seq 1 $N); do container_identifier "n$i"; done)
  after=$(nfs_server_clients | grep -v '"Linux NFSv4\.2 app"' | grep -c 'status=confirmed.*minor=2')
  names_after=$(nfs_server_names '/app"$' | grep -v '"Linux NFSv4\.2 app"' | tr '\n' ' ')
  check_eq "with nsid: one confirmed client per container" "$N" "$after"

  # restart n1 with the same key
  id1=$(container_identifier n1)
  check "n1 stopped and started again (same key)" container_recreate n1
  outp=$("$UNIQ" set --pid "$(container_pid n1)" --key demo-n1 2>&1)
  note "n1 after restart: $outp"
  check "n1 mounts again" container_mount n1 vers=4.2,soft,timeo=50,retrans=2
  container_exec n1 timeout 10 sh -c "cat /mnt/nfs/n1 >/dev/null; echo again > /mnt/nfs/n1" || true
  id1b=$(container_identifier n1)
  check_eq "n1 has the same identifier after the restart" "$id1" "$id1b"
  [ "$id1" = "$id1b" ] && stable=yes || stable=no
  restart_conf=$(nfs_server_clients | grep -v '"Linux NFSv4\.2 app"' | grep -c 'status=confirmed.*minor=2')
  check_eq "still one confirmed client per container after the restart" "$N" "$restart_conf"
fi

# ---- the table ---------------------------------------------------------------------------
say ""
say "nsid demo on Linux $(uname -r): $N containers, all with hostname 'app', one knfsd export"
say ""
row "" "result" "server's view (/proc/fs/nfsd/clients)"
row "without nsid: confirmed clients" "$before/$N" "$names_before"
if [ "$have_uniq" = 1 ]; then
  row "with nsid: confirmed clients" "$after/$N" "$names_after"
  row "with nsid: same identity after a restart" "$stable" "$N confirmed after n1 restarted: $restart_conf"
  for i in $(seq 1 $N); do
    row "  n$i identifier (nsid-uniquifier set)" "" "$(head -n1 "/run/nsid-lab/n$i.uniq")"
  done
else
  row "with nsid: confirmed clients" "not there yet" "$UNIQ is not built"
  row "with nsid: same identity after a restart" "not there yet" ""
fi
row "file owned by a container user, seen inside" "not there yet" "ID mapping (nsid-idmap) is not wired into the demo yet"
say ""
lab_done
