#!/bin/bash
# nsid-idmapd answers a container from its own name service (issue 28), on this host's
# kernel without NFS (the pipes are the lab's): real mount, network and pid namespaces,
# containers with their own etc/nsswitch.conf, etc/idmapd.conf, systemd user records, and an
# NSS module of their own (tests/integration/data/libnss_hostile.c, built here, put in the
# container's library directory with a read-only overlayfs), asked over the control socket.
#
# Checks:
#  - nss-systemd: alice exists only as a systemd user record (etc/userdb); `getent` in the
#    container (the baseline) and nsid agree, both directions, users and groups; status says
#    the container is answered by its name service, with its nsswitch.conf's sources;
#  - idmapd.conf methods: `Method = static,nsswitch` with a [Static] entry answers as
#    libnfsidmap in that container does;
#  - the files-only fast path stays for a container whose nsswitch.conf names files (and
#    for Debian's default "files systemd" with no record: the daemon says "files");
#  - a hostile NSS module (hang, 20 s, 1 MiB names, control bytes, uid 0 for every name, a
#    crash, a fork): its container gets a failure or its own lie, never another's answer;
#    the host and a well-behaved container keep answering within 1 s meanwhile; the daemon
#    stays up, its threads and fds come back, one agent per name-service container runs and
#    none is left once the daemon stops; the module ran as nobody, without
#    capabilities, with no_new_privs, unable to fork or write a file, with no HOME;
#  - the container's files are parsed by an unprivileged worker: the daemon's log says
#    nothing of parsing as root, and a change of nsswitch.conf is noticed.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmapd")
src=$(cd "$(dirname "$0")" && pwd)
. "$src/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd, namespaces (run as root)"; exit 77; }
[ -x "$build/idmapd/nsid-nss-query" ] || { echo "FAIL: $build/idmapd/nsid-nss-query not built"; exit 1; }
[ -e /usr/lib/x86_64-linux-gnu/libnss_systemd.so.2 ] ||
        { echo "SKIP: libnss-systemd not installed (scripts/install-deps)"; exit 77; }
command -v cc >/dev/null || { echo "SKIP: no C compiler for the hostile NSS module"; exit 77; }
libdir=$(dirname "$(realpath /usr/lib/x86_64-linux-gnu/libnss_systemd.so.2)")

T=$(mktemp -d /tmp/nsid-itest-nss.XXXXXX)
chmod 755 "$T"
mkdir -m 1777 "$T/ready"
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
expect() { # expect "request" "reply prefix"
        local got
        got=$(ctl "$1")
        case "$got" in "$2"*) pass "$1 -> $got" ;; *) fail "$1 -> '$got', expected '$2...'" ;; esac
}

cc -shared -fPIC -O2 -o "$T/libnss_hostile.so.2" "$src/data/libnss_hostile.c"
mkdir -p "$T/hostlib"
cp "$T/libnss_hostile.so.2" "$T/hostlib/"

cat >"$T/nsid.conf" <<CONF
[idmapd]
cache-ttl = 600
negative-ttl = 30
request-timeout-ms = 3000
rescan-interval = 1
refresh-interval = 1
set-identifier = no
state-dir = $T/state
CONF
printf '[General]\nDomain = host.test\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' >"$T/host-idmapd.conf"

# a container: etc files from $T/NAME/ bind-mounted over the host's, made as engines make
# them: a pid namespace first, whose pid 1 makes the mount and network namespaces (so the
# first process the daemon finds in its netns is in its pid namespace too); optional: its
# userdb directory, the hostile module
start_container() { # name
        local name=$1 d="$T/$1"
        {
                echo 'set -e'
                for f in passwd group idmapd.conf nsswitch.conf; do
                        [ -e "$d/$f" ] && echo "mount --bind '$d/$f' /etc/$f"
                done
                [ -d "$d/userdb" ] && echo "mkdir -p /etc/userdb; mount --bind '$d/userdb' /etc/userdb"
                if [ -e "$d/hostile-nss" ]; then
                        echo "touch /etc/hostile-nss; mount --bind '$d/hostile-nss' /etc/hostile-nss"
                        echo "mount -t overlay overlay -o 'lowerdir=$T/hostlib:$libdir' '$libdir'"
                fi
                echo "echo up >'$T/ready/$name'"
                echo 'exec sleep 1000'
        } >"$T/$name.sh"
        if [ "${2:-}" = --no-pidns ]; then # (a container sharing the host's pid namespace)
                unshare -m -n --propagation private sh "$T/$name.sh" </dev/null >"$T/$name.out" 2>&1 &
                CPID=$!
                pids+=("$CPID")
        else
                unshare -p -f unshare -m -n --propagation private sh "$T/$name.sh" </dev/null >"$T/$name.out" 2>&1 &
                local outer=$!
                pids+=("$outer")
        fi
        for _ in $(seq 200); do [ -s "$T/ready/$name" ] && break; sleep 0.05; done
        [ -s "$T/ready/$name" ] || fail "container $name did not start: $(cat "$T/$name.out")"
        [ "${2:-}" = --no-pidns ] && return
        # its pid 1 (host pid), which runs sleep once the script is done
        CPID=$(pgrep -P "$outer" || true)
        [ -n "$CPID" ] || { fail "container $name: no process under $outer"; return; }
        pids+=("$CPID")
}
in_container() { nsenter -t "$1" -m -p -n -- "${@:2}"; }
mkfiles() { # name domain nsswitch-passwd-and-group
        mkdir -p "$T/$1"
        printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n' >"$T/$1/passwd"
        printf 'root:x:0:\nnogroup:x:65534:\n' >"$T/$1/group"
        printf '[General]\nDomain = %s\n' "$2" >"$T/$1/idmapd.conf"
        printf 'passwd: %s\ngroup: %s\n' "$3" "$3" >"$T/$1/nsswitch.conf"
}

# A: systemd user records only
mkfiles a a.test "files systemd"
mkdir -p "$T/a/userdb"
echo '{"userName":"alice","uid":4011,"gid":4111,"homeDirectory":"/","shell":"/bin/sh"}' >"$T/a/userdb/alice.user"
ln -s alice.user "$T/a/userdb/4011.user"
echo '{"groupName":"team","gid":4111}' >"$T/a/userdb/team.group"
ln -s team.group "$T/a/userdb/4111.group"
# B: idmapd.conf methods
mkfiles b b.test files
printf '[General]\nDomain = b.test\n[Translation]\nMethod = static,nsswitch\n[Static]\ncarol@b.test = root\n' >"$T/b/idmapd.conf"
# F: plain files (fast path); D: Debian's default "files systemd" with no record
mkfiles f f.test files
echo 'frank:x:4200:4200::/:/bin/sh' >>"$T/f/passwd"
mkfiles d d.test "files systemd"
echo 'dora:x:4300:4300::/:/bin/sh' >>"$T/d/passwd"
# H: a hostile NSS module
mkfiles h h.test "hostile"
echo creds >"$T/h/hostile-nss"

# G: the hostile module hanging, in a container without a pid namespace of its own
mkfiles g g.test "hostile"
echo hang >"$T/g/hostile-nss"

for c in a b f d h; do start_container $c; eval "P_$c=$CPID"; done
start_container g --no-pidns
P_g=$CPID

# the daemon as its unit runs it (bounding set, no_new_privs, read-only system and home
# directories, its own /var/tmp and hostname, the system call deny list: lib.sh)
write_as_unit "$T/as-unit.sh" "$build" "$src/../../idmapd/nsid-idmapd.service.in" ||
        { echo "FAIL: cannot emulate the unit (syscall-deny built?)"; exit 1; }
unshare -m -u --propagation slave "$T/as-unit.sh" "$bin" -f --config="$T/nsid.conf" \
        --idmapd-conf="$T/host-idmapd.conf" --socket="$S" 2>"$T/daemon.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$S" ] && ctl status >/dev/null && break; sleep 0.05; done
[ -S "$S" ] || { cat "$T/daemon.log"; echo "FAIL: daemon did not start"; exit 1; }
pass "daemon started (pid $DPID)"

# --- A: systemd user records, against getent in the container ---
base=$(in_container "$P_a" getent passwd alice | cut -d: -f3)
[ "$base" = 4011 ] && pass "baseline: getent in A gives alice 4011" || fail "baseline getent in A: '$base'"
expect "lookup pid:$P_a uid alice@a.test" "ok 4011 "
expect "lookup pid:$P_a user 4011" "ok alice@a.test "
expect "lookup pid:$P_a gid team@a.test" "ok 4111 "
expect "lookup pid:$P_a group 4111" "ok team@a.test "
expect "lookup pid:$P_a uid nosuch@a.test" "negative"
expect "lookup host uid alice@host.test" "ok 65534 " # the host knows no alice: its nobody
st=$(ctl status)
python3 - "${st#ok }" <<'PY' && pass "status: A answered by its name service, with its nsswitch.conf's sources" || fail "status: $st"
import json, sys
s = json.loads(sys.argv[1])
a = [n for n in s["namespaces"] if n["domain"] == "a.test"][0]
assert a["answered_by"] == "nss" and a["passwd_sources"] == "files systemd", a
PY

# nsidctl shows it too: status's NAMES column, doctor's name-service finding
nsidctl=$(realpath "$build/nsidctl/nsidctl")
ino_a=$(readlink /proc/$P_a/ns/net | tr -dc 0-9)
"$nsidctl" --socket="$S" status >"$T/st.txt" 2>&1 || true
grep -q "^$ino_a .* nss:files systemd " "$T/st.txt" && pass "nsidctl status: A's NAMES are nss:files systemd" ||
        fail "nsidctl status: $(grep "^$ino_a " "$T/st.txt")"
"$nsidctl" --socket="$S" --json doctor >"$T/doc.json" 2>/dev/null || true
python3 - "$T/doc.json" "$ino_a" <<'PY' && pass "nsidctl doctor: A answered by its own name service (name-service finding)" || fail "nsidctl doctor: no name-service finding for A"
import json, sys
f = [x for x in json.load(open(sys.argv[1]))["findings"] if x["check"] == "name-service"]
assert any(sys.argv[2] in x["message"] and "files systemd" in x["message"] for x in f), f
PY

# --- B: libnfsidmap's static method, as libnfsidmap in B answers ---
expect "lookup pid:$P_b uid carol@b.test" "ok 0 "
expect "lookup pid:$P_b uid root@b.test" "ok 0 "

# --- F and D: files, the fast path ---
expect "lookup pid:$P_f uid frank@f.test" "ok 4200 "
expect "lookup pid:$P_d uid dora@d.test" "ok 4300 "
st=$(ctl status)
python3 - "${st#ok }" <<'PY' && pass "F (files) and D (files systemd, no record) take the fast path" || fail "fast path: $st"
import json, sys
s = json.loads(sys.argv[1])
by = {n["domain"]: n for n in s["namespaces"]}
for d in ("f.test", "d.test"):
    assert by[d]["answered_by"] == "files", by[d]
assert by["b.test"]["answered_by"] == "nss" and by["b.test"]["idmapd_conf_methods"], by["b.test"]
PY
# a record appears in D: nss-systemd now adds something; the change is noticed
mkdir -p "$T/d/userdb"
printf 'passwd: files systemd\ngroup: files systemd\n# changed\n' >"$T/d/nsswitch.conf.new"
cat "$T/d/nsswitch.conf.new" >"$T/d/nsswitch.conf"
ok=0
for _ in $(seq 50); do grep -q "/etc/nsswitch.conf changed" "$T/daemon.log" && { ok=1; break; }; sleep 0.1; done
[ $ok = 1 ] && pass "a change of D's nsswitch.conf is noticed" || fail "D's nsswitch.conf change not noticed"

# --- a process whose comm holds an escape sequence and a newline (issue #29, item 6) ---
unshare -n python3 -c 'import ctypes, time; ctypes.CDLL(None).prctl(15, b"ev\x1b[31m\nx", 0, 0, 0); time.sleep(1000)' &
pids+=($!)
ok=0
for _ in $(seq 50); do grep -q 'pid [0-9]* (ev\\x1b\[31m\\x0ax)' "$T/daemon.log" && { ok=1; break; }; sleep 0.1; done
[ $ok = 1 ] && pass "a hostile comm is logged escaped" || fail "hostile comm not seen escaped: $(grep -a 'ev' "$T/daemon.log" | head -3)"
"$bin" --socket="$S" --status >"$T/status.txt" 2>&1 || true
if grep -q $'\033' "$T/daemon.log" "$T/status.txt" || grep -q '^x)' "$T/daemon.log" "$T/status.txt"; then
        fail "an escape byte or a split line reached the log or --status"
else
        pass "no escape byte or split line in the log or --status"
fi

# --- H: hostile module. First what it runs as. ---
got=$(ctl "lookup pid:$P_h user 5000")
case "$got" in
"ok uid65534-gid65534-cap0-nnp1-write0-envpath0@h.test "*) pass "the module ran as nobody, no capability, no_new_privs, no file written, clean env ($got)" ;;
*) fail "hostile creds: '$got'" ;;
esac
ctl "flush pid:$P_h" >/dev/null
# The daemon's descriptors that belong to no namespace it tracks: other tests on this host
# make and remove namespaces meanwhile (ctest -j), and it tracks those too (their netns,
# pidfds, /proc directories, bind-mounted netns files).
fixed_fds() {
        local n=0 f l
        for f in /proc/$DPID/fd/*; do
                l=$(readlink "$f" 2>/dev/null) || continue
                case "$l" in net:\[*\]|/run/netns/*|/proc/[0-9]*) continue ;; esac
                grep -q '^Pid:' "/proc/$DPID/fdinfo/${f##*/}" 2>/dev/null && continue # pidfd
                [ "$(stat -L -f -c %T "$f" 2>/dev/null)" = nsfs ] && continue
                n=$((n + 1))
        done
        echo $n
}
fd_before=$(fixed_fds)
for mode in uid0 ctrl huge crash fork; do
        echo $mode >"$T/h/hostile-nss"
        ctl "flush pid:$P_h" >/dev/null
        case $mode in
        uid0) expect "lookup pid:$P_h uid anyone@h.test" "ok 0 " # its own lie, for itself only
              expect "lookup pid:$P_a uid alice@a.test" "ok 4011 "
              expect "lookup host uid root@host.test" "ok 0 " ;;
        ctrl) got=$(ctl "lookup pid:$P_h user 5001")
              case "$got" in error*) pass "control bytes in a name refused ($got)" ;; *) fail "ctrl: '$got'" ;; esac
              grep -q $'\033' "$T/daemon.log" && fail "an escape byte reached the daemon's log" || pass "no escape byte in the log" ;;
        huge) got=$(ctl "lookup pid:$P_h user 5002") # (libnfsidmap gives up: unknown)
              case "$got" in error*|negative*) pass "a 1 MiB name refused ($got)" ;; *) fail "huge: '$got'" ;; esac ;;
        crash) got=$(ctl "lookup pid:$P_h uid x@h.test")
              case "$got" in error*) pass "a crashing module is a failure ($got)" ;; *) fail "crash: '$got'" ;; esac
              "$nsidctl" --socket="$S" --json doctor >"$T/doc.json" 2>/dev/null || true
              python3 - "$T/doc.json" <<'PY' && pass "nsidctl doctor: H's failing name service is a warning saying what to look at" || fail "nsidctl doctor: no warning for H"
import json, sys
f = [x for x in json.load(open(sys.argv[1]))["findings"] if x["check"] == "name-service"]
assert any(x["severity"] == "warning" and "fails" in x["message"] and "sssd" in (x.get("fix") or "") for x in f), f
PY
              ;;
        fork) got=$(ctl "lookup pid:$P_h user 5003")
              case "$got" in "ok forkfailed@h.test "*) pass "the module cannot fork ($got)" ;; *) fail "fork: '$got'" ;; esac ;;
        esac
done
# hang and slow: H's lookup fails at its deadline; the others answer meanwhile
for mode in hang slow; do
        echo $mode >"$T/h/hostile-nss"
        ctl "flush pid:$P_h" >/dev/null
        ( ctl "lookup pid:$P_h user 5004" >"$T/h.$mode" ) &
        hp=$!
        sleep 0.3
        t0=$(date +%s%N)
        a=$(ctl "lookup pid:$P_a user 4011"); h=$(ctl "lookup host user 0"); f=$(ctl "lookup pid:$P_f uid frank@f.test")
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        case "$a|$h|$f" in "ok alice@a.test "*"|ok root@host.test "*"|ok 4200 "*)
                [ $ms -lt 1000 ] && pass "$mode: A, the host and F answered in $ms ms meanwhile" ||
                        fail "$mode: the others took $ms ms" ;;
        *) fail "$mode: others got '$a' '$h' '$f'" ;; esac
        wait $hp
        case "$(cat "$T/h.$mode")" in error*) pass "$mode: H's lookup failed at its deadline ($(cat "$T/h.$mode"))" ;;
        *) fail "$mode: H got '$(cat "$T/h.$mode")'" ;; esac
done
kill -0 $DPID && pass "the daemon is up" || fail "the daemon died"
sleep 3 # (H's resolver thread waits for its own worker's time limit after the main loop answered)
for i in $(seq 100); do
        fd_after=$(fixed_fds)
        [ "$fd_after" -le "$fd_before" ] && break
        sleep 0.1
done
echo "fds back after $i tries"
[ "$fd_after" -le "$fd_before" ] && pass "daemon fds $fd_before -> $fd_after" ||
        { fail "daemon fds $fd_before -> $fd_after"; ls -l /proc/$DPID/fd; for t in /proc/$DPID/task/*; do echo "$t: $(cat $t/comm) $(cat $t/wchan)"; done; ps -ef --forest | grep -B2 -A3 "nss-query\|hostile" | grep -v grep; }
# each agent runs in its container's pid namespace (the runner of a worker that joined it)
# this test's agents: their parent (a worker's middle process, a copy of this daemon) has
# this test's configuration on its command line (other tests may run agents meanwhile)
our_agents() {
        local p pp
        for p in $(pgrep -x nsid-nss-query || true); do
                pp=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || continue
                tr '\0' ' ' <"/proc/$pp/cmdline" 2>/dev/null | grep -qF -- "$T/nsid.conf" && echo "$p"
        done
        return 0
}
for ag in $(our_agents); do
        pns=$(readlink /proc/$ag/ns/pid) nns=$(readlink /proc/$ag/ns/net)
        cpn=""
        for c in "$P_a" "$P_b" "$P_h"; do [ "$(readlink /proc/$c/ns/net)" = "$nns" ] && cpn=$(readlink /proc/$c/ns/pid); done
        [ -n "$cpn" ] && [ "$pns" = "$cpn" ] && pass "agent $ag runs in its container's pid namespace ($pns)" ||
                fail "agent $ag: pid namespace $pns, its container's '$cpn'"
done
# one agent per name-service container at most (A, B, H), each the daemon's grandchild
agents=$(our_agents | wc -l)
[ "$agents" -ge 1 ] && [ "$agents" -le 3 ] && pass "$agents nsid-nss-query agents for 3 name-service containers" ||
        { fail "$agents nsid-nss-query agents"; ps -ef | grep -v grep | grep nss-query; }
# A late answer followed by a pipelined line that rescans and forgets the namespace the
# answer was for (issue #29, item 8): G's lookup (its module hangs: the request times out at
# 3 s, unless a periodic rescan forgets G first: then ns_free() answers it, ESRCH), then
# "register" of a new netns (a rescan), with G's only process killed meanwhile, so a rescan
# run from within that answer would free namespaces while the daemon still walks them. (G has no pid namespace of its own: its hung agent outlives it until the daemon
# stops it, and is no process of G's to the rescan.)
gnet=$(readlink /proc/$P_g/ns/net)
ginoo=$(echo "$gnet" | tr -dc 0-9)
unshare -n sleep 1000 </dev/null >/dev/null 2>&1 &
B=$!
pids+=("$B")
wait_for 5 bash -c "[ \"\$(readlink /proc/$B/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]" || true
replies=$(python3 - "$S" "$ginoo" "$B" "$P_g" <<'PY'
import socket, sys, os, signal, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(15)
s.sendall(f"lookup netns:{sys.argv[2]} user 5010\nregister {sys.argv[3]}\n".encode())
time.sleep(0.3)
os.kill(int(sys.argv[4]), signal.SIGKILL)
buf = b""
while buf.count(b"\n") < 2:
    d = s.recv(4096)
    if not d: break
    buf += d
print(buf.decode().replace("\n", "|"))
PY
)
case "$replies" in
"error "*"|ok netns:"*"|") pass "a late answer, then a pipelined rescan that forgets its namespace: both answered ($replies)" ;;
*) fail "late answer + rescan: '$replies'" ;;
esac
grep -q "netns:\[$ginoo\].*gone: forgotten" "$T/daemon.log" && pass "G's namespace was forgotten by that rescan" ||
        fail "G's namespace was not forgotten: the case did not happen"
kill -0 $DPID && pass "the daemon is up after it" || fail "the daemon died after a late answer and a rescan"

kill -TERM $DPID; wait $DPID || true
DPID=
# (an agent whose resolver thread had not stopped it yet dies with its middle process,
# which dies with the daemon: the kernel's parent-death signals, a moment later)
for _ in $(seq 50); do left=$(our_agents | wc -l); [ "$left" = 0 ] && break; sleep 0.1; done
[ "$left" = 0 ] && pass "no nsid-nss-query left once the daemon stopped" || { fail "$left nsid-nss-query left"; ps -ef | grep -v grep | grep nss-query; }
echo "$fails failure(s)"
[ $fails = 0 ]
