#!/bin/bash
# nsid-idmap's nfsidmap-compatible admin commands (-l, -u, -g, -r, -c, -d) on real keyrings.
#
# The real .id_resolver keyring exists only once the nfs module is loaded, which this host
# cannot do; so a private keyring in a fresh session plays its role (--keyring=NAME), filled
# with `user` keys carrying id_resolver descriptions. Where nfsidmap itself can run here
# (-d, and -l/-c when .id_resolver does not exist), outputs and exit codes are compared
# with it.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmap/nsid-idmap")
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: the admin commands act on keyrings root owns (run as root)"; exit 77; }
command -v keyctl >/dev/null || { echo "SKIP: keyctl missing (apt install keyutils)"; exit 77; }
T=$(mktemp -d /tmp/nsid-itest-admin.XXXXXX)
trap 'rm -rf "$T"' EXIT
RN="nsidtest-ring-$$"

cat >"$T/script" <<'SCRIPT'
set -u
bin=$1 RN=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
ring=$(keyctl newring "$RN" @s)
for d in uid:alice@example.test uid:alice2@example.test uid:alic@example.test \
         gid:alice@example.test uid:alice@other.test user:4001; do
        keyctl add user "$d" x "$ring" >/dev/null
done
out=$("$bin" --keyring="$RN" -l); rc=$?
want="6 $RN keys found:"
[ "$rc" = 0 ] && [ "$(echo "$out" | head -n1)" = "$want" ] && pass "-l header: $want" || fail "-l: rc=$rc '$out'"
echo "$out" | grep -qx "  uid:alice2@example.test" && pass "-l lines are '  <description>'" || fail "-l lines: $out"
# an owner name a hostile server chose, with an escape sequence and a ';': escaped, whole
hk=$(keyctl add user "$(printf 'uid:ev\033[31m;il@example.test')" x "$ring")
out=$("$bin" --keyring="$RN" -l)
if echo "$out" | grep -qxF '  uid:ev\x1b[31m;il@example.test' && ! echo "$out" | grep -q "$(printf '\033')"; then
        pass "-l shows a hostile description escaped and whole"
else
        fail "-l hostile description: $(echo "$out" | od -c | head -5)"
fi
# --json: every key, its description whole (json-c escapes it), nsid's envelope; --no-legend
js=$("$bin" --keyring="$RN" -l --json); rc=$?
if [ "$rc" = 0 ] && echo "$js" | python3 -c '
import json, sys
d = json.load(sys.stdin)
descs = sorted(k["description"] for k in d["keys"])
assert d["nsid"]["program"] == "nsid-idmap" and d["nsid"]["schema"] == 1 and d["nsid"]["command"] == "list", d["nsid"]
assert d["keyring"] == sys.argv[1], d
assert len(descs) == 7 and "uid:ev\x1b[31m;il@example.test" in descs, descs
assert all(k["type"] == "user" and k["state"] == "valid" and k["uid"] == 0 and k["serial"] > 0 for k in d["keys"]), d
' "$RN"; then pass "-l --json: 7 keys, the hostile description whole, nsid's envelope"
else fail "-l --json: rc=$rc $js"; fi
out=$("$bin" --keyring="$RN" --no-legend -l)
[ "$(echo "$out" | wc -l)" = 7 ] && ! echo "$out" | grep -q "keys found" && pass "--no-legend -l: the 7 lines without the header" || fail "--no-legend: $out"
keyctl unlink "$hk" "$ring" >/dev/null

# -u exact name: alice@example.test only (nfsidmap's prefix match would also take alice2@...)
"$bin" --keyring="$RN" -u alice@example.test; rc=$?
out=$("$bin" --keyring="$RN" -l)
[ "$rc" = 0 ] && ! echo "$out" | grep -qx "  uid:alice@example.test" &&
        echo "$out" | grep -qx "  uid:alice2@example.test" && echo "$out" | grep -qx "  gid:alice@example.test" &&
        pass "-u alice@example.test invalidated exactly that uid key" || fail "-u exact: rc=$rc $out"

# -u alic: local part exact, never a prefix of alice/alice2
"$bin" --keyring="$RN" -u alic; rc=$?
out=$("$bin" --keyring="$RN" -l)
[ "$rc" = 0 ] && ! echo "$out" | grep -qx "  uid:alic@example.test" && echo "$out" | grep -qx "  uid:alice2@example.test" &&
        echo "$out" | grep -qx "  uid:alice@other.test" &&
        pass "-u alic invalidated uid:alic@ only (not alice*, no prefix match)" || fail "-u alic: $out"

# -r alice: uid and gid keys of alice in every domain
"$bin" -v --keyring="$RN" -r alice 2>"$T_ERR"; rc=$?
out=$("$bin" --keyring="$RN" -l)
[ "$rc" = 0 ] && ! echo "$out" | grep -q "alice@" && echo "$out" | grep -qx "  uid:alice2@example.test" &&
        echo "$out" | grep -qx "  user:4001" && pass "-r alice took uid:/gid:alice@*, kept alice2 and user:4001" || fail "-r: $out"
grep -q "invalidating 'gid:alice@example.test'" "$T_ERR" && pass "-v logs what it invalidates" || fail "-v: $(cat "$T_ERR")"
echo "$out" | head -n1 | grep -qx "2 $RN keys found:" && pass "-l counts 2 keys" || fail "-l count: $out"

err=$("$bin" --keyring="$RN" -g nosuch 2>&1); rc=$?
[ "$rc" = 1 ] && echo "$err" | grep -q "'nosuch' key was not found." && pass "-g nosuch: exit 1, \"'nosuch' key was not found.\"" || fail "-g nosuch: rc=$rc $err"

"$bin" --keyring="$RN" -c; rc=$?
out=$("$bin" --keyring="$RN" -l)
[ "$rc" = 0 ] && [ "$out" = "No $RN keys found." ] && pass "-c cleared: '$out'" || fail "-c: rc=$rc $out"
# the keyring itself stays
grep -q " keyring   $RN: empty" /proc/keys && pass "-c kept the keyring" || fail "keyring gone"
exit $fails
SCRIPT
# (set +e: its exit status is its failure count, read here; under set -e any failure there
# would end this script at once with that count as its status, 77 being a skip for ctest)
set +e
T_ERR="$T/err" keyctl session - bash "$T/script" "$bin" "$RN" 2>&1 | grep -v '^Joined' | tee "$T/session.out"
rc=${PIPESTATUS[0]}
set -e
fails=$rc skips=0
passes=$(grep -c '^ok: ' "$T/session.out" || true)
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }

# Against nfsidmap where it can run on this host (no .id_resolver keyring here).
if command -v nfsidmap >/dev/null; then
        a=$(nfsidmap -d 2>&1); ra=$?
        b=$("$bin" -d 2>&1); rb=$?
        [ "$a" = "$b" ] && [ "$ra" = "$rb" ] && pass "-d same as nfsidmap: '$b' (exit $rb)" || fail "-d: nfsidmap '$a'/$ra, nsid-idmap '$b'/$rb"
        if ! grep -q " keyring   .id_resolver" /proc/keys; then
                for opt in -l -c "-v -c"; do
                        set +e
                        a=$(nfsidmap $opt 2>&1); ra=$?
                        b=$("$bin" $opt 2>&1); rb=$?
                        set -e
                        # nfsidmap's xlog prefixes its own name; compare the message and exit code
                        a=${a#nfsidmap: }; b=${b#nsid-idmap: }
                        [ "$a" = "$b" ] && [ "$ra" = "$rb" ] && pass "$opt without .id_resolver same as nfsidmap: '$b' (exit $rb)" ||
                                fail "$opt: nfsidmap '$a'/$ra, nsid-idmap '$b'/$rb"
                done
        else
                skip "the .id_resolver keyring exists (nfs module loaded): -l and -c without it not compared with nfsidmap"
        fi
else
        skip "nfsidmap missing (apt install nfs-common): -d, -l and -c not compared with it"
fi
# The installed request-key rules: replacing nfsidmap means changing only the program path.
dest=$(mktemp -d /tmp/nsid-itest-admin-install.XXXXXX)
DESTDIR=$dest cmake --install "$build" --prefix /usr >/dev/null
ours=$(grep -v '^#' "$dest/etc/request-key.d/nsid-idmap.conf" | tr -s ' \t' ' ')
dns=$(grep -v '^#' "$dest/etc/request-key.d/nsid-dns.conf" | tr -s ' \t' ' ')
rm -rf "$dest"
[ "$ours" = "create id_resolver * * /usr/sbin/nsid-idmap -t 600 %k %d" ] && pass "installed rule: $ours" || fail "installed rule: '$ours'"
[ "$dns" = "create dns_resolver * * /usr/sbin/nsid-idmap dns %k" ] && pass "installed rule: $dns" || fail "installed dns rule: '$dns'"
if [ -f /etc/request-key.d/id_resolver.conf ]; then
        theirs=$(grep -v '^#' /etc/request-key.d/id_resolver.conf | grep . | tr -s ' \t' ' ')
        [ "${theirs/\/usr\/sbin\/nfsidmap/\/usr\/sbin\/nsid-idmap}" = "$ours" ] &&
                pass "nfs-common's line with only the program path changed is ours" ||
                fail "nfs-common: '$theirs' vs ours '$ours'"
else
        skip "no /etc/request-key.d/id_resolver.conf (apt install nfs-common): nfs-common's rule not compared with ours"
fi

# Bad usage: exit 2 (nsid's convention: 1 failure, 2 usage), what is wrong named, --help
# pointed at; nothing acted on
usage() { # args... : expect exit 2, the message on stderr, nothing on stdout
        local out err r
        set +e
        out=$("$bin" "$@" 2>"$T/usage.err"); r=$?
        set -e
        err=$(cat "$T/usage.err")
        if [ "$r" = 2 ] && [ -z "$out" ] && echo "$err" | grep -q "Try 'nsid-idmap --help'."; then
                pass "nsid-idmap $*: exit 2, '$(echo "$err" | head -n1)'"
        else
                fail "nsid-idmap $*: exit $r, stdout '$out', stderr '$err'"
        fi
}
usage -l -c
usage --bogus
usage -c --json
usage -u alice --no-legend
usage -l extra
usage
usage --json
set +e
"$bin" -d --json --idmapd-conf="$T/none.conf" >"$T/d.json" 2>"$T/d.err"; r=$?
set -e
if [ "$r" = 0 ] && python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["domain"] and d["nsid"]["command"] == "domain", d' "$T/d.json"; then
        pass "-d --json: domain $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["domain"])' "$T/d.json")"
else
        fail "-d --json: exit $r $(cat "$T/d.json" "$T/d.err")"
fi
ldd "$bin" | grep -q json-c && fail "json-c is linked (it must be loaded for --json only)" || pass "json-c not among the upcall's libraries"
echo "$passes passed, $fails failed, $skips skipped"
[ "$fails" = 0 ] || exit 1
[ "$passes" -gt 0 ] || [ "$skips" = 0 ] || exit 77 # every case skipped
[ "$passes" -gt 0 ]
