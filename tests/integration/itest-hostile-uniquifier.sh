#!/bin/bash
# nsid-uniquifier against hostile containers, on real network and mount namespaces.
#
# FAKE (as in itest-uniquifier.sh): no nfs module on this host, so the identifier file is
# NSID_TEST_SYSFS_NFS_CLIENT_DIR/<netns inode>, written by the real worker that joined the
# netns. A "container" is `unshare -n -m` (own netns, private mounts, the host's pids) with
# a copy of /etc bind-mounted over /etc whose machine-id the test controls.
#
# Checks: a machine-id that is a symlink to the host's machine-id file, to /proc/self/... or
# to a FIFO: never used as the key, the host's never read; two containers with the same
# machine-id: two different identities; an OCI hook handed ANOTHER container's pid: the other
# container keeps its identity; a container whose /etc is on a FUSE mount that never answers
# (KNOWN GAP: the machine-id is read in-process; see below).
#
# usage: itest-hostile-uniquifier.sh BUILD_DIR
set -u
B=${1:?usage: $0 BUILD_DIR}
U=$(realpath "$B/uniquifier/nsid-uniquifier")
[ -x "$U" ] || { echo "Bail out! $U not built"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }

T=$(mktemp -d /tmp/itest-hostile-uniq.XXXXXX)
chmod 755 "$T"
cleanup() {
    [ -f "$T/holders" ] && while read -r p; do kill -9 "$p" 2>/dev/null; done <"$T/holders"
    wait 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
export NSID_STATE_DIR=$T/state NSID_TEST_SYSFS_NFS_CLIENT_DIR=$T/fake NSID_MACHINE_ID_FILE=$T/host-machine-id
HOSTMID=0f0e0d0c0b0a09080706050403020100
mkdir -p "$T/fake"
echo $HOSTMID >"$T/host-machine-id"

n=0 failures=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $*"; }

# ctr NAME [SETUP]: a container with $T/NAME as its /etc; prints the holder pid once the
# holder is in its own netns and has its /etc.
ctr() {
    local name=$1 setup=${2:-:}
    [ -d "$T/$name" ] || cp -a /etc "$T/$name" 2>/dev/null
    rm -f "$T/$name.ready"
    unshare -n -m --propagation private sh -c 'mount --bind "$1" /etc || exit 1; eval "$2"; touch "$1.ready"; exec sleep 100000' \
        _ "$T/$name" "$setup" </dev/null >/dev/null 2>&1 &
    local p=$!
    echo "$p" >>"$T/holders"
    for _ in $(seq 200); do [ -e "$T/$name.ready" ] && break; sleep 0.02; done
    echo "$p"
}
netns_ino() { stat -L -c %i "/proc/$1/ns/net"; }
fake_of() { cat "$T/fake/$(netns_ino "$1")" 2>/dev/null; }
derive() { "$U" -q set --dry-run --netns /proc/self/ns/net --key "$1" 2>/dev/null | cut -d' ' -f1; }
setpid() { "$U" --timeout 3000 set --pid "$1" "${@:2}" 2>"$T/err"; }

# --- machine-id symlinks: never the host's, never procfs -------------------------------
# (the container shares the host's "/" except /etc here, so a path to a host file would be
# the container's own view; escapes from a real rootfs are itest-hostile-container's job)
for target in /proc/self/environ /proc/1/environ /proc/self/root/etc/machine-id ../proc/self/environ; do
    name=mid-$n
    cp -a /etc "$T/$name" 2>/dev/null
    rm -f "$T/$name/machine-id"
    ln -s "$target" "$T/$name/machine-id"
    p=$(ctr "$name")
    out=$(setpid "$p"); rc=$?
    src=$(echo "$out" | cut -d' ' -f2)
    if [ "$rc" = 0 ] && [ "$src" = random ]; then
        ok "machine-id -> $target: not used (a random key: '$out')"
    else
        not_ok "machine-id -> $target: rc=$rc '$out' $(cat "$T/err")"
    fi
done

# a FIFO machine-id (nobody writes it): no hang
cp -a /etc "$T/mid-fifo" 2>/dev/null
rm -f "$T/mid-fifo/machine-id"; mkfifo "$T/mid-fifo/machine-id"
p=$(ctr mid-fifo)
s=$(date +%s%N); out=$(setpid "$p"); rc=$?; ms=$((($(date +%s%N) - s) / 1000000))
[ "$rc" = 0 ] && [ "$ms" -lt 3000 ] && ok "FIFO machine-id: '$out' in $ms ms" || not_ok "FIFO machine-id: rc=$rc '$out' in $ms ms"

# --- two containers with the same machine-id (a copied image) ---------------------------
cp -a /etc "$T/dup-a" 2>/dev/null; echo 1234567890abcdef1234567890abcdef >"$T/dup-a/machine-id"
cp -a /etc "$T/dup-b" 2>/dev/null; echo 1234567890abcdef1234567890abcdef >"$T/dup-b/machine-id"
a=$(ctr dup-a); b=$(ctr dup-b)
oa=$(setpid "$a"); ra=$?
ob=$(setpid "$b"); rb=$?
ia=$(fake_of "$a"); ib=$(fake_of "$b")
if [ "$ra" = 0 ] && [ "$rb" = 0 ] && [ -n "$ia" ] && [ -n "$ib" ] && [ "$ia" != "$ib" ]; then
    ok "same machine-id in two containers: two identities ('$oa' / '$ob')"
else
    not_ok "same machine-id in two containers: rc=$ra/$rb ids '$ia' '$ib' ('$oa' / '$ob')"
fi

# --- an OCI hook handed another container's pid ----------------------------------------
v=$(ctr victim); at=$(ctr attacker)
state() { printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%s,"bundle":"/x"}' "$1" "$2"; }
state victim-ctr "$v" | "$U" oci-hook >/dev/null 2>&1
before=$(fake_of "$v")
[ "$before" = "$(derive victim-ctr)" ] && ok "victim set by its own hook" || not_ok "victim not set: '$before'"
out=$(state attacker-ctr "$v" | "$U" oci-hook 2>&1); rc=$?
after=$(fake_of "$v")
[ "$after" = "$before" ] && ok "hook with the victim's pid: victim keeps its identity (rc=$rc: $out)" ||
    not_ok "hook with the victim's pid changed it: '$before' -> '$after' ($out)"
[ "$(fake_of "$at")" = "" ] && ok "... and the attacker's netns got nothing from it" || not_ok "attacker's netns set: $(fake_of "$at")"

# --- /etc on a FUSE mount that never answers ---------------------------------------------
# KNOWN GAP (reported): without an explicit key `set --pid` (and reconcile, for every netns
# with a process) reads the container's /etc/machine-id in the calling process
# (libnsid identity.c: nsid_proc_read_root_file); --timeout bounds only the worker and stdin.
# A container whose /etc never answers blocks the program until its FUSE server dies.
# Asserted: with a key (what the OCI/LXC hooks use) nothing of the container's files is read
# and the hook finishes at once; without one the program is released when the FUSE server
# dies. The gap is printed with its time.
if [ -c /dev/fuse ] && grep -qw fuse /proc/filesystems; then
cat >"$T/fuse-hang.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/dev/fuse", os.O_RDWR)
opts = ("fd=%d,rootmode=40000,user_id=0,group_id=0" % fd).encode()
if libc.mount(b"nsid-hung", sys.argv[1].encode(), b"fuse", 2 | 4, opts) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
open(sys.argv[2], "w").close()
time.sleep(3600)
PY
    hung_ctr() { # NAME: a container whose /etc/machine-id is on the never-answering FUSE mount
        cp -a /etc "$T/$1" 2>/dev/null
        mkdir -p "$T/$1/nsidhung"; rm -f "$T/$1/machine-id"; ln -s nsidhung/machine-id "$T/$1/machine-id"
        # (the setup runs in the container with $1 = the /etc copy)
        ctr "$1" "python3 $T/fuse-hang.py /etc/nsidhung \"\$1.fuse\" & echo \$! >\"\$1.fusepid\"; for i in \$(seq 100); do [ -e \"\$1.fuse\" ] && break; sleep 0.05; done"
    }
    h=$(hung_ctr hung)
    h2=$(hung_ctr hung2)
    if [ -e "$T/hung.fuse" ] && [ -e "$T/hung2.fuse" ]; then
        s=$(date +%s%N)
        out=$(state hung-ctr "$h" | timeout 10 "$U" --timeout 2000 oci-hook 2>&1); rc=$?
        ms=$((($(date +%s%N) - s) / 1000000))
        [ "$rc" = 0 ] && [ "$ms" -lt 3000 ] && ok "OCI hook (container id as key) on a hung /etc: set in $ms ms" ||
            not_ok "OCI hook on a hung /etc: rc=$rc in $ms ms: $out"
        "$U" --timeout 2000 set --pid "$h2" >"$T/hung.out" 2>&1 &
        sp=$!
        # reconcile (every netns; identifiers go to the fake directory, the registry to $T)
        "$U" --timeout 2000 reconcile >"$T/rec.out" 2>&1 &
        rp=$!
        sleep 4
        if kill -0 "$rp" 2>/dev/null; then
            echo "# KNOWN GAP: reconcile still blocked 4 s after start: one container with a hung /etc holds up every netns after it"
        else
            wait "$rp"; ok "reconcile with a hung container finished (rc=$?)"
        fi
        if kill -0 "$sp" 2>/dev/null; then
            echo "# KNOWN GAP: 'set --pid' without a key still blocked 4 s after start (--timeout 2000) reading the container's machine-id"
            kill -9 "$(cat "$T/hung2.fusepid")" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$sp" 2>/dev/null || break; sleep 0.1; done
            if kill -0 "$sp" 2>/dev/null; then
                not_ok "set --pid still blocked after the FUSE server died"; kill -9 "$sp"
            else
                wait "$sp"; ok "set --pid released when the FUSE server died (rc=$?: $(head -c 200 "$T/hung.out"))"
            fi
            for _ in $(seq 100); do kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
            if kill -0 "$rp" 2>/dev/null; then
                not_ok "reconcile still blocked after the FUSE server died"; kill -9 "$rp"
            else
                wait "$rp"; rc=$?
                # (its exit status also reflects other namespaces on this host: only "finished")
                [ "$rc" -lt 128 ] && ok "reconcile released when the FUSE server died (exit $rc)" ||
                    not_ok "reconcile after the FUSE server died: rc=$rc $(tail -n 5 "$T/rec.out")"
            fi
        else
            wait "$sp"; rc=$?
            [ "$rc" != 0 ] || grep -q random "$T/hung.out" && ok "set --pid on a hung /etc: bounded (rc=$rc: $(head -c 200 "$T/hung.out"))" ||
                not_ok "set --pid on a hung /etc: rc=$rc $(cat "$T/hung.out")"
        fi
    else
        not_ok "FUSE mount in the container failed"
    fi
else
    echo "# SKIP: no FUSE: hung-mount case not run"
fi

echo "1..$n"
[ "$failures" = 0 ]
