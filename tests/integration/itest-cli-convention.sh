#!/bin/bash
# One command-line convention across nsid's four programs (issue #32), checked on the built
# binaries as a user meets them: --help (exit 0, the exit statuses stated), --version
# ("PROGRAM VERSION"), an unknown option or argument (exit 2, what is wrong on stderr, a
# pointer to --help, nothing on stdout), options after the command, and --json documents
# that carry the same "nsid" envelope (schema, program, version, host, time, command).
# Real programs, no daemon needed except nsid-idmapd's own (started here, foreground).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
build=$(realpath "$build")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd and the uniquifier's namespaces (run as root)"; exit 77; }
T=$(mktemp -d /tmp/nsid-itest-cli.XXXXXX)
DPID=
cleanup() { [ -n "$DPID" ] && kill "$DPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fails=0 passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }

declare -A bin=(
        [nsidctl]="$build/nsidctl/nsidctl"
        [nsid-uniquifier]="$build/uniquifier/nsid-uniquifier"
        [nsid-idmap]="$build/idmap/nsid-idmap"
        [nsid-idmapd]="$build/idmapd/nsid-idmapd"
)
version=$(sed -n 's/^project(nsid VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../../CMakeLists.txt")

run() { # name args... -> $rc, $out, $err
        local name=$1
        shift
        set +e
        out=$(NSID_STATE_DIR="$T/state" "${bin[$name]}" "$@" 2>"$T/err")
        rc=$?
        set -e
        err=$(cat "$T/err")
}
usage_error() { # name args...: exit 2, stderr says what and where to look, stdout empty
        local name=$1
        shift
        run "$name" "$@"
        if [ "$rc" = 2 ] && [ -z "$out" ] && [ "$(echo "$err" | tail -n1)" = "Try '$name --help'." ] &&
                [ "$(echo "$err" | wc -l)" -ge 2 ]; then
                pass "$name $*: exit 2, '$(echo "$err" | head -n1)'"
        else
                fail "$name $*: exit $rc, stdout '$out', stderr '$err'"
        fi
}

for name in nsidctl nsid-uniquifier nsid-idmap nsid-idmapd; do
        run "$name" --help
        [ "$rc" = 0 ] && echo "$out" | grep -q "^Exit status: 0 ok, 1 failure, 2 usage" &&
                pass "$name --help: exit 0, states the exit statuses" || fail "$name --help: exit $rc: $out"
        run "$name" --version
        [ "$rc" = 0 ] && [ "$out" = "$name $version" ] && pass "$name --version: '$out'" ||
                fail "$name --version: exit $rc '$out' (want '$name $version')"
        usage_error "$name" --no-such-option
done
usage_error nsidctl no-such-command
usage_error nsidctl status extra-argument
usage_error nsid-uniquifier no-such-command
usage_error nsid-idmap -l extra-argument
usage_error nsid-idmap -l -c
usage_error nsid-idmap -c --json
usage_error nsid-idmapd extra-argument
usage_error nsid-idmapd --json
usage_error nsid-idmapd --status --ctl=status

# options anywhere: after the command, before it
run nsidctl config --json
a=$out
run nsidctl --json config
[ "$rc" = 0 ] && [ "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("nsid"); print(json.dumps(d, sort_keys=True))')" = \
        "$(echo "$a" | python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("nsid"); print(json.dumps(d, sort_keys=True))')" ] &&
        pass "nsidctl: --json before or after the command, the same document" || fail "nsidctl --json config: exit $rc"

# the envelope: same members, same schema, in every program's JSON
envelope() { # name command: checks $out
        printf '%s' "$out" >"$T/doc.json"
        python3 - "$1" "$2" "$version" "$(hostname)" "$T/doc.json" <<'PY'
import json, sys, datetime
name, command, version, host, doc = sys.argv[1:6]
e = json.load(open(doc))["nsid"]
assert set(e) == {"schema", "program", "version", "host", "time", "command"}, e
assert e["schema"] == 1 and e["program"] == name and e["version"] == version, e
assert e["host"] == host and e["command"] == command, e
t = datetime.datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%SZ")
assert abs((datetime.datetime.utcnow() - t).total_seconds()) < 120, e
PY
}
check_envelope() { # name command args...
        local name=$1 command=$2
        shift 2
        run "$name" "$@"
        if [ "$rc" = 0 ] && envelope "$name" "$command" 2>"$T/py.err"; then
                pass "$name $*: the nsid envelope (command $command)"
        else
                fail "$name $*: exit $rc, $(cat "$T/py.err") $out $err"
        fi
}
check_envelope nsidctl config config --json
check_envelope nsid-uniquifier list list --json
check_envelope nsid-idmap domain -d --json --idmapd-conf="$T/none.conf"

cat >"$T/nsid.conf" <<CONF
[idmapd]
state-dir = $T/state
set-identifier = no
CONF
"${bin[nsid-idmapd]}" -f -q --config="$T/nsid.conf" --socket="$T/sock" 2>"$T/daemon.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.05; done
check_envelope nsid-idmapd status --status --json --socket="$T/sock"
run nsid-idmapd --status --socket="$T/sock"
with=$(echo "$out" | wc -l)
run nsid-idmapd --socket="$T/sock" --status --no-legend
[ "$rc" = 0 ] && [ "$(echo "$out" | wc -l)" = $((with - 2)) ] && ! echo "$out" | grep -q NETNS &&
        pass "nsid-idmapd --status --no-legend: the rows without the two header lines" || fail "--no-legend: $out"
# -q: warnings and errors only; without it the same start logs its informational lines
if [ ! -s "$T/daemon.log" ]; then pass "nsid-idmapd -q: nothing informational logged"
else fail "nsid-idmapd -q logged: $(head -3 "$T/daemon.log")"; fi
kill "$DPID"
wait "$DPID" 2>/dev/null || true
DPID=
"${bin[nsid-idmapd]}" -f --config="$T/nsid.conf" --socket="$T/sock" 2>"$T/daemon-v.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.05; done
kill "$DPID"
wait "$DPID" 2>/dev/null || true
DPID=
[ -s "$T/daemon-v.log" ] && pass "nsid-idmapd without -q: $(wc -l <"$T/daemon-v.log") informational lines" ||
        fail "nsid-idmapd without -q logged nothing: the -q check above proves nothing"
run nsid-idmapd --status --socket="$T/sock"
[ "$rc" = 1 ] && echo "$err" | grep -q "cannot reach the daemon" && pass "nsid-idmapd --status, no daemon: exit 1 (a failure, not a usage error)" ||
        fail "no daemon: exit $rc $err"

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
