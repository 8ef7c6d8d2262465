#!/bin/bash
# lab-test: 6.1 6.12
# uevent-delivery: which network namespaces' NETLINK_KOBJECT_UEVENT listeners receive the
# nfs_client "add"/"remove" uevents of a container netns? Listeners: one in the guest's
# initial netns ("host"), one inside a container netns owned by the initial user namespace
# (cA), one inside a container netns owned by its own user namespace (cU).
#   A. the nfs module loads while cA and cU exist: nfs_net_init runs for every existing netns
#   B. a new container netns (cB) is created after nfs is loaded
#   C. a new userns-owned container netns (cV) is created
#   D. cB is destroyed
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
LISTEN="$LAB_BUILD/tests/vm/nsid-uevent-listen"
UE=/run/nsid-lab/ue
mkdir -p "$UE"
check "uevent listener built ($LISTEN)" test -x "$LISTEN" || bail "build nsid-uevent-listen first"
check "nfs not loaded yet" sh -c '! grep -q "^nfs " /proc/modules'
check "bridge and veth loaded" lab_modprobe bridge veth
lab_bridge_up

# listen PHASE WHERE SECONDS: WHERE is host or a container key
declare -A LPID=()
listen() {
  local phase=$1 where=$2 secs=$3 f="$UE/$1-$2"
  rm -f "$f.ready" "$f.out"
  if [ "$where" = host ]; then
    "$LISTEN" --timeout "$secs" --match nfs_client --ready "$f.ready" > "$f.out" 2>"$f.err" &
  else
    container_exec "$where" "$LISTEN" --timeout "$secs" --match nfs_client --ready "$f.ready" > "$f.out" 2>"$f.err" &
  fi
  LPID[$phase-$where]=$!
}
ready() { local w; for w in "$@"; do wait_for 10 test -e "$UE/$w.ready" || return 1; done; }
finish() { local w; for w in "$@"; do wait "${LPID[$w]}"; done; }
count() { grep -c "^$2@/fs/nfs/net/nfs_client" "$UE/$1.out"; }
show() { local w; for w in "$@"; do while read -r l; do note "$w: $l"; done < "$UE/$w.out"; done; }

# ---- A. module load with existing netns ------------------------------------------------------
check "container cA (init userns) created" container_create cA || bail "no container"
check "container cU (own userns) created" container_create cU --userns || bail "no container"
listen A host 8; listen A cA 8; listen A cU 8
check "phase A listeners ready" ready A-host A-cA A-cU
check "modprobe nfs" modprobe nfs
finish A-host A-cA A-cU
show A-host A-cA A-cU
a_host=$(count A-host add) a_ca=$(count A-cA add) a_cu=$(count A-cU add)
finding uevent-modload "nfs module load with host, cA, cU(userns) netns alive: host listener got $a_host add, cA listener $a_ca, cU listener $a_cu"

# ---- B. new container netns (init userns) ---------------------------------------------------
listen B host 6; listen B cA 6; listen B cU 6
check "phase B listeners ready" ready B-host B-cA B-cU
check "container cB created" container_create cB
finish B-host B-cA B-cU
show B-host B-cA B-cU
b_host=$(count B-host add) b_ca=$(count B-cA add) b_cu=$(count B-cU add)
finding uevent-newnetns "new netns cB (init userns): host listener got $b_host add, cA listener $b_ca, cU(userns) listener $b_cu"

# ---- C. new container netns owned by a user namespace ---------------------------------------
listen C host 6; listen C cA 6
check "phase C listeners ready" ready C-host C-cA
check "container cV (own userns) created" container_create cV --userns
finish C-host C-cA
show C-host C-cA
c_host=$(count C-host add) c_ca=$(count C-cA add)
finding uevent-newnetns-userns "new netns cV (own userns): host listener got $c_host add, cA listener $c_ca"

# ---- D. container netns destroyed ------------------------------------------------------------
listen D host 8; listen D cA 8
check "phase D listeners ready" ready D-host D-cA
check "container cB destroyed" container_destroy cB
finish D-host D-cA
show D-host D-cA
d_host=$(count D-host remove) d_ca=$(count D-cA remove)
finding uevent-destroy "netns cB destroyed: host listener got $d_host remove, cA listener $d_ca"

# ---- what each kernel does (asserted; see doc/kernel-findings.md) ----------------------------
if kernel_at_least 6 5; then
  note "expecting untagged events (6.5+): every netns owned by the initial user ns hears every netns's event"
  check_eq "A: host hears the add of host, cA and cU" 3 "$a_host"
  check_eq "A: cA hears the same 3" 3 "$a_ca"
  check_eq "A: cU (userns-owned netns) hears none" 0 "$a_cu"
  check_eq "B: host hears cB's add" 1 "$b_host"
  check_eq "B: cA hears cB's add too" 1 "$b_ca"
  check_eq "B: cU hears nothing" 0 "$b_cu"
  check_eq "C: host hears the userns-owned cV's add" 1 "$c_host"
  check_eq "C: cA hears it too" 1 "$c_ca"
  check_eq "D: host hears cB's remove" 1 "$d_host"
  check_eq "D: cA hears cB's remove" 1 "$d_ca"
else
  note "expecting tagged events (before 6.5): an event reaches only listeners inside its own netns"
  check_eq "A: host hears only its own add" 1 "$a_host"
  check_eq "A: cA hears only its own add" 1 "$a_ca"
  check_eq "A: cU hears only its own add" 1 "$a_cu"
  check_eq "B: host hears nothing of cB" 0 "$b_host"
  check_eq "B: cA hears nothing of cB" 0 "$b_ca"
  check_eq "B: cU hears nothing of cB" 0 "$b_cu"
  check_eq "C: host hears nothing of cV" 0 "$c_host"
  check_eq "C: cA hears nothing of cV" 0 "$c_ca"
  check_eq "D: host hears nothing of cB's removal" 0 "$d_host"
  check_eq "D: cA hears nothing of cB's removal" 0 "$d_ca"
fi
lab_done
