#!/bin/bash
# nsid-idmap (id_resolver helper, opt-in requester-context policy) against hostile
# containers, through the REAL request-key path of this kernel.
#
# FAKE: the host kernel has no NFS modules, so there is no id_resolver key type. Like
# itest-idmap-upcall.sh, a temporary /etc/request-key.d rule routes `user` keys with a
# private description prefix ("nsidhostile-PID-RANDOM:", unique to this run, so it cannot
# clash with the other request-key tests running at the same time) to nsid-idmap
# --test-user-prefix (its documented test seam). Everything else is real: request_key(2),
# /sbin/request-key, the helper's authority key, pidfds, mount namespaces, a procfs, and a
# FUSE filesystem whose server never answers.
#
# A "container" is `unshare -m` (private mounts, the host's pid namespace) with a copy of
# /etc bind-mounted over /etc whose passwd the test makes hostile. The helper runs with a
# secret marker in its own environment; it must never come back in an answer.
#
# Checks: passwd -> /proc/self/environ (the helper's own environment through the container's
# procfs), a 1 GiB sparse passwd, a FIFO passwd (nobody writes it): safe answer, no hang,
# marker never served; concurrent requests for one key: one helper run, every requester gets
# the same answer; passwd on a FUSE mount that never answers: a negative key (EAGAIN) within
# the worker's bound while the FUSE server still hangs.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmap/nsid-idmap")
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: request-key rules in /etc/request-key.d, mounts (run as root)"; exit 77; }
command -v keyctl >/dev/null || { echo "SKIP: keyctl missing (apt install keyutils)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

MARKER="NSIDHOSTILEMARKER$RANDOM"
T=$(mktemp -d /tmp/nsid-itest-hostile-idmap.XXXXXX)
chmod 755 "$T"
P="nsidhostile-$$-$RANDOM"
rule="/etc/request-key.d/nsid-hostile-$P.conf"
bgpids=()
cleanup() {
        rm -f "$rule"
        for p in "${bgpids[@]}"; do kill -9 "$p" 2>/dev/null; done
        wait 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT
passes=0 fails=0 skips=0
fail() { echo "not ok: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }

printf '[General]\nDomain = example.test\n[Translation]\nMethod = nsswitch\n' >"$T/idmapd.conf"
printf '[idmap]\nrequester-context = yes\n' >"$T/nsid.conf"
# the helper's environment carries the marker as a valid passwd line for uid 4242
cat >"$T/wrap.sh" <<WRAP
#!/bin/sh
echo "start \$*" >>"$T/runs"
echo "\$\$ start \$(date +%s%N)" >>"$T/times"
NSID_SECRET="$MARKER:x:4242:4242::/:/bin/sh" ASAN_OPTIONS=log_path=$T/asan UBSAN_OPTIONS=log_path=$T/ubsan "$bin" "\$@"
echo "exit=\$? \$*" >>"$T/status"
echo "\$\$ end \$(date +%s%N)" >>"$T/times"
WRAP
chmod 755 "$T/wrap.sh"
set_rule() { # extra helper options
        echo "create user $P:* * $T/wrap.sh --test-user-prefix=$P: --idmapd-conf=$T/idmapd.conf --config=$T/nsid.conf --log-file=$T/log -t 30 $* %k %d" >"$rule"
}
set_rule --max-time=5

# The container's /etc: a copy of the host's, its passwd replaced by the test.
cp -a /etc "$T/etc" 2>/dev/null
rm -f "$T/etc/passwd"
mkdir -p "$T/etc/nsidhung"

# a FUSE "server" that mounts DIR and never reads /dev/fuse (not even INIT): every lookup
# below DIR waits until this process dies. Writes READY once mounted.
write_fuse_hang "$T/fuse-hang.py"

# req_container SETUP DESC: in a fresh container (setup = shell run inside it first), request
# DESC; prints the payload (NULs as '~') or ERR:<message>, and the elapsed ms on stderr.
req_container() {
        unshare -m --propagation private sh -c '
                mount --bind "$T/etc" /etc || exit 1
                eval "$1"
                keyctl session - sh -c '"'"'k=$(keyctl request2 user "$1" "" @s 2>&1) || { echo "ERR:$k"; exit 0; }; keyctl pipe "$k" | tr "\000" "~"'"'"' _ "$2"' _ "$1" "$P:$2" 2>/dev/null | grep -v '^Joined'
}
export T
no_marker() { # what text
        if grep -q "$MARKER" <<<"$2"; then fail "$1: the helper's environment was served: '$2'"; else pass "$1: marker not served"; fi
}
timed() { # prints "RESULT ms"
        local s r; s=$(date +%s%N)
        r=$("$@")
        echo "$r $((($(date +%s%N) - s) / 1000000))"
}

# --- sanity: the container's own passwd is served (requester context) ----------------
printf 'root:x:0:0::/root:/bin/sh\ncarol:x:4343:4343::/:/bin/sh\n' >"$T/etc/passwd"
r=$(req_container : user:4343)
[ "$r" = "carol@example.test" ] && pass "container passwd served: user:4343 -> $r" ||
        fail "container's own passwd not served: '$r' ($(tail -n 3 "$T/log" 2>/dev/null))"

# --- passwd -> /proc/self/environ: the helper's own environment ----------------------
rm -f "$T/etc/passwd"
ln -s /proc/self/environ "$T/etc/passwd"
r=$(req_container : user:4242)
no_marker "passwd -> /proc/self/environ, user:4242" "$r"
case "$r" in ERR:*) pass "passwd -> /proc/self/environ: refused ($r)" ;;
*) fail "passwd -> /proc/self/environ: got '$r', want a refusal" ;; esac
grep -q "cannot load the user database of requester pid [0-9]*: Wrong medium type" "$T/log" &&
        pass "log: the user database is refused (procfs file)" ||
        fail "no 'Wrong medium type' log line: $(tail -n 2 "$T/log")"
r=$(req_container : "uid:$MARKER@example.test")
no_marker "passwd -> /proc/self/environ, uid:MARKER" "$r"
# the requester's database refused, the host's answer: the host knows no MARKER, so its
# nobody (libnfsidmap's Nobody-User, "nobody" by default), never 4242 from the environment
nobody=$(id -u nobody)
[ "$r" = "$nobody~" ] && pass "uid:MARKER: the host's nobody ($r), not 4242" ||
        fail "uid:MARKER: got '$r', want the host's nobody '$nobody~'"
tail -n 1 "$T/log" | grep -qF "uid:$MARKER@example.test -> $nobody (host context, timeout 30s)" &&
        pass "log: uid:MARKER answered in the host context" || fail "uid:MARKER log: $(tail -n 2 "$T/log")"

# --- passwd as a 1 GiB sparse file and as a FIFO: refused at once ---------------------
rm -f "$T/etc/passwd"
truncate -s 1G "$T/etc/passwd"
read -r r ms < <(timed req_container : user:0)
# (the requester's database is unusable: the host's answer, as with the default policy)
[ "$ms" -lt 3000 ] && [ "$r" = root@example.test ] && pass "1 GiB sparse passwd: host answer '$r' in $ms ms" ||
        fail "1 GiB sparse passwd: '$r' in $ms ms, want the host's root@example.test at once"
rm -f "$T/etc/passwd"
mkfifo "$T/etc/passwd"
read -r r ms < <(timed req_container : user:0)
[ "$ms" -lt 3000 ] && [ "$r" = root@example.test ] && pass "FIFO passwd: host answer '$r' in $ms ms (no open, no hang)" ||
        fail "FIFO passwd: '$r' in $ms ms, want the host's root@example.test at once"
grep -q "requester pid [0-9]*: File too large" "$T/log" && grep -q "requester pid [0-9]*: No such device or address" "$T/log" &&
        pass "log: EFBIG and ENXIO refusals" || fail "refusals not logged: $(tail -n 4 "$T/log")"

# --- a 4 KiB description (the kernel's longest: 4095 bytes with our prefix) -------------
set_rule --max-time=5
: >"$T/status"
pl=$((4095 - ${#P} - 1 - 4))
d="uid:$(head -c "$pl" /dev/zero | tr '\0' a)"
r=$(keyctl session - sh -c 'k=$(keyctl request2 user "$1" "" @s 2>&1) || { echo "ERR:$k"; exit 0; }; keyctl pipe "$k"' _ "$P:$d" 2>/dev/null | grep -v '^Joined')
case "$r" in *rejected*) pass "4095-byte description: rejected ($r)" ;; *) fail "4095-byte description: '$r'" ;; esac
grep -q "^exit=1 " "$T/status" && pass "... helper exit 1" || fail "... helper exit: $(cat "$T/status")"
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$T/log")
[ "$longest" -lt 2048 ] && pass "log lines stay short (longest $longest bytes)" || fail "a log line of $longest bytes"

# --- concurrent requests for one key ----------------------------------------------------
# 16 requesters in one shared keyring ask for the same key at the same time: the kernel
# runs the helper once and every requester gets its answer.
: >"$T/runs"
keyctl session - bash -c 'for i in $(seq 16); do
        (k=$(keyctl request2 user "$1" "" @s 2>&1) && keyctl pipe "$k" >"$2/c.$i" 2>&1 ||
                echo "ERR:$k" >"$2/c.$i") &
done
wait' _ "$P:user:0" "$T" >/dev/null 2>&1
good=0
for i in $(seq 16); do [ "$(cat "$T/c.$i")" = "root@example.test" ] && good=$((good + 1)); done
runs=$(grep -c "user:0" "$T/runs")
[ "$good" = 16 ] && pass "16 concurrent requests: 16 answers 'root@example.test'" ||
        fail "16 concurrent requests: $good good answers ($(cat "$T"/c.* | sort | uniq -c | tr '\n' ' '))"
[ "$runs" = 1 ] && pass "... from one helper run" || fail "... from $runs helper runs, want 1"

# --- passwd on a FUSE mount that never answers -----------------------------------------
# The helper never reads the container's files itself: a worker (forked, joined to the
# requester's mount namespace and root) does, with a hard limit of half of --max-time (1 s
# here), and is killed beyond it (a FUSE request that never gets an answer is a killable
# sleep). The request must end with a negative key (EAGAIN: the kernel asks again later),
# in bounded time, while the FUSE server still hangs; other requesters are served meanwhile;
# no worker is left behind.
if [ -c /dev/fuse ] && grep -qw fuse /proc/filesystems; then
        set_rule --max-time=2
        rm -f "$T/etc/passwd"
        ln -s nsidhung/passwd "$T/etc/passwd"
        rm -f "$T/fuse-ready" "$T/hung-out"
        : >"$T/log"
        : >"$T/times"
        s=$(date +%s%N)
        # (the FUSE server's output away from req_container's pipe, or the pipe would stay
        # open until it dies)
        (req_container 'python3 "$T/fuse-hang.py" /etc/nsidhung "$T/fuse-ready" >/dev/null 2>&1 </dev/null & echo $! >"$T/fuse-pid"
                        for i in $(seq 100); do [ -e "$T/fuse-ready" ] && break; sleep 0.05; done' user:0 >"$T/hung-out"
         echo "$((($(date +%s%N) - s) / 1000000))" >>"$T/hung-out") &
        hung=$!
        bgpids+=("$hung")
        for i in $(seq 100); do [ -e "$T/fuse-ready" ] && break; sleep 0.05; done
        [ -e "$T/fuse-ready" ] && pass "hung FUSE mounted in the container" || fail "FUSE mount failed"
        # the helper and its worker while the worker hangs (reading, before its drop): only
        # CAP_SYS_ADMIN, CAP_SYS_CHROOT and CAP_SYS_PTRACE (0x2c0000, needed to join the
        # requester's mount namespace and root), CAP_SETGID, CAP_SETUID and CAP_SETPCAP
        # (0x1c0, for the worker's drop to nobody before it parses), no_new_privs
        capsl="" ncaps=0 badcaps=0
        want="CapPrm: 00000000002c01c0 CapEff: 00000000002c01c0 NoNewPrivs: 1 "
        # (ours: nsid-idmap processes with our prefix in their command line: the helper and
        # its worker, a fork of it)
        for i in $(seq 100); do
                for hp in $(pgrep -x nsid-idmap || true); do
                        tr '\0' ' ' <"/proc/$hp/cmdline" 2>/dev/null | grep -q -- "$P:user:0" || continue
                        c=$(grep -E '^(CapPrm|CapEff|NoNewPrivs):' "/proc/$hp/status" 2>/dev/null | tr -s '\t ' ' ' | tr '\n' ' ')
                        [ -n "$c" ] || continue # (gone meanwhile)
                        capsl+="[pid $hp] $c"
                        ncaps=$((ncaps + 1))
                        [ "$c" = "$want" ] || badcaps=$((badcaps + 1))
                done
                [ "$ncaps" -ge 2 ] && break
                capsl="" ncaps=0 badcaps=0
                sleep 0.02
        done
        [ "$ncaps" -ge 2 ] && [ "$badcaps" = 0 ] &&
                pass "helper and worker keep only SYS_ADMIN, SYS_CHROOT, SYS_PTRACE, SETUID, SETGID, SETPCAP: $capsl" ||
                fail "capabilities of the helper/worker while the worker hangs: '$capsl'"
        # meanwhile another requester (the host) is served
        r=$(keyctl session - sh -c 'k=$(keyctl request2 user "$1" "" @s 2>&1) || { echo "ERR:$k"; exit 0; }; keyctl pipe "$k"' _ "$P:user:0" 2>/dev/null | grep -v '^Joined')
        [ "$r" = "root@example.test" ] && pass "the host is served while the container's files hang" ||
                fail "the host is not served while the container hangs: '$r'"
        for i in $(seq 80); do kill -0 "$hung" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$hung" 2>/dev/null; then
                fail "hung FUSE passwd: the container's request is still pending 8 s after it began (--max-time=2)"
                ps -o pid,stat,wchan:32,cmd -C nsid-idmap 2>/dev/null | sed 's/^/  /'
        else
                r=$(head -n 1 "$T/hung-out"); ms=$(tail -n 1 "$T/hung-out")
                case "$r" in
                "ERR:"*"Resource temporarily unavailable")
                        [ "$ms" -lt 6000 ] && pass "hung FUSE passwd: bounded, negative key '$r' after $ms ms (FUSE server still hanging)" ||
                                fail "hung FUSE passwd: '$r' only after $ms ms" ;;
                *) fail "hung FUSE passwd: '$r' after $ms ms, want EAGAIN" ;;
                esac
        fi
        # the longest helper run of this section (wrapper timestamps): bounded by the worker
        longest=$(awk '$2 == "start" { s[$1] = $3 } $2 == "end" && ($1 in s) { d = ($3 - s[$1]) / 1000000; if (d > m) m = d } END { printf "%d", m }' "$T/times")
        [ "$longest" -gt 900 ] && [ "$longest" -lt 2000 ] && pass "the helper ran $longest ms (worker bound 1000 ms, --max-time 2 s)" ||
                fail "longest helper run $longest ms, want 1000..2000"
        kill -0 "$(cat "$T/fuse-pid")" 2>/dev/null && pass "... the FUSE server was still hanging then" ||
                fail "the FUSE server had died: the bound was not the helper's"
        grep -q "reading its files took longer than 1000 ms.*worker killed" "$T/log" &&
                pass "log: the worker was killed after 1000 ms" || fail "no worker-killed log line: $(tail -n 3 "$T/log")"
        grep -q "did not answer in time; rejected for 5s (EAGAIN)" "$T/log" &&
                pass "log: rejected with EAGAIN" || fail "no EAGAIN rejection logged: $(tail -n 3 "$T/log")"
        for i in $(seq 40); do
                left=$( (pgrep -f -- "--test-user-prefix=$P:" || true) | wc -l)
                [ "$left" = 0 ] && break
                sleep 0.05
        done
        [ "$left" = 0 ] && pass "no helper or worker process left" || fail "$left nsid-idmap processes left: $(pgrep -af -- "--test-user-prefix=$P:")"
        kill -9 "$(cat "$T/fuse-pid")" 2>/dev/null
        no_marker "hung FUSE" "$(cat "$T/hung-out")"
else
        skip "no FUSE (no /dev/fuse or no fuse in /proc/filesystems: modprobe fuse): hung-mount case not run"
fi

for f in "$T"/asan* "$T"/ubsan*; do
        [ -e "$f" ] && fail "sanitizer report from the helper: $(head -n 5 "$f")"
done
echo "$passes passed, $fails failed, $skips skipped"
[ "$fails" = 0 ] || exit 1
[ "$passes" -gt 0 ] || [ "$skips" = 0 ] || exit 77 # every case skipped
[ "$passes" -gt 0 ]
