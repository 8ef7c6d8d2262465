#!/bin/bash
# idmapd-inode-reuse (issue #29, item 4): a netns refused over its owner's bound is
# remembered without an fd; Linux 6.1 gives a new namespace the lowest free nsfs inode
# number, so the refused one's number, once it is dead, goes to the next netns made. Here a
# root container's: it must be served, not refused as the dead namespace was.
#   - uid 65534 makes 2 netns with max-netns-per-owner = 1: one served, one refused;
#   - the refused one dies; before any scan forgets it (rescan-interval = 3600), root makes
#     netns until one gets the refused one's inode number, as 6.1 hands them out (if none
#     does, the case did not happen, and the scenario fails rather than pass on it);
#   - `register` of root's process: served (ok netns:N), not EUSERS.
# lab-test: 6.1
# lab-cost: 10
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"

W=/run/nsid-lab/inode-reuse
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
note "kernel $(uname -r)"
cat > "$W/nsid.conf" <<CONF
[idmapd]
rescan-interval = 3600
set-identifier = no
max-netns-per-owner = 1
state-dir = $W/state
CONF
chmod 600 "$W/nsid.conf"
dm_start "$W/nsid.conf" "$LOGS/nsid-idmapd.log"
check "nsid-idmapd up" dm_ready || bail "no daemon"
ctl() { "$DM_BIN" --socket="$DM_SOCK" --ctl="$1" 2>&1; }
ino_of() { local l; l=$(readlink "/proc/$1/ns/net"); l=${l#net:[}; echo "${l%]}"; }

setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn sleep 1000 </dev/null >/dev/null 2>&1 &
U1=$!
wait_for 5 sh -c "[ \"\$(readlink /proc/$U1/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]"
r1=$(ctl "register $U1")
setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn sleep 1000 </dev/null >/dev/null 2>&1 &
U2=$!
wait_for 5 sh -c "[ \"\$(readlink /proc/$U2/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]"
r2=$(ctl "register $U2")
I2=$(ino_of "$U2")
note "uid 65534: first netns '$r1', second (net:[$I2]) '$r2'"
check "uid 65534: one served, the second refused (EUSERS)" sh -c "case '$r1 / $r2' in 'ok netns:'*' / error 87 '*) true ;; *) false ;; esac"

kill -9 "$U2"; wait "$U2" 2>/dev/null
# a netns (and its user namespace) is torn down by a workqueue after its last process: its
# inode number is free a moment later. Root's container netns made then take the lowest
# free numbers: up to 4 kept alive until one has the refused netns's number.
sleep 2
R= others=()
# (the refused netns came with its user namespace, whose number, one lower, is free too: a
# UTS namespace held first takes it, as a user namespace would)
unshare -u sleep 1000 </dev/null >/dev/null 2>&1 &
others+=("$!")
wait_for 5 sh -c "[ \"\$(readlink /proc/$!/ns/uts)\" != \"\$(readlink /proc/self/ns/uts)\" ]"
for _ in 1 2 3 4; do
  unshare -n sleep 1000 </dev/null >/dev/null 2>&1 &
  p=$!
  wait_for 5 sh -c "[ \"\$(readlink /proc/$p/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]"
  if [ "$(ino_of "$p")" = "$I2" ]; then R=$p; break; fi
  note "root's netns net:[$(ino_of "$p")] (not the refused one's number)"
  others+=("$p")
done
if [ -n "$R" ]; then
  note "root's new netns got the refused one's number, net:[$I2]"
  r3=$(ctl "register $R")
  check "root's netns under the dead refused one's number is served ($r3)" sh -c "case '$r3' in 'ok netns:$I2') true ;; *) false ;; esac"
  r4=$(ctl "lookup pid:$R user 0")
  check "and answered ($r4)" sh -c "case '$r4' in 'ok root@'*) true ;; *) false ;; esac"
  kill -9 "$R"
else
  check "the kernel gave root's netns the refused one's number (the case to test)" false
fi
kill -9 "$U1" "${others[@]}" 2>/dev/null
dm_stop
lab_done
