#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nsidctl on real network and UTS namespaces (unshare, ip netns), real processes, a real
# registry written by nsid-uniquifier, real request-key.d files and real configuration files.
#
# FAKE: this host kernel has no nfs module, so /sys/fs/nfs/net/nfs_client/identifier cannot
# exist. The library's test hook NSID_TEST_SYSFS_NFS_CLIENT_DIR makes the worker that reads
# the identifier (it still joins the target netns and mounts a private sysfs there) use
# DIR/<inode of the netns it joined> instead, with the kernel file's semantics. Identifiers
# "set by the kernel" below are such files. The real file is exercised by the qemu lab.
# Also fake: "rpc.idmapd" is a copy of sleep(1) under that name (doctor looks for the process
# name, as it would find the real daemon).
#
# Other tests may create namespaces meanwhile: every assertion is about the namespaces, files
# and processes this test made, never about the host's whole list.
#
# usage: itest-nsidctl.sh BUILD_DIR
set -u

B=${1:?usage: $0 BUILD_DIR}
C=$B/nsidctl/nsidctl
U=$B/uniquifier/nsid-uniquifier
for x in "$C" "$U"; do [ -x "$x" ] || { echo "Bail out! $x not built"; exit 1; }; done
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: request-key rules in /etc/request-key.d, network namespaces (run as root)"; exit 77; }
# the system's python3 (a version manager's shim in PATH may take a second to start)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

T=$(mktemp -d /tmp/itest-nsidctl.XXXXXX)
RK=/etc/request-key.d/nsidctl-itest-$$.conf
RK2=/etc/request-key.d/nsidctl-itest-$$-nsid.conf
NETNS=nsidctl-it-$$
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    ip netns del "$NETNS" 2>/dev/null
    rm -f "$RK" "$RK2"
    rm -rf "$T"
}
trap cleanup EXIT
trap "exit 1" INT TERM

export NSID_STATE_DIR=$T/state
export NSID_TEST_SYSFS_NFS_CLIENT_DIR=$T/fake
export NSID_MACHINE_ID_FILE=$T/machine-id
mkdir -p "$T/fake"
echo 00112233445566778899aabbccddeeff >"$T/machine-id"

n=0
failures=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
    local d=$1; shift
    if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# py 'python expression over j (the JSON in $T/out)' -> exit status
py() { "$PY" -c "import json,sys; j=json.load(open('$T/out')); sys.exit(0 if ($1) else 1)"; }
export T PY
export -f py

# A process in a new netns (and more namespaces: $@ are unshare flags); prints its pid once
# it is in there, and forgets a fake identifier left under a reused inode number.
hold() { # hold [unshare flags...] -- command...
    local flags=() me i
    while [ "$1" != -- ]; do flags+=("$1"); shift; done
    shift
    unshare -n "${flags[@]}" "$@" </dev/null >/dev/null 2>&1 &
    local p=$!
    me=$(stat -L -c %i /proc/self/ns/net)
    for _ in $(seq 200); do
        i=$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null) && [ "$i" != "$me" ] && break
        sleep 0.01
    done
    rm -f "$T/fake/$i"
    echo "$p"
}
ino() { stat -L -c %i "/proc/$1/ns/net"; }

# ---- usage ----
"$C" >/dev/null 2>&1; check "no command: exit 2" [ $? = 2 ]
"$C" bogus >/dev/null 2>&1; check "unknown command: exit 2" [ $? = 2 ]
"$C" status --server-domain=x >/dev/null 2>"$T/err"; r=$?
check "an option of another command: exit 2 and says whose" \
    bash -c "[ $r = 2 ] && grep -q \"'nsidctl doctor'\" '$T/err'"
"$C" --help >"$T/out"; r=$?
check "--help: exit 0, lists the commands" \
    bash -c "[ $r = 0 ] && grep -q doctor '$T/out' && grep -q identity '$T/out' && grep -q 'Exit status' '$T/out'"
check "--version" bash -c "'$C' --version | grep -Eq '^nsidctl [0-9]+\.[0-9]+'"
"$C" --color=sometimes status >/dev/null 2>&1; check "bad --color: exit 2" [ $? = 2 ]

# ---- config ----
"$C" --config="$T/absent.conf" config >"$T/out" 2>"$T/err"; r=$?
check "config: an explicit --config that is missing is an error (exit 1), not defaults" \
    bash -c "[ $r = 1 ] && grep -q -- '--config $T/absent.conf: No such file or directory' '$T/err' && [ ! -s '$T/out' ]"
: >"$T/empty.conf"; chmod 644 "$T/empty.conf"
"$C" --config="$T/empty.conf" config >"$T/out"; r=$?
check "config: an empty file is all defaults, exit 0" \
    bash -c "[ $r = 0 ] && grep -q '^cache-ttl = 600  # default' '$T/out'"
# what config prints reads back as it is (issue #32: 13 errors, '\"600  # default\" is not a
# whole number'): no error, every value the same, now from that file
"$C" --config="$T/empty.conf" config >"$T/printed.conf"; chmod 644 "$T/printed.conf"
"$C" --config="$T/printed.conf" config >"$T/out" 2>"$T/err"; r=$?
check "config: its own output fed back with --config: exit 0, nothing on stderr, same values" \
    bash -c "[ $r = 0 ] && [ ! -s '$T/err' ] &&
      diff <(grep -v '^#' '$T/printed.conf' | sed 's/  #.*//') <(grep -v '^#' '$T/out' | sed 's/  #.*//') &&
      grep -q '^cache-ttl = 600  # $T/printed.conf:' '$T/out'"
cat >"$T/nsid.conf" <<'EOF'
# test
[idmapd]
cache-ttl = 30
negative-ttl = soon
isolate-keys = off
cache-tll = 5
[idmap]
requester-context = yes
EOF
chmod 644 "$T/nsid.conf"
"$C" --config="$T/nsid.conf" config >"$T/out" 2>"$T/err"; r=$?
check "config: a bad value is an error: exit 4" [ $r = 4 ]
check "config: the error names file and line, and the default used" \
    grep -q "nsid.conf:4: \[idmapd\] negative-ttl = \"soon\" is not a whole number.*default 60" "$T/err"
check "config: an unknown key is a warning with a hint" \
    grep -q 'warning: .*nsid.conf:6: unknown key "cache-tll" in \[idmapd\].*cache-ttl' "$T/err"
check "config: values in effect and where they come from" \
    bash -c "grep -q '^cache-ttl = 30  # $T/nsid.conf:3' '$T/out' && grep -q '^negative-ttl = 60  # default' '$T/out'"
"$C" --json --config="$T/nsid.conf" config >"$T/out"; r=$?
check "config --json: exit 4, parses, every key with default, value, source, line" \
    bash -c "[ $r = 4 ] && py \"len(j['keys']) >= 12 and
      [k for k in j['keys'] if k['key'] == 'cache-ttl'][0]['value'] == '30' and
      [k for k in j['keys'] if k['key'] == 'cache-ttl'][0]['line'] == 3 and
      [k for k in j['keys'] if k['key'] == 'negative-ttl'][0]['source'] == 'default' and
      [k for k in j['keys'] if k['key'] == 'requester-context'][0]['value'] == 'yes' and
      all(k['description'] and k['default'] for k in j['keys']) and
      j['errors'] == 1 and j['warnings'] == 1 and j['unknown'][0]['key'] == 'cache-tll'\""
printf '[idmapd]\ncache-ttl = 30\n' >"$T/good.conf"
"$C" --config="$T/good.conf" config >/dev/null 2>"$T/err"; r=$?
check "config: a clean file: exit 0, nothing on stderr" bash -c "[ $r = 0 ] && [ ! -s '$T/err' ]"
chmod 666 "$T/good.conf"
"$C" --config="$T/good.conf" config >/dev/null 2>"$T/err"; r=$?
check "config: a world-writable file is refused: exit 4, says how to fix" \
    bash -c "[ $r = 4 ] && grep -q 'chmod 644' '$T/err'"
"$C" --json --config="$T/good.conf" config >"$T/out" 2>/dev/null; r=$?
check "config --json: a refused file is still JSON, says refused" \
    bash -c "[ $r = 4 ] && py \"j['refused'] and j['path'] == '$T/good.conf'\""
chmod 644 "$T/good.conf"; chown 65534 "$T/good.conf"
"$C" --config="$T/good.conf" config >/dev/null 2>"$T/err"; r=$?
check "config: a file owned by another user is refused: exit 4" \
    bash -c "[ $r = 4 ] && grep -q 'chown root:root' '$T/err'"
chown 0 "$T/good.conf"

# ---- colour: only on a terminal, never with NO_COLOR ----
ESC=$(printf '\033')
"$C" --config="$T/good.conf" config >"$T/out"
check "no colour into a pipe" bash -c "! grep -q '$ESC' '$T/out'"
script -qec "'$C' --config='$T/good.conf' config" /dev/null >"$T/out" 2>&1
check "colour on a terminal" grep -q "$ESC\[" "$T/out"
NO_COLOR=1 script -qec "'$C' --config='$T/good.conf' config" /dev/null >"$T/out" 2>&1
check "no colour on a terminal with NO_COLOR" bash -c "! grep -q '$ESC\[' '$T/out'"
"$C" --color=always --config="$T/good.conf" config >"$T/out"
check "--color=always into a pipe" grep -q "$ESC\[" "$T/out"

# ---- identity: the same derivation as nsid-uniquifier, nothing set ----
P0=$(hold -- sleep 100000); PIDS+=("$P0")
"$C" --json identity --key=itest-key >"$T/out"; r=$?
KEYID=$("$PY" -c "import json; print(json.load(open('$T/out'))['identity'])")
"$U" --json set --pid "$P0" --key itest-key --dry-run >"$T/u.json" 2>/dev/null
UID_=$("$PY" -c "import json; print(json.load(open('$T/u.json'))['identifier'])")
check "identity --key equals nsid-uniquifier's identity for that key ($KEYID)" \
    bash -c "[ $r = 0 ] && [ -n '$KEYID' ] && [ '$KEYID' = '$UID_' ]"
check "identity --key set nothing" bash -c "[ ! -e '$T/fake/$(ino "$P0")' ]"
"$C" --json identity --container-id=itest-key >"$T/out"
check "identity: --container-id gives the same identity, says its source" \
    py "j['identity'] == '$KEYID' and j['key_source'] == 'container-id'"
"$C" --json identity --pid "$P0" >"$T/out"
check "identity --pid of an unknown netns: a random key, not recorded, nothing set" \
    bash -c "py \"j['key_source'] == 'random' and not j['recorded'] and j['kernel'] == 'unset'\" &&
             [ ! -e '$T/fake/$(ino "$P0")' ]"
"$U" set --pid "$P0" >/dev/null 2>&1
SETID=$(cat "$T/fake/$(ino "$P0")" 2>/dev/null)
"$C" --json identity --pid "$P0" >"$T/out"
check "identity --pid after nsid-uniquifier set: recorded, the kernel has it" \
    py "j['identity'] == '$SETID' and j['recorded'] and j['kernel'] == 'set to this identity' and j['key_source'] == 'random'"
"$C" identity --pid "$P0" >"$T/out"
check "identity (text) shows the identity and the key source" \
    bash -c "grep -q '^identity *$SETID' '$T/out' && grep -q '^key source *random' '$T/out'"
"$C" identity --pid 4194304 >/dev/null 2>"$T/err"; r=$?
check "identity --pid of no process: exit 1, names the pid" \
    bash -c "[ $r = 1 ] && grep -q 'pid 4194304' '$T/err'"

# ---- status ----
ip netns add "$NETNS"
NINO=$(stat -L -c %i "/run/netns/$NETNS")
rm -f "$T/fake/$NINO"
"$C" --json status >"$T/out"; r=$?
check "status --json: exit 0, parses" bash -c "[ $r = 0 ] && py \"isinstance(j['namespaces'], list)\""
check "status: the uniquifier's netns with its identifier and source from the registry" \
    py "[x for x in j['namespaces'] if x['netns'] == $(ino "$P0")][0]['identifier'] == '$SETID' and
        [x for x in j['namespaces'] if x['netns'] == $(ino "$P0")][0]['source'] == 'random' and
        [x for x in j['namespaces'] if x['netns'] == $(ino "$P0")][0]['registry']['key_source'] == 'random'"
check "status: the NFSv4 owner string it presents (uniquifier/hostname)" \
    py "[x for x in j['namespaces'] if x['netns'] == $(ino "$P0")][0]['nfs_owner'] == 'Linux NFSv4.2 $SETID/$(uname -n)'"
check "status: an ip netns by its name, identifier unset, no NFS" \
    py "[x for x in j['namespaces'] if x['netns'] == $NINO][0]['container'] == '$NETNS' and
        [x for x in j['namespaces'] if x['netns'] == $NINO][0]['identifier'] is None and
        [x for x in j['namespaces'] if x['netns'] == $NINO][0]['identifier_state'] == 'unset' and
        not [x for x in j['namespaces'] if x['netns'] == $NINO][0]['nfs_mounted']"
check "status: the host netns is marked" py "len([x for x in j['namespaces'] if x['host']]) == 1"
check "status: the daemon is reported absent at the socket asked for" \
    bash -c "'$C' --json --socket='$T/none.sock' status >'$T/out' && py \"not j['idmapd']['running'] and j['idmapd']['socket'] == '$T/none.sock'\""
"$C" status >"$T/out"
check "status (text): a row for the ip netns" grep -q "^$NINO .* $NETNS " "$T/out"
# a container's hostname with an escape sequence and a newline: printed escaped, one row
PH=$(hold -u -- "$PY" -c 'import os, socket; socket.sethostname("ev\x1b[31mil\nx"); os.execvp("sleep", ["sleep", "100000"])')
PIDS+=("$PH")
for _ in $(seq 100); do [ "$(nsenter -t "$PH" -u hostname 2>/dev/null | head -c 2)" = ev ] && break; sleep 0.02; done
"$C" status >"$T/out"
check "status (text): a hostile hostname shows escaped, no escape byte reaches the terminal" \
    bash -c "grep -q '^$(ino "$PH") .*ev\\\\x1b\\[31mil' '$T/out' && ! grep -q '$ESC' '$T/out' && ! grep -q '^x' '$T/out'"

# ---- the NFS client's ID-mapping keys (nsid/kernel.h: a real probe, no hook) ----
"$C" --json status >"$T/out"
check "status: the kernel object keeps its fields" \
    py "all(k in j['kernel'] for k in ('release', 'nfs_client_sysfs', 'test_hook', 'nfs4_unique_id'))"
if [ -e /sys/module/nfsv4 ]; then
    # an NFS client here: tagged or not is the module's answer; only the shape is checked
    echo "# /sys/module/nfsv4 exists: not asserting 'not-loaded'"
    check "status: nfs_idkeys_tagged agrees with nfs_idkeys_probe" \
        py "j['kernel']['nfs_idkeys_probe'] in ('tagged', 'untagged') and
            j['kernel']['nfs_idkeys_tagged'] == (j['kernel']['nfs_idkeys_probe'] == 'tagged')"
    "$C" --json doctor >"$T/out"
    check "doctor: one idmap-keys finding, ok or warning" \
        py "[f['severity'] for f in j['findings'] if f['check'] == 'idmap-keys'] in (['ok'], ['warning'])"
else
    check "status: no nfsv4 module: nfs_idkeys_tagged null, probe not-loaded" \
        py "j['kernel']['nfs_idkeys_tagged'] is None and j['kernel']['nfs_idkeys_probe'] == 'not-loaded'"
    "$C" status >"$T/out"
    check "status (text): the idmap keys line says not loaded" \
        grep -q "^idmap keys nfsv4 client not loaded" "$T/out"
    "$C" --json doctor >"$T/out"
    check "doctor: no nfsv4 module: one idmap-keys finding, info, cannot tell yet" \
        py "[(f['severity'], f['message'].startswith('the NFSv4 client is not loaded; cannot tell yet'))
             for f in j['findings'] if f['check'] == 'idmap-keys'] == [('info', True)]"
    "$C" doctor >"$T/out"
    check "doctor (text): the idmap-keys line" \
        grep -q "^info *idmap-keys: the NFSv4 client is not loaded; cannot tell yet" "$T/out"
fi

# ---- doctor: duplicate identifiers, owner collisions ----
P1=$(hold -- sleep 100000); PIDS+=("$P1")
P2=$(hold -- sleep 100000); PIDS+=("$P2")
I1=$(ino "$P1"); I2=$(ino "$P2")
echo 5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e >"$T/fake/$I1"
echo 5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e >"$T/fake/$I2"
"$C" --json doctor >"$T/out"; r=$?
check "doctor: two netns with one identifier: exit 4" [ $r = 4 ]
check "doctor: the duplicate is reported as an error naming both, with a fix" \
    py "any(f['check'] == 'uniquifier-duplicate' and f['severity'] == 'error' and
            'netns $I1' in f['message'] and 'netns $I2' in f['message'] and f['fix']
            for f in j['findings'])"
check "doctor: same hostname and identifier: the owner string collides" \
    py "any(f['check'] == 'owner-collision' and 'netns $I1' in f['message'] and
            'netns $I2' in f['message'] and '5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e/' in f['message']
            for f in j['findings'])"
check "doctor: the netns with nsid's identifier is not named in any problem" \
    py "not any('netns $(ino "$P0") ' in f['message'] for f in j['findings'] if f['severity'] in ('error', 'warning'))"
"$C" doctor >"$T/out"; r=$?
check "doctor (text): exit 4, the error and its fix" \
    bash -c "[ $r = 4 ] && grep -q '^error *uniquifier-duplicate: .*netns $I1' '$T/out' && grep -q '^ *fix: ' '$T/out'"
echo 0ddba110ddba110ddba110ddba110ddb >"$T/fake/$I2"
"$C" --json doctor >"$T/out"
check "doctor: distinct identifiers: no duplicate any more" \
    py "not any('netns $I1' in f['message'] for f in j['findings'] if f['severity'] == 'error')"

# ---- doctor: hostnames, unset identifiers ----
P3=$(hold -u -- sh -c 'printf "(none)" >/proc/sys/kernel/hostname && exec sleep 100000'); PIDS+=("$P3")
for _ in $(seq 100); do [ "$(nsenter -t "$P3" -u hostname 2>/dev/null)" = "(none)" ] && break; sleep 0.02; done
I3=$(ino "$P3")
"$C" --json doctor >"$T/out"
check "doctor: hostname (none) is a warning naming the netns" \
    py "any(f['check'] == 'hostname' and f['severity'] == 'warning' and 'netns $I3' in f['message'] and '(none)' in f['message'] for f in j['findings'])"
check "doctor: its unset identifier is a warning with the command to fix it" \
    py "any(f['check'] == 'uniquifier-unset' and f['severity'] == 'warning' and 'netns $I3' in f['message'] and 'nsid-uniquifier' in f['fix'] for f in j['findings'])"
"$C" --json status >"$T/out"
check "status: the hostname of the netns's UTS namespace" \
    py "[x for x in j['namespaces'] if x['netns'] == $I3][0]['hostname'] == '(none)'"

# ---- doctor: nfsidmap still configured for request-key ----
echo "create id_resolver * * /usr/sbin/nfsidmap -t 600 %k %d" >"$RK"
"$C" --json doctor >"$T/out"
check "doctor: a request-key.d file naming nfsidmap is flagged by file and line" \
    py "any(f['check'] == 'request-key' and f['severity'] in ('warning', 'error') and '$RK:1' in f['message'] and 'nfsidmap' in f['message'] for f in j['findings'])"
printf '# nsid\ncreate\tid_resolver\t*\t*\t/nonexistent/sbin/nsid-idmap -t 600 %%k %%d\n' >"$RK2"
"$C" --json doctor >"$T/out"; r=$?
check "doctor: nfsidmap next to nsid-idmap is an error naming both rules" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'request-key' and f['severity'] == 'error' and '$RK:1' in f['message'] and '$RK2:2' in f['message'] and 'dpkg-divert' in f['fix'] for f in j['findings'])\""
rm -f "$RK"
"$C" --json --request-key-dir="$T/none" --request-key-conf="$T/none.conf" doctor >"$T/out"
check "doctor: no id_resolver rule at all is explained" \
    py "any(f['check'] == 'request-key' and f['severity'] == 'info' and 'falls back' in f['message'] for f in j['findings'])"

# ---- doctor: rpc.idmapd inside a container netns ----
cp "$(command -v sleep)" "$T/rpc.idmapd"
P4=$(hold -- "$T/rpc.idmapd" 100000); PIDS+=("$P4")
"$C" --json doctor >"$T/out"
check "doctor: a container netns running its own rpc.idmapd is flagged (pid, key cache)" \
    py "any(f['check'] == 'idmapd' and f['severity'] == 'warning' and 'pid $P4' in f['message'] and 'netns $(ino "$P4")' in f['message'] and '.id_resolver' in f['message'] for f in j['findings'])"

# ---- doctor: idmap domains ----
mkdir -p "$T/c5"
printf '[General]\nDomain = other.test\n' >"$T/c5/idmapd.conf"
printf '[General]\nDomain = host.test\n' >"$T/host-idmapd.conf"
printf '[idmapd]\nidmapd-conf = %s\n' "$T/host-idmapd.conf" >"$T/dom.conf"
P5=$(hold -m --propagation private -- sh -c "mount --bind '$T/c5/idmapd.conf' /etc/idmapd.conf && exec sleep 100000"); PIDS+=("$P5")
for _ in $(seq 100); do grep -q other.test "/proc/$P5/root/etc/idmapd.conf" 2>/dev/null && break; sleep 0.02; done
"$C" --json --config="$T/dom.conf" doctor >"$T/out"
check "doctor: a container idmapd.conf with another domain than the host's is a warning" \
    py "any(f['check'] == 'idmap-domain' and f['severity'] == 'warning' and 'netns $(ino "$P5")' in f['message'] and 'other.test' in f['message'] and 'host.test' in f['message'] for f in j['findings'])"
"$C" --json --config="$T/dom.conf" doctor --server-domain=server.test >"$T/out"; r=$?
check "doctor --server-domain: the host's domain differs from the server's: error, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'idmap-domain' and f['severity'] == 'error' and 'server.test' in f['message'] and 'host.test' in f['message'] and 'Domain = server.test' in f['fix'] for f in j['findings'])\""
"$C" --json --config="$T/dom.conf" status >"$T/out"
check "status: idmap domains of host and container, and where they come from" \
    py "j['host_idmap_domain'] == 'host.test' and [x for x in j['namespaces'] if x['netns'] == $(ino "$P5")][0]['idmap_domain'] == 'other.test' and [x for x in j['namespaces'] if x['netns'] == $(ino "$P5")][0]['idmap_domain_source'] == 'idmapd.conf'"

# ---- doctor: a broken configuration ----
"$C" --json --config="$T/nsid.conf" doctor >"$T/out"
check "doctor: configuration errors are findings with the line" \
    py "any(f['check'] == 'config' and f['severity'] == 'error' and 'nsid.conf:4' in f['message'] for f in j['findings'])"

# ---- doctor: the registry (what can go wrong with it; one identity bound twice cannot:
#      UNIQUE (app, identity) refuses it, so it is looked for only where that is missing) ----
command -v sqlite3 >/dev/null || { echo "Bail out! needs the sqlite3 CLI"; exit 1; }
REG=$NSID_STATE_DIR/registry.db
# a second binding, from a given key (so also a keys row): one record edited among several
P6=$(hold -- sleep 100000); PIDS+=("$P6")
"$U" -q set --pid "$P6" --key itest-registry >/dev/null
mkdir -m 700 "$T/reg"
# reg NAME [SQL]: a copy of the registry nsid-uniquifier wrote (its WAL included), SQL run on it
reg() {
    rm -f "$T/reg/$1"
    sqlite3 "$REG" ".backup '$T/reg/$1'" && chmod 600 "$T/reg/$1" && { [ -z "${2:-}" ] || sqlite3 "$T/reg/$1" "$2"; }
}
# regdoc DB [env...]: doctor --json on DB into $T/out, its exit status in $r
regdoc() { local db=$1; shift; env NSID_REGISTRY="$db" "$@" "$C" --json doctor >"$T/out" 2>"$T/err"; r=$?; }
# the registry findings in $T/out that are not ok, as "severity check: message"
regprob() { registry_problems <"$T/out"; }
read -r REGROW REGKEY < <(sqlite3 -separator ' ' "$REG" "SELECT rowid, key FROM bindings LIMIT 1")
REGN=$(sqlite3 "$REG" "SELECT (SELECT count(*) FROM bindings) + (SELECT count(*) FROM keys)")
regdoc "$REG"
probs=$(regprob)
check "doctor: the registry nsid-uniquifier wrote ($REGN records): ok, every identity derived from its key" \
    bash -c "py \"any(f['check'] == 'registry' and f['severity'] == 'ok' and 'derived from its key' in f['message'] for f in j['findings'])\" && [ -z '$probs' ]"
[ -z "$probs" ] || echo "$probs" | sed 's/^/# /'
reg tampered.db "UPDATE bindings SET identity = 'aaaaaaaaaaaa4aaa8aaaaaaaaaaaaaaa' WHERE rowid = $REGROW"
regdoc "$T/reg/tampered.db"
check "doctor: a binding whose identity its key does not derive: error naming row and key, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry-derivation' and f['severity'] == 'error' and
        'row $REGROW of bindings' in f['message'] and 'key $REGKEY' in f['message'] and
        'aaaaaaaaaaaa4aaa8aaaaaaaaaaaaaaa' in f['message'] and 'DELETE FROM bindings WHERE rowid = $REGROW' in f['fix']
        for f in j['findings'])\""
echo ffeeddccbbaa99887766554433221100 >"$T/machine-id2"
reg good.db
regdoc "$T/reg/good.db" NSID_MACHINE_ID_FILE="$T/machine-id2"
check "doctor: another host secret (a new machine-id): none derived, says why, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry-derivation' and f['severity'] == 'error' and
        'none of its $REGN records' in f['message'] and 'machine-id' in f['message'] and 'another machine' in f['message']
        for f in j['findings'])\""
# rows no nsid program writes, one defect each (a row's first defect is the one reported):
# 77 a key with a space (its identity well-formed), 78 an identity that is not hex (its key
# well-formed); either, not seen as malformed, would be reported as not derived instead
reg malformed.db "INSERT INTO bindings (rowid, app, identity, key, source, netns_dev, netns_ino, boot_id,
    netns_cookie, first_seen, last_seen) VALUES
    (77, 'nfs4', 'bbbbbbbbbbbb4bbb8bbbbbbbbbbbbbbb', 'k 1', 'explicit', 4, 7, 'b', 1, 1, 1),
    (78, 'nfs4', 'not-hex', 'k-2', 'explicit', 4, 8, 'b', 1, 1, 1)"
regdoc "$T/reg/malformed.db"
check "doctor: a row no nsid program writes (a key with a space): error with the DELETE to fix it" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry-record' and f['severity'] == 'error' and
        'row 77 of bindings' in f['message'] and 'key is not' in f['message'] and 'netns 7' in f['message'] and
        'DELETE FROM bindings WHERE rowid = 77' in f['fix'] for f in j['findings'])\""
check "doctor: a row no nsid program writes (an identity not hex): error with the DELETE to fix it" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry-record' and f['severity'] == 'error' and
        'row 78 of bindings' in f['message'] and 'identity is not 32 lowercase hex' in f['message'] and
        'netns 8' in f['message'] and 'DELETE FROM bindings WHERE rowid = 78' in f['fix'] for f in j['findings'])\""
check "doctor: ... each malformed row reported once, as malformed, not as not derived" \
    py "[f['check'] for f in j['findings'] if 'row 77 of' in f['message'] or 'row 78 of' in f['message']] == ['registry-record', 'registry-record']"
reg newer.db "PRAGMA user_version = 99"
regdoc "$T/reg/newer.db"
check "doctor: a schema newer than this nsid: error, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry' and f['severity'] == 'error' and 'schema newer' in f['message'] for f in j['findings'])\""
# an index whose recorded definition no longer matches its content
reg damaged.db "CREATE INDEX bykey ON bindings(key); PRAGMA writable_schema = ON;
    UPDATE sqlite_master SET sql = 'CREATE INDEX bykey ON bindings(boot_id)' WHERE name = 'bykey'"
regdoc "$T/reg/damaged.db"
check "doctor: a database failing SQLite's integrity check: error, SQLite's words, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry' and f['severity'] == 'error' and 'integrity check' in f['message'] for f in j['findings']) and
        any(f['check'] == 'registry' and 'bykey' in f['message'] for f in j['findings'])\""
# version 1 by its user_version, tables without UNIQUE (app, identity): then one identity can
# be bound twice, and is
sqlite3 "$T/reg/nounique.db" "CREATE TABLE bindings (app TEXT NOT NULL, identity TEXT NOT NULL,
    key TEXT NOT NULL, source TEXT NOT NULL, netns_dev INTEGER NOT NULL, netns_ino INTEGER NOT NULL,
    boot_id TEXT NOT NULL, netns_cookie INTEGER NOT NULL, pid INTEGER NOT NULL DEFAULT 0, name TEXT,
    first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, PRIMARY KEY (app, netns_dev, netns_ino));
    CREATE TABLE keys (app TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL,
    identity TEXT NOT NULL, name TEXT, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
    PRIMARY KEY (app, key));
    ATTACH '$T/reg/good.db' AS g;
    INSERT INTO bindings SELECT * FROM g.bindings;
    INSERT INTO bindings SELECT app, identity, key, source, netns_dev, netns_ino + 1, boot_id,
        netns_cookie, pid, name, first_seen, last_seen FROM g.bindings;
    PRAGMA user_version = 1;"
regdoc "$T/reg/nounique.db"
check "doctor: tables without UNIQUE (app, identity), and the identity bound twice: errors, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry-schema' and 'no UNIQUE (app, identity)' in f['message'] for f in j['findings']) and
        any(f['check'] == 'registry-schema' and 'bound to 2 network namespaces' in f['message'] for f in j['findings'])\""
reg perm.db; chmod 644 "$T/reg/perm.db"
regdoc "$T/reg/perm.db"
check "doctor: a registry others may read: a warning with the chmod" \
    py "any(f['check'] == 'registry-file' and f['severity'] == 'warning' and 'readable by everyone' in f['message'] and 'chmod 600' in f['fix'] for f in j['findings'])"
chmod 666 "$T/reg/perm.db"
regdoc "$T/reg/perm.db"
check "doctor: a registry others may write: error, exit 4" \
    bash -c "[ $r = 4 ] && py \"any(f['check'] == 'registry-file' and f['severity'] == 'error' and 'writable by everyone' in f['message'] for f in j['findings'])\""
chmod 600 "$T/reg/perm.db"; chown 65534 "$T/reg/perm.db"
regdoc "$T/reg/perm.db"
check "doctor: a registry owned by another user: error with the chown" \
    py "any(f['check'] == 'registry-file' and f['severity'] == 'error' and 'uid 65534' in f['message'] and 'chown root:root' in f['fix'] for f in j['findings'])"
ln -s good.db "$T/reg/link.db"
regdoc "$T/reg/link.db"
check "doctor: a registry that is a symbolic link (nsid-uniquifier records nothing there): error" \
    py "any(f['check'] == 'registry-file' and f['severity'] == 'error' and 'symbolic link' in f['message'] for f in j['findings'])"
chmod 777 "$T/reg"
regdoc "$T/reg/good.db"
check "doctor: a registry in a directory everyone may write: error" \
    py "any(f['check'] == 'registry-file' and f['severity'] == 'error' and 'others may write' in f['message'] for f in j['findings'])"
chmod 700 "$T/reg"
regdoc "$T/reg/none.db"
check "doctor: no registry yet: info, nothing else about it" \
    bash -c "py \"[(f['check'], f['severity']) for f in j['findings'] if f['check'].startswith('registry')] == [('registry', 'info')]\""

echo "1..$n"
[ "$failures" = 0 ]
