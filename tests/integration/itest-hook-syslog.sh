#!/bin/bash
# What nsid-uniquifier's hooks write to syslog, read by a real listener on /dev/log.
#
# A hook's stderr is the engine's to show or drop (Podman reports only the hook's exit
# status), so oci-hook and lxc-hook send every line to syslog too (facility daemon, tag
# nsid-uniquifier), and the outcome a hook's stdout would have shown at LOG_INFO. The
# listener owns /dev/log in a private mount namespace with its own /dev, so the host's
# logging is not touched. Every datagram is one line of $T/log.
#
# FAKE (as in itest-uniquifier.sh): no nfs module here; identifiers go to
# NSID_TEST_SYSFS_NFS_CLIENT_DIR/<netns inode>, written by the real worker in the netns.
#
# usage: itest-hook-syslog.sh BUILD_DIR
set -u
B=${1:?usage: $0 BUILD_DIR}
U=$(realpath "$B/uniquifier/nsid-uniquifier")
[ -x "$U" ] || { echo "Bail out! $U not built"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: a private /dev and network namespaces (run as root)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

T=$(mktemp -d /tmp/itest-hook-syslog.XXXXXX)
HOLDERS=()
cleanup() {
    exec 2>/dev/null  # (bash reports each killed holder)
    for p in "${HOLDERS[@]}"; do kill -9 "$p"; done
    wait
    [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
export NSID_STATE_DIR=$T/state NSID_TEST_SYSFS_NFS_CLIENT_DIR=$T/fake NSID_MACHINE_ID_FILE=$T/machine-id
mkdir -p "$T/fake"
echo 00112233445566778899aabbccddeeff >"$T/machine-id"

n=0 failures=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

cat >"$T/listen.py" <<'PY'
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
s.settimeout(1.0)
open(out + ".ready", "w").close()
with open(out, "wb") as f:
    while not os.path.exists(out + ".stop"):
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        f.write(d + b"\n")
        f.flush()
PY

# logged TAG CMD...: CMD run in a private mount namespace whose /dev/log is the listener's;
# its datagrams go to $T/TAG.log, its exit status to $T/TAG.rc, stdout to $T/TAG.out (stdin
# is this function's). Once CMD has exited a marker datagram follows its own on /dev/log, and
# the listener stops only when it has read it (or after 10 s): a datagram socket keeps their
# order, so a log that ends with the marker holds everything CMD sent (see marked).
MARK="<31>nsid-itest-marker: the datagrams of the command end here"
logged() {
    local tag=$1
    shift
    unshare -m --propagation private bash -c '
        dir=$1 tag=$2 mark=$3; shift 3
        mount -t tmpfs -o mode=0755 nsid-test-dev /dev || exit 97
        mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 &&
            mknod -m 666 /dev/urandom c 1 9 || exit 97
        python3 "$dir/listen.py" /dev/log "$dir/$tag.log" </dev/null & lp=$!
        for _ in $(seq 100); do [ -e "$dir/$tag.log.ready" ] && break; sleep 0.05; done
        rc=0
        "$@" >"$dir/$tag.out" 2>"$dir/$tag.err" || rc=$?
        echo "$rc" >"$dir/$tag.rc"
        python3 -c "import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(sys.argv[2].encode(), sys.argv[1])" \
            /dev/log "$mark" </dev/null
        for _ in $(seq 200); do grep -qxF -- "$mark" "$dir/$tag.log" 2>/dev/null && break; sleep 0.05; done
        touch "$dir/$tag.log.stop"
        wait "$lp"' _ "$T" "$tag" "$MARK" "$@"
}
# marked TAG: the listener of TAG read the marker, as its last line: what CMD sent is there
marked() { [ "$(tail -n 1 "$T/$1.log" 2>/dev/null)" = "$MARK" ]; }
hold() {
    unshare -n sleep 100000 </dev/null >/dev/null 2>&1 &
    local p=$! me i
    HOLDERS+=("$p")
    me=$(stat -L -c %i /proc/self/ns/net)
    for _ in $(seq 200); do
        i=$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null) && [ "$i" != "$me" ] && break
        sleep 0.01
    done
}
state() { printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%s,"bundle":"/run/containers/%s/userdata","annotations":{}}' "$1" "$2" "$1"; }
has() { grep -qF -- "$2" "$T/$1.log"; } # TAG TEXT
line() { grep -F -- "$2" "$T/$1.log" | head -n 1; } # TAG TEXT

# --- the outcome of a hook that sets -------------------------------------------------------
hold; h=${HOLDERS[-1]}
ino=$(stat -L -c %i "/proc/$h/ns/net")
state syslog-ctr-1 "$h" | logged set "$U" oci-hook
id=$(cut -d' ' -f1 "$T/set.out")
check "oci-hook sets (exit $(cat "$T/set.rc"), $id)" \
    [ "$(cat "$T/set.rc")" = 0 -a "$(cat "$T/fake/$ino" 2>/dev/null)" = "$id" ]
l=$(line set "container syslog-ctr-1:")
check "its outcome is logged at daemon.info under its tag and pid ($l)" \
    grep -qE "^<30>.*nsid-uniquifier\[[0-9]+\]: container syslog-ctr-1: netns $ino \(pid $h\): $id container-id set$" <<<"$l"

# --- errors --------------------------------------------------------------------------------
printf '{"id":"x"' | logged bad "$U" oci-hook
check "invalid OCI state: exit 1" [ "$(cat "$T/bad.rc")" = 1 ]
check "... logged at daemon.err with the reason stderr gives ($(line bad 'oci-hook:'))" \
    sh -c "grep -q '^<27>.*nsid-uniquifier\[[0-9]*\]: oci-hook: invalid OCI state on stdin: ' '$T/bad.log' &&
           grep -q 'invalid OCI state on stdin' '$T/bad.err'"
LXC_NAME=c1 LXC_PID=notapid logged lxc "$U" lxc-hook
check "lxc-hook with a bad LXC_PID: exit 1, logged at daemon.err ($(line lxc 'lxc-hook:'))" \
    sh -c "[ \"\$(cat '$T/lxc.rc')\" = 1 ] &&
           grep -q '^<27>.*nsid-uniquifier\[[0-9]*\]: lxc-hook: container c1: LXC_PID missing or invalid' '$T/lxc.log'"

# --- one message, one line -----------------------------------------------------------------
# The registry's path is the administrator's (NSID_REGISTRY), the easiest text with a newline
# and a backslash to put into a message here; names from a container go the same way.
hold; h2=${HOLDERS[-1]}
state syslog-ctr-2 "$h2" |
    NSID_REGISTRY="$T/machine-id/under a file
FAKE: forged\\line.db" logged esc "$U" oci-hook
l=$(line esc ' unusable (')
check "a newline and a backslash in a message are sent as \\x0a and \\x5c ($l)" \
    grep -qF 'under a file\x0aFAKE: forged\x5cline.db unusable' <<<"$l"
check "... one datagram, one line: no line starts with the forged text (all of them read: $(marked esc && echo marker last || echo NO MARKER))" \
    eval "marked esc && ! grep -q '^FAKE' '$T/esc.log'"
check "... and the hook still set the identity (exit $(cat "$T/esc.rc"))" [ "$(cat "$T/esc.rc")" = 0 ]

# --- not a hook: nothing to syslog ---------------------------------------------------------
hold; h3=${HOLDERS[-1]}
# (with a warning to say, the unusable registry: it goes to stderr, and to syslog in a hook)
NSID_REGISTRY="$T/machine-id/cli.db" logged cli "$U" set --pid "$h3" --container-id syslog-cli
check "set from a shell (exit $(cat "$T/cli.rc")) warns on stderr ($(grep -m1 unusable "$T/cli.err"))" \
    eval '[ "$(cat "$T/cli.rc")" = 0 ] && grep -q "registry $T/machine-id/cli.db unusable" "$T/cli.err"'
check "... and writes nothing to syslog: the listener read the marker alone ($(wc -l <"$T/cli.log") line(s))" \
    [ "$(cat "$T/cli.log")" = "$MARK" ]

echo "1..$n"
[ "$failures" = 0 ]
