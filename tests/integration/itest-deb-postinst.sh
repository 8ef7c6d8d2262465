#!/bin/bash
# debian/nsid.postinst's host secret (issue #29, item 10), run as dpkg runs it, in a mount
# namespace of its own with the build's nsidctl as /usr/sbin/nsidctl and the state
# directory in a temporary place (NSID_STATE_DIR); /usr/sbin there is a tmpfs holding only
# that nsidctl:
#  - a fresh install (configure, no previous version) generates the host secret: nsidctl then
#    says "generated", the file is 0600 root's, the step is logged with its reason, and a
#    container key's identity is no longer the one derived from the world-readable machine-id;
#  - an upgrade (configure 0.1.0) generates nothing: the machine-id's identities stay;
#  - a reinstall over a kept generated secret keeps it (the identities do not change).
set -u
B=${1:?usage: $0 BUILD_DIR}
C=$(realpath "$B/nsidctl/nsidctl")
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: mount namespaces (run as root)"; exit 77; }
[ -x "$C" ] || { echo "Bail out! $C not built"; exit 1; }
T=$(mktemp -d /tmp/nsid-itest-postinst.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0 failures=0
check() { local d=$1; shift; n=$((n + 1)); if "$@"; then echo "ok $n - $d"; else failures=$((failures + 1)); echo "not ok $n - $d"; fi; }
echo 5a1fc0de5a1fc0de5a1fc0de5a1fc0de > "$T/machine-id"
export NSID_MACHINE_ID_FILE=$T/machine-id
postinst() { # state-dir args...: /usr/sbin in the namespace holds only the build's nsidctl
        local st=$1; shift
        NSID_STATE_DIR=$st unshare -m sh -c 'mount -t tmpfs tmpfs /usr/sbin && cp "$0" /usr/sbin/nsidctl && exec sh "$@"' \
                "$C" "$src/debian/nsid.postinst" "$@"
}
src_of() { NSID_STATE_DIR=$1 "$C" --json host-secret | python3 -c 'import json,sys; print(json.load(sys.stdin)["source"])'; }
ident() { NSID_STATE_DIR=$1 "$C" --json identity --key web | python3 -c 'import json,sys; print(json.load(sys.stdin)["identity"])'; }

mid=$(ident "$T/none")
postinst "$T/fresh" configure ""; rc=$?
check "fresh install: postinst exits 0" [ "$rc" = 0 ]
check "fresh install: the host secret is generated" [ "$(src_of "$T/fresh")" = generated ]
check "fresh install: host-secret is 0600 root's" [ "$(stat -c '%a %u' "$T/fresh/host-secret" 2>/dev/null)" = "600 0" ]
check "fresh install: the step is logged with its reason" grep -q 'reason: generated when the nsid package was installed' "$T/fresh/host-secret.log"
g=$(ident "$T/fresh")
check "fresh install: identities no longer come from the machine-id" [ -n "$g" -a "$g" != "$mid" ]

postinst "$T/upgraded" configure 0.1.0; rc=$?
check "upgrade: postinst exits 0, generates nothing, the machine-id's identities stay" \
        [ "$rc" = 0 -a "$(src_of "$T/upgraded")" = machine-id -a "$(ident "$T/upgraded")" = "$mid" ]

postinst "$T/fresh" configure ""; rc=$?
check "reinstall over a kept generated secret: kept, identities unchanged" \
        [ "$rc" = 0 -a "$(ident "$T/fresh")" = "$g" ]

echo "1..$n"
[ "$failures" = 0 ]
