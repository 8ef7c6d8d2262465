#!/bin/bash
# nsid-idmapd soak (issue 7, "Faults": 24 hours of upcalls compressed into a soak run of 10
# minutes at a high rate, with no growth of RSS or fds). On this host's kernel, as root:
#
#   bench/soak/idmapd-soak.sh BUILD_DIR
#   SOAK_SECONDS (600)  how long the load runs
#   SOAK_SAMPLE (10)    seconds between samples of the daemon's RSS, fds and threads
#   SOAK_CTL_RATE (300) control-socket lookups per second (paced)
#
# The load, all at once, for SOAK_SECONDS:
#  - netns churn: containers (unshare: own network and mount namespaces, own /etc/passwd
#    where alice has a uid of its own) registered with the daemon, asked, killed; and
#    `ip netns add`/`del` namespaces found through inotify on /run/netns; at most a few alive
#    at a time;
#  - lookups over the control socket: the host (ids and names, known and unknown, so both
#    answers and negative entries are made and expire: cache-ttl and negative-ttl are 2 s),
#    the live containers (each answer checked: a container's own alice, never another's),
#    connections opened and closed all the time;
#  - the real request-key path: request_key(2) for keys of a private `user` description
#    prefix, which a rule in /etc/request-key.d hands to nsid-idmap (the id_resolver helper,
#    test seam as in tests/integration/itest-idmap-fastpath.sh), which asks the daemon over
#    its fast path; a new session keyring per batch, so each request is a real upcall.
# Every SOAK_SAMPLE seconds one line: elapsed time, RSS, fds, threads, namespaces the daemon
# tracks, and the requests it has counted. At the end the load stops, the daemon forgets
# the dead namespaces, and:
#  - fds and threads must be back where they were before the load (quiescent to quiescent);
#  - RSS must not grow: the median of the last third of the samples may exceed the median of
#    the first third after warm-up (the first fifth is skipped) by at most SOAK_RSS_SLACK_KB
#    (1024) or SOAK_RSS_SLACK_PCT (10) percent, whichever is larger;
#  - no wrong answer, the daemon alive and exiting 0 on SIGTERM.
# Exit 0 when all hold, 1 otherwise. tests/integration/itest-idmapd-soak.sh runs it for 30 s.
set -uo pipefail
build=${1:?usage: $0 BUILD_DIR}
SECONDS_TOTAL=${SOAK_SECONDS:-600}
SAMPLE=${SOAK_SAMPLE:-10}
CTL_RATE=${SOAK_CTL_RATE:-300}
SLACK_KB=${SOAK_RSS_SLACK_KB:-1024}
SLACK_PCT=${SOAK_RSS_SLACK_PCT:-10}
daemon=$(realpath "$build/idmapd/nsid-idmapd")
helper=$(realpath "$build/idmap/nsid-idmap")
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: a request-key rule in /etc/request-key.d, network namespaces (run as root)"; exit 77; }
[ -x "$daemon" ] && [ -x "$helper" ] || { echo "FAIL: build nsid-idmapd and nsid-idmap first"; exit 1; }
command -v keyctl >/dev/null || { echo "SKIP: keyctl missing (apt install keyutils)"; exit 77; }

T=$(mktemp -d /tmp/nsid-soak.XXXXXX)
chmod 755 "$T"
S=$T/idmapd.sock
P="nsidsoak-$$-$RANDOM"
rule=/etc/request-key.d/nsid-soak-$P.conf
DPID= bg=()
cleanup() {
        rm -f "$rule"
        : >"$T/stop" 2>/dev/null
        for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${bg[@]}"; do wait "$p" 2>/dev/null; done
        # containers the churn left alive (only those it started, by pid)
        if [ -s "$T/live" ]; then for p in $(cut -d: -f1 "$T/live"); do kill -9 "$p" 2>/dev/null; done; fi
        for n in $(ip netns list 2>/dev/null | awk -v p="soak$$-" 'index($1, p) == 1 {print $1}'); do ip netns del "$n"; done
        [ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

printf '[General]\nDomain = soak.test\n[Translation]\nMethod = nsswitch\n' >"$T/idmapd.conf"
cat >"$T/nsid.conf" <<CONF
[idmapd]
cache-ttl = 2
negative-ttl = 2
rescan-interval = 1
refresh-interval = 1
set-identifier = no
state-dir = $T/state
CONF
mkdir -p "$T/ready"

"$daemon" -f --config="$T/nsid.conf" --idmapd-conf="$T/idmapd.conf" --socket="$S" 2>"$T/daemon.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$S" ] && "$daemon" --socket="$S" --ctl=status >/dev/null 2>&1 && break; sleep 0.05; done
"$daemon" --socket="$S" --ctl=status >/dev/null 2>&1 || { cat "$T/daemon.log"; echo "FAIL: daemon did not start"; exit 1; }

rss() { awk '/^VmRSS:/ {print $2}' /proc/$DPID/status; }
threads() { awk '/^Threads:/ {print $2}' /proc/$DPID/status; }
fds() { local a=(/proc/$DPID/fd/*); echo ${#a[@]}; }
status_sum() { # namespaces and summed counters
        "$daemon" --socket="$S" --status --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)["namespaces"]
print(len(d), sum(n["requests"] for n in d), sum(n["ctl_lookups"] for n in d))' 2>/dev/null || echo "? ? ?"
}
# Other work on this host creates and destroys namespaces too, and the daemon tracks those
# as well: its fds on namespaces (nsfs, /run/netns) and its pidfds come and go with them.
# So: "fixed" fds (everything else) must come back exactly, and every namespace fd and pidfd
# left must belong to a namespace the daemon still tracks, or to a live process.
fixed_fds() {
        local n=0 f l
        for f in /proc/$DPID/fd/*; do
                l=$(readlink "$f" 2>/dev/null) || continue
                case "$l" in net:\[*\]|/run/netns/*|/proc/[0-9]*) continue ;; esac
                grep -q '^Pid:' "/proc/$DPID/fdinfo/${f##*/}" 2>/dev/null && continue
                n=$((n + 1))
        done
        echo $n
}
stray_fds() { # namespace fds of untracked namespaces, pidfds of dead processes
        local tracked n=0 f l p
        local -a nsfds=()
        for f in /proc/$DPID/fd/*; do
                l=$(readlink "$f" 2>/dev/null) || continue
                case "$l" in net:\[*\]) nsfds+=("$f=$l") ;; esac
                p=$(awk '/^Pid:/ {print $2}' "/proc/$DPID/fdinfo/${f##*/}" 2>/dev/null)
                if [ -n "$p" ] && { [ "$p" -le 0 ] || ! kill -0 "$p" 2>/dev/null; }; then
                        n=$((n + 1)); echo "stray: $f -> pidfd of dead pid $p" >&2
                fi
        done
        # the daemon's list after the fds: namespaces found meanwhile are in it; one forgotten
        # meanwhile has its fd closed (looked at again below)
        tracked=" $("$daemon" --socket="$S" --status --json | python3 -c '
import json, sys
print(" ".join(str(n["netns"]) for n in json.load(sys.stdin)["namespaces"]))') "
        for e in "${nsfds[@]}"; do
                f=${e%%=*} l=${e#*=}
                local ino=${l#net:[}; ino=${ino%]}
                case "$tracked" in *" $ino "*) continue ;; esac
                [ "$(readlink "$f" 2>/dev/null)" = "$l" ] || continue
                n=$((n + 1)); echo "stray: $f -> $l" >&2
        done
        echo $n
}

# warm the host context, then the quiescent baseline
"$daemon" --socket="$S" --ctl="lookup host user 0" >/dev/null
sleep 1.5
fd0=$(fixed_fds) thr0=$(threads) rss0=$(rss)
echo "baseline: rss ${rss0} kB, fds $(fds) ($fd0 not on namespaces or processes), threads $thr0, namespaces $(status_sum | cut -d' ' -f1)"

# ---- load 1: netns churn ------------------------------------------------------------------
: >"$T/live"
churn() {
        local i=0 pids=() nets=()
        while [ ! -e "$T/stop" ]; do
                i=$((i + 1))
                local d=$T/c$((i % 8)) uid=$((20000 + i))
                mkdir -p "$d"
                printf 'root:x:0:0::/root:/bin/sh\nalice:x:%d:%d::/:/bin/sh\n' $uid $uid >"$d/passwd.$i"
                printf '[General]\nDomain = soak.test\n' >"$d/idmapd.conf"
                rm -f "$T/ready/$i"
                unshare -m -n --propagation private sh -c "mount --bind '$d/passwd.$i' /etc/passwd &&
                        mount --bind '$d/idmapd.conf' /etc/idmapd.conf && : >'$T/ready/$i' && exec sleep 1000" \
                        </dev/null >/dev/null 2>&1 &
                local p=$!
                for _ in $(seq 100); do [ -e "$T/ready/$i" ] && break; sleep 0.02; done
                "$daemon" --socket="$S" --ctl="register $p" >/dev/null 2>&1
                pids+=("$p:$uid")
                if [ $((i % 3)) = 0 ]; then ip netns add "soak$$-$i" && nets+=("soak$$-$i"); fi
                # keep at most 4 containers and 2 ip netns alive
                if [ ${#pids[@]} -gt 4 ]; then
                        kill -9 "${pids[0]%%:*}" 2>/dev/null; wait "${pids[0]%%:*}" 2>/dev/null
                        rm -f "$d/passwd.$((i - 4))" "$T/ready/$((i - 4))"
                        pids=("${pids[@]:1}")
                fi
                if [ ${#nets[@]} -gt 2 ]; then ip netns del "${nets[0]}"; nets=("${nets[@]:1}"); fi
                printf '%s\n' "${pids[@]}" >"$T/live.tmp" && mv "$T/live.tmp" "$T/live"
                echo $i >"$T/churned"
                sleep 0.2
        done
        : >"$T/live"
        for p in "${pids[@]}"; do kill -9 "${p%%:*}" 2>/dev/null; wait "${p%%:*}" 2>/dev/null; done
        for n in "${nets[@]}"; do ip netns del "$n"; done
}
churn &
bg+=($!)

# ---- load 2: control-socket lookups -----------------------------------------------------------
cat >"$T/client.py" <<'PY'
import os, socket, sys, time
sock, live, stop, out, rate = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
n = dict(ok=0, negative=0, gone=0, failed=0, wrong=0, connections=0)
wrong = []
def connect():
    s = socket.socket(socket.AF_UNIX); s.connect(sock); n["connections"] += 1
    return s, s.makefile("rwb")
s, f = connect()
i = 0
t0 = time.monotonic()
while not os.path.exists(stop):
    try: lv = [l.split(":") for l in open(live).read().split()]
    except OSError: lv = []
    batch = []
    for k in range(30):
        i += 1
        m = i % 6
        if m == 0: batch.append(("lookup host user %d" % (i % 50), None))
        elif m == 1: batch.append(("lookup host uid root@soak.test", "0"))
        elif m == 2: batch.append(("lookup host gid nosuch%d@soak.test" % (i % 97), None))
        elif m == 3: batch.append(("lookup host group %d" % (i % 70), None))
        elif lv:
            pid, uid = lv[i % len(lv)]
            batch.append(("lookup pid:%s uid alice@soak.test" % pid, uid))
        else: batch.append(("lookup host user 0", None))
    f.write(b"".join(q.encode() + b"\n" for q, _ in batch)); f.flush()
    for q, want in batch:
        r = f.readline().decode().split()
        if not r: raise SystemExit("daemon closed the connection")
        if r[0] == "ok":
            if want is not None and r[1] != want:
                n["wrong"] += 1; wrong.append("%s -> %s (want %s)" % (q, " ".join(r), want))
            else: n["ok"] += 1
        elif r[0] == "negative": n["negative"] += 1
        elif r[:2] == ["error", "3"]: n["gone"] += 1
        else: n["failed"] += 1
    if i % 3000 < 30:          # a new connection now and then
        s.close(); s, f = connect()
    # pace to `rate` lookups per second
    ahead = i / rate - (time.monotonic() - t0)
    if ahead > 0: time.sleep(ahead)
with open(out, "w") as o:
    o.write(" ".join("%s=%d" % kv for kv in n.items()) + "\n")
    for w in wrong[:10]: o.write("wrong: " + w + "\n")
PY
python3 "$T/client.py" "$S" "$T/live" "$T/stop" "$T/client.out" "$CTL_RATE" 2>"$T/client.err" &
bg+=($!)

# ---- load 3: the request-key path (nsid-idmap -> the daemon's fast path) ------------------------
printf 'create user %s:* * %s --test-user-prefix=%s: --idmapd-conf=%s --config=%s --log-file=%s --daemon-socket=%s --daemon-timeout=300 -t 30 %%k %%d\n' \
        "$P" "$helper" "$P" "$T/idmapd.conf" "$T/nsid.conf" "$T/helper.log" "$S" >"$T/rule"
mv "$T/rule" "$rule"
# ten host users (names and uids) for 20 distinct descriptions per batch
users=$(getent passwd | awk -F: '$3 < 1000 {print $1 ":" $3}' | head -10 | tr '\n' ' ')
reqkey() {
        while [ ! -e "$T/stop" ]; do
                # one session keyring per batch, distinct descriptions: each request is an upcall
                keyctl session - sh -c '
                        P=$1; shift
                        for u in "$@"; do
                                keyctl request2 user "$P:uid:${u%%:*}@soak.test" "" @s >/dev/null 2>&1 && echo ok || echo err
                                keyctl request2 user "$P:user:${u#*:}" "" @s >/dev/null 2>&1 && echo ok || echo err
                        done' _ "$P" $users 2>/dev/null | grep -v '^Joined' >>"$T/reqkey.out"
        done
}
reqkey &
bg+=($!)

# ---- samples ------------------------------------------------------------------------------------
echo "    t(s)  rss(kB)   fds  threads  namespaces  requests  ctl_lookups"
start=$EPOCHSECONDS
samples=()
while [ $((EPOCHSECONDS - start)) -lt "$SECONDS_TOTAL" ]; do
        sleep "$SAMPLE"
        kill -0 "$DPID" 2>/dev/null || { fail "the daemon died"; break; }
        read -r nns req ctl <<<"$(status_sum)"
        r=$(rss)
        samples+=("$r")
        printf '%8d %8d %5d %8d %11s %9s %12s\n' $((EPOCHSECONDS - start)) "$r" "$(fds)" "$(threads)" "$nns" "$req" "$ctl"
done
elapsed=$((EPOCHSECONDS - start))
: >"$T/stop"
for p in "${bg[@]}"; do wait "$p" 2>/dev/null; done
bg=()
rm -f "$rule"

# ---- verdict ------------------------------------------------------------------------------------
kill -0 "$DPID" 2>/dev/null && pass "the daemon is alive after ${elapsed} s" || fail "the daemon died (see $T/daemon.log)"
client=$(head -1 "$T/client.out" 2>/dev/null)
echo "control socket: $client"
case " $client " in *" wrong=0 "*) pass "no wrong answer on the control socket" ;; *) fail "wrong answers: $(cat "$T/client.out" "$T/client.err" 2>/dev/null | head -12)" ;; esac
ok_rk=$(grep -c '^ok$' "$T/reqkey.out" 2>/dev/null) err_rk=$(grep -c '^err$' "$T/reqkey.out" 2>/dev/null)
fast=$(grep -c "nsid-idmapd" "$T/helper.log" 2>/dev/null)
fast=${fast:-0}
echo "request-key: $ok_rk upcalls answered, $err_rk failed; $fast of them answered by the helper through nsid-idmapd"
[ "${err_rk:-1}" = 0 ] && [ "${ok_rk:-0}" -gt 0 ] && pass "request-key path: every known name answered" || fail "request-key path: $err_rk failures, $ok_rk answered"
[ "${fast:-0}" -gt 0 ] && pass "the helper used the daemon's fast path" || fail "the helper never reached the daemon: $(tail -3 "$T/helper.log" 2>/dev/null)"
churned=$(cat "$T/churned" 2>/dev/null || echo 0)
read -r _ req ctl <<<"$(status_sum)"
rk_total=$(( ${ok_rk:-0} + ${err_rk:-0} ))
echo "load: $churned containers and $((churned / 3)) ip netns created and destroyed; $req requests to the daemon (all over its control socket, $fast of them from nsid-idmap's fast path inside $rk_total request-key upcalls) in $elapsed s = $(( req / (elapsed > 0 ? elapsed : 1) ))/s (24 h at 1 upcall/s = 86400; this run: $req)"

# quiescent again: our dead namespaces forgotten (rescan every second), resolver threads gone
for _ in $(seq 100); do
        [ "$(threads)" -le "$thr0" ] && [ "$(fixed_fds)" = "$fd0" ] && [ "$(stray_fds 2>/dev/null)" = 0 ] && break
        sleep 0.2
done
fd1=$(fixed_fds) thr1=$(threads) stray=$(stray_fds)
echo "after: rss $(rss) kB, fds $(fds) ($fd1 not on namespaces or processes), threads $thr1, namespaces $(status_sum | cut -d' ' -f1)"
[ "$fd1" = "$fd0" ] && pass "fds not on namespaces back to $fd1" || { fail "fds not on namespaces: $fd0 -> $fd1"; ls -l /proc/$DPID/fd; }
[ "$stray" = 0 ] && pass "no fd on a forgotten namespace or a dead process" || fail "$stray fds on forgotten namespaces or dead processes"
[ "$thr1" -le "$thr0" ] && pass "threads back to $thr1 (were $thr0)" || fail "threads $thr0 -> $thr1"

n=${#samples[@]}
if [ "$n" -ge 5 ]; then
        read -r first last verdict <<<"$(printf '%s\n' "${samples[@]}" | python3 -c '
import sys, statistics
s = [int(x) for x in sys.stdin.read().split()]
skip = max(1, len(s) // 5)
s = s[skip:]
k = max(1, len(s) // 3)
a, b = statistics.median(s[:k]), statistics.median(s[-k:])
slack = max('"$SLACK_KB"', a * '"$SLACK_PCT"' / 100)
print(int(a), int(b), "ok" if b - a <= slack else "grew")')"
        if [ "$verdict" = ok ]; then pass "RSS flat: median $first kB early, $last kB late (slack ${SLACK_KB} kB / ${SLACK_PCT}%)"
        else fail "RSS grew: median $first kB early, $last kB late (slack ${SLACK_KB} kB / ${SLACK_PCT}%)"; fi
else
        fail "only $n samples: run longer than 5 x SOAK_SAMPLE"
fi

kill -TERM "$DPID"
wait "$DPID"
rc=$?
DPID=
[ $rc = 0 ] && pass "SIGTERM: exit 0" || fail "SIGTERM: exit $rc"
grep -iE "sanitizer|runtime error" "$T/daemon.log" | head -5 | grep -q . && fail "sanitizer reports in the daemon log: $(grep -iE 'sanitizer|runtime error' "$T/daemon.log" | head -3)"
[ $fails = 0 ] || { echo "--- daemon log (tail)"; tail -20 "$T/daemon.log"; }
echo "$fails failure(s)"
[ $fails = 0 ]
