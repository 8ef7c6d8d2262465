#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nsid-uniquifier on real network namespaces (unshare, ip netns), a real SQLite registry, real
# processes killed with SIGKILL, and real OCI/LXC hook inputs.
#
# FAKE: this host kernel has no nfs module, so /sys/fs/nfs/net/nfs_client/identifier cannot
# exist. The program's test hook NSID_TEST_SYSFS_NFS_CLIENT_DIR makes its worker (which still
# joins the target netns and mounts a private sysfs there) use DIR/<inode of the netns it
# joined> with the kernel file's semantics instead. That the worker really joined the right
# netns is checked by the file name. The real kernel file is exercised by the qemu lab
# (tests/vm, scenarios identity-*).
#
# usage: itest-uniquifier.sh BUILD_DIR
set -u

B=${1:?usage: $0 BUILD_DIR}
U=$B/uniquifier/nsid-uniquifier
C=$B/nsidctl/nsidctl
for x in "$U" "$C"; do [ -x "$x" ] || { echo "Bail out! $x not built"; exit 1; }; done
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: network namespaces (run as root)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 CLI missing (apt install sqlite3)"; exit 77; }

T=$(mktemp -d /tmp/itest-uniquifier.XXXXXX)
NETNS_ADDED=()
cleanup() {
    # holders are started inside $(...) subshells: their pids are kept in a file
    [ -f "$T/holders" ] && while read -r p; do kill -9 "$p" 2>/dev/null; done < "$T/holders"
    wait 2>/dev/null
    for n in "${NETNS_ADDED[@]}"; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
trap "exit 1" INT TERM

export NSID_STATE_DIR=$T/state
export NSID_TEST_SYSFS_NFS_CLIENT_DIR=$T/fake
export NSID_MACHINE_ID_FILE=$T/machine-id
mkdir -p "$T/fake"
echo 00112233445566778899aabbccddeeff > "$T/machine-id"
DB=$NSID_STATE_DIR/registry.db

n=0
failures=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
    local d=$1; shift
    if "$@"; then ok "$d"; else not_ok "$d"; return 1; fi
}

# A process sleeping in a new netns; prints its pid (== the netns holder). Its output goes
# nowhere, or the $(hold) that called it would wait for it forever.
hold() {
    unshare -n sleep 100000 </dev/null >/dev/null 2>&1 &
    fresh $!
}
# Wait until pid $1 is in its new netns, then forget any fake identifier file left under that
# inode number by an earlier, dead netns (the kernel starts every netns at "(null)"; inode
# numbers are reused).
fresh() {
    local me; me=$(stat -L -c %i /proc/self/ns/net)
    echo "$1" >> "$T/holders"
    # (up to 10 s: under ASan with 200 holders starting at once, unshare can take seconds,
    # and a holder still in the host netns would leave a stale fake file under its inode)
    local i=
    for _ in $(seq 1000); do
        i=$(stat -L -c %i "/proc/$1/ns/net" 2>/dev/null) && [ "$i" != "$me" ] && break
        i=
        sleep 0.01
    done
    if [ -n "$i" ]; then rm -f "$T/fake/$i"; else echo "# holder $1 never left the host netns" >&2; fi
    echo "$1"
}
netns_ino() { stat -L -c %i "/proc/$1/ns/net"; }
# Kill holders; their netns die, and so does the fake identifier file (as the kernel's would).
unhold() {
    for p in "$@"; do
        rm -f "$T/fake/$(netns_ino "$p" 2>/dev/null)"
        kill -9 "$p" 2>/dev/null
    done
}
fake_of() { cat "$T/fake/$(netns_ino "$1")" 2>/dev/null; }
q() { sqlite3 -batch -noheader "$DB" "$@"; }

# -------------------------------------------------------------------------------------------
echo "# 1. 200 concurrent set invocations on 200 network namespaces"
pids=()
for i in $(seq 1 200); do pids+=("$(hold)"); done
for i in $(seq 0 199); do
    if [ $((i % 2)) = 0 ]; then
        "$U" -q set --pid "${pids[$i]}" --container-id "ctr-$i" > "$T/out.$i" 2> "$T/err.$i" &
    else
        "$U" -q set --pid "${pids[$i]}" > "$T/out.$i" 2> "$T/err.$i" &
    fi
    echo $! > "$T/setpid.$i"
done
bad=0
for i in $(seq 0 199); do
    wait "$(cat "$T/setpid.$i")" || { bad=$((bad + 1)); echo "# set $i failed: $(cat "$T/err.$i")"; }
done
check "all 200 concurrent sets exit 0" [ "$bad" = 0 ]
ids=$(for i in $(seq 0 199); do cut -d' ' -f1 "$T/out.$i"; done | sort -u | grep -c '^[0-9a-f]\{32\}$')
check "200 distinct identities printed" [ "$ids" = 200 ]
mismatch=0
for i in $(seq 0 199); do
    [ "$(fake_of "${pids[$i]}")" = "$(cut -d' ' -f1 "$T/out.$i")" ] || mismatch=$((mismatch + 1))
done
check "each netns's identifier file holds the identity printed for it" [ "$mismatch" = 0 ]
check "container-id sources recorded" [ "$(cat "$T"/out.{0..198..2} | grep -c ' container-id set$')" = 100 ]
check "keyless netns got random keys (they share the host's machine-id)" \
    [ "$(cat "$T"/out.{1..199..2} | grep -c ' random set$')" = 100 ]
check "registry integrity ok" [ "$(q 'PRAGMA integrity_check')" = ok ]
check "registry has 200 bindings" [ "$(q 'SELECT count(*) FROM bindings')" = 200 ]
# (one identity bound twice is not looked for: UNIQUE (app, identity) refuses it)
probs=$("$C" --json doctor 2>/dev/null | registry_problems)
check "registry: every record well-formed, its identity derived from its key (nsidctl doctor: ${probs:-ok})" [ -z "$probs" ]
check "registry: journal mode wal" [ "$(q 'PRAGMA journal_mode')" = wal ]
check "registry file is 0600" [ "$(stat -c %a "$DB")" = 600 ]
# a second run on a netns changes nothing
out=$("$U" -q set --pid "${pids[0]}" --container-id ctr-0)
check "set again: already-set, same identity" [ "$out" = "$(cut -d' ' -f1 "$T/out.0") container-id already-set" ]
out=$("$U" -q set --pid "${pids[1]}")
check "keyless set again reuses the recorded random key" [ "$out" = "$(cut -d' ' -f1 "$T/out.1") random already-set" ]
unhold "${pids[@]}"

# -------------------------------------------------------------------------------------------
echo "# 2. stable across restarts; key, app and host secret all matter"
a=$(hold)
id1=$("$U" -q set --pid "$a" --container-id web | cut -d' ' -f1)
b=$(hold)
err=$("$U" set --pid "$b" --container-id web 2>&1 >/dev/null); rc=$?
check "same key on a second live netns is refused (exit 1)" [ "$rc" = 1 ]
check "... naming the reason" grep -q "already used by another live network namespace" <<<"$err"
unhold "$a"; for _ in $(seq 100); do stat -L "/proc/$a/ns/net" >/dev/null 2>&1 || break; sleep 0.05; done
c=$(hold)
id2=$("$U" -q set --pid "$c" --container-id web | cut -d' ' -f1)
check "container restarted in a new netns gets the same identity" [ -n "$id1" -a "$id1" = "$id2" ]
id3=$("$U" -q set --pid "$b" --container-id web2 | cut -d' ' -f1)
check "a different key gives a different identity" [ -n "$id3" -a "$id3" != "$id1" ]
d=$(hold)
id4=$("$U" -q --app smb set --pid "$d" --container-id web | cut -d' ' -f1)
check "a different app gives a different identity" [ -n "$id4" -a "$id4" != "$id1" ]
echo ffeeddccbbaa99887766554433221100 > "$T/machine-id2"
id5=$(NSID_MACHINE_ID_FILE=$T/machine-id2 NSID_STATE_DIR=$T/state2 "$U" -q set --dry-run --pid "$c" --container-id web | cut -d' ' -f1)
check "a different host secret gives a different identity" [ -n "$id5" -a "$id5" != "$id1" ]
check "the host machine-id never appears in the registry" \
    [ "$(q "SELECT count(*) FROM bindings WHERE key LIKE '%00112233445566778899aabbccddeeff%'")" = 0 ]
! grep -rq 00112233445566778899aabbccddeeff "$T/fake" "$NSID_STATE_DIR"
check "the host machine-id appears in no file nsid wrote" [ $? = 0 ]

# container machine-ids: one shared by two live containers is used only once
echo 0123456789abcdef0123456789abcdef > "$T/cmid"
# (its netns exists before the bind mount: wait until it has exec'd sleep, after the mount)
mhold() {
    unshare -m -n sh -c "mount --bind $T/cmid /etc/machine-id && exec sleep 100000" \
        </dev/null >/dev/null 2>&1 &
    local p; p=$(fresh $!)
    wait_for 10 test "/proc/$p/exe" -ef "$(type -P sleep)" || echo "# holder $p never mounted its machine-id" >&2
    echo "$p"
}
m1=$(mhold); m2=$(mhold)
o1=$("$U" -q set --pid "$m1"); o2=$("$U" -q set --pid "$m2")
check "a container's own machine-id is used as its key" [ "${o1#* }" = "machine-id set" ]
check "the same machine-id in a second live container is not reused (random)" [ "${o2#* }" = "random set" ]
check "... and the identities differ" [ "${o1%% *}" != "${o2%% *}" ]

# refuse to overwrite a different identifier; --force does
e=$(hold)
echo "someone-else" > "$T/fake/$(netns_ino "$e")"
err=$("$U" set --pid "$e" --container-id x1 2>&1); rc=$?
check "a different existing identifier is refused (exit 3)" [ "$rc" = 3 ]
check "... and left alone" [ "$(fake_of "$e")" = someone-else ]
check "... nothing recorded for it" [ "$(q "SELECT count(*) FROM bindings WHERE key = 'x1'")" = 0 ]
out=$("$U" -q set --force --pid "$e" --container-id x1); rc=$?
check "--force replaces it" [ "$rc" = 0 -a "$(fake_of "$e")" = "${out%% *}" ]
out=$("$U" -q set --dry-run --pid "$e" --container-id x2 --replace-key); rc=$?
check "--dry-run --replace-key reports would-set" [ "$rc" = 0 -a "${out##* }" = would-set ]
check "... identifier unchanged" [ "$(fake_of "$e")" != "${out%% *}" ]

# -------------------------------------------------------------------------------------------
echo "# 3. kill -9 during registry writes, 100 times"
kh=()
for i in $(seq 1 100); do kh+=("$(hold)"); done
completed=()
for i in $(seq 0 99); do
    "$U" -q set --pid "${kh[$i]}" --container-id "kill-$i" > "$T/k.$i" 2>/dev/null &
    sp=$!
    # a set takes about 30 ms here: kill anywhere from start-up to commit
    sleep "$(printf '0.%03d' $((RANDOM % 45)))"
    kill -9 "$sp" 2>/dev/null
    wait "$sp" 2>/dev/null
    rc=$?
    [ "$rc" = 0 ] && completed+=("$i")
    if [ "$(q 'PRAGMA integrity_check')" != ok ]; then
        not_ok "integrity after kill $i"
    fi
done
ok "integrity_check ok after each of 100 kills (${#completed[@]} sets finished before the kill)"
lost=0
for i in "${completed[@]}"; do
    [ "$(q "SELECT count(*) FROM bindings WHERE key = 'kill-$i'")" = 1 ] || lost=$((lost + 1))
done
check "no lost row: every set that exited 0 is recorded" [ "$lost" = 0 ]
probs=$("$C" --json doctor 2>/dev/null | registry_problems)
check "after the kills every record is well-formed, its identity derived from its key (${probs:-ok})" [ -z "$probs" ]
bad=0
for i in $(seq 0 99); do
    out=$("$U" -q set --pid "${kh[$i]}" --container-id "kill-$i") || bad=$((bad + 1))
    [ "$(fake_of "${kh[$i]}")" = "${out%% *}" ] || bad=$((bad + 1))
done
check "after the kills, every netns can be set and matches its file" [ "$bad" = 0 ]
bad=0
for i in $(seq 0 99); do
    [ "$(q "SELECT identity FROM bindings WHERE app = 'nfs4' AND key = 'kill-$i' AND netns_ino = $(netns_ino "${kh[$i]}")")" = \
        "$(fake_of "${kh[$i]}")" ] || bad=$((bad + 1))
done
check "each kill-* key is bound to its own netns, with the identifier its file holds" [ "$bad" = 0 ]
unhold "${kh[@]}"

# -------------------------------------------------------------------------------------------
echo "# 4. corrupt or unreadable registry: reported, identity still derived and set"
# Without a registry nothing stops a duplicate: end the netns that holds "web" first (check,
# in section 7, would rightly flag two live netns with one identifier).
unhold "$c"
f=$(hold)
head -c 8192 /dev/urandom > "$T/bad.db"
sum=$(md5sum < "$T/bad.db")
out=$(NSID_REGISTRY=$T/bad.db "$U" set --pid "$f" --container-id web 2>"$T/err"); rc=$?
check "corrupt db: set still exits 0" [ "$rc" = 0 ]
check "corrupt db: the same identity as with a good registry" [ "${out%% *}" = "$id1" ]
check "corrupt db: identifier written" [ "$(fake_of "$f")" = "$id1" ]
check "corrupt db: error names the file and SQLite's reason" grep -q "registry $T/bad.db: .*not a database" "$T/err"
check "corrupt db: file left untouched" [ "$(md5sum < "$T/bad.db")" = "$sum" ]
g=$(hold)
# a registry whose directory cannot be created
out=$(NSID_REGISTRY=/proc/nsid-no/reg.db "$U" set --pid "$g" --container-id ro1 2>"$T/err"); rc=$?
check "unwritable registry location: set exits 0" [ "$rc" = 0 -a "$(fake_of "$g")" = "${out%% *}" ]
check "... and reports it" grep -q "registry /proc/nsid-no/reg.db" "$T/err"

# -------------------------------------------------------------------------------------------
echo "# 5. OCI hook (state JSON as runc/crun pass it on stdin) and hostile inputs"
h=$(hold)
state() { printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%s,"bundle":"/run/containers/%s/userdata","annotations":{%s}}' "$1" "$2" "$1" "${3:-}"; }
out=$(state oci-ctr-1 "$h" | "$U" oci-hook 2>"$T/err"); rc=$?
check "oci-hook: exit 0" [ "$rc" = 0 ]
check "oci-hook: container id is the key" [ "${out#* }" = "container-id set" -a "$(fake_of "$h")" = "${out%% *}" ]
exp=$("$U" -q set --dry-run --pid "$h" --container-id oci-ctr-1 | cut -d' ' -f1)
check "oci-hook: identity = derive(container id)" [ "$exp" = "${out%% *}" ]
h2=$(hold)
out=$(state oci-ctr-2 "$h2" '"org.nsid.key":"tenant-7/db"' | "$U" oci-hook); rc=$?
check "oci-hook: annotation org.nsid.key is an explicit key" [ "$rc" = 0 -a "${out#* }" = "explicit set" ]
h3=$(hold)
out=$(state oci-ctr-3 "$h3" '"org.nsid.key":"tenant-7/db2"' | "$U" oci-hook --no-annotation-key 2>"$T/err"); rc=$?
check "oci-hook --no-annotation-key: the container id is the key" [ "$rc" = 0 -a "${out#* }" = "container-id set" ]
check "... and says the annotation was ignored" grep -q "annotations ignored" "$T/err"
# a rootless engine runs its hooks in its own user namespace (Podman as a user): NFS cannot be
# mounted from there, nothing can be set or recorded; the container must still start
out=$(unshare -U -r -n sh -c "$(declare -f state); state oci-rl-1 \$\$ | '$U' oci-hook" 2>"$T/err"); rc=$?
check "oci-hook in a user namespace (rootless engine): exit 0, nothing set" [ "$rc" = 0 -a -z "$out" ]
check "... and says why" grep -q "run from a user namespace (rootless engine)" "$T/err"
# a pod: the second container is its own process in the pod's netns
nsenter -t "$h" -n sleep 100000 </dev/null >/dev/null 2>&1 &
h1b=$!; echo "$h1b" >> "$T/holders"
wait_for 10 test "/proc/$h1b/ns/net" -ef "/proc/$h/ns/net"
out=$(state oci-ctr-1b "$h1b" | "$U" oci-hook); rc=$?
check "oci-hook: second container in the same (pod) netns keeps the pod's identity" \
    [ "$rc" = 0 -a "$(fake_of "$h")" = "$exp" ]
check "... and the binding still names the pod's first container and its process" \
    [ "$(q "SELECT name || ' ' || pid FROM bindings WHERE identity = '$exp'")" = "oci-ctr-1 $h" ]
kill -9 "$h1b" 2>/dev/null; wait "$h1b" 2>/dev/null # (a later `wait` waits for every child)
# the runtime handing a hook the first container's own pid under another id: refused loudly
err=$(state oci-ctr-1c "$h" | "$U" oci-hook 2>&1 >/dev/null); rc=$?
check "oci-hook with another container's own pid fails (exit 1), its identity untouched" \
    [ "$rc" = 1 -a "$(fake_of "$h")" = "$exp" ]
check "... saying so" grep -q "pid $h is the process of container oci-ctr-1, recorded when its container-id key was bound" <<<"$err"
hostile() { # hostile DESC EXPECTED_MSG  (stdin: input)
    local d=$1 m=$2 err rc
    err=$("$U" --timeout 2000 oci-hook 2>&1 >/dev/null); rc=$?
    if [ "$rc" = 1 ] && grep -q -- "$m" <<<"$err"; then ok "oci-hook rejects $d"; else not_ok "oci-hook rejects $d (rc=$rc: $err)"; fi
}
state x 0 | hostile "pid 0" "out of range"
state x -1 | hostile "pid -1" "out of range"
state x 1 | hostile "pid 1" "out of range"
state x 99999999999 | hostile "pid 2^36" "out of range"
state x '"123"' | hostile "pid as a string" 'no integer "pid"'
state x 1.5 | hostile "pid 1.5" 'no integer "pid"'
printf '{"id":"x"}' | hostile "no pid" 'no integer "pid"'
printf '{"pid":%s}' "$h" | hostile "no id" 'no "id"'
state "bad id" "$h" | hostile "an id with a space" '"id" must be'
state x "$h" | head -c 40 | hostile "truncated JSON" "truncated JSON"
printf '' | hostile "empty input" "empty input"
python3 -c 'print("[" * 10000 + "]" * 10000)' | hostile "10,000 levels of nesting" "nested too deeply"
python3 -c 'print("{\"a\":" * 10000 + "1" + "}" * 10000)' | hostile "10,000 nested objects" "nested too deeply"
python3 -c 'import sys; sys.stdout.write("{\"id\":\"x\",\"pid\":2,\"pad\":\"" + "a" * (2 << 20) + "\"}")' | hostile "a 2 MiB state" "larger than 1 MiB"
{ state x "$h"; echo ' trailing'; } | hostile "trailing garbage" "trailing data\|malformed JSON"
printf '[1,2]' | hostile "a non-object" "not a JSON object"
state x "$h" '"org.nsid.key":"a b"' | hostile "a bad org.nsid.key" "org.nsid.key must be"
start=$(date +%s%N)
hostile "stdin that never ends (timeout)" "timed out" < <(sleep 6)
el=$(( ($(date +%s%N) - start) / 1000000 ))
check "... within the timeout (${el} ms)" [ "$el" -lt 5000 ]
exited() { sleep 0.01 & local p=$!; wait $p; echo $p; }
state x "$(exited)" | hostile "a pid that is not a process" "cannot open its network namespace"
out=$(state hostnet $$ | "$U" oci-hook 2>&1); rc=$?
check "oci-hook: a container in the host netns is left alone (exit 0)" [ "$rc" = 0 ]
check "... saying it shares the host netns" grep -q "shares the host network namespace" <<<"$out"

# -------------------------------------------------------------------------------------------
echo "# 6. LXC start-host hook"
l=$(hold)
out=$(LXC_PID=$l LXC_NAME=lxc-web "$U" lxc-hook lxc-web lxc start-host); rc=$?
exp=$("$U" -q set --dry-run --pid "$l" --container-id lxc-web | cut -d' ' -f1)
check "lxc-hook: exit 0, LXC_NAME is the key" [ "$rc" = 0 -a "${out#* }" = "container-id set" -a "$exp" = "${out%% *}" ]
LXC_NAME=x "$U" -q lxc-hook 2>/dev/null
check "lxc-hook: missing LXC_PID fails" [ $? = 1 ]
LXC_PID=1 LXC_NAME=x "$U" -q lxc-hook 2>/dev/null
check "lxc-hook: LXC_PID=1 fails" [ $? = 1 ]
# the hook line "nsid-uniquifier --no-name-key": LXC appends NAME lxc start-host
l2=$(hold)
out=$(LXC_PID=$l2 LXC_NAME=lxc-web "$U" lxc-hook --no-name-key lxc-web lxc start-host); rc=$?
check "lxc-hook --no-name-key: exit 0, the name is not the key" \
    [ "$rc" = 0 -a "${out#* }" != "container-id set" -a "${out%% *}" != "$exp" ]
LXC_PID=$l2 LXC_NAME=lxc-web "$U" -q lxc-hook --no-such-option lxc-web lxc start-host 2>/dev/null
check "lxc-hook: an unknown option is a usage error" [ $? = 2 ]

# -------------------------------------------------------------------------------------------
echo "# 7. reconcile, list, check"
for nm in nsid-itest-a-$$ nsid-itest-b-$$; do
    ip netns add "$nm" && NETNS_ADDED+=("$nm") && rm -f "$T/fake/$(stat -L -c %i "/run/netns/$nm")"
done
u=$(hold)
"$U" -q reconcile > "$T/rec1"; rc=$?
check "reconcile exits 0" [ "$rc" = 0 ]
check "reconcile set the ip-netns namespaces" [ "$(grep -c "/run/netns/nsid-itest-[ab]-$$ .* set\$" "$T/rec1")" = 2 ]
check "reconcile set the unshare namespace" grep -q "^$(netns_ino "$u") .* set$" "$T/rec1" ||
    { echo "# netns of $u: $(netns_ino "$u")"; sed 's/^/# /' "$T/rec1"; }
check "reconcile left already-set ones alone" grep -q "^$(netns_ino "$h") .* already-set$" "$T/rec1"
check "reconcile leaves the host netns alone" grep -q "unset (host)\|(host)" "$T/rec1"
ia=$(stat -L -c %i /run/netns/nsid-itest-a-$$)
check "ip-netns identifier file written" [ -s "$T/fake/$ia" ]
"$U" -q reconcile > "$T/rec2"
# (other test runs on this host create and destroy namespaces meanwhile, and a destroyed
# netns's inode number is reused by the next: only this test's own namespaces count)
ours=" $(stat -L -c %i /run/netns/nsid-itest-a-$$) $(stat -L -c %i /run/netns/nsid-itest-b-$$) $(netns_ino "$u") $(netns_ino "$h") "
newer=$(grep ' set$' "$T/rec2" | while read -r ino _; do case "$ours" in *" $ino "*) echo "$ino" ;; esac; done)
check "second reconcile sets nothing it saw before" [ -z "$newer" ]
[ -z "$newer" ] || grep " set$" "$T/rec1" "$T/rec2" | sed 's/^/# /'

"$U" --json list > "$T/list.json"; rc=$?
check "list --json is valid JSON with every netns" python3 -c "
import json,sys
d=json.load(open('$T/list.json'))
assert d['nsid']['schema'] == 1 and d['nsid']['command'] == 'list' and d['nsid']['program'] == 'nsid-uniquifier', d['nsid']
a=d['namespaces']
inos={r['netns'] for r in a}
assert $ia in inos and $(netns_ino "$u") in inos, inos
assert all('identifier' in r and 'state' in r and 'source' in r for r in a)
"
"$U" -q check > /dev/null 2>"$T/err"; rc=$?
check "check: exit 0 when all is well" [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$T/err"
ib=$(stat -L -c %i /run/netns/nsid-itest-b-$$)
cp "$T/fake/$ia" "$T/fake/$ib"
"$U" -q check > /dev/null 2>"$T/err"; rc=$?
check "check: exit 5 on a duplicate identifier" [ "$rc" = 5 ]
check "check: names both namespaces" grep -q "netns $ia.*DUPLICATE of netns $ib" "$T/err"
rm -f "$T/fake/$ia" "$T/fake/$ib"
for nm in "${NETNS_ADDED[@]}"; do ip netns del "$nm"; done
NETNS_ADDED=()

# reconcile as its unit runs it (nsid-uniquifier-reconcile.service: its capability bounding
# set, no_new_privs, read-only system and home directories, its own /var/tmp and hostname,
# the system call deny list; lib.sh's write_as_unit), and as the udev rule's transient unit
# (the same list, itest-units-security.sh)
nm=nsid-itest-u-$$
ip netns add "$nm" && NETNS_ADDED+=("$nm") && rm -f "$T/fake/$(stat -L -c %i "/run/netns/$nm")"
if write_as_unit "$T/as-unit.sh" "$B" "$(dirname "$0")/../../udev-rules/nsid-uniquifier-reconcile.service.in"; then
    unshare -m -u --propagation slave "$T/as-unit.sh" "$U" -q reconcile > "$T/rec3" 2>"$T/rec3.err"; rc=$?
    check "reconcile as its unit runs it: exit 0, the new netns set" \
        bash -c "[ $rc = 0 ] && grep -q '/run/netns/$nm .* set\$' '$T/rec3'"
    [ "$rc" = 0 ] || sed 's/^/# /' "$T/rec3.err"
else
    check "reconcile as its unit runs it (syscall-deny built?)" false
fi
for nm in "${NETNS_ADDED[@]}"; do ip netns del "$nm"; done
NETNS_ADDED=()

# -------------------------------------------------------------------------------------------
echo "# 8. reconciles racing each other and the start hooks"
rp=()
for i in $(seq 1 30); do rp+=("$(hold)"); done
for i in 1 2 3 4; do "$U" -q reconcile > /dev/null 2>&1 & done
for i in $(seq 0 29); do "$U" -q set --pid "${rp[$i]}" --container-id "race-$i" > /dev/null 2>&1 & done
wait
"$U" -q reconcile > /dev/null 2>&1
bad=0
for i in $(seq 0 29); do
    ino=$(netns_ino "${rp[$i]}")
    reg=$(q "SELECT identity || ' ' || source FROM bindings WHERE app = 'nfs4' AND netns_ino = $ino")
    [ "$reg" = "$(fake_of "${rp[$i]}") container-id" ] || { bad=$((bad + 1)); echo "# netns $ino: file $(fake_of "${rp[$i]}"), registry '$reg'"; }
done
check "every raced netns: kernel identifier == its registry binding, from the container key" [ "$bad" = 0 ]
check "raced: 30 distinct identifiers" [ "$(for p in "${rp[@]}"; do fake_of "$p"; echo; done | sort -u | grep -c .)" = 30 ]
"$U" -q check > /dev/null 2>"$T/err"; rc=$?
check "check after the race: exit 0" [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$T/err"
unhold "${rp[@]}"

# nsid.conf's state-dir (issue #32): nsid-uniquifier used to ignore it, so it and
# nsidctl/nsid-idmapd could keep two registries. Without --state-dir and NSID_STATE_DIR the
# file's value is used; either of those still wins; a --config that is missing is an error.
cs=$(hold)
printf '[idmapd]\nstate-dir = %s  # from nsid.conf\n' "$T/conf-state" > "$T/nsid.conf"
chmod 644 "$T/nsid.conf"
(unset NSID_STATE_DIR; "$U" -q --config "$T/nsid.conf" set --pid "$cs" --key conf-key >/dev/null 2>&1)
check "no --state-dir, no NSID_STATE_DIR: the registry is nsid.conf's state-dir" \
    [ "$(sqlite3 "$T/conf-state/registry.db" "SELECT count(*) FROM bindings WHERE key = 'conf-key'" 2>/dev/null)" = 1 ]
check "nsidctl status reads the same registry through the same file" \
    bash -c "(unset NSID_STATE_DIR; '$C' --json --config '$T/nsid.conf' status) | grep -q '\"path\": \"$T/conf-state/registry.db\"'"
cs2=$(hold)
"$U" -q --config "$T/nsid.conf" set --pid "$cs2" --key conf-key2 >/dev/null 2>&1
check "NSID_STATE_DIR still wins over the file" \
    [ "$(sqlite3 "$DB" "SELECT count(*) FROM bindings WHERE key = 'conf-key2'")" = 1 ]
"$U" --config "$T/no-such.conf" list >/dev/null 2>"$T/err"; rc=$?
check "--config naming a missing file: exit 1, says so" \
    bash -c "[ $rc = 1 ] && grep -q -- '--config $T/no-such.conf: No such file or directory' '$T/err'"
unhold "$cs" "$cs2"

# options anywhere (issue #32): the common ones after the command, as before it
"$U" list --json > "$T/list2.json" 2>/dev/null
check "list --json (the option after the command): JSON" python3 -c "import json; json.load(open('$T/list2.json'))['namespaces']"
oa=$(hold)
"$U" set --pid "$oa" --key opt-after --dry-run --json --app nfs4 > "$T/set2.json" 2>/dev/null
check "set ... --json --app nfs4 after the command's own options: one JSON object" \
    python3 -c "import json; j = json.load(open('$T/set2.json')); assert j['state'] in ('would-set', 'already-set') and j['nsid']['command'] == 'set', j"
unhold "$oa"

# per-command help, unknown commands named, --no-legend (issue #32)
"$U" set --help > "$T/o" 2>&1
check "set --help: set's own usage, not the global list of commands" \
    bash -c "grep -q -- '--replace-key' '$T/o' && ! grep -q '^Commands:' '$T/o'"
"$U" frob > "$T/o" 2>&1; rc=$?
check "an unknown command: exit 2, the commands named" \
    bash -c "[ $rc = 2 ] && grep -q \"unknown command 'frob' (commands: set, oci-hook, lxc-hook, reconcile, list, check)\" '$T/o'"
"$U" list --no-legend > "$T/o" 2>/dev/null
check "list --no-legend: rows only" bash -c "! grep -q '^NETNS' '$T/o' && grep -qE '^[0-9]+ ' '$T/o'"

# one vocabulary (issue #32): list --json says the states set --json says, the table's
# phrase beside them
"$U" --json list > "$T/list.json" 2>/dev/null
check "list --json: every state is one of set --json's words, with its phrase as state_text" \
    python3 -c "
import json, sys
words = {'set', 'would-set', 'already-set', 'too-late', 'no-nfs-client', 'refused', 'failed', 'unset', 'gone'}
a = json.load(open('$T/list.json'))['namespaces']
sys.exit(0 if a and all(x['state'] in words and x['state_text'] for x in a) else 1)"

# the outcomes counted in the registry (issue #31): nsidctl metrics says what the sets ended in
OS=$T/outcomes-state
mkdir -p "$OS"
oc1=$(hold)
NSID_STATE_DIR=$OS "$U" -q set --pid "$oc1" --key outcome-1 >/dev/null 2>&1      # set
NSID_STATE_DIR=$OS "$U" -q set --pid "$oc1" --key outcome-1 >/dev/null 2>&1      # already-set
NSID_STATE_DIR=$OS "$U" -q set --pid "$oc1" --key outcome-1 --dry-run >/dev/null 2>&1  # not counted
NSID_STATE_DIR=$OS "$U" -q set --pid "$oc1" --key outcome-other >/dev/null 2>&1  # already-set (the
# registry keeps the namespace's identity)
oc2=$(hold)
echo "not-ours" > "$T/fake/$(stat -L -c %i "/proc/$oc2/ns/net")"
NSID_STATE_DIR=$OS "$U" -q set --pid "$oc2" --key outcome-2 >/dev/null 2>&1      # refused
NSID_STATE_DIR=$OS "$C" metrics > "$T/outcomes.prom" 2>/dev/null
got=$(sed -n 's/^nsid_identity_outcomes_total{outcome="\([a-z-]*\)"} \([0-9]*\)$/\1=\2/p' "$T/outcomes.prom" | tr '\n' ' ')
check "nsidctl metrics counts the outcomes: 1 set, 2 already-set, 1 refused, the dry run not ($got)" \
    test "$got" = "set=1 already-set=2 too-late=0 no-nfs-client=0 refused=1 failed=0 "
unhold "$oc1"
unhold "$oc2"

echo "1..$n"
[ "$failures" = 0 ]
