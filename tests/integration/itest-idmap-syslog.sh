#!/bin/bash
# What nsid-idmap writes to the syslog socket, read by a real listener on /dev/log.
#
# nsid-idmap sends each line as one datagram "<PRI>nsid-idmap[PID]: text" without glibc's
# time stamp (nsid-idmap(8), -v), and falls back to syslog(3) when /dev/log is a stream
# socket. The listener owns /dev/log in a private mount namespace with its own /dev (a
# tmpfs with /dev/null), so the host's logging is not touched; the helper runs in upcall
# mode (stderr not a terminal, no -v) with a key serial it must refuse, which it logs at
# LOG_ERR (facility daemon: <27>) and exits 1.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmap/nsid-idmap")
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: a private /dev in a mount namespace (run as root)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

T=$(mktemp -d /tmp/nsid-itest-syslog.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

cat >"$T/listen.py" <<'PY'
import os, socket, sys
kind, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o666)
if kind == "dgram":
    open(out + ".ready", "w").close()
    data = s.recv(65536)
else:
    s.listen(1)
    open(out + ".ready", "w").close()
    c, _ = s.accept()
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
open(out, "wb").write(data)
PY

# run KIND [TAG ARGS...]: the helper's message through a KIND (dgram|stream) listener into
# $T/TAG.out (TAG: KIND by default), its exit status into $T/TAG.rc; ARGS default to the
# installed rule's form with a serial it refuses
run() {
        local kind=$1 tag=${2:-$1}
        shift $(($# > 1 ? 2 : 1))
        [ $# -gt 0 ] || set -- -t 600 0 uid:someone@example.test
        unshare -m --propagation private bash -c '
                set -e
                mount -t tmpfs -o mode=0755 nsid-test-dev /dev
                mknod -m 666 /dev/null c 1 3
                python3 "$1/listen.py" "$2" /dev/log "$1/$3.out" & lp=$!
                for _ in $(seq 100); do [ -e "$1/$3.out.ready" ] && break; sleep 0.05; done
                rc=0 dir=$1 tag=$3 bin=$4
                shift 4
                "$bin" "$@" </dev/null >/dev/null 2>/dev/null || rc=$?
                echo "$rc" >"$dir/$tag.rc"
                for _ in $(seq 100); do [ -e "$dir/$tag.out" ] && break; sleep 0.05; done
                kill "$lp" 2>/dev/null || true
        ' _ "$T" "$kind" "$tag" "$bin" "$@"
}

run dgram
out=$(tr '\0' '\n' <"$T/dgram.out" 2>/dev/null || true)
[ "$(cat "$T/dgram.rc")" = 1 ] && pass "refused serial: exit status 1" || fail "exit status $(cat "$T/dgram.rc")"
if [[ "$out" =~ ^'<27>nsid-idmap['[0-9]+']: invalid key serial "0": '.+$ ]]; then
        pass "datagram: $out"
else
        fail "datagram not '<27>nsid-idmap[PID]: invalid key serial \"0\": ...': '$out'"
fi
[ "$(wc -l <<<"$out")" = 1 ] && pass "one line, no time stamp, no trailing newline" ||
        fail "more than one line: '$out'"

# a stream /dev/log (older syslog daemons): glibc's syslog(), with its time stamp
run stream
out=$(tr '\0' '\n' <"$T/stream.out" 2>/dev/null | head -n 1 || true)
stamped='^<27>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]{8} nsid-idmap\[[0-9]+\]: invalid key serial "0": .+$'
if [[ "$out" =~ $stamped ]]; then
        pass "stream socket, through syslog(3): $out"
else
        fail "stream socket: '$out'"
fi

# The installed rules' argument forms ("-t 600 %k %d", "dns %k") are taken without
# getopt_long() (nsid-idmap.c): the same arguments spelled so that getopt_long() parses them
# must give the same result.
line() { [ -e "$T/$1.out" ] && tr '\0' '\n' <"$T/$1.out" | sed 's/^<27>nsid-idmap\[[0-9]*\]: //' || true; }
same() { # what TAG1 and TAG2 logged and returned must match, and match the pattern
        local a b
        a=$(line "$1"); b=$(line "$2")
        if [ "$a" = "$b" ] && [ "$(cat "$T/$1.rc")" = "$(cat "$T/$2.rc")" ] && [[ "$a" =~ $3 ]]; then
                pass "$4: '$a' (exit $(cat "$T/$1.rc")) both ways"
        else
                fail "$4: '$a' (exit $(cat "$T/$1.rc")) vs '$b' (exit $(cat "$T/$2.rc"))"
        fi
}
run dgram fast-badt -t abc 5 uid:someone@example.test
run dgram getopt-badt -tabc 5 uid:someone@example.test
same fast-badt getopt-badt '^invalid timeout "abc": ' "rule form with a bad timeout"
run dgram fast-negt -t -1 5 uid:someone@example.test
run dgram getopt-negt --timeout=-1 5 uid:someone@example.test
same fast-negt getopt-negt '^invalid timeout "-1": ' "a timeout that looks like an option"
# a bad option value is named, not "Bad arg count. Check /etc/request-key.conf" (issue #32)
run dgram bad-maxtime --max-time=abc 0 uid:someone@example.test
out=$(line bad-maxtime)
[ "$out" = 'invalid --max-time=abc: expected seconds 1..3600' ] && [ "$(cat "$T/bad-maxtime.rc")" = 2 ] &&
        pass "a bad --max-time is named: '$out'" || fail "bad --max-time: '$out'"
run dgram fast-not 0 uid:someone@example.test
out=$(line fast-not)
[[ "$out" =~ ^'invalid key serial "0": ' ]] && [ "$(cat "$T/fast-not.rc")" = 1 ] &&
        pass "\"%k %d\" without -t: '$out'" || fail "\"%k %d\" without -t: '$out'"
run dgram fast-dns dns 0
out=$(line fast-dns)
[ "$(cat "$T/fast-dns.rc")" = 1 ] && [ -n "$out" ] && pass "\"dns %k\" with a serial it refuses: '$out'" ||
        fail "\"dns %k\": '$out' (exit $(cat "$T/fast-dns.rc"))"
# five arguments that are not the rule's form: an option where the serial goes (getopt_long:
# -c, an admin command with a stray argument: usage on stderr, exit 2, nothing logged)
run dgram getopt-opt -t 600 -c uid:someone@example.test
out=$(line getopt-opt)
[ "$(cat "$T/getopt-opt.rc")" = 2 ] && [ -z "$out" ] &&
        pass "-t 600 -c DESC: an admin command's usage error, not an upcall" ||
        fail "-t 600 -c DESC: exit $(cat "$T/getopt-opt.rc"): '$out'"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
