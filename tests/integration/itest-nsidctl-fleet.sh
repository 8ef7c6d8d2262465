#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nsidctl for fleets (issue #22), the programs as a user runs them:
#  - host-secret show/new/accept: the explicit, logged step, its refusal without --yes, the
#    identities before and after (nsidctl identity), two "clones" with one machine-id;
#  - doctor's host-secret warnings and their fixes (full doctor: root, namespaces);
#  - doctor --server over a directory in the layout of /proc/fs/nfsd/clients: the findings,
#    exit codes, --json fields, a hostile owner string that never reaches the terminal raw,
#    a symlinked entry not followed, a missing directory.
# The knfsd side on a real server is the lab's (vm-fleet-clones, vm-collision-baseline).
set -u
B=${1:?usage: $0 BUILD_DIR}
C=$B/nsidctl/nsidctl
[ -x "$C" ] || { echo "Bail out! $C not built"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

T=$(mktemp -d /tmp/itest-nsidctl-fleet.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap "exit 1" INT TERM
n=0 failures=0 skipped=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); skipped=$((skipped + 1)); echo "ok $n - # SKIP $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
py() { "$PY" -c "import json,sys; j=json.load(open('$T/out')); sys.exit(0 if ($1) else 1)"; }

echo 5a1fc0de5a1fc0de5a1fc0de5a1fc0de > "$T/image-machine-id"
echo 4c4c4544-0042-3510-8051-b2c04f4e3241 > "$T/uuid-a"
echo 4c4c4544-0042-3510-8051-b2c04f4e3242 > "$T/uuid-b"
host() { # host A|B CMD...: as clone A or B of one image
    local h=$1; shift
    NSID_STATE_DIR=$T/state-$h NSID_MACHINE_ID_FILE=$T/image-machine-id \
        NSID_PLATFORM_ID_FILE=$T/uuid-$(echo "$h" | tr AB ab) "$@"
}
ident() { host "$1" "$C" --json identity --key web | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["identity"])'; }

# ---- host-secret ---------------------------------------------------------------------------
a1=$(ident A); b1=$(ident B)
check "two clones with one machine-id: one identity for key web" [ -n "$a1" -a "$a1" = "$b1" ]
host A "$C" --json host-secret >"$T/out"
check "host-secret: the source is the machine-id" py "j['source'] == 'machine-id'"
host A "$C" host-secret new >"$T/o" 2>"$T/e"; r=$?
check "host-secret new without --yes: exit 2, says what it would change, does nothing" \
    bash -c "[ $r = 2 ] && grep -q 'identity of every container' '$T/e' && [ ! -e '$T/state-A/host-secret' ]"
host A "$C" host-secret frob >/dev/null 2>"$T/e"; r=$?
check "host-secret with an unknown action: exit 2" bash -c "[ $r = 2 ] && grep -q 'unknown action' '$T/e'"
check "host-secret new --yes on clone A" host A "$C" host-secret new --yes --reason "itest clone A"
check "host-secret new --yes on clone B" host B "$C" host-secret new --yes
a2=$(ident A); b2=$(ident B)
check "after the step: the clones give key web two identities, neither the old one" \
    [ -n "$a2" -a -n "$b2" -a "$a2" != "$b2" -a "$a2" != "$a1" -a "$b2" != "$a1" ]
check "the identity is stable across runs" [ "$(ident A)" = "$a2" ]
# rotations against a concurrent reader (issue #29 item 5): a read half-way through a
# rotation gave the machine-id's identity (the secret clones share) or ENOKEY
echo 4c4c4544-0042-3510-8051-b2c04f4e3249 > "$T/uuid-r"
host R "$C" host-secret new --yes >/dev/null 2>&1
( for _ in $(seq 300); do host R "$C" host-secret new --yes >/dev/null 2>&1; done; touch "$T/rot.done" ) &
rot=$!
reads=0 bad=0
while [ ! -e "$T/rot.done" ]; do
    v=$(ident R 2>"$T/rerr") || v=ERR
    reads=$((reads + 1))
    if [ -z "$v" ] || [ "$v" = ERR ] || [ "$v" = "$a1" ]; then bad=$((bad + 1)); echo "# bad read: '$v' $(head -c 200 "$T/rerr")"; fi
done
wait $rot
check "300 rotations against a concurrent reader: $reads reads, none an error or the machine-id's identity ($bad bad)" \
    [ "$bad" = 0 -a "$reads" -gt 10 ]
check "the step is logged with its reason" grep -q 'new replaced machine-id secret.*reason: itest clone A' "$T/state-A/host-secret.log"
check "the machine-id is in no file of the state dir" bash -c "! grep -rq 5a1fc0de '$T/state-A'"
host A "$C" --json host-secret >"$T/out"
check "host-secret: generated, made on this platform" \
    py "j['source'] == 'generated' and j['platform_id_recorded'] and not j['platform_id_changed'] and not j['machine_id_changed']"
# clone A's state copied onto a third machine (another product UUID)
cp -a "$T/state-A" "$T/state-C"
NSID_STATE_DIR=$T/state-C NSID_MACHINE_ID_FILE=$T/image-machine-id NSID_PLATFORM_ID_FILE=$T/uuid-b \
    "$C" --json host-secret >"$T/out"
check "a copy of the state on another platform: the product UUID changed" py "j['platform_id_changed']"
check "accept: the same host moved keeps its secret" \
    env NSID_STATE_DIR=$T/state-C NSID_MACHINE_ID_FILE=$T/image-machine-id NSID_PLATFORM_ID_FILE=$T/uuid-b "$C" host-secret accept
NSID_STATE_DIR=$T/state-C NSID_MACHINE_ID_FILE=$T/image-machine-id NSID_PLATFORM_ID_FILE=$T/uuid-b \
    "$C" --json identity --key web >"$T/out"
check "... and its identities" py "j['identity'] == '$a2'"

# ---- doctor: can this host be told apart? (the full doctor surveys namespaces: root) --------
if [ "$(id -u)" = 0 ]; then
    dfind() { "$PY" -c "import json,sys; j=json.load(open('$T/out')); f=[f for f in j['findings'] if f['check'] == 'host-secret']; sys.exit(0 if f and ($1) else 1)"; }
    NSID_STATE_DIR=$T/state-M NSID_MACHINE_ID_FILE=$T/image-machine-id NSID_PLATFORM_ID_FILE=$T/uuid-a \
        "$C" --json doctor --window=0 --nfsd-clients="$T/none" >"$T/out"
    check "doctor: the machine-id as secret is a warning, with the explicit step as fix" \
        dfind "f[0]['severity'] == 'warning' and 'machine-id' in f[0]['message'] and 'host-secret new' in f[0]['fix']"
    NSID_STATE_DIR=$T/state-C NSID_MACHINE_ID_FILE=$T/image-machine-id NSID_PLATFORM_ID_FILE=$T/uuid-a \
        "$C" --json doctor --window=0 --nfsd-clients="$T/none" >"$T/out"
    check "doctor: a generated secret made on another platform: warning, both fixes" \
        dfind "f[0]['severity'] == 'warning' and 'product UUID' in f[0]['message'] and 'accept' in f[0]['fix'] and 'new' in f[0]['fix']"
    NSID_STATE_DIR=$T/state-N NSID_MACHINE_ID_FILE=$T/image-machine-id NSID_PLATFORM_ID_FILE=$T/none \
        "$C" host-secret new --yes >/dev/null
    NSID_STATE_DIR=$T/state-N NSID_MACHINE_ID_FILE=$T/image-machine-id NSID_PLATFORM_ID_FILE=$T/none \
        "$C" --json doctor --window=0 --nfsd-clients="$T/none" >"$T/out"
    check "doctor: no product UUID: a warning that a clone keeping the machine-id goes unnoticed" \
        dfind "f[0]['severity'] == 'warning' and 'no product UUID' in f[0]['message']"
    # (the ok case is the platform check of host-secret above: each full doctor surveys every
    # namespace of the host, 14 s at load 13 here)
else
    skip "doctor's host-secret findings: not root (the full doctor surveys namespaces)"
fi

# ---- doctor --server over a directory in the server's layout --------------------------------
D=$T/clients
info() { # info N ADDR STATUS NAME MINOR
    mkdir -p "$D/$1"
    printf 'clientid: 0x6d7e2b6a%08x\naddress: "%s:%d"\nstatus: %s\nseconds from last renew: 1\nname: "%s"\nminor version: %s\nImplementation domain: "kernel.org"\ncallback state: UP\n' \
        "$1" "$2" "$((700 + $1))" "$3" "$4" "$5" >"$D/$1/info"
}
info 1 192.0.2.11 confirmed "Linux NFSv4.2 0123456789abcdef0123456789abcdef/web" 2
info 2 192.0.2.12 confirmed "Linux NFSv4.2 fedcba9876543210fedcba9876543210/web" 2
"$C" --json doctor --server --window=0 --nfsd-clients="$D" >"$T/out"; r=$?
check "doctor --server: distinct uniquifiers: exit 0, ok finding" \
    bash -c "[ $r = 0 ] && $(declare -f py); T=$T PY=$PY; py \"[f['severity'] for f in j['findings']] == ['ok'] and 'none collides' in j['findings'][0]['message']\""
# a clone of 1 (same owner string, another address), a container without uniquifier, v4.0
info 3 192.0.2.13 confirmed "Linux NFSv4.2 0123456789abcdef0123456789abcdef/web" 2
info 4 192.0.2.14 confirmed "Linux NFSv4.2 web" 2
info 5 192.0.2.15 confirmed "Linux NFSv4.0 web/192.0.2.1" 0
info 6 192.0.2.16 unconfirmed "Linux NFSv4.0 web/192.0.2.1" 0
# a hostile owner string: an escape sequence and a newline, as the kernel escapes them
info 7 192.0.2.17 confirmed 'Linux NFSv4.2 \x1b]0;owned\x07\x0aerror fake' 2
# symbolic links to client records outside the directory, each one a collision if followed:
# entry 8 a link to a directory whose info names 2's owner string from another address,
# entry 9 a directory whose info is a link to a file naming a string without uniquifier
O=$T/elsewhere
mkdir -p "$O/8" "$O/9" "$D/9"
printf 'clientid: 0x6d7e2b6a00000042\naddress: "192.0.2.66:766"\nstatus: confirmed\nseconds from last renew: 1\nname: "Linux NFSv4.2 fedcba9876543210fedcba9876543210/web"\nminor version: 2\nImplementation domain: "kernel.org"\ncallback state: UP\n' >"$O/8/info"
printf 'clientid: 0x6d7e2b6a00000043\naddress: "192.0.2.77:777"\nstatus: confirmed\nseconds from last renew: 1\nname: "Linux NFSv4.2 planted-by-symlink"\nminor version: 2\nImplementation domain: "kernel.org"\ncallback state: UP\n' >"$O/9/info"
ln -s "$O/8" "$D/8"
ln -s "$O/9/info" "$D/9/info"
"$C" --json doctor --server --window=0 --nfsd-clients="$D" >"$T/out"; r=$?
check "doctor --server with collisions: exit 4" [ $r = 4 ]
check "the clone: owner string confirmed from .11 and .13, addresses in --json" \
    py "any(f['check'] == 'nfsd-owner-multiple-addresses' and f['owner'] == 'Linux NFSv4.2 0123456789abcdef0123456789abcdef/web' and f['addresses'] == ['192.0.2.11', '192.0.2.13'] and 'host-secret new' in f['fix'] and f['severity'] == 'error' for f in j['findings'])"
check "no uniquifier: error naming the string and the address" \
    py "any(f['check'] == 'nfsd-owner-no-uniquifier' and f['owner'] == 'Linux NFSv4.2 web' and f['addresses'] == ['192.0.2.14'] and 'nsid' in f['fix'] for f in j['findings'])"
check "NFSv4.0: one string from two addresses: error" \
    py "any(f['check'] == 'nfsd-v40-owner-collision' and f['addresses'] == ['192.0.2.15', '192.0.2.16'] for f in j['findings'])"
check "one owner string from several addresses, the clone's: none planted through a symlink" \
    py "sum(1 for f in j['findings'] if f['check'] == 'nfsd-owner-multiple-addresses') == 1"
check "the symlinked client directory was not followed: nothing from its record (.66, 2's string)" \
    py "not any('192.0.2.66' in f.get('addresses', []) or '192.0.2.66' in f['message'] or 'fedcba9876543210fedcba9876543210' in f['message'] for f in j['findings'])"
check "the symlinked info file was not followed: nothing from its record (.77, its string)" \
    py "not any('192.0.2.77' in f.get('addresses', []) or '192.0.2.77' in f['message'] or 'planted-by-symlink' in f['message'] for f in j['findings'])"
check "the symlinked info file is the one record not read, the symlinked directory no record" \
    py "[f['message'] for f in j['findings'] if f['severity'] == 'info' and f['check'] == 'nfsd-clients'] == ['1 of 8 client records in $D could not be read (gone while read, or not in the format of client_info_show())']"
"$C" doctor --server --window=0 --nfsd-clients="$D" --color=always >"$T/text"
check "text output: the hostile owner string escaped, no raw ESC, BEL or extra line from it" \
    bash -c "grep -qF 'Linux NFSv4.2 \\x1b]0;owned\\x07\\x0aerror fake' '$T/text' && ! grep -q \$'\\x07' '$T/text' && ! grep -q '^error fake' '$T/text'"
check "text output: nothing from the symlinked records" bash -c "! grep -qE '192\\.0\\.2\\.(66|77)|planted-by-symlink' '$T/text'"
"$C" doctor --server --window=0 --nfsd-clients="$T/nonexistent" >"$T/text"; r=$?
check "doctor --server where there is no client list: exit 4, says where to run it" \
    bash -c "[ $r = 4 ] && grep -q 'run doctor on the NFS server' '$T/text'"
"$C" doctor --server --window=x >/dev/null 2>&1; r=$?
check "doctor --window=x: usage error" [ $r = 2 ]
"$C" status --window=1 >/dev/null 2>&1; r=$?
check "--window belongs to doctor" [ $r = 2 ]
# sampling over a window: one reading per 250 ms
start=${EPOCHREALTIME/./}
"$C" --json doctor --server --window=1 --nfsd-clients="$D" >"$T/out"
el=$(( (${EPOCHREALTIME/./} - start) / 1000 ))
check "doctor --server --window=1 watches about a second ($el ms)" [ "$el" -ge 1000 ]

# host-secret new --if-shared (issue #32): configuration management runs it on every host,
# every time. Clone K (machine-id secret): a new one, once; again: nothing; clone L whose
# generated secret's platform changed (a clone or a move): nothing, a warning naming both
# fixes, exit 3.
echo 4c4c4544-0042-3510-8051-b2c04f4e3250 > "$T/uuid-K"
host K "$C" --json host-secret new --if-shared >"$T/out"; r=$?
check "--if-shared on a machine-id secret: a new secret (exit 0, changed)" \
    eval "[ $r = 0 ] && py \"j['changed'] and j['replaced'] == 'machine-id'\""
k1=$(ident K)
host K "$C" --json host-secret new --if-shared >"$T/out"; r=$?
check "--if-shared again: nothing done (exit 0, not changed), the same identity" \
    eval "[ $r = 0 ] && py \"not j['changed']\" && [ '$(ident K)' = '$k1' ]"
host K "$C" -q host-secret new --if-shared >"$T/o" 2>&1; r=$?
check "--if-shared -q when nothing is to do: exit 0, no output" bash -c "[ $r = 0 ] && [ ! -s '$T/o' ]"
cp -a "$T/state-K" "$T/state-L"
echo 4c4c4544-0042-3510-8051-b2c04f4e3251 > "$T/uuid-L"
host L "$C" host-secret new --if-shared >"$T/o" 2>"$T/e"; r=$?
check "--if-shared on a secret made on another platform: exit 3, nothing done, both fixes named" \
    bash -c "[ $r = 3 ] && grep -q 'host-secret new --yes' '$T/e' && grep -q 'host-secret accept' '$T/e' &&
             cmp -s '$T/state-K/host-secret' '$T/state-L/host-secret'"

# a state directory on a file system without O_TMPFILE (overlayfs before Linux 6.6: the 6.1
# lab's /var/lib, where the package's postinst could not generate the secret): mocked with a
# seccomp filter (no-tmpfile), the secret is written through a named temporary file
NT=$B/tests/integration/no-tmpfile
if [ -x "$NT" ]; then
        mkdir -m 700 "$T/state-nt"
        NSID_STATE_DIR=$T/state-nt NSID_MACHINE_ID_FILE=$T/image-machine-id "$NT" "$C" host-secret new --yes >/dev/null 2>"$T/e"; r1=$?
        NSID_STATE_DIR=$T/state-nt NSID_MACHINE_ID_FILE=$T/image-machine-id "$NT" "$C" host-secret new --yes >/dev/null 2>>"$T/e"; r2=$?
        NSID_STATE_DIR=$T/state-nt NSID_MACHINE_ID_FILE=$T/image-machine-id "$C" --json host-secret >"$T/out"
        check "no O_TMPFILE: host-secret new works, twice (exit $r1, $r2), the secret is generated, 0600, no temporary file left" \
            bash -c "[ $r1 = 0 ] && [ $r2 = 0 ] && [ \"\$(stat -c %a '$T/state-nt/host-secret')\" = 600 ] &&
                     ! ls -A '$T/state-nt' | grep -q '\.tmp\|\.new\.' && grep -q '\"source\": \"generated\"' '$T/out'" ||
            sed 's/^/# /' "$T/e"
        mkdir -m 700 "$T/state-nt2"
        NSID_STATE_DIR=$T/state-nt2 NSID_MACHINE_ID_FILE=$T/no-machine-id "$NT" "$C" --json identity --key web >"$T/out" 2>"$T/e"; r=$?
        check "no O_TMPFILE and no machine-id: the state-file secret is made at first use" \
            bash -c "[ $r = 0 ] && [ -s '$T/state-nt2/host-secret' ] && ! ls -A '$T/state-nt2' | grep -q '\.tmp'" || sed 's/^/# /' "$T/e"
else
        skip "no-tmpfile helper not built"
fi

# one command-line convention (issue #32): per-command help, unknown commands named
"$C" doctor --help >"$T/o" 2>&1; r=$?
check "nsidctl doctor --help: that command's help (its --server), not the global one" \
    bash -c "[ $r = 0 ] && grep -q -- '--server ' '$T/o' && ! grep -q '^Commands:' '$T/o'"
"$C" host-secret --help >"$T/o" 2>&1
check "nsidctl host-secret --help names --if-shared" grep -q -- '--if-shared' "$T/o"
"$C" frob >"$T/o" 2>&1; r=$?
check "an unknown command: exit 2, the valid ones named" \
    bash -c "[ $r = 2 ] && grep -q \"unknown command 'frob' (commands: status, doctor, identity, metrics, watch, config, host-secret)\" '$T/o'"
"$C" --no-legend status >"$T/o" 2>/dev/null
check "status --no-legend: rows only (no kernel line, no column header)" \
    bash -c "! grep -qE '^(NETNS|kernel)' '$T/o' && grep -qE '^[0-9]+ ' '$T/o'"
host A "$C" --json host-secret >"$T/out"
check "JSON documents carry nsid.schema, version, host, time, command" \
    py "j['nsid']['schema'] == 1 and j['nsid']['version'] and j['nsid']['host'] and j['nsid']['time'].endswith('Z') and j['nsid']['command'] == 'host-secret'"

echo "1..$n"
echo "# $((n - failures - skipped)) passed, $failures failed, $skipped skipped"
[ "$failures" = 0 ] || exit 1
[ "$n" -gt "$skipped" ] || [ "$skipped" = 0 ] || exit 77 # every case skipped
[ "$n" -gt "$skipped" ]
