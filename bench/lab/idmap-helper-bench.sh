#!/bin/bash
# bench-idmap-helper, guest side (run by bench/lab/idmap-helper-bench-run through
# tests/vm/lab-run; NOT a test: no lab-test line). One boot, the same workload for each
# helper: distinct uid:b<tag>N@lab.example lookups by request_key(2) from one process
# (nsid-rk-bench-req), every one a cache miss, so the kernel runs /sbin/request-key and the
# helper once per lookup; the users exist (uids 20000+). Helpers, each as the only id_resolver
# rule, switched before every lookup in a rotating order (the host's load, which is heavy
# and varies by the second here, falls on all of them alike). Every nsid-idmap runs with the
# arguments of the rule it installs ("-t 600 %k %d"), hence two phases, each with its floor.
# Without nsid-idmapd:
#   f  bench/rk-floor-helper.c: instantiates, nothing else
#   m  bench/rk-nfsidmap-floor.c: libnfsidmap with /etc/idmapd.conf, one lookup, instantiate:
#      the least a helper that resolves through libnfsidmap can cost
#   n  nfs-utils' /usr/sbin/nfsidmap -t 600 (the rule nfs-common installs)
#   s  nsid-idmap -t 600, nsid-idmapd not running (nothing at its socket)
# Then with nsid-idmapd running on its default socket:
#   g  the floor again
#   d  nsid-idmap -t 600 (fast path over the daemon's control socket), the names new to the
#      daemon: it resolves each one (libnfsidmap) before answering
#   w  the same, the names already in the daemon's cache (what its cache is for: names it
#      answered before, for another namespace or before the kernel's key expired); filled
#      over the control socket before the workload
#   x  with NSID_BENCH_AB=BINARY on the host: another nsid-idmap build (BINARY, e.g. the
#      previous commit's), -t 600, its names also in the daemon's cache: an A/B of two
#      helpers against w in one boot
# Result lines: "# bench <tag> <ok> <failed> <total us> <median us> <p90 us> <lone>".
. "$LAB_LIB/lab.sh"
N=${NSID_BENCH_LOOKUPS:-300}
DOMAIN=lab.example
FLOOR="$LAB_BUILD/bench/nsid-rk-floor"
MFLOOR="$LAB_BUILD/bench/nsid-rk-nfsidmap-floor"
REQ="$LAB_BUILD/bench/nsid-rk-bench-req"
NSIDMAP="$LAB_BUILD/idmap/nsid-idmap"
NSIDD="$LAB_BUILD/idmapd/nsid-idmapd"
W=/run/nsid-bench
SOCK=/run/nsid/idmapd.sock
mkdir -p "$W" /run/nsid

check "nfsv4 loaded (id_resolver key type)" modprobe nfsv4 || bail "no nfsv4"
# NSID_BENCH_ASLR=0 on the host: address space randomization off in the guest. TCG caches
# its translation of guest code by virtual address, so with ASLR every exec's code (ld.so,
# libc, the helper) is translated afresh: the cost of an upcall here is mostly the amount of
# distinct code run. With it off, that cost mostly goes (doc/benchmarks.md).
case " ${LAB_ARGS:-} " in
  *" aslr=0 "*) echo 0 > /proc/sys/kernel/randomize_va_space; note "ASLR off in the guest" ;;
esac
# NSID_BENCH_AB=BINARY on the host: that build runs as x (see above).
AB=""
for a in ${LAB_ARGS:-}; do
  case $a in ab=*) AB=${a#ab=} ;; esac
done
[ -z "$AB" ] || note "A/B: x is $AB"
# NSID_BENCH_SYSLOG=1 on the host: a syslog daemon on /dev/log (busybox syslogd, writing a
# file), as every real host has one (journald): nsid-idmap then sends its line for every
# answer, and that cost is in its figures. Without it the guest has no /dev/log and the
# helpers build no log line at all (nfsidmap logs nothing on success either way).
SYSLOGD=""
case " ${LAB_ARGS:-} " in
  *" syslog=1 "*)
    busybox syslogd -n -O "$W/syslog" & SYSLOGD=$!
    check "syslogd listening on /dev/log" wait_for 10 test -S /dev/log || bail "no syslogd" ;;
esac
cat > /etc/idmapd.conf <<EOC
[General]
Domain = $DOMAIN
[Mapping]
Nobody-User = nobody
Nobody-Group = nogroup
[Translation]
Method = nsswitch
EOC
# The users of the helpers interleaved (bf0 bm0 bn0 bs0 bg0 bd0 bw0 bf1 ...): a lookup in /etc/passwd
# reads it from the top, so each helper's i-th user sits at the same depth.
{
  for w in warmup $(seq 0 $((N - 1))); do
    for v in f m n s g d w ${AB:+x}; do
      [ "$w" = warmup ] && id=19999 || id=$((20000 + w))
      printf 'b%s%s:x:%d:%d::/nonexistent:/usr/sbin/nologin\n' "$v" "$w" "$id" "$id"
    done
  done
} >> /etc/passwd
rm -f /etc/request-key.d/*.conf
RULE=/etc/request-key.d/bench-id_resolver.conf
cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
isolate-keys = no
CONF
# one answer of each nsid-idmap variant, checked (and the path it took, from its log)
# the answer to uid:USER@DOMAIN through the rule in place
request_uid() {
  keyctl session - sh -c 'k=$(keyctl request2 id_resolver "$1" "" @s) && keyctl pipe "$k" | tr -d "\000"' _ "uid:$1@$DOMAIN" 2>/dev/null | grep -v '^Joined'
}
probe() { # tag user rule...
  local tag=$1 user=$2; shift 2
  echo "create id_resolver * * $* --log-file=$W/probe.log %k %d" > "$RULE"
  request_uid "$user"
}
echo "create id_resolver * * $MFLOOR %k %d" > "$RULE"
check_eq "libnfsidmap floor: uid:bm7@$DOMAIN -> 20007" 20007 "$(request_uid bm7)"
check "no nsid-idmapd socket at $SOCK yet" test ! -e "$SOCK"
check_eq "nsid-idmap, no daemon: uid:bs7@$DOMAIN -> 20007" 20007 "$(probe s bs7 "$NSIDMAP" -t 600)"
check "... resolved by itself" grep -q "uid:bs7@$DOMAIN -> 20007 (host context, timeout" "$W/probe.log"
keyctl clear %:.id_resolver 2>/dev/null

# phase 1: no daemon. Its keys stay, in root's user keyring, through phase 2: nsid-idmap's
# read of /proc/keys walks every key of the system, so phase 2 starts with phase 1's 1,200
# keys and ends with 2,100 (as when all helpers ran in one phase: 1,800 at the end).
t0=$(lab_ms)
NSID_BENCH_KEEP_KEYS=1 "$REQ" "$DOMAIN" "$N" "$RULE" "f=$FLOOR" "m=$MFLOOR" \
  "n=/usr/sbin/nfsidmap -t 600" "s=$NSIDMAP -t 600" > "$W/bench.txt" 2> "$W/req.err"
note "workload without nsid-idmapd: $(( ($(lab_ms) - t0) / 1000 )) s, $(wc -l < /proc/keys) keys in the system"

"$NSIDD" -f --config="$W/nsid.conf" --socket="$SOCK" </dev/null >/dev/null 2>>"$W/daemon.log" &
DPID=$!
ready() { timeout 5 "$NSIDD" --socket="$SOCK" --ctl=status >/dev/null 2>&1; }
check "nsid-idmapd started" wait_for 20 ready || bail "no daemon"
check_eq "nsid-idmap + daemon: uid:bd8@$DOMAIN -> 20008" 20008 "$(probe d bd8 "$NSIDMAP" -t 600)"
check "... answered by nsid-idmapd" grep -q "uid:bd8@$DOMAIN -> 20008 (host context, nsid-idmapd" "$W/probe.log"
while read -r l; do note "probe.log: $l"; done < "$W/probe.log"
if [ -n "$SYSLOGD" ]; then
  check "... and to syslog" grep -q "nsid-idmap\[[0-9]*\]: key [0-9]*: uid:bd8@$DOMAIN -> 20008" "$W/syslog"
  while read -r l; do note "syslog: $l"; done < <(grep nsid-idmap "$W/syslog")
fi
keyctl clear %:.id_resolver 2>/dev/null

# A control-socket client of the daemon, one connection per lookup as the helper makes:
#   ctl-lookup.py SOCKET DOMAIN fill N TAG...  the names of TAG (bTAGwarmup, bTAG0..N-1)
#                                              into its cache
#   ctl-lookup.py SOCKET DOMAIN rtt      its round trip as a client sees it, cached and cold
cat > "$W/ctl-lookup.py" <<'PY'
import socket, sys, time
path, domain, mode = sys.argv[1], sys.argv[2], sys.argv[3]
def lookup(name):
    t = time.monotonic()
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(("lookup host uid %s@%s host-ids\n" % (name, domain)).encode())
    reply = s.recv(512).decode()
    s.close()
    if not reply.startswith("ok "):
        sys.exit("%s: %s" % (name, reply.strip()))
    return (time.monotonic() - t) * 1e6
if mode == "fill":
    for tag in sys.argv[5:]:
        for i in ["warmup"] + [str(j) for j in range(int(sys.argv[4]))]:
            lookup("b" + tag + i)
else:
    # names it has cached (bw*) and names new to it (the floor's bf*, which no helper asked
    # it for), the first 100 and the next 100 (deeper in passwd, interleaved)
    for label, names in (("cached bw0-99", ["bw%d" % i for i in range(100)]),
                         ("cold bf0-99", ["bf%d" % i for i in range(100)]),
                         ("cold bf100-199", ["bf%d" % i for i in range(100, 200)])):
        v = sorted(lookup(n) for n in names)
        print("daemon round trip, %s: median %.0f us, p90 %.0f us" % (label, v[50], v[90]))
PY
check "daemon cache filled with the w${AB:+ and x} names" python3 "$W/ctl-lookup.py" "$SOCK" "$DOMAIN" fill "$N" w ${AB:+x}

# phase 2: the daemon on its default socket, the floor again first (g)
t0=$(lab_ms)
"$REQ" "$DOMAIN" "$N" "$RULE" "g=$FLOOR" "d=$NSIDMAP -t 600" "w=$NSIDMAP -t 600" \
  ${AB:+"x=$AB -t 600"} >> "$W/bench.txt" 2>> "$W/req.err"
note "workload with nsid-idmapd: $(( ($(lab_ms) - t0) / 1000 )) s"
keyctl clear @u 2>/dev/null
while read -r tag ok bad total med p90 lone; do
  note "bench $tag $ok $bad $total $med $p90 $lone"
  # failures of every helper at once (the floor's too) are the guest's under load
  check_eq "$tag: no failed lookup where the floor's succeeded ($bad failed in all)" 0 "$lone"
done < "$W/bench.txt"
while read -r l; do note "req.err: $l"; done < <(head -n 5 "$W/req.err")
# The daemon's own round trip: the cold/cached difference of the helper is the daemon's
# libnfsidmap/NSS lookup.
python3 "$W/ctl-lookup.py" "$SOCK" "$DOMAIN" rtt > "$W/rtt.txt" 2>&1
while read -r l; do note "$l"; done < "$W/rtt.txt"
kill -TERM "$DPID"; wait "$DPID"
if [ -n "$SYSLOGD" ]; then
  note "syslog: $(grep -c 'nsid-idmap\[' "$W/syslog") nsid-idmap lines"
  kill "$SYSLOGD"
fi
"$NSIDD" --version >/dev/null 2>&1
while read -r l; do note "daemon: $l"; done < <(tail -n 3 "$W/daemon.log")
lab_done
