#!/bin/bash
# Registry faults through the real nsid-uniquifier on real network namespaces:
#  - 1,000 `set` runs, two at a time, each killed with SIGKILL at a random point (0-40 ms:
#    start-up, derivation, SQLite transaction, worker, commit): after every 50 kills and at the
#    end the database passes PRAGMA integrity_check and opens; every record in it is
#    well-formed with the identity its key derives (nsidctl doctor); no identifier is set in
#    two live namespaces; every netns can be set afterwards, and then the registry's binding
#    of each is the identifier its (fake) kernel file holds. (One identity bound to two
#    namespaces in the registry is not looked for: UNIQUE (app, identity) refuses it.)
#  - a read-only state directory and a full one (tmpfs, in a private mount namespace): a clear
#    error on stderr, the identity still derived and set (exit 0), the same identity as with a
#    working registry.
#
# FAKE (as in itest-uniquifier.sh): no nfs module here; identifiers go to
# NSID_TEST_SYSFS_NFS_CLIENT_DIR/<netns inode>, written by the real worker in the netns.
#
# usage: itest-hostile-registry.sh BUILD_DIR
set -u
B=${1:?usage: $0 BUILD_DIR}
U=$(realpath "$B/uniquifier/nsid-uniquifier")
C=$(realpath "$B/nsidctl/nsidctl")
for x in "$U" "$C"; do [ -x "$x" ] || { echo "Bail out! $x not built"; exit 1; }; done
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: network namespaces (run as root)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 CLI missing (apt install sqlite3)"; exit 77; }
KILLS=${NSID_REGISTRY_KILLS:-1000}

T=$(mktemp -d /tmp/itest-hostile-reg.XXXXXX)
cleanup() {
    [ -f "$T/holders" ] && while read -r p; do kill -9 "$p" 2>/dev/null; done <"$T/holders"
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
export NSID_STATE_DIR=$T/state NSID_TEST_SYSFS_NFS_CLIENT_DIR=$T/fake NSID_MACHINE_ID_FILE=$T/machine-id
mkdir -p "$T/fake"
echo 00112233445566778899aabbccddeeff >"$T/machine-id"
DB=$NSID_STATE_DIR/registry.db
q() { sqlite3 -batch -noheader "$DB" "$@"; }

n=0 failures=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

hold() {
    unshare -n sleep 100000 </dev/null >/dev/null 2>&1 &
    local p=$! me i
    echo "$p" >>"$T/holders"
    me=$(stat -L -c %i /proc/self/ns/net)
    for _ in $(seq 200); do
        i=$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null) && [ "$i" != "$me" ] && break
        sleep 0.01
    done
    echo "$p"
}
fake_of() { cat "$T/fake/$(stat -L -c %i "/proc/$1/ns/net")" 2>/dev/null; }

# --- 1,000 kills ------------------------------------------------------------------------
# 40 live namespaces; every run uses a FRESH one (its slot's holder is replaced first), so
# every run is a registry write transaction (a new binding), and the keys come from a pool of
# 20, so live namespaces keep contending for the same keys (the registry must hand a key's
# identity to one live netns only; the others fall back to a random key).
NH=40
hs=()
for i in $(seq 1 $NH); do hs+=("$(hold)"); done
killed=0 finished=0 bad_integrity=0
start=$(date +%s)
one() { # RUN-INDEX HOLDER
    "$U" -q set --pid "$2" --container-id "pool-$((RANDOM % 20))" >/dev/null 2>&1 &
    local sp=$!
    sleep "$(printf '0.%03d' $((RANDOM % 40)))"
    kill -9 "$sp" 2>/dev/null
    wait "$sp" 2>/dev/null
    echo $? >"$T/rc.$1"
}
i=0
while [ "$i" -lt "$KILLS" ]; do
    for j in "$i" $((i + 1)); do
        s=$((j % NH)); old=${hs[$s]}
        rm -f "$T/fake/$(stat -L -c %i "/proc/$old/ns/net" 2>/dev/null)"  # its netns dies
        kill -9 "$old" 2>/dev/null
        hs[$s]=$(hold)
    done
    one "$i" "${hs[$((i % NH))]}" & a=$!
    one $((i + 1)) "${hs[$(((i + 1) % NH))]}" & b=$!
    wait "$a" "$b"
    for j in "$i" $((i + 1)); do
        if [ "$(cat "$T/rc.$j")" = 0 ]; then finished=$((finished + 1)); else killed=$((killed + 1)); fi
        rm -f "$T/rc.$j"
    done
    i=$((i + 2))
    if [ $((i % 50)) = 0 ] && [ -e "$DB" ]; then
        [ "$(q 'PRAGMA integrity_check')" = ok ] || bad_integrity=$((bad_integrity + 1))
    fi
done
el=$(($(date +%s) - start))
check "integrity_check ok at every 50th of $KILLS runs ($killed killed, $finished finished; ${el}s)" [ "$bad_integrity" = 0 ]
check "the database opens and passes integrity_check at the end" [ "$(q 'PRAGMA integrity_check')" = ok ]
# what a killed run could leave: a record that is not what nsid writes, or not derived
probs=$("$C" --json doctor 2>/dev/null | registry_problems)
check "every record is well-formed, its identity derived from its key (nsidctl doctor: ${probs:-ok})" [ -z "$probs" ]
# live namespaces: no identifier twice in the (fake) kernel files
fdups=$(for k in $(seq 0 $((NH - 1))); do fake_of "${hs[$k]}"; echo; done | grep . | sort | uniq -d)
check "no identifier set in two live namespaces" [ -z "$fdups" ]
bad=0 regbad=0
for k in $(seq 0 $((NH - 1))); do
    out=$("$U" -q set --pid "${hs[$k]}" --container-id "final-$k" 2>"$T/err")
    rc=$?
    # (3 = refused: a killed run had already set another identifier, which is kept)
    if [ "$rc" = 0 ]; then
        [ "$(fake_of "${hs[$k]}")" = "${out%% *}" ] || { bad=$((bad + 1)); echo "# netns $k: set says '$out', file '$(fake_of "${hs[$k]}")'"; }
        reg=$(q "SELECT identity FROM bindings WHERE app = 'nfs4' AND netns_ino = $(stat -L -c %i "/proc/${hs[$k]}/ns/net")")
        [ "$reg" = "$(fake_of "${hs[$k]}")" ] || { regbad=$((regbad + 1)); echo "# netns $k: registry '$reg', file '$(fake_of "${hs[$k]}")'"; }
    elif [ "$rc" != 3 ]; then
        bad=$((bad + 1)); echo "# netns $k: rc=$rc '$out' $(cat "$T/err")"
    fi
done
check "afterwards every live netns can be set (or keeps the identifier it has)" [ "$bad" = 0 ]
check "... and the registry binds each one set to the identifier its kernel file holds" [ "$regbad" = 0 ]
fdups=$(for k in $(seq 0 $((NH - 1))); do fake_of "${hs[$k]}"; echo; done | grep . | sort | uniq -d)
check "... and no identifier is set in two live namespaces" [ -z "$fdups" ]

# --- read-only and full state directories -------------------------------------------------
h=$(hold)
ro() { # MOUNT-OPTIONS PREPARE: set in a private mount namespace with a tmpfs state dir
    unshare -m --propagation private sh -c '
        mkdir -p "$1" && mount -t tmpfs -o "$2" nsid-state "$1" || exit 97
        eval "$3"
        exec "$4" set --pid "$5" --container-id ro-test' _ "$T/rostate" "$1" "$2" "$U" "$h"
}
mkdir -p "$T/rostate"
export NSID_STATE_DIR=$T/rostate
echo 0123456789abcdef0123456789abcdef >"$T/machine-id"  # the host secret is the machine-id
want=$(NSID_STATE_DIR=$T/ok-state "$U" -q set --dry-run --pid "$h" --container-id ro-test 2>/dev/null | cut -d' ' -f1)
out=$(ro ro,size=1m : 2>"$T/err"); rc=$?
if [ "$rc" = 0 ] && [ "${out%% *}" = "$want" ] && [ "$(fake_of "$h")" = "$want" ] &&
    grep -q "registry .* unusable (Read-only file system); continuing without it, nothing is recorded" "$T/err"; then
    ok "read-only state dir: clear error, identity still derived and set ($want)"
else
    not_ok "read-only state dir: rc=$rc out='$out' want=$want file=$(fake_of "$h") err=$(cat "$T/err")"
fi
# what --json says was recorded is what was (issue #32): nothing with the registry
# unusable, nothing under --dry-run
jro=$(unshare -m --propagation private sh -c '
        mkdir -p "$1" && mount -t tmpfs -o ro,size=1m nsid-state "$1" || exit 97
        exec "$2" --json set --pid "$3" --container-id ro-test' _ "$T/rostate" "$U" "$h" 2>/dev/null)
check "read-only state dir: --json says \"recorded\": false" grep -q '"recorded":false' <<<"$jro"
jdry=$(NSID_STATE_DIR=$T/ok-state "$U" --json set --dry-run --pid "$h" --container-id dry-test 2>/dev/null)
check "--dry-run: --json says \"recorded\": false" grep -q '"recorded":false' <<<"$jdry"
h2=$(hold)
want2=$(NSID_STATE_DIR=$T/ok-state "$U" -q set --dry-run --pid "$h2" --container-id full-test 2>/dev/null | cut -d' ' -f1)
# a 64 KiB tmpfs filled up before the run
full() {
    unshare -m --propagation private sh -c '
        mkdir -p "$1" && mount -t tmpfs -o size=64k nsid-state "$1" || exit 97
        dd if=/dev/zero of="$1/fill" bs=4k count=64 2>/dev/null
        exec "$2" set --pid "$3" --container-id full-test' _ "$T/rostate" "$U" "$h2"
}
out=$(full 2>"$T/err"); rc=$?
if [ "$rc" = 0 ] && [ "${out%% *}" = "$want2" ] && [ "$(fake_of "$h2")" = "$want2" ] &&
    grep -qi "registry .*\(full\|No space\)" "$T/err"; then
    ok "full state dir: clear error ($(grep -i registry "$T/err" | head -n 1)), identity still derived and set"
else
    not_ok "full state dir: rc=$rc out='$out' want=$want2 file=$(fake_of "$h2") err=$(cat "$T/err")"
fi

echo "1..$n"
[ "$failures" = 0 ]
