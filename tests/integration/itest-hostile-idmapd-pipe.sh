#!/bin/bash
# nsid-idmapd's idmap pipes against upcalls it cannot parse (SECURITY.md, "The kernel's
# upcalls"). A hostile NFS server chooses the owner strings the kernel puts in im_name; the
# kernel keeps ONE upcall per NFS client outstanding, and until a downcall completes it every
# other ID lookup of that client waits (uninterruptibly). So every upcall, whatever its
# shape, must get a downcall within the request timeout: an owner name the daemon refuses to
# look up (control bytes, ':', '@@', an edge '@', invalid UTF-8, 127 bytes) is answered as
# an owner unknown in that context is (host context: libnfsidmap's nobody), its name echoed
# byte for byte; anything else it refuses (size, type, conv, status, an empty or
# unterminated name) gets a 140-byte struct idmap_msg without the SUCCESS bit (the kernel
# then completes the upcall with -ENOKEY, fs/nfs/nfs4idmap.c idmap_pipe_downcall).
#
# This host has no NFS (no sunrpc, no rpc_pipefs): the daemon's test seam
# NSID_TEST_RPC_PIPEFS_DIR (idmapd/idmapd-kernel.c) makes a directory stand for the
# initial netns's rpc_pipefs, with nfs/clnt0/idmap a listening SOCK_SEQPACKET socket that
# a Python "kernel" below serves: one message per read and per write, as on a real pipe.
# Everything else is the daemon's own path: the directory scan and inotify watches, epoll,
# the parser, the host-context resolver, the downcall. The real pipes are exercised in the
# qemu lab (tests/vm/scenarios/idmapd-pipes.sh).
#
# Shapes: control bytes, ':', '@@', a leading/trailing '@', an empty name, an
# unterminated 128-byte name (what a 1,000-character owner would be without the kernel's
# truncation), a 127-byte name (what the kernel's truncation makes of a 1,000-character
# owner), invalid UTF-8 (a lone continuation byte, an overlong '/', a surrogate, a cut
# sequence), a wrong im_type, a wrong im_conv, a non-zero im_status, the id 4294967295, and
# messages of 1, 139 and 141 bytes. Valid lookups before and after them are answered (the
# pipe is still served), and so are a 126-byte name and an unknown one.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmapd")
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: nsid-idmapd with its capabilities, mount namespaces (run as root)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing (apt install python3)"; exit 77; }

T=$(mktemp -d /tmp/nsid-itest-pipe.XXXXXX)
chmod 755 "$T"
cleanup() {
        [ -n "${DPID:-}" ] && kill -9 "$DPID" 2>/dev/null || true
        [ -n "${KPID:-}" ] && kill -9 "$KPID" 2>/dev/null || true
        rm -rf "$T"
}
trap cleanup EXIT
timeout_ms=2000
cat >"$T/nsid.conf" <<CONF
[idmapd]
request-timeout-ms = $timeout_ms
set-identifier = no
host-pipes = yes
state-dir = $T/state
CONF
cat >"$T/host-idmapd.conf" <<CONF
[General]
Domain = host.test
[Mapping]
Nobody-User = nobody
Nobody-Group = nogroup
CONF
mkdir -p "$T/pipefs/nfs/clnt0"
# The daemon's /etc/passwd and /etc/group (bind-mounted in a mount namespace of its own):
# the host's, and a user and a group whose names are 126 and 127 bytes with the domain: the
# user the daemon looks up (uid 4126), the group it refuses, as the kernel may have cut it
# (its gid 4127 is never answered)
cp /etc/passwd "$T/passwd"
cp /etc/group "$T/group"
printf '%s:x:4126:4126::/:/bin/sh\n' "$(printf 'r%.0s' $(seq 116))" >>"$T/passwd"
printf '%s:x:4127:\n' "$(printf 'r%.0s' $(seq 117))" >>"$T/group"
nobody=$(id -u nobody)

# The kernel side: binds the pipe, waits for the daemon, sends each upcall and reads the
# downcall; prints "ok: ..." or "FAIL: ...".
cat >"$T/kernel.py" <<'PY'
import os, select, socket, struct, sys

path, timeout_ms, NOBODY = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
FMT = "=BB128s2xIB3x"  # struct idmap_msg, 140 bytes (host byte order, u32 at offset 132)
assert struct.calcsize(FMT) == 140
SUCCESS, LOOKUPFAIL = 0x08, 0x04
USER, GROUP, IDTONAME, NAMETOID = 0, 1, 0, 1

def msg(t, c, name=b"", i=0, status=0):
    return struct.pack(FMT, t, c, name, i, status)

srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
srv.bind(path)
srv.listen(1)
open(path + ".ready", "w").close()
srv.settimeout(20)
try:
    pipe, _ = srv.accept()
except socket.timeout:
    print("FAIL: the daemon never opened nfs/clnt0/idmap"); sys.exit(1)
print("ok: the daemon opened nfs/clnt0/idmap")
fails = 0

def ask(label, up, wait_s=None):
    """One upcall; the downcall or None (nothing within the request timeout + 1 s)."""
    pipe.send(up)
    r, _, _ = select.select([pipe], [], [], wait_s or timeout_ms / 1000 + 1)
    if not r:
        return None
    return pipe.recv(4096)

def expect_failure(label, up):
    global fails
    down = ask(label, up)
    if down is None:
        print(f"FAIL: {label}: no downcall within {timeout_ms + 1000} ms (the NFS client "
              f"would wait for ever)"); fails += 1; return
    if len(down) != 140:
        print(f"FAIL: {label}: downcall of {len(down)} bytes, want 140"); fails += 1; return
    t, c, name, i, st = struct.unpack(FMT, down)
    pad = up + bytes(140 - len(up)) if len(up) < 140 else up[:140]
    ut, uc, uname, ui, _ = struct.unpack(FMT, pad)
    if st & SUCCESS or st == 0:
        print(f"FAIL: {label}: status {st:#x}, want a failure (no SUCCESS bit)"); fails += 1; return
    if (t, c, name, i) != (ut, uc, uname, ui):
        print(f"FAIL: {label}: type/conv/name/id not echoed: {(t, c, name[:20], i)} for "
              f"{(ut, uc, uname[:20], ui)}"); fails += 1; return
    print(f"ok: {label}: failure downcall (status {st:#x}, fields echoed)")

def expect_downcall(label, up, want):
    """The downcall for up is exactly want, all 140 bytes."""
    global fails
    down = ask(label, up)
    if down != want:
        def show(m):
            t, c, name, i, st = struct.unpack(FMT, m)
            return f"type {t} conv {c} name {name.rstrip(bytes(1))[:24]!r}... id {i} status {st:#x}"
        got = show(down) if down is not None and len(down) == 140 else repr(down)[:60]
        print(f"FAIL: {label}: downcall {got}, want {show(want)}"); fails += 1; return
    t, c, name, i, st = struct.unpack(FMT, down)
    print(f"ok: {label}: status {st:#x}, type {t}, conv {c}, name echoed, id {i}")

def expect_success(label, up, want_name=None, want_id=None, wait_s=None):
    global fails
    down = ask(label, up, wait_s)
    if down is None or len(down) != 140:
        print(f"FAIL: {label}: no valid downcall ({down!r:.60})"); fails += 1; return
    t, c, name, i, st = struct.unpack(FMT, down)
    name = name.split(b"\0")[0]
    if not st & SUCCESS or (want_name is not None and name != want_name) or \
            (want_id is not None and i != want_id):
        print(f"FAIL: {label}: status {st:#x} name {name!r} id {i}"); fails += 1; return
    print(f"ok: {label}: answered ({name.decode() if want_name else i})")

# The first lookup starts the namespace's resolver and loads libnfsidmap: on a loaded
# machine that took over 3 s, and a late downcall would answer the next upcall here (a real
# pipe has one upcall outstanding). Its bound is generous; every later one has the request
# timeout.
expect_success("valid user:0 (before)", msg(USER, IDTONAME, i=0), want_name=b"root@host.test",
               wait_s=30)
names = [
    ("control byte", b"a\x01b@host.test"), ("newline", b"evil\nuid:0@host.test"),
    ("DEL", b"a\x7fb@host.test"), ("colon", b"a:b@host.test"), ("@@", b"a@@host.test"),
    ("leading @", b"@host.test"), ("trailing @", b"alice@"), ("empty name", b""),
    ("unterminated 128-byte name (a 1,000-character owner)", b"x" * 128),
    ("invalid UTF-8: lone continuation byte", b"al\x80ice@host.test"),
    ("invalid UTF-8: overlong '/'", b"a\xc0\xafb@host.test"),
    ("invalid UTF-8: surrogate", b"a\xed\xa0\x80b@host.test"),
    ("invalid UTF-8: truncated sequence", b"alice\xe2\x82@host.test"),
]
def reference(t):
    """What an unknown owner gets here: (success, id)."""
    down = ask("unknown name (reference)", msg(t, NAMETOID, b"nosuchuser@host.test"))
    if down is None or len(down) != 140:
        print(f"FAIL: unknown name (reference): no valid downcall"); sys.exit(1)
    _, _, _, i, st = struct.unpack(FMT, down)
    return (bool(st & SUCCESS), i if st & SUCCESS else None)

ref = {t: reference(t) for t in (USER, GROUP)}
print(f"ok: an unknown owner gets {ref[USER]} (uid), {ref[GROUP]} (gid)")

def expect_like_unknown(label, t, up):
    """A refused owner name is answered as an unknown owner, the name echoed byte for byte
    (the kernel matches the downcall's name with the upcall's)."""
    global fails
    down = ask(label, up)
    if down is None or len(down) != 140:
        print(f"FAIL: {label}: no valid downcall ({down!r:.60})"); fails += 1; return
    dt, dc, dname, i, st = struct.unpack(FMT, down)
    ut, uc, uname, _, _ = struct.unpack(FMT, up)
    got = (bool(st & SUCCESS), i if st & SUCCESS else None)
    if (dt, dc, dname) != (ut, uc, uname) or got != ref[t]:
        print(f"FAIL: {label}: {got}, name echoed {dname == uname}; an unknown owner gets "
              f"{ref[t]}"); fails += 1; return
    print(f"ok: {label}: answered as an unknown owner {got}")

for label, n in names:
    for t in (USER, GROUP):
        l = f"name-to-id {'uid' if t == USER else 'gid'}, {label}"
        if n == b"" or len(n) >= 128:  # no name the downcall could echo: a failure
            expect_failure(l, msg(t, NAMETOID, n))
        else:
            expect_like_unknown(l, t, msg(t, NAMETOID, n))
expect_failure("wrong im_type 2", msg(2, NAMETOID, b"root@host.test"))
expect_failure("wrong im_type 255", msg(255, IDTONAME, i=0))
expect_failure("wrong im_conv 2", msg(USER, 2, b"root@host.test"))
expect_failure("wrong im_conv 255", msg(GROUP, 255, i=0))
expect_failure("im_status set in the upcall", msg(USER, IDTONAME, i=0, status=SUCCESS))
expect_failure("id 4294967295", msg(USER, IDTONAME, i=0xffffffff))
expect_failure("1-byte message", bytes([USER]))
expect_failure("139-byte message", msg(USER, NAMETOID, b"root@host.test")[:139])
expect_failure("141-byte message", msg(USER, NAMETOID, b"root@host.test") + b"\0")
# A 127-character name is what the kernel sends for a 1,000-character owner: it cuts
# im_name to 127 bytes without a word (match_strlcpy), so such a name may not be the owner
# the key asks about.
expect_like_unknown("127-character name (a 1,000-character owner, cut by the kernel)", USER,
                    msg(USER, NAMETOID, (b"a" * 113 + b"@host.test")[:127].ljust(127, b"b")))
expect_like_unknown("127-character name with a domain", GROUP,
                    msg(GROUP, NAMETOID, b"r" * 117 + b"@host.test"))
# 126 characters are a name like any other: looked up (the user of uid 4126 in the daemon's
# passwd; the 127-byte group above, gid 4127 there, got the unknown owner's answer); an
# unknown name gets libnfsidmap's nobody.
n126 = b"r" * 116 + b"@host.test"
expect_downcall("126-character name", msg(USER, NAMETOID, n126),
                msg(USER, NAMETOID, n126, i=4126, status=SUCCESS))
expect_downcall("unknown name", msg(USER, NAMETOID, b"nosuchuser@host.test"),
                msg(USER, NAMETOID, b"nosuchuser@host.test", i=NOBODY, status=SUCCESS))
expect_success("valid uid:root@host.test (after)", msg(USER, NAMETOID, b"root@host.test"), want_id=0)
expect_success("valid group:0 (after)", msg(GROUP, IDTONAME, i=0), want_name=b"root@host.test")
print(f"kernel: {fails} failure(s)")
sys.exit(1 if fails else 0)
PY
python3 "$T/kernel.py" "$T/pipefs/nfs/clnt0/idmap" "$timeout_ms" "$nobody" >"$T/kernel.out" 2>&1 &
KPID=$!
for _ in $(seq 100); do [ -e "$T/pipefs/nfs/clnt0/idmap.ready" ] && break; sleep 0.05; done
NSID_TEST_RPC_PIPEFS_DIR="$T/pipefs" unshare -m --propagation private sh -c \
        'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"' \
        _ "$T/passwd" "$T/group" \
        "$bin" -f -v --config="$T/nsid.conf" \
        --idmapd-conf="$T/host-idmapd.conf" --socket="$T/idmapd.sock" 2>"$T/daemon.log" &
DPID=$!
rc=0
wait "$KPID" || rc=$?
KPID=
cat "$T/kernel.out"
kill "$DPID" 2>/dev/null || true
wait "$DPID" 2>/dev/null || true
DPID=
n=$(grep -c "refused" "$T/daemon.log" || true)
echo "daemon: $n 'refused' log lines"
# each refused owner is logged with its name (\xNN for control bytes, 0x7f and up, '\\',
# '"': a log line carries no byte the server chose raw) and why
for want in 'refused owner name "a\x01b@host.test" (control bytes' \
            'refused owner name "evil\x0auid:0@host.test" (control bytes' \
            'refused owner name "a:b@host.test" (control bytes' \
            'refused owner name "a@@host.test" (control bytes' \
            'refused owner name "al\x80ice@host.test" (not UTF-8)' \
            'refused owner name "a\xc0\xafb@host.test" (not UTF-8)' \
            'refused owner name "" (empty, or not NUL-terminated); failed (LOOKUPFAIL)' \
            'answered as an unknown owner' \
            '(127 bytes: the kernel may have cut it)' \
            'refused an invalid upcall (139 bytes)'; do
        if grep -qF -- "$want" "$T/daemon.log"; then
                echo "ok: logged: $want"
        else
                echo "not ok: not logged: $want"
                rc=1
        fi
done
if LC_ALL=C grep -q "$(printf '\001\|\200\|\300')" "$T/daemon.log"; then
        echo "not ok: a raw control or non-ASCII byte of a refused name reached the log"
        rc=1
fi
if [ "$rc" != 0 ]; then
        echo "--- daemon log (tail)"
        tail -n 20 "$T/daemon.log"
        exit 1
fi
echo "all passed"
