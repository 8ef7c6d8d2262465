#!/bin/bash
# bench-server-watch (issue 31's figures; a benchmark run by bench/lab/server-watch-bench-run,
# `make bench`, not a test: no lab-test line). On the lab's knfsd, nsid-nfsd-takeover-gen
# makes takeovers of one owner string (two connections in turn: EXCHANGE_ID with their own
# verifier, CREATE_SESSION), and:
#  1. cost to the server: takeovers a second knfsd sustains, unpaced, without and with
#     `nsidctl watch --server` (passes off, on, on, off in one boot; the medians compared);
#  2. following: a paced run (default 1,000 a second for 10 s) with the watcher on: every
#     replacement knfsd traced (counted apart, in an instance of the bench's own) must be in
#     the watcher's output, none lost; the watcher's CPU over the run.
#   args: RATE SECONDS N
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
RATE=${1:-1000} SECS=${2:-10} N=${3:-2000}
C="$LAB_BUILD/nsidctl/nsidctl"
GEN="$LAB_BUILD/bench/nsid-nfsd-takeover-gen"
W=/run/nsid-lab/bsw
T=/sys/kernel/tracing
REF=$T/instances/bench-ref
mkdir -p "$W"
check "nsidctl and the generator built" test -x "$C" -a -x "$GEN" || bail "build nsidctl and nsid-nfsd-takeover-gen"
check "knfsd started" nfs_server_start off || bail "no server"
[ -d "$T/instances" ] || mount -t tracefs nodev "$T"
nfs_server_wait_grace
SERVER=$LAB_SERVER_IP # (knfsd listens there; a loopback connection got no reply it could read)

WPID=''
watch_on() { # the watcher, its JSON lines in $W/$1.jsonl
  rm -f "$W/$1.db"*
  "$C" --json watch --server --history="$W/$1.db" > "$W/$1.jsonl" 2> "$W/$1.err" &
  WPID=$!
  wait_for 30 grep -q "following knfsd" "$W/$1.err"
}
watch_off() {
  kill -TERM "$WPID"; wait "$WPID"; WRC=$?; WPID=''
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime, clock ticks
HZ=$(getconf CLK_TCK)
gen_rate() { "$GEN" "$SERVER" "$1" "$2" "${3:-0}" | awk '{print $6}'; }

# ---- 1. cost to the server -------------------------------------------------------------------
declare -a off on
pass=0
for mode in off on on off; do
  pass=$((pass + 1))
  [ "$mode" = on ] && { watch_on "cost$pass" || bail "watcher did not start: $(cat "$W/cost$pass.err")"; }
  r=$(gen_rate "bench-cost-$pass" "$N")
  [ "$mode" = on ] && watch_off
  note "pass $pass, watcher $mode: $r takeovers/s"
  if [ "$mode" = on ]; then on+=("$r"); else off+=("$r"); fi
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (a[int((NR+1)/2)] + a[int(NR/2)+1]) / 2}'; }
moff=$(med "${off[@]}") mon=$(med "${on[@]}")
finding cost "unpaced takeovers per second, watcher off ${off[*]} (median $moff), on ${on[*]} (median $mon): the watcher costs $(awk -v a="$moff" -v b="$mon" 'BEGIN {printf "%.1f", (a - b) / a * 100}')% of knfsd's rate"
note "figure: unpaced takeovers/s watcher-off $moff watcher-on $mon ratio $(awk -v a="$moff" -v b="$mon" 'BEGIN {printf "%.3f", b / a}')"

# ---- 2. following RATE takeovers a second -------------------------------------------------------
rmdir "$REF" 2>/dev/null; mkdir "$REF" && echo 16384 > "$REF/buffer_size_kb" &&
  echo 1 > "$REF/events/nfsd/nfsd_clid_replaced/enable" || bail "no reference instance"
watch_on follow || bail "watcher did not start"
c0=$(ticks "$WPID") t0=$(date +%s%N)
out=$("$GEN" "$SERVER" bench-follow "$((RATE * SECS))" "$RATE")
sleep 3 # the watcher's last batch
c1=$(ticks "$WPID") t1=$(date +%s%N)
watch_off
echo 0 > "$REF/tracing_on"
note "generator: $out"
while read -r l; do note "watcher: $l"; done < "$W/follow.err"
got=$(awk '{print $6}' <<<"$out")
replaced=$(grep -c ': nfsd_clid_replaced:' "$REF/trace")
overrun=$(awk '/overrun/ {s += $2} END {print s + 0}' "$REF"/per_cpu/cpu*/stats)
recorded=$(wc -l < "$W/follow.jsonl")
cpu=$(awk -v c="$((c1 - c0))" -v hz="$HZ" -v ns="$((t1 - t0))" 'BEGIN {printf "%.1f", c / hz / (ns / 1e9) * 100}')
lost=$(sed -n 's/.*; \([0-9]*\) lost$/\1/p' "$W/follow.err")
kinds=$(python3 -c '
import collections, json, sys
c = collections.Counter()
owned = 0
for l in open(sys.argv[1]):
    j = json.loads(l)
    c[j["kind"]] += 1
    owned += j["owner"] == "bench-follow"
print(" ".join("%s=%d" % kv for kv in sorted(c.items())), "owner-named=%d" % owned)' "$W/follow.jsonl")
note "figure: follow kinds $kinds"
finding follow "paced at $RATE/s for ${SECS}s: the generator made $got/s; knfsd traced $replaced replacements (reference overrun $overrun); the watcher recorded $recorded, lost ${lost:-?}; its CPU $cpu% of one CPU"
note "figure: follow rate-asked $RATE rate-made $got traced $replaced recorded $recorded lost ${lost:-?} watcher-cpu-percent $cpu"
check_eq "the reference instance lost nothing" 0 "$overrun"
check_eq "the watcher recorded every replacement knfsd traced" "$replaced" "$recorded"
check_eq "the watcher lost no event" 0 "${lost:-?}"
check_eq "watcher exit status 0" 0 "$WRC"
check "the generator reached the rate asked (within 5%)" awk -v g="$got" -v r="$RATE" 'BEGIN {exit !(g >= 0.95 * r)}'
rmdir "$REF" 2>/dev/null
lab_done
