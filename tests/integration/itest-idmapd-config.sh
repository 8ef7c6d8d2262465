#!/bin/bash
# nsid-idmapd reads /etc/nsid.conf only through libnsid's nsid/conffile.h (nsid_conf_load:
# the key table, its ranges and defaults, diagnostics with line numbers, the file's owner
# and mode checked): a bad value is reported with its line and its default used; a config
# anyone may write, or a FIFO, is refused (exit 1 at start, at once); on SIGHUP a config
# that became unusable is refused and the one in use kept; a fixed one is taken.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmapd")
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd, a config file owned by another user (run as root)"; exit 77; }
T=$(mktemp -d /tmp/nsid-itest-config.XXXXXX)
DPID=
cleanup() { [ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
S=$T/s
ctl() { "$bin" --socket="$S" --ctl="$1" || true; }
printf '[General]\nDomain = conf.test\n' >"$T/idmapd.conf"
cat >"$T/nsid.conf" <<CONF
[idmapd]
cache-ttl = 0
negative-ttl = 7
set-identifier = maybe
bogus-key = 1
state-dir = $T/state
CONF
"$bin" -f --config="$T/nsid.conf" --idmapd-conf="$T/idmapd.conf" --socket="$S" 2>"$T/log" &
DPID=$!
for _ in $(seq 100); do [ -S "$S" ] && ctl status | grep -q '^ok' && break; sleep 0.05; done
grep -q "nsid.conf:2: \[idmapd\] cache-ttl = \"0\" is out of range 1..86400 s; the default 600 is used" "$T/log" && pass "bad number reported with its line" || fail "no line-2 diagnostic: $(cat "$T/log")"
grep -q "nsid.conf:4: .*set-identifier = \"maybe\" is not a boolean" "$T/log" && pass "bad boolean reported with its line" || fail "no line-4 diagnostic"
grep -q "nsid.conf:5: unknown key \"bogus-key\"" "$T/log" && pass "unknown key reported with its line" || fail "no line-5 diagnostic"
r=$(ctl "lookup host user 0")
[ "$r" = "ok root@conf.test 600 resolved" ] && pass "cache-ttl: default used ($r)" || fail "cache-ttl: $r"
r=$(ctl "lookup host user 3999999")
[ "$r" = "negative 7" ] && pass "negative-ttl = 7 taken ($r)" || fail "negative-ttl: $r"

# SIGHUP with a config anyone may write: refused, the one in use kept
sed -i 's/^negative-ttl = 7/negative-ttl = 9/' "$T/nsid.conf"
chmod 666 "$T/nsid.conf"
kill -HUP "$DPID"
wait_for 10 grep -q "SIGHUP: keeping the configuration in use" "$T/log" || true
grep -q "writable by everyone" "$T/log" && grep -q "SIGHUP: keeping the configuration in use" "$T/log" && pass "SIGHUP: a world-writable config refused, the one in use kept" || fail "SIGHUP refusal not logged: $(tail -3 "$T/log")"
r=$(ctl "lookup host user 3999998")
[ "$r" = "negative 7" ] && pass "still negative-ttl 7 ($r)" || fail "after refused reload: $r"
chmod 644 "$T/nsid.conf"
kill -HUP "$DPID"
# (the daemon handles SIGHUP in its main loop: a request after the log line sees the reload)
reloaded_twice() { [ "$(grep -c "SIGHUP: reloading" "$T/log")" -ge 2 ]; }
wait_for 10 reloaded_twice || fail "no second reload logged"
r=$(ctl "lookup host user 3999997")
[ "$r" = "negative 9" ] && pass "SIGHUP with the config fixed: negative-ttl 9 taken ($r)" || fail "after reload: $r"
kill -TERM "$DPID"; wait "$DPID" || { fail "SIGTERM: exit $?"; tail -20 "$T/log"; }
DPID=

# at start: refused configs make it exit 1 at once, saying why
start_refused() { # what
        local t0=$EPOCHREALTIME rc=0
        timeout 10 "$bin" -f --config="$T/nsid.conf" --socket="$S" 2>"$T/log2" || rc=$?
        local ms=$(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))
        if [ $rc = 1 ] && grep -q "nsid.conf: cannot be used" "$T/log2" && [ $ms -lt 5000 ]; then
                pass "$1: refused at start, exit 1 in $ms ms: $(grep -o 'cannot be used: .*' "$T/log2")"
        else
                fail "$1: rc $rc after $ms ms: $(cat "$T/log2")"
        fi
}
chmod 666 "$T/nsid.conf"
start_refused "world-writable config"
chmod 644 "$T/nsid.conf"
chown 65534 "$T/nsid.conf"
start_refused "config owned by uid 65534"
rm -f "$T/nsid.conf"
mkfifo "$T/nsid.conf"
start_refused "a FIFO as config"
echo "$fails failure(s)"
[ $fails = 0 ]
