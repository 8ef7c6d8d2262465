#!/bin/bash
# lab-test: 6.1
# lab-test-extra: 6.12
# lab-needs: prometheus prometheus-node-exporter promtool curl
# lab-cost: 120
# metrics-prometheus (issue #31): nsid's metrics as an operator collects them, with Debian's
# own packages: `nsidctl metrics --output` writes node_exporter's textfile, Debian's
# prometheus-node-exporter serves it and Debian's prometheus scrapes it; PromQL then answers
# for each metric what the workload implies.
#   - knfsd in the guest's initial netns, idmapping on, no request-key rule for id_resolver:
#     the containers' lookups come through their idmap pipes to nsid-idmapd;
#   - containers c1 and c2 (labalice is 4001 and 4002 there, 1500 on the server) mount the
#     export and stat a file: one pipe lookup each at least, resolved from their files;
#   - set-identifier = no: their NFS clients keep the host's name, which the identity gauge
#     reports as a risk (unset with NFS mounted);
#   - an unprivileged owner (nobody) makes two network namespaces with
#     max-netns-unprivileged = 1: one is refused (the refused counter);
#   - c2 is stopped: its namespace forgotten, the container counters do not go down.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
NSIDD="$LAB_BUILD/idmapd/nsid-idmapd"
NSIDCTL="$LAB_BUILD/nsidctl/nsidctl"
W=/run/nsid-lab/metrics
SOCK=$W/idmapd.sock
TEXTDIR=$W/node-exporter
PROM=$W/prometheus
LOGS=/lab-out
[ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
mkdir -p "$W" "$TEXTDIR" "$PROM"

echo "labalice:x:1500:1500::/nonexistent:/usr/sbin/nologin" >> /etc/passwd
echo "labalice:x:1500:" >> /etc/group
check "knfsd started with idmapping on" nfs_server_start on || bail "no server"
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* /etc/request-key.d/*nsid* 2>/dev/null
echo data > "$LAB_EXPORT/f1"
chown 1500:1500 "$LAB_EXPORT/f1"
for k in c1:4001 c2:4002; do
  n=${k%%:*} u=${k##*:}
  sed "s/^labalice:x:1500:1500:/labalice:x:$u:$u:/" /etc/passwd > "$W/passwd-$n"
  sed "s/^labalice:x:1500:/labalice:x:$u:/" /etc/group > "$W/group-$n"
done

cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
rescan-interval = 1
max-netns-unprivileged = 1
state-dir = $W/state
CONF
"$NSIDD" -f --config="$W/nsid.conf" --socket="$SOCK" </dev/null >/dev/null 2>"$LOGS/metrics-daemon.log" &
DPID=$!
ready() { timeout 5 "$NSIDD" --socket="$SOCK" --ctl=status >/dev/null 2>&1; }
check "nsid-idmapd started" wait_for 20 ready || bail "no daemon"

start_c() {
  container_create "$1" --passwd "$W/passwd-$1" --group "$W/group-$1" || return 1
  "$NSIDD" --socket="$SOCK" --ctl="register $(container_pid "$1")" >/dev/null || return 1
  container_mount "$1" vers=4.2
}
check "c1 created and mounted" start_c c1 || bail "c1"
check "c2 created and mounted" start_c c2 || bail "c2"
nfs_server_wait_grace
check_eq "c1 sees labalice as its 4001 (through its pipe)" 4001 "$(container_exec c1 stat -c %u /mnt/nfs/f1)"
check_eq "c2 sees labalice as its 4002" 4002 "$(container_exec c2 stat -c %u /mnt/nfs/f1)"

# a hostile owner: nobody makes two network namespaces; the second is refused
setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
  'for i in 1 2; do unshare -Urn sleep 1000 </dev/null >/dev/null 2>&1 & done' </dev/null
refused() { [ "$("$NSIDD" --socket="$SOCK" --status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["bounds"]["refused_total"])')" -ge 1 ]; }
check "one of nobody's two namespaces refused (max-netns-unprivileged = 1)" wait_for 20 refused

# c2 goes: its namespace is forgotten, its counts stay in the container totals
status_sum() { # field: the sum over the containers' namespaces now
  "$NSIDD" --socket="$SOCK" --status --json | python3 -c '
import json, sys
print(sum(n[sys.argv[1]] for n in json.load(sys.stdin)["namespaces"] if n["context"] == "container"))' "$1"
}
pipes_before=$(status_sum pipe_upcalls)
note "pipe lookups of the containers before c2 goes: $pipes_before"
ino2=$(stat -L -c %i "/proc/$(container_pid c2)/ns/net")
container_exec c2 umount -f /mnt/nfs 2>/dev/null
container_destroy c2
gone() { "$NSIDD" --socket="$SOCK" --status --json |
           python3 -c 'import json, sys; sys.exit(int(sys.argv[1]) in [n["netns"] for n in json.load(sys.stdin)["namespaces"]])' "$ino2"; }
check "c2's namespace forgotten" wait_for 30 gone

# an identity set by nsid-uniquifier (c4, no NFS yet: "set"), counted in the registry
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
check "c4 created" container_create c4
check "nsid-uniquifier sets c4's identifier (outcome set)" "$UNIQ" -q set --pid "$(container_pid c4)" --key metrics-c4
ino1=$(stat -L -c %i "/proc/$(container_pid c1)/ns/net")
c1_requests=$("$NSIDD" --socket="$SOCK" --status --json | python3 -c '
import json, sys
print([n["requests"] for n in json.load(sys.stdin)["namespaces"] if n["netns"] == int(sys.argv[1])][0])' "$ino1")

# ---- the textfile, node_exporter, Prometheus ----------------------------------------------------
check "nsidctl metrics --output into node_exporter's textfile directory" \
  "$NSIDCTL" --socket="$SOCK" -q metrics --output="$TEXTDIR/nsid.prom"
check "promtool check metrics: the file is clean" sh -c "promtool check metrics < '$TEXTDIR/nsid.prom'"
prometheus-node-exporter --web.listen-address=127.0.0.1:9100 --collector.disable-defaults \
  --collector.textfile --collector.textfile.directory="$TEXTDIR" </dev/null >/dev/null 2>"$LOGS/node-exporter.log" &
NEPID=$!
# the opt-in listener: nsid-metrics.socket's way (Accept=yes, nsidctl metrics --http per
# connection), through systemd's own socket activator (no systemd as PID 1 here)
systemd-socket-activate -l 127.0.0.1:9853 --accept --inetd "$NSIDCTL" --socket="$SOCK" -q \
  metrics --http --history="$W/sw.db" </dev/null >/dev/null 2>"$LOGS/metrics-http.log" &
SAPID=$!
cat > "$PROM/prometheus.yml" <<YML
global:
  scrape_interval: 2s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:9100']
  - job_name: nsid
    static_configs:
      - targets: ['127.0.0.1:9853']
    # (the listener's series as listener_*: the textfile's keep their names for the queries)
    metric_relabel_configs:
      - source_labels: [__name__]
        regex: '(.*)'
        target_label: __name__
        replacement: 'listener_\$1'
YML
prometheus --config.file="$PROM/prometheus.yml" --storage.tsdb.path="$PROM/data" \
  --web.listen-address=127.0.0.1:9090 </dev/null >/dev/null 2>"$LOGS/prometheus.log" &
PPID_=$!
q() { # PromQL -> the value of the first result (or "none")
  curl -sf --get --data-urlencode "query=$1" http://127.0.0.1:9090/api/v1/query |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
scraped() { [ "$(q 'nsid_idmapd_up')" = 1 ]; }
check "Prometheus scraped node_exporter's textfile (nsid_idmapd_up == 1)" wait_for 180 scraped ||
  { tail -5 "$LOGS/prometheus.log" | sed 's/^/#   /'; bail "no scrape"; }
file() { # series -> its value in the textfile
  awk -v s="$1" '$1 == s { print $2 }' "$TEXTDIR/nsid.prom"
}
check "PromQL: c1 and c2's pipe lookups ($pipes_before when c2 was there) kept after c2 went" \
  test "$(q 'nsid_idmapd_lookups_total{context="container",path="pipe"}')" -ge "$pipes_before"
check "PromQL: at least one pipe lookup per container" test "$pipes_before" -ge 2
check_eq "PromQL: resolutions from the containers' files, as the textfile says" \
  "$(file 'nsid_idmapd_resolutions_total{context="container",source="files"}')" \
  "$(q 'nsid_idmapd_resolutions_total{context="container",source="files"}')"
check "PromQL: at least two of them (labalice in c1 and c2)" \
  test "$(q 'nsid_idmapd_resolutions_total{context="container",source="files"}')" -ge 2
check_eq "PromQL: two container namespaces served now (c1, c4)" 2 "$(q 'nsid_idmapd_namespaces{context="container"}')"
check "PromQL: namespaces forgotten >= 1 (c2)" test "$(q 'nsid_idmapd_namespaces_forgotten_total')" -ge 1
check "PromQL: namespaces refused >= 1 (nobody's second)" test "$(q 'nsid_idmapd_namespaces_refused_total')" -ge 1
check_eq "PromQL: no failure, no timeout in the containers" "0 0" \
  "$(q 'nsid_idmapd_failures_total{context="container",reason="error"}') $(q 'nsid_idmapd_failures_total{context="container",reason="timeout"}')"
check_eq "PromQL: the latency histogram counts every container lookup" \
  "$(q 'sum(nsid_idmapd_cache_hits_total{context="container"}) + sum(nsid_idmapd_cache_misses_total{context="container"})')" \
  "$(q 'nsid_idmapd_lookup_duration_seconds_count{context="container"}')"
check "PromQL: a p99 lookup latency under 10 s" sh -c \
  "v=\$(curl -sf --get --data-urlencode 'query=histogram_quantile(0.99, nsid_idmapd_lookup_duration_seconds_bucket{context=\"container\"})' http://127.0.0.1:9090/api/v1/query | python3 -c 'import json, sys; print(json.load(sys.stdin)[\"data\"][\"result\"][0][\"value\"][1])'); echo p99=\$v; awk -v v=\$v 'BEGIN { exit !(v > 0 && v < 10) }'"
check_eq "PromQL: c1, NFS mounted without an identifier, counted as a risk" 1 \
  "$(q 'nsid_identity_unset_with_nfs_mounts')"
check_eq "PromQL: the daemon's start time as the textfile says" \
  "$(file nsid_idmapd_start_time_seconds)" "$(q 'nsid_idmapd_start_time_seconds')"
check_eq "PromQL: the listener scraped directly too (up{job=\"nsid\"})" 1 "$(q 'up{job="nsid"}')"
check_eq "PromQL: the listener's nsid_idmapd_up" 1 "$(q 'listener_nsid_idmapd_up')"
check "PromQL: the listener and the textfile agree on the daemon's start time (within 1 s)" \
  awk -v a="$(q 'listener_nsid_idmapd_start_time_seconds')" -v b="$(q 'nsid_idmapd_start_time_seconds')" \
  'BEGIN { d = a - b; exit !(d >= -1 && d <= 1) }'
# every series of the textfile, read back through PromQL (one query for all of them): each
# documented family the workload produced is in Prometheus with the value nsidctl computed
readback() {
  curl -sf --get --data-urlencode 'query={job="node",__name__=~"nsid_.+"}' \
    http://127.0.0.1:9090/api/v1/query > "$W/readback.json" || return 1
  python3 - "$TEXTDIR/nsid.prom" "$W/readback.json" <<'PY'
import json, re, sys
line = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
lab = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
unesc = lambda v: re.sub(r'\\(.)', lambda m: {'n': '\n'}.get(m.group(1), m.group(1)), v)
want = {}
for l in open(sys.argv[1]):
    if l.startswith('#') or not l.strip():
        continue
    m = line.match(l.rstrip('\n'))
    labels = tuple(sorted((k, unesc(v)) for k, v in lab.findall(m.group(3) or '')))
    want[(m.group(1), labels)] = float(m.group(4))
got = {}
for r in json.load(open(sys.argv[2]))['data']['result']:
    met = dict(r['metric'])
    name = met.pop('__name__')
    met.pop('job', None); met.pop('instance', None)
    got[(name, tuple(sorted(met.items())))] = float(r['value'][1])
bad = [k for k in want if k not in got or abs(got[k] - want[k]) > 1e-9 + 1e-6 * abs(want[k])]
for k in bad[:5]:
    print(k, 'file', want[k], 'PromQL', got.get(k))
print(len(want), 'series,', len(bad), 'differ or missing')
sys.exit(0 if not bad and len(want) > 50 else 1)
PY
}
check "PromQL: every series of the textfile reads back with its value" readback
check_eq "PromQL: nsid_identity_outcomes_total{outcome=\"set\"} (c4)" 1 \
  "$(q 'nsid_identity_outcomes_total{job="node",outcome="set"}')"
check_eq "PromQL: c1's own series, its lookups as its status says" "$c1_requests" \
  "$(q "sum(nsid_idmapd_namespace_lookups_total{job=\"node\",netns=\"$ino1\"})")"
check_eq "PromQL: keys invalidated for the containers, as the textfile says" \
  "$(file 'nsid_idmapd_key_invalidations_total{context="container"}')" \
  "$(q 'nsid_idmapd_key_invalidations_total{job="node",context="container"}')"
note "keys invalidated: $(file 'nsid_idmapd_key_invalidations_total{context="container"}') (every pipe answer, on a kernel without per-namespace ID keys)"
check_eq "PromQL: invalidation retries as the textfile says" \
  "$(file 'nsid_idmapd_key_invalidation_retries_total{context="container"}')" \
  "$(q 'nsid_idmapd_key_invalidation_retries_total{job="node",context="container"}')"
check_eq "PromQL: no invalidation abandoned" 0 \
  "$(q 'sum(nsid_idmapd_key_invalidations_abandoned_total{job="node"})')"
note "p50/p99 of the containers' lookups: $(q 'histogram_quantile(0.5, nsid_idmapd_lookup_duration_seconds_bucket{context="container"})') / $(q 'histogram_quantile(0.99, nsid_idmapd_lookup_duration_seconds_bucket{context="container"})') s"

# ---- the server's side: a takeover, watched -----------------------------------------------------
"$NSIDCTL" --json watch --server --history="$W/sw.db" > "$W/sw.jsonl" 2> "$LOGS/server-watch.err" &
SWPID=$!
check "nsidctl watch --server started" wait_for 30 grep -q "following knfsd" "$LOGS/server-watch.err"
hn=$(container_exec c1 hostname)
check "c3 (c1's hostname, no identifier: c1's owner string) created" container_create c3 --hostname "$hn"
check "c3 mounts: it takes c1's record" container_mount c3 vers=4.2,soft,timeo=50,retrans=2
check "c1 stats again: it takes it back" container_exec c1 timeout 60 stat /mnt/nfs/f1
# c3 goes (its unmount ends its lease): no takeover after this, the counts hold still
container_exec c3 umount -l /mnt/nfs 2>/dev/null
sleep 3
tk=$(python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["kind"] == "takeover"))' "$W/sw.jsonl")
note "the watcher's takeovers: $tk ($(tr '\n' ' ' < "$W/sw.jsonl" | head -c 600))"
check "the watcher saw the two takeovers at least" test "$tk" -ge 2
"$NSIDCTL" --socket="$SOCK" -q metrics --history="$W/sw.db" --output="$TEXTDIR/nsid.prom"
takeovers_scraped() { [ "$(q 'nsid_server_changes_total{job="node",kind="takeover"}')" = "$tk" ]; }
check "PromQL: nsid_server_changes_total{kind=\"takeover\"} = the watcher's $tk (textfile)" wait_for 30 takeovers_scraped
listener_takeovers() { [ "$(q 'listener_nsid_server_changes_total{kind="takeover"}')" = "$tk" ]; }
check "PromQL: the listener says the same (it reads the history at each scrape)" wait_for 30 listener_takeovers
check_eq "PromQL: c1's owner string taken over $tk times" "$tk" \
  "$(q "nsid_server_owner_takeovers_total{job=\"node\",owner=\"Linux NFSv4.2 $hn\"}")"
check_eq "PromQL: the watcher runs (nsid_server_watch_up)" 1 "$(q 'nsid_server_watch_up{job="node"}')"
check_eq "PromQL: it lost nothing" 0 "$(q 'nsid_server_watch_lost_events_total{job="node"}')"
kill -TERM "$SWPID" 2>/dev/null; wait "$SWPID" 2>/dev/null

kill "$PPID_" "$NEPID" "$SAPID" 2>/dev/null
container_exec c1 umount -f /mnt/nfs 2>/dev/null
kill -TERM "$DPID"; wait "$DPID" 2>/dev/null
lab_done
