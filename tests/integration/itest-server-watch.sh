#!/bin/bash
# nsidctl watch --server (issue #31) on this host, which has no knfsd: what it says when it
# cannot follow the tracepoints, its lock, and what doctor --server and metrics make of a
# history. The tracepoints themselves, a real knfsd and real clients taking each other's
# record are the lab's (tests/vm/scenarios/server-watch.sh, 6.1 and 6.12); here the history
# is written with sqlite3 in the format the watcher writes, with the owner strings a hostile
# NFS client can send (escaped as the watcher stores them: \xHH, so backslashes), a file that
# is not a history, and a symlink where the history goes.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
build=$(realpath "$build")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: tracefs, the run directory's lock"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 missing (apt install sqlite3)"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq missing"; exit 77; }
ctl=$build/nsidctl/nsidctl
T=$(mktemp -d /tmp/nsid-itest-watch.XXXXXX)
LPID=''
cleanup() {
        [ -n "$LPID" ] && kill "$LPID" 2>/dev/null
        rm -rf "$T"
}
trap cleanup EXIT
fails=0 passes=0 skips=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }
export NSID_STATE_DIR=$T/state
mkdir -p "$NSID_STATE_DIR"

# ---- the command line ----
set +e
"$ctl" watch >"$T/out" 2>&1; rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- "--server" "$T/out" && pass "watch without --server: usage error naming --server (exit 2)" ||
        fail "watch without --server: exit $rc, $(cat "$T/out")"
set +e
"$ctl" status --history=x >"$T/out" 2>&1; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "doctor watch metrics" "$T/out" && pass "--history on status: usage error naming the commands that take it" ||
        fail "--history on status: exit $rc, $(cat "$T/out")"
set +e
"$ctl" watch --server --duration=0 >"$T/out" 2>&1; rc=$?
set -e
[ "$rc" = 2 ] && pass "watch --duration=0: usage error" || fail "--duration=0: exit $rc"

# ---- no knfsd here: a clear failure, nothing left behind ----
if [ -d /sys/kernel/tracing/events/nfsd ] || [ -d /sys/kernel/debug/tracing/events/nfsd ]; then
        skip "this host's kernel has knfsd's tracepoints: the failure path is not reachable here"
else
        set +e
        "$ctl" watch --server --history="$T/h1.db" --duration=2 >"$T/out" 2>&1; rc=$?
        set -e
        if [ "$rc" = 1 ] && grep -qE "tracepoints are missing|tracefs is not mounted|cannot make the tracefs instance" "$T/out"; then
                pass "no knfsd: exit 1 and why ($(tail -n 1 "$T/out"))"
        else
                fail "no knfsd: exit $rc, $(cat "$T/out")"
        fi
        for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
                [ -d "$d/instances/nsid-watch" ] && fail "the tracefs instance was left in $d" || true
        done
        pass "no tracefs instance left behind"
fi

# ---- one watcher at a time ----
mkdir -p /run/nsid
exec 9>/run/nsid/server-watch.lock
if flock -n 9; then
        set +e
        "$ctl" watch --server --history="$T/h2.db" --duration=2 >"$T/out" 2>&1; rc=$?
        set -e
        [ "$rc" = 1 ] && grep -q "another nsidctl watch --server runs" "$T/out" &&
                pass "a second watcher is refused while the lock is held" ||
                fail "second watcher: exit $rc, $(cat "$T/out")"
        flock -u 9
else
        skip "a real watcher holds /run/nsid/server-watch.lock on this host"
fi
exec 9>&-

# ---- a history the watcher would write: doctor and metrics read it ----
H=$NSID_STATE_DIR/server-watch.db
now=$(date +%s)
old=$((now - 3 * 86400))
hostile='Linux NFSv4.2 web\x0a# TYPE evil counter\x22\x5c'
sqlite3 "$H" <<SQL
CREATE TABLE change(id INTEGER PRIMARY KEY, time REAL NOT NULL, kind TEXT NOT NULL,
  owner BLOB, owner_text TEXT NOT NULL, from_addr TEXT NOT NULL, to_addr TEXT NOT NULL,
  clientid TEXT NOT NULL);
CREATE TABLE total(kind TEXT NOT NULL, owner_text TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY(kind, owner_text));
CREATE TABLE stat(key TEXT PRIMARY KEY, value REAL NOT NULL);
INSERT INTO change(time, kind, owner, owner_text, from_addr, to_addr, clientid) VALUES
  ($now - 30, 'takeover', NULL, 'Linux NFSv4.2 web', '192.0.2.10:803', '192.0.2.11:716', '0x1'),
  ($now - 20, 'takeover', NULL, 'Linux NFSv4.2 web', '192.0.2.11:716', '192.0.2.10:803', '0x2'),
  ($now - 10, 'takeover', NULL, 'Linux NFSv4.2 web', '192.0.2.10:803', '192.0.2.11:716', '0x3'),
  ($now - 5, 'takeover', NULL, '$hostile', '[fd00::1]:1023', '[fd00::2]:1023', '0x4'),
  ($now - 4, 'restart', NULL, 'Linux NFSv4.2 other', '192.0.2.12:700', '192.0.2.12:701', '0x5'),
  ($now - 3, 'refused', NULL, 'Linux NFSv4.2 krb', '192.0.2.13:700', '192.0.2.14:700', '0x6'),
  ($old, 'takeover', NULL, 'Linux NFSv4.2 long-ago', '192.0.2.20:1', '192.0.2.21:1', '0x7');
INSERT INTO total VALUES ('takeover', 'Linux NFSv4.2 web', 3), ('takeover', '$hostile', 1),
  ('takeover', 'Linux NFSv4.2 long-ago', 1), ('takeover', '', 5), ('restart', 'Linux NFSv4.2 other', 1),
  ('refused', 'Linux NFSv4.2 krb', 1);
INSERT INTO stat VALUES ('started', $now - 60), ('events', 40), ('lost', 0);
SQL
set +e
"$ctl" --json doctor --server --window=0 --nfsd-clients="$T/none" --history="$H" >"$T/doctor.json" 2>"$T/doctor.err"; drc=$?
set -e
jq -e . "$T/doctor.json" >/dev/null && pass "doctor --server --json with a history: valid JSON" || fail "doctor JSON: $(head -c 300 "$T/doctor.json")"
web=$(jq -c '.findings[] | select(.check == "nfsd-takeovers" and .severity == "error" and .owner == "Linux NFSv4.2 web")' "$T/doctor.json")
[ "$(printf '%s' "$web" | jq '.takeovers')" = 3 ] && pass "doctor: 3 takeovers of \"Linux NFSv4.2 web\" (error)" || fail "doctor web: $web"
[ "$(printf '%s' "$web" | jq -c '.addresses')" = '["192.0.2.10:803","192.0.2.11:716"]' ] &&
        pass "doctor: the two addresses, in the order seen" || fail "doctor addresses: $web"
h=$(jq -c --arg o "$hostile" '.findings[] | select(.check == "nfsd-takeovers" and .owner == $o)' "$T/doctor.json")
[ -n "$h" ] && pass "doctor: the hostile owner string reported as stored (escaped)" || fail "hostile owner: $(cat "$T/doctor.json")"
jq -e '[.findings[] | select(.owner == "Linux NFSv4.2 long-ago")] | length == 0' "$T/doctor.json" >/dev/null &&
        pass "doctor: a takeover three days old is outside its 24 h" || fail "doctor reports the old takeover"
jq -e '[.findings[] | select(.check == "nfsd-takeovers" and .severity == "warning" and .owner == "Linux NFSv4.2 krb")] | length == 1' "$T/doctor.json" >/dev/null &&
        pass "doctor: a refused request is a warning" || fail "doctor refused: $(cat "$T/doctor.json")"
jq -e '[.findings[] | select(.check == "nfsd-takeovers" and .severity == "info" and (.message | contains("1 client restart")))] | length == 1' "$T/doctor.json" >/dev/null &&
        pass "doctor: the restart counted as information" || fail "doctor restart"
[ "$drc" = 4 ] && pass "doctor exit 4 (errors)" || fail "doctor exit $drc"
"$ctl" doctor --server --window=0 --nfsd-clients="$T/none" --history="$H" --color=never >"$T/doctor.txt" 2>&1 || true
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/doctor.txt"; then fail "doctor's text holds control bytes"; else pass "doctor's text: no control bytes"; fi

"$ctl" metrics >"$T/m.prom" 2>/dev/null
grep -qx 'nsid_server_changes_total{kind="takeover"} 10' "$T/m.prom" && pass "metrics: takeovers total 10 (every owner, the summed ones too)" ||
        fail "metrics total: $(grep nsid_server_changes "$T/m.prom")"
grep -qx 'nsid_server_owner_takeovers_total{owner="Linux NFSv4.2 web"} 3' "$T/m.prom" && pass "metrics: the owner's series" ||
        fail "metrics owner: $(grep owner_takeovers "$T/m.prom")"
grep -qxF 'nsid_server_owner_takeovers_total{owner="Linux NFSv4.2 web\\x0a# TYPE evil counter\\x22\\x5c"} 1' "$T/m.prom" &&
        pass "metrics: the hostile owner as one label, its backslashes escaped" || fail "metrics hostile: $(grep evil "$T/m.prom")"
[ "$(grep -c '^# TYPE' "$T/m.prom")" = "$(grep -c '^# HELP' "$T/m.prom")" ] && ! grep -q '^# TYPE evil' "$T/m.prom" &&
        pass "metrics: no forged TYPE line" || fail "metrics: a forged line"
grep -qx 'nsid_server_watch_up 0' "$T/m.prom" && pass "metrics: no watcher runs: nsid_server_watch_up 0" || fail "watch_up"
if command -v promtool >/dev/null; then
        promtool check metrics <"$T/m.prom" >"$T/promtool" 2>&1 && pass "promtool check metrics: clean" ||
                fail "promtool: $(cat "$T/promtool")"
else
        skip "promtool missing"
fi
"$ctl" --json metrics >"$T/m.json" 2>/dev/null
jq -e '.server.changes.takeover == 10 and .server.owner_takeovers["Linux NFSv4.2 web"] == 3' "$T/m.json" >/dev/null &&
        pass "metrics --json: the same figures" || fail "metrics json: $(jq -c .server "$T/m.json")"

# ---- no history, a file that is not one, a symlink ----
rm -f "$H"
"$ctl" --json doctor --server --window=0 --nfsd-clients="$T/none" --history="$H" >"$T/d2.json" 2>/dev/null || true
jq -e '[.findings[] | select(.check == "nfsd-takeovers" and .severity == "info" and (.message | contains("no takeover history")))] | length == 1' "$T/d2.json" >/dev/null &&
        pass "doctor without a history: says how to get one" || fail "no history: $(cat "$T/d2.json")"
"$ctl" metrics >"$T/m2.prom" 2>/dev/null
grep -q '^nsid_server' "$T/m2.prom" && fail "metrics without a history print server series" || pass "metrics without a history: no server series"
echo "not a database" >"$H"
"$ctl" --json doctor --server --window=0 --nfsd-clients="$T/none" --history="$H" >"$T/d3.json" 2>/dev/null || true
jq -e '[.findings[] | select(.check == "nfsd-takeovers" and .severity == "error" and (.message | contains("cannot read the history")))] | length == 1' "$T/d3.json" >/dev/null &&
        pass "doctor with a file that is not a history: an error, not \"nothing happened\"" || fail "not a history: $(cat "$T/d3.json")"
rm -f "$H"
ln -s "$T/elsewhere.db" "$H"
set +e
"$ctl" watch --server --duration=1 >"$T/out" 2>&1; rc=$?
set -e
[ ! -e "$T/elsewhere.db" ] && pass "watch does not follow a symlink where its history goes (exit $rc)" ||
        fail "watch followed the symlink"

echo "$passes passed, $fails failed, $skips skipped"
[ "$fails" = 0 ] || exit 1
[ "$passes" -gt 0 ] || exit 77
