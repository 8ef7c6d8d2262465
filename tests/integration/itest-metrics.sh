#!/bin/bash
# nsidctl metrics (issue #31) against a real nsid-idmapd: a container with its own passwd
# (its own mount and network namespaces), lookups through the control socket (the request-key
# helper's path), and what the exposition says of them: every counter the lookups imply,
# Prometheus' own checker (promtool check metrics) satisfied, counters that do not go down
# when the container's namespace is forgotten, --output's atomic file, and a daemon that
# does not run (nsid_idmapd_up 0, exit 0).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
build=$(realpath "$build")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd, network namespaces (run as root)"; exit 77; }
command -v promtool >/dev/null || { echo "SKIP: promtool missing (apt install prometheus)"; exit 77; }
daemon=$build/idmapd/nsid-idmapd
ctl=$build/nsidctl/nsidctl
T=$(mktemp -d /tmp/nsid-itest-metrics.XXXXXX)
chmod 755 "$T"
DPID='' CPID=''
cleanup() {
        [ -n "$CPID" ] && kill -9 "$CPID" 2>/dev/null
        [ -n "$DPID" ] && kill "$DPID" 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT
fails=0 passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }
S=$T/idmapd.sock
cat >"$T/nsid.conf" <<CONF
[idmapd]
rescan-interval = 1
refresh-interval = 1
set-identifier = no
state-dir = $T/state
CONF
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"
printf 'root:x:0:0::/root:/bin/sh\nalice:x:4001:4001::/:/bin/sh\n' >"$T/passwd"
printf 'root:x:0:\nstaff:x:4101:alice\n' >"$T/group"
printf '[General]\nDomain = c1.test\n' >"$T/idmapd.conf"

"$daemon" -f --config="$T/nsid.conf" --idmapd-conf="$T/host-idmapd.conf" --socket="$S" 2>"$T/daemon.log" &
DPID=$!
wait_for 10 test -S "$S" || { cat "$T/daemon.log"; echo "FAIL: the daemon did not start"; exit 1; }
unshare -m -n --propagation private sh -c "
        mount --bind '$T/passwd' /etc/passwd && mount --bind '$T/group' /etc/group &&
        mount --bind '$T/idmapd.conf' /etc/idmapd.conf && touch '$T/ready' && exec sleep 1000" &
CPID=$!
wait_for 10 test -e "$T/ready" || { echo "FAIL: no container"; exit 1; }

look() { "$daemon" --socket="$S" --ctl="$1" || true; }
[ "$(look "lookup pid:$CPID uid alice@c1.test")" = "ok 4001 600 resolved" ] || fail "first lookup"
[ "$(look "lookup pid:$CPID uid alice@c1.test")" = "ok 4001 600 cache" ] || fail "second lookup"
look "lookup pid:$CPID uid nosuch@c1.test" >/dev/null
look "lookup host user 0" >/dev/null

metrics() { "$ctl" --socket="$S" -q metrics; }
value() { # series (exact, labels included) in $M
        awk -v s="$1" '$1 == s { print $2; found = 1 } END { if (!found) print "absent" }' <<<"$M"
}
expect() { # series value
        local got
        got=$(value "$1")
        [ "$got" = "$2" ] && pass "$1 $got" || fail "$1: '$got', expected $2"
}
M=$(metrics)
if lint=$(promtool check metrics <<<"$M" 2>&1); then
        pass "promtool check metrics: no problem ($(grep -c '^# TYPE' <<<"$M") families, $(grep -vc '^#' <<<"$M") series)"
else
        fail "promtool check metrics: $lint"
fi
expect 'nsid_idmapd_up' 1
expect 'nsid_idmapd_lookups_total{context="container",path="helper"}' 3
expect 'nsid_idmapd_lookups_total{context="container",path="pipe"}' 0
expect 'nsid_idmapd_lookups_total{context="host",path="helper"}' 1
expect 'nsid_idmapd_cache_hits_total{context="container"}' 1
expect 'nsid_idmapd_cache_misses_total{context="container"}' 2
expect 'nsid_idmapd_resolutions_total{context="container",source="files"}' 2
expect 'nsid_idmapd_resolutions_total{context="host",source="libnfsidmap"}' 1
expect 'nsid_idmapd_negative_answers_total{context="container"}' 1
expect 'nsid_idmapd_failures_total{context="container",reason="timeout"}' 0
expect 'nsid_idmapd_lookup_duration_seconds_count{context="container"}' 3
expect 'nsid_idmapd_lookup_duration_seconds_bucket{context="container",le="+Inf"}' 3
expect 'nsid_idmapd_cache_entries{context="container"}' 2
# the worst container namespaces get series of their own (at most 10): this one, 3 lookups
cino=$(stat -L -c %i "/proc/$CPID/ns/net")
ns_lookups=$(grep "^nsid_idmapd_namespace_lookups_total{netns=\"$cino\"," <<<"$M" | sed 's/.* //')
[ "$ns_lookups" = 3 ] && pass "nsid_idmapd_namespace_lookups_total of netns $cino: 3" ||
        fail "per-namespace lookups: '$ns_lookups' ($(grep namespace_lookups <<<"$M"))"
[ "$(grep -c '^nsid_idmapd_namespace_failures_total{' <<<"$M")" = 2 ] &&
        pass "its failures by reason (timeout, error)" || fail "per-namespace failures: $(grep namespace_failures <<<"$M")"
sum=$(value 'nsid_idmapd_lookup_duration_seconds_sum{context="container"}')
awk -v s="$sum" 'BEGIN { exit !(s > 0 && s < 30) }' && pass "lookup duration sum ${sum} s" || fail "duration sum '$sum'"
start=$(value 'nsid_idmapd_start_time_seconds')
awk -v s="$start" -v now="$EPOCHSECONDS" 'BEGIN { exit !(s <= now && s > now - 120) }' &&
        pass "start time $start (now $EPOCHSECONDS)" || fail "start time '$start' (now $EPOCHSECONDS)"

# a flush is an eviction; the container gone, its counts stay in the totals
look "flush pid:$CPID" >/dev/null
kill -9 "$CPID"; wait "$CPID" 2>/dev/null || true; CPID=
forgotten() { M=$(metrics); [ "$(value nsid_idmapd_namespaces_forgotten_total)" -ge 1 ]; }
wait_for 15 forgotten && pass "the container's namespace forgotten ($(value nsid_idmapd_namespaces_forgotten_total) so far)" ||
        fail "not forgotten: $(value nsid_idmapd_namespaces_forgotten_total)"
expect 'nsid_idmapd_lookups_total{context="container",path="helper"}' 3
expect 'nsid_idmapd_cache_hits_total{context="container"}' 1
expect 'nsid_idmapd_lookup_duration_seconds_count{context="container"}' 3
[ "$(value 'nsid_idmapd_cache_evictions_total{context="container",reason="flushed"}')" -ge 2 ] &&
        pass "the flush counted as evictions ($(value 'nsid_idmapd_cache_evictions_total{context="container",reason="flushed"}'))" ||
        fail "evictions: $(grep evictions <<<"$M")"

# --output: the textfile collector's way, replaced atomically
"$ctl" --socket="$S" -q metrics --output="$T/nsid.prom"
[ "$(stat -c %a "$T/nsid.prom")" = 644 ] && promtool check metrics <"$T/nsid.prom" >/dev/null 2>&1 &&
        [ -z "$(find "$T" -maxdepth 1 -name 'nsid.prom.tmp.*')" ] &&
        pass "--output wrote nsid.prom (0644, promtool clean, no temporary file left)" ||
        fail "--output: $(ls -l "$T")"
j=$("$ctl" --socket="$S" -q metrics --json)
python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["nsid"]["command"] == "metrics"; assert d["idmapd"]["contexts"]["container"]["ctl_lookups"] == 3' "$j" &&
        pass "--json: the same figures, nsid's envelope" || fail "--json: $j"

# no daemon: still a valid exposition, nsid_idmapd_up 0
kill "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
M=$("$ctl" --socket="$S" -q metrics); rc=$?
[ "$rc" = 0 ] && [ "$(value nsid_idmapd_up)" = 0 ] && ! grep -q '^nsid_idmapd_lookups' <<<"$M" &&
        promtool check metrics <<<"$M" >/dev/null 2>&1 &&
        pass "no daemon: exit 0, nsid_idmapd_up 0, no idmapd series, promtool clean" || fail "no daemon: rc=$rc $M"

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
