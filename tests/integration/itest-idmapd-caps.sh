#!/bin/bash
# nsid-idmapd keeps only the capabilities its work needs (issue 7, "Privilege";
# nsid-idmapd(8), CAPABILITIES): CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_DAC_OVERRIDE,
# CAP_SYS_CHROOT (the machine-id worker; not shown needed here: that needs a new container),
# CAP_SETUID and CAP_SETGID (the workers that parse a container's files, or run its name
# service, become an unprivileged id first).
#  - /proc/PID/status of every thread of the running daemon (the main one, a namespace's
#    resolver thread): CapEff = CapPrm = CapBnd = those six, CapInh = CapAmb = 0,
#    NoNewPrivs 1; the securebits forbid regaining anything by exec;
#  - each kept capability is needed, shown by starting the daemon without it (setpriv takes
#    it out of the bounding set first) and watching the work it does fail:
#      CAP_DAC_OVERRIDE: a user-namespaced container whose /etc/passwd is mode 0600 and owned
#        by its own root (host uid 100000) is answered with it, not without it;
#      CAP_SYS_PTRACE: a container's files (/proc/PID/root of a root process holding
#        capabilities the daemon dropped) are read with it, not without it;
#      CAP_SETUID: a container's files are parsed (by a worker that becomes nobody) with it;
#        without it the worker cannot drop, parses nothing, and the container gets no answer;
#      CAP_SYS_ADMIN: joining a netns to make its rpc_pipefs (setns) works with it (this host
#        has no sunrpc, so the next step fails with ENODEV), EPERM without it;
#  - the systemd unit: its CapabilityBoundingSet= is exactly that list, systemd-analyze
#    verify accepts the unit and its hardening options, and the daemon started as the unit
#    would start it (bounding set from the unit, no_new_privs, /usr /boot /etc read-only in a
#    mount namespace of its own as ProtectSystem=full does, /home /root read-only, a
#    /var/tmp and a hostname namespace of its own, the unit's system call deny list with
#    EPERM) still answers every namespace. (No systemd runs here as PID 1: the unit's
#    options are emulated with the same kernel mechanisms, lib.sh's write_as_unit.)
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmapd")
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd's capabilities, mount and network namespaces (run as root)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv missing (apt install util-linux)"; exit 77; }
command -v capsh >/dev/null || { echo "SKIP: capsh missing (apt install libcap2-bin)"; exit 77; }

T=$(mktemp -d /tmp/nsid-itest-caps.XXXXXX)
chmod 755 "$T"
mkdir -m 1777 "$T/ready"
pids=()
DPID=
cleanup() {
        [ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null || true
        for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
        rm -rf "$T"
}
trap cleanup EXIT
passes=0 fails=0 skips=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }
S="$T/idmapd.sock"
ctl() { "$bin" --socket="$S" --ctl="$1" || true; }

printf '[idmapd]\nset-identifier = no\nrescan-interval = 1\nrequest-timeout-ms = 3000\nstate-dir = %s/state\n' "$T" >"$T/nsid.conf"
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"

# c1: a plain container (own mount and net namespaces, own passwd)
mkdir -p "$T/c1" "$T/u1"
printf 'root:x:0:0::/root:/bin/sh\nalice:x:4001:4001::/:/bin/sh\n' >"$T/c1/passwd"
printf '[General]\nDomain = c1.test\n' >"$T/c1/idmapd.conf"
unshare -m -n --propagation private sh -c "
        mount --bind '$T/c1/passwd' /etc/passwd && mount --bind '$T/c1/idmapd.conf' /etc/idmapd.conf &&
        echo > '$T/ready/c1' && exec sleep 1000" </dev/null >/dev/null 2>&1 &
PC=$!
pids+=("$PC")
# u1: a user-namespaced container (0..65535 -> 100000..) whose passwd only its root can read
printf 'root:x:0:0::/root:/bin/sh\nbob:x:1000:1000::/:/bin/sh\n' >"$T/u1/passwd"
printf '[General]\nDomain = u1.test\n' >"$T/u1/idmapd.conf"
chown 100000:100000 "$T/u1/passwd" "$T/u1/idmapd.conf"
chmod 0600 "$T/u1/passwd"
unshare -U sleep 1000 </dev/null >/dev/null 2>&1 &
H=$!
pids+=("$H")
for _ in $(seq 250); do [ "$(readlink /proc/$H/ns/user)" != "$(readlink /proc/self/ns/user)" ] && break; sleep 0.02; done
echo "0 100000 65536" >/proc/$H/uid_map
echo "0 100000 65536" >/proc/$H/gid_map
nsenter --user=/proc/$H/ns/user --setuid=0 --setgid=0 unshare -m -n --propagation private sh -c "
        mount --bind '$T/u1/passwd' /etc/passwd && mount --bind '$T/u1/idmapd.conf' /etc/idmapd.conf &&
        echo > '$T/ready/u1' && exec sleep 1000" </dev/null >"$T/u1.out" 2>&1 &
PU=$!
pids+=("$PU")
for _ in $(seq 200); do [ -e "$T/ready/c1" ] && [ -e "$T/ready/u1" ] && break; sleep 0.05; done
[ -e "$T/ready/c1" ] && [ -e "$T/ready/u1" ] || { echo "FAIL: containers did not start: $(cat "$T/u1.out")"; exit 1; }
[ "$(stat -c '%a %u' "$T/u1/passwd")" = "600 100000" ] || { echo "FAIL: fixture: u1's passwd is $(stat -c '%a %u' "$T/u1/passwd")"; exit 1; }

start_daemon() { # log-name [wrapper...]
        local log=$T/$1.log; shift
        rm -f "$S"
        "$@" "$bin" -f --config="$T/nsid.conf" --idmapd-conf="$T/host-idmapd.conf" --socket="$S" 2>"$log" &
        DPID=$!
        for _ in $(seq 100); do [ -S "$S" ] && "$bin" --socket="$S" --ctl=status >/dev/null 2>&1 && return 0; sleep 0.05; done
        cat "$log" >&2
        return 1
}
stop_daemon() { kill -TERM "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=; }
decode() { capsh --decode="$1" | sed 's/^0x[0-9a-f]*=//'; }
status_field() { awk -v k="$2:" '$1 == k {print $2}' "$1"; }
KEPT="cap_dac_override,cap_setgid,cap_setuid,cap_sys_chroot,cap_sys_ptrace,cap_sys_admin"   # capsh order (by number)

# --- the daemon as root with every capability -----------------------------------------------
start_daemon full || { echo "FAIL: daemon did not start"; exit 1; }
pass "daemon started (pid $DPID)"
[ "$(ctl "lookup pid:$PC uid alice@c1.test")" = "ok 4001 600 resolved" ] && pass "c1 answered" || fail "c1: $(ctl "lookup pid:$PC uid alice@c1.test")"
[ "$(ctl "lookup pid:$PU uid bob@u1.test ns-ids")" = "ok 1000 600 resolved" ] && pass "u1 (passwd 0600, owned by its root) answered" || fail "u1: $(ctl "lookup pid:$PU uid bob@u1.test ns-ids")"
ctl "lookup host user 0" >/dev/null
nthreads=0
for task in /proc/$DPID/task/*; do
        nthreads=$((nthreads + 1))
        st=$task/status
        tid=${task##*/}
        for k in CapEff CapPrm CapBnd; do
                got=$(decode "$(status_field "$st" $k)")
                [ "$got" = "$KEPT" ] && pass "thread $tid $k = $got" || fail "thread $tid $k = '$got', want $KEPT"
        done
        for k in CapInh CapAmb; do
                v=$(status_field "$st" $k)
                [ "$v" = 0000000000000000 ] && pass "thread $tid $k empty" || fail "thread $tid $k = $v ($(decode "$v"))"
        done
        [ "$(status_field "$st" NoNewPrivs)" = 1 ] && pass "thread $tid NoNewPrivs 1" || fail "thread $tid NoNewPrivs $(status_field "$st" NoNewPrivs)"
done
[ $nthreads -ge 3 ] && pass "$nthreads threads checked (main and resolvers)" || fail "only $nthreads threads: the resolvers' threads were not there to check"
grep -q "cannot drop" "$T/full.log" && fail "daemon could not drop: $(grep "cannot drop" "$T/full.log")" || pass "no drop failures logged"
grep -q "no rpc_pipefs: No such device" "$T/full.log" && pass "CAP_SYS_ADMIN: setns into the containers' netns worked (ENODEV: no sunrpc here)" || fail "rpc_pipefs attach: $(grep "no rpc_pipefs" "$T/full.log" | head -2)"
stop_daemon

# --- the daemon without each kept capability: the work it serves fails -----------------------
without() { # cap-name (setpriv spelling)
        start_daemon "no-$1" setpriv --bounding-set="-$1" -- || { fail "daemon without $1 did not start"; return 1; }
        grep -q "CAP_$(echo "$1" | tr a-z A-Z) is not permitted\|cap_$1 is not permitted" "$T/no-$1.log" &&
                pass "without $1: the daemon says so at start" || fail "without $1: no warning: $(head -3 "$T/no-$1.log")"
}
# refused CASE REPLY WANT [HOST]: the container's lookup got the error WANT (not a timeout, not
# an empty reply), and the daemon that gave it is still running and still answers the host
# (asked as HOST, default "host")
refused() {
        [ "$2" = "$3" ] && pass "$1 ($2)" || fail "$1: got '$2', want '$3'"
        local h
        h=$(ctl "lookup ${4:-host} uid root@host.test")
        kill -0 "$DPID" 2>/dev/null && case "$h" in "ok 0 "*) true ;; *) false ;; esac &&
                pass "$1: the daemon is still running and answers the host ($h)" ||
                fail "$1: afterwards the daemon is $(kill -0 "$DPID" 2>/dev/null && echo running || echo gone), the host got '$h'"
}
if without dac_override; then
        # CAP_DAC_READ_SEARCH is dropped by the daemon itself, so nothing else reads the file
        refused "without dac_override: u1's 0600 passwd is unreadable" \
                "$(ctl "lookup pid:$PU uid bob@u1.test ns-ids")" 'error 13 Permission\040denied'
        [ "$(ctl "lookup pid:$PC uid alice@c1.test")" = "ok 4001 600 resolved" ] && pass "without dac_override: c1 (world-readable passwd) still answered" || fail "without dac_override: c1 not answered"
        stop_daemon
fi
if without sys_ptrace; then
        # (the host asked by its netns: without CAP_SYS_PTRACE the daemon cannot read the
        # namespaces of pid 1, so "host", the initial namespaces' netns, is not known to it)
        refused "without sys_ptrace: c1's files are out of reach" \
                "$(ctl "lookup pid:$PC uid alice@c1.test")" 'error 13 Permission\040denied' \
                "netns:$(stat -L -c %i /proc/self/ns/net)"
        stop_daemon
fi
if without setuid; then
        # (an answer would mean its files were parsed with privilege)
        refused "without setuid: c1's files are not parsed, the worker cannot drop" \
                "$(ctl "lookup pid:$PC uid alice@c1.test")" 'error 1 Operation\040not\040permitted'
        stop_daemon
fi
if without sys_admin; then
        ctl "lookup pid:$PC uid alice@c1.test" >/dev/null
        # (the daemon tries the netns's rpc_pipefs on its own, a moment later)
        wait_for 10 grep -q "no rpc_pipefs" "$T/no-sys_admin.log" || true
        grep -q "no rpc_pipefs: Operation not permitted" "$T/no-sys_admin.log" && pass "without sys_admin: setns into a netns is refused (EPERM)" || fail "without sys_admin: $(grep "no rpc_pipefs" "$T/no-sys_admin.log" | head -2)"
        stop_daemon
fi

# --- the systemd unit ---------------------------------------------------------------------
unit_in=$src/idmapd/nsid-idmapd.service.in
bset=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit_in")
want_bset="CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_DAC_OVERRIDE CAP_SYS_CHROOT CAP_SETUID CAP_SETGID"
[ "$(echo "$bset" | tr ' ' '\n' | sort | tr '\n' ' ')" = "$(echo "$want_bset" | tr ' ' '\n' | sort | tr '\n' ' ')" ] &&
        pass "unit: CapabilityBoundingSet=$bset" || fail "unit: CapabilityBoundingSet='$bset', want the daemon's list ($want_bset)"
if command -v systemd-analyze >/dev/null; then
        sed "s|@NSID_IDMAPD_PATH@|$bin|" "$unit_in" >"$T/nsid-idmapd.service"
        # (it exits 0 on unknown keys and bad values, only saying so)
        if out=$(systemd-analyze verify --man=no "$T/nsid-idmapd.service" 2>&1) && [ -z "$out" ]; then
                pass "unit: systemd-analyze verify accepts it, every key and value"
        else
                fail "unit: systemd-analyze verify: $out"
        fi
else
        skip "systemd-analyze missing (apt install systemd): the unit file is not verified"
fi
# as the unit starts it: bounding set from the unit, no_new_privs, ProtectSystem=full.
# (SecureBits=noroot would leave root's exec() with no capabilities at all: not in the unit.)
grep -q '^SecureBits=.*noroot' "$unit_in" && fail "unit: SecureBits=noroot starts the daemon without capabilities" || pass "unit: no SecureBits=noroot"
grep -q '^NoNewPrivileges=yes' "$unit_in" && pass "unit: NoNewPrivileges=yes" || fail "unit: NoNewPrivileges not set"
grep -q '^ProtectSystem=full' "$unit_in" && pass "unit: ProtectSystem=full" || fail "unit: ProtectSystem not full"
write_as_unit "$T/as-unit.sh" "$build" "$unit_in" || fail "cannot write the unit's emulation (syscall-deny built?)"
if start_daemon unit unshare -m -u --propagation slave "$T/as-unit.sh"; then
        pass "daemon started as the unit would start it"
        [ "$(ctl "lookup pid:$PC uid alice@c1.test")" = "ok 4001 600 resolved" ] && pass "as the unit: c1 answered" || fail "as the unit: c1: $(ctl "lookup pid:$PC uid alice@c1.test")"
        [ "$(ctl "lookup pid:$PU uid bob@u1.test ns-ids")" = "ok 1000 600 resolved" ] && pass "as the unit: u1 answered" || fail "as the unit: u1: $(ctl "lookup pid:$PU uid bob@u1.test ns-ids")"
        case "$(ctl "lookup host uid root@host.test")" in "ok 0 "*) pass "as the unit: host answered" ;; *) fail "as the unit: host: $(ctl "lookup host uid root@host.test")" ;; esac
        wait_for 10 grep -q "no rpc_pipefs" "$T/unit.log" || true
        grep -q "no rpc_pipefs: No such device" "$T/unit.log" && pass "as the unit: setns into the netns works" || fail "as the unit: $(grep "no rpc_pipefs" "$T/unit.log" | head -2)"
        grep -qi "warn\|cannot\|not permitted" "$T/unit.log" && fail "as the unit: $(grep -i "warn\|cannot\|not permitted" "$T/unit.log" | head -3)" || pass "as the unit: no warnings"
        got=$(decode "$(status_field /proc/$DPID/status CapEff)")
        [ "$got" = "$KEPT" ] && pass "as the unit: CapEff = $got" || fail "as the unit: CapEff = $got"
        stop_daemon
else
        fail "daemon did not start as the unit would start it"
fi

[ $fails = 0 ] || { for f in "$T"/*.log; do echo "--- $f"; cat "$f"; done; } >&2
echo "$passes passed, $fails failed, $skips skipped"
[ "$fails" = 0 ] || exit 1
[ "$passes" -gt 0 ] || [ "$skips" = 0 ] || exit 77 # every case skipped
[ "$passes" -gt 0 ]
