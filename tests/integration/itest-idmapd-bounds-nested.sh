#!/bin/bash
# nsid-idmapd's bounds hold against nesting and root-made user namespaces (issue #29, items
# 2 and 3), on this host's kernel, with real user and network namespaces:
#  - root inside a container whose user namespace host root made (as LXC's unprivileged
#    containers, systemd-nspawn -U, podman --userns as root): 8 `unshare -n` from its root,
#    max-netns-per-owner = 5: 5 served, 3 refused (that container's own budget), logged
#    once naming its user namespace; status shows them charged to that user namespace;
#  - a second such container has a budget of its own: its 2 namespaces are served;
#  - one host user (uid 1000) with a subordinate range, nesting user namespaces as inner
#    uids 1..8 (host 200001..200008), a netns in each: all charged to uid 1000 (the owner of
#    the top-level user namespace), 5 served, 3 refused; before, each was charged to another
#    subordinate uid and all 8 were served;
#  - the unprivileged total (max-netns-unprivileged) counts uid 1000's namespaces, not the
#    root-made containers'.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmapd")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd, user namespaces (run as root)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv missing"; exit 77; }
command -v nsenter >/dev/null || { echo "SKIP: nsenter missing"; exit 77; }

T=$(mktemp -d /tmp/nsid-itest-nested.XXXXXX)
chmod 755 "$T"
S="$T/idmapd.sock"
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
        [ -n "${DPID:-}" ] && kill -9 "$DPID" 2>/dev/null || true
        rm -rf "$T"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
ctl() { "$bin" --socket="$S" --ctl="$1" || true; }
status_py() { ctl status | python3 -c "import json,sys; j=json.loads(sys.stdin.read()[3:]); $1"; }

cat >"$T/nsid.conf" <<CONF
[idmapd]
rescan-interval = 1
set-identifier = no
max-netns-per-owner = 5
max-netns-unprivileged = 100
state-dir = $T/state
CONF
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"
"$bin" -f --config="$T/nsid.conf" --idmapd-conf="$T/host-idmapd.conf" --socket="$S" 2>"$T/daemon.log" &
DPID=$!
for _ in $(seq 200); do [ -S "$S" ] && ctl status | grep -q '^ok' && break; sleep 0.05; done
[ -S "$S" ] || { cat "$T/daemon.log"; echo "FAIL: daemon did not start"; exit 1; }
pass "daemon started"

# a user namespace made by OWNER (uid, via setpriv; 0 = root) with the map MAP written by
# host root; prints the holder's pid
userns_holder() { # owner map
        local p
        if [ "$1" = 0 ]; then unshare -U sleep 1000 </dev/null >/dev/null 2>&1 &
        else setpriv --reuid="$1" --regid="$1" --clear-groups unshare -U sleep 1000 </dev/null >/dev/null 2>&1 & fi
        p=$!
        pids+=("$p")
        for _ in $(seq 250); do [ "$(readlink /proc/$p/ns/user)" != "$(readlink /proc/self/ns/user)" ] && break; sleep 0.02; done
        echo "$2" >/proc/$p/uid_map
        echo "$2" >/proc/$p/gid_map
        echo "$p"
}
# n netns made inside holder H's user namespace, as inner uid U (0: its root), each in a
# new user namespace too when NEST is set
spawn_in() { # H U n nest
        local i
        for i in $(seq "$3"); do
                local u=$2
                [ "$u" = step ] && u=$i
                if [ "$4" = nest ]; then
                        nsenter --user=/proc/$1/ns/user --setuid="$u" --setgid="$u" unshare -Un sleep 1000 </dev/null >/dev/null 2>&1 &
                else
                        nsenter --user=/proc/$1/ns/user --setuid="$u" --setgid="$u" unshare -n sleep 1000 </dev/null >/dev/null 2>&1 &
                fi
                pids+=("$!")
                disown "$!" # (no "Killed" line for each at the end)
        done
}
bounds() { status_py "b=j['bounds']; print(b['charged_served'], b['unprivileged_served'], b['refused_now'])"; }
settle() { # expected "charged unpriv refused"
        local got
        for _ in $(seq 100); do got=$(bounds); [ "$got" = "$1" ] && break; sleep 0.1; done
        echo "$got"
}

# --- 1. root in a root-made container makes 8 netns ---
C1=$(userns_holder 0 "0 100000 65536")
U1=$(readlink /proc/$C1/ns/user | tr -dc 0-9)
spawn_in "$C1" 0 8 flat
got=$(settle "5 0 3")
[ "$got" = "5 0 3" ] && pass "root-made container, 8 netns from its root: 5 served, 3 refused, none counted as unprivileged" ||
        fail "root-made container: charged/unprivileged/refused '$got', expected '5 0 3'"
n=$(grep -c "user namespace user:\[$U1\] (made by root) owns .*max-netns-per-owner = 5" "$T/daemon.log" || true)
[ "$n" = 1 ] && pass "logged once, naming its user namespace" || fail "logged $n times: $(grep -a 'owns' "$T/daemon.log" | tail -2)"
o=$(status_py "print(sorted(set(n.get('owner_userns') for n in j['namespaces'] if 'owner_userns' in n)))")
[ "$o" = "[$U1]" ] && pass "status: charged to user:[$U1]" || fail "status owners: $o"

# --- 2. a second root-made container: a budget of its own ---
C2=$(userns_holder 0 "0 300000 65536")
spawn_in "$C2" 0 2 flat
got=$(settle "7 0 3")
[ "$got" = "7 0 3" ] && pass "a second container's 2 netns served on its own budget" || fail "second container: '$got', expected '7 0 3'"

# --- 3. uid 1000 with a subordinate range, nesting as inner uids 1..8 ---
H=$(userns_holder 1000 "0 200000 65536")
spawn_in "$H" step 8 nest
got=$(settle "12 5 6")
[ "$got" = "12 5 6" ] && pass "nested as 8 subordinate uids: 5 served, charged to uid 1000; 3 refused" ||
        fail "nested: charged/unprivileged/refused '$got', expected '12 5 6'"
o=$(status_py "print(sorted(set(n.get('owner_uid') for n in j['namespaces'] if 'owner_uid' in n)))")
[ "$o" = "[1000]" ] && pass "status: all charged to uid 1000 (none to 200001..200008)" || fail "status owner uids: $o"

kill -TERM "$DPID"; wait "$DPID" && pass "SIGTERM: exit 0" || fail "exit status $?"
DPID=
[ "$fails" = 0 ] || { echo "--- daemon log (tail)"; tail -20 "$T/daemon.log"; exit 1; }
echo "all passed"
