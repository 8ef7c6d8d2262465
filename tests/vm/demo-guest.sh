#!/bin/bash
# The guest half of `make demo` (tests/vm/demo.sh), two parts on one knfsd export:
#  1. client identity: several containers with the same hostname mount it, first without
#     nsid, then with nsid-uniquifier setting each container's NFS client identifier before
#     its mount;
#  2. ID mapping (name mapping switched on): files owned by server-side users, seen from
#     containers whose own passwd gives the same user@domain other uids, first with nfs-utils
#     (nfsidmap as Debian ships it; then rpc.idmapd in each container), then with one
#     nsid-idmapd answering each container's pipes from that container's passwd.
# Writes a before/after table to $LAB_OUT/demo.txt; the checks go to stdout like any scenario.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
. "$LAB_LIB/demo-idmap.sh"
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

# ---- ID mapping ------------------------------------------------------------------------------
# Users. The server (rpc.idmapd -S with its own passwd): labalice 1500, labcarol 1502. The
# client host (the guest's passwd, what nfsidmap reads): labalice 1500, no labcarol.
# Containers k1, k2, each with its own passwd: labalice 400k, labcarol 420k, and nfs-utils'
# rpc.idmapd -C on its own idmap pipes (from before its mount). The same two containers and
# mounts all through; between steps the ID mapper is switched and the kernel's key cache
# emptied. Each step looks at new files (STEP/alice, STEP/carol): no owner cached before.
t_id0=$(lab_ms)
tstep() { note "$1: $(( ($(lab_ms) - t_id0) / 1000 )) s into the ID mapping part"; }
DW=/run/nsid-lab/demo-idmap
mkdir -p "$DW"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$DW
demo_users_file /etc/passwd /etc/passwd "labalice=1500"
demo_users_file /etc/group /etc/group "labalice=1500"
demo_users_file "$DW/passwd-server" /etc/passwd "labcarol=1502"
demo_users_file "$DW/group-server" /etc/group "labcarol=1502"
for k in 1 2; do
  demo_users_file "$DW/passwd-$k" /etc/passwd "labalice=400$k labcarol=420$k"
  demo_users_file "$DW/group-$k" /etc/group "labalice=400$k labcarol=420$k"
done
own1="4001:4001 4201:4201" own2="4002:4002 4202:4202"
# The wrong answers each step without nsid gives, exactly: the host's (nfsidmap reads the
# host's passwd: labalice 1500, no labcarol, so nobody 65534), and k1's in k2 (the first
# container's answer, from the kernel's one key cache). Anything else (a timeout's "?", other
# ids) is not the wrong answer being shown: it fails its check and the table says so.
host_ans="1500:1500 65534:65534"
step_files() { # step: the server's labalice and labcarol files for that step
  mkdir -p "$LAB_EXPORT/$1"
  echo alice > "$LAB_EXPORT/$1/alice"; chown 1500:1500 "$LAB_EXPORT/$1/alice"
  echo carol > "$LAB_EXPORT/$1/carol"; chown 1502:1502 "$LAB_EXPORT/$1/carol"
}
check "name mapping on; knfsd's idmap channels answered by rpc.idmapd -S with the server's passwd" \
  demo_idmap_on "$DW/passwd-server" "$DW/group-server" || bail "no server-side mapping"
# verdict GOT OWN [EXPECTED_WRONG]: right (its own owners), wrong (exactly the wrong answer
# the step gives without nsid), else unexpected
verdict() {
  if [ "$1" = "$2" ]; then echo right
  elif [ -n "${3:-}" ] && [ "$1" = "$3" ]; then echo wrong
  else echo unexpected; fi
}
# because GOT OWN [EXPECTED_WRONG WHAT]: what the table's last column says after GOT: what
# the expected wrong answer is, or what was expected instead
because() {
  if [ -n "${3:-}" ]; then
    if [ "$1" = "$3" ]; then printf ' = %s' "$4"; else printf ' (expected %s: %s)' "$3" "$4"; fi
  elif [ "$1" != "$2" ]; then printf ' (expected %s)' "$2"; fi
}
check "nfs-common's request-key rule for id_resolver (nfsidmap) in place" demo_rk_rule on
check "kernel ID key cache empty" demo_keys_clear
tstep "users and server-side mapping set up"
for k in 1 2; do
  check "k$k created (own passwd), rpc.idmapd -C on its own pipes" \
    demo_client_rpcidmapd "k$k" "$DW/passwd-$k" "$DW/group-$k" "$LOGS/demo-rpc.idmapd-k$k.log" || bail "no k$k"
  check "k$k mounts" container_mount "k$k" vers=4.2 || bail "no k$k mount"
done
tstep "k1, k2 mounted"

# (a) nfs-utils as Debian ships it: the request-key rule runs nfsidmap in the host's namespaces
# (the kernel tries request-key first; the pipe only when that fails)
step_files nfsidmap
oa1=$(demo_owners k1 nfsidmap/alice nfsidmap/carol)
oa2=$(demo_owners k2 nfsidmap/alice nfsidmap/carol)
check_eq "without nsid (nfsidmap): k1 sees the host's owners (labalice 1500, labcarol nobody), not its own" "$host_ans" "$oa1"
check_eq "without nsid (nfsidmap): k2 sees the host's owners (labalice 1500, labcarol nobody), not its own" "$host_ans" "$oa2"
tstep "nfsidmap step done"

# (b) no request-key rule: each container's rpc.idmapd answers its pipe from its passwd; the
# first answer is cached in the kernel's one global key cache and served to the other container
check "request-key rule for id_resolver removed (upcalls go to the pipes)" demo_rk_rule off
check "kernel ID key cache empty" demo_keys_clear
step_files rpcidmapd
ob1=$(demo_owners k1 rpcidmapd/alice rpcidmapd/carol)
ob2=$(demo_owners k2 rpcidmapd/alice rpcidmapd/carol)
check_eq "rpc.idmapd per container: k1 (asked first) sees its own owners" "$own1" "$ob1"
check_eq "rpc.idmapd per container: k2 sees k1's owners (k1's answers, from the kernel's key cache), not its own" "$own1" "$ob2"
grep -E ' id_(resolv|legacy) +[ug]id:lab' /proc/keys | while read -r l; do note "/proc/keys after k2: $l"; done
for k in 1 2; do check "rpc.idmapd in k$k stopped" demo_rpcidmapd_stop "k$k"; done
tstep "rpc.idmapd step done"

# (c) one nsid-idmapd answering each container's pipes from that container's passwd; it
# takes over the pipes of the mounts that are already there
check "kernel ID key cache empty" demo_keys_clear
have_dm=0
[ -x "$DM_BIN" ] && have_dm=1
oc1="" oc2="" oc1b="" oc2b="" srvC="" errC=""
if [ "$have_dm" = 1 ]; then
  DM_SOCK=$DW/nsid-idmapd.sock
  DM_LOG=$LOGS/demo-nsid-idmapd.log
  demo_nsidd_start "$DW" "$DM_LOG"
  check "nsid-idmapd started (one daemon, isolate-keys = yes)" dm_ready || bail "no nsid-idmapd"
  for k in 1 2; do check "k$k registered with nsid-idmapd, its idmap pipe served" demo_nsidd_register "k$k" "$DM_LOG"; done
  step_files nsid
  oc2=$(demo_owners k2 nsid/alice nsid/carol)   # k2 first this time: the order must not matter
  oc1=$(demo_owners k1 nsid/alice nsid/carol)
  check_eq "with nsid: k2 (asked first) sees its own owners" "$own2" "$oc2"
  check_eq "with nsid: k1 (asked second) sees its own owners" "$own1" "$oc1"
  errC=$(container_exec k1 timeout 20 sh -c "echo k1 > /mnt/nfs/nsid/by-k1 && chown labcarol:labcarol /mnt/nfs/nsid/by-k1" 2>&1 |
    tail -n1 | sed 's/^chown: .*: \([^:]*\)$/chown: \1/')
  srvC=$(stat -c %u:%g "$LAB_EXPORT/nsid/by-k1" 2>&1)
  check_eq "with nsid: k1's chown labcarol (its 4201) is labcarol (1502) on the server" 1502:1502 "$srvC"
  oc2b=$(demo_owners k2 nsid/by-k1)
  oc1b=$(demo_owners k1 nsid/by-k1)
  check_eq "with nsid: k2 sees that file as its own labcarol" 4202:4202 "$oc2b"
  check_eq "with nsid: k1 sees it as its own labcarol" 4201:4201 "$oc1b"
  "$DM_BIN" --socket="$DM_SOCK" --status > "$LOGS/demo-nsid-idmapd-status.txt" 2>&1
  dm_stop
  check_eq "nsid-idmapd exited cleanly on SIGTERM" 0 "$?"
fi
tstep "nsid-idmapd step done (the whole ID mapping part)"

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
say ""
say "ID mapping (name mapping on): on the export, STEP/alice and STEP/carol belong to the server's"
say "labalice (1500) and labcarol (1502); the client host knows labalice as 1500 and no labcarol;"
say "containers k1, k2 have their own passwd (labalice 400k, labcarol 420k) and each runs rpc.idmapd"
say "on its own idmap pipes; the kernel's ID key cache is emptied before each step."
say ""
row "" "result" "uid:gid of STEP/alice STEP/carol, as stat shows them inside"
row "without nsid: nfsidmap (nfs-common's rule)" "" "STEP = nfsidmap"
host_is="the host's answers"
k1_is="k1's answer, from the kernel's key cache"
row "  k1" "$(verdict "$oa1" "$own1" "$host_ans")" "$oa1$(because "$oa1" "$own1" "$host_ans" "$host_is")"
row "  k2" "$(verdict "$oa2" "$own2" "$host_ans")" "$oa2$(because "$oa2" "$own2" "$host_ans" "$host_is")"
row "without nsid: rpc.idmapd in each container" "" "STEP = rpcidmapd (no request-key rule)"
row "  k1 (asked first)" "$(verdict "$ob1" "$own1")" "$ob1$(because "$ob1" "$own1")"
row "  k2" "$(verdict "$ob2" "$own2" "$own1")" "$ob2$(because "$ob2" "$own2" "$own1" "$k1_is")"
if [ "$have_dm" = 1 ]; then
  row "with nsid: one nsid-idmapd, no rpc.idmapd" "" "STEP = nsid"
  row "  k2 (asked first)" "$(verdict "$oc2" "$own2")" "$oc2$(because "$oc2" "$own2")"
  row "  k1" "$(verdict "$oc1" "$own1")" "$oc1$(because "$oc1" "$own1")"
  chown_got="$srvC $oc2b $oc1b" chown_want="1502:1502 4202:4202 4201:4201"
  row "  k1: chown labcarol nsid/by-k1" "$(verdict "$chown_got" "$chown_want")" "${errC:+$errC; }server stores $srvC, k2 sees $oc2b, k1 sees $oc1b$(because "$chown_got" "$chown_want")"
else
  row "with nsid: one nsid-idmapd, no rpc.idmapd" "not there yet" "$DM_BIN is not built"
fi
say ""
lab_done
