# lib.sh: shell helpers of the integration tests (bash; source it, it defines functions only).
#
#   wait_for SECONDS CMD...   run CMD (a shell function too) every 0.05 s until it succeeds:
#                             0, or 1 once SECONDS have passed without (CMD's output is
#                             dropped). The lab's wait_for (tests/vm/lib/lab.sh) is the same.
#   registry_problems         read `nsidctl --json doctor` on stdin; print what it finds wrong
#                             with the identity registry, one "severity check: message" line
#                             each, or "no registry finding" when it said nothing about it;
#                             nothing when the registry is ok.
#   dump_process PID          to stderr: where PID, its threads and its children are blocked
#                             (state, wchan, kernel stack; gdb's backtrace when installed),
#                             for a test that found a daemon not answering in time
#   write_fuse_hang PATH      write to PATH a Python FUSE "server": `python3 PATH DIR READY`
#                             mounts DIR and never reads /dev/fuse (not even INIT), so
#                             every lookup below DIR waits until it dies; it creates READY
#                             once mounted (a container's file on a mount that never answers)

wait_for() {
        local now=${EPOCHREALTIME/./} deadline
        deadline=$((now + $1 * 1000000))
        shift
        until "$@" >/dev/null 2>&1; do
                now=${EPOCHREALTIME/./}
                [ "$now" -ge "$deadline" ] && return 1
                sleep 0.05
        done
        return 0
}

registry_problems() {
        "$(command -v /usr/bin/python3 || command -v python3)" -c '
import json, sys
f = [f for f in json.load(sys.stdin)["findings"] if f["check"].startswith("registry")]
for x in f:
    if x["severity"] != "ok":
        print(x["severity"], x["check"] + ":", x["message"])
if not f:
    print("no registry finding")'
}

dump_process() {
        local p=$1 t c
        {
                echo "--- process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
                for t in /proc/"$p"/task/*; do
                        echo "thread ${t##*/}: $(awk '/^State:/ {print $2, $3}' "$t/status" 2>/dev/null)" \
                             "wchan $(cat "$t/wchan" 2>/dev/null)"
                        sed 's/^/    /' "$t/stack" 2>/dev/null | head -12
                done
                for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
                        echo "child $c ($(tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | cut -c1-80)):" \
                             "$(awk '/^State:/ {print $2, $3}' "/proc/$c/status" 2>/dev/null)" \
                             "age $(ps -o etimes= -p "$c" 2>/dev/null | tr -d ' ') s, wchan $(cat "/proc/$c/wchan" 2>/dev/null)"
                        sed 's/^/    /' "/proc/$c/stack" 2>/dev/null | head -16
                        command -v gdb >/dev/null &&
                                timeout 20 gdb -p "$c" -batch -ex bt 2>/dev/null | grep '^#' | head -16 | sed 's/^/    /'
                done
        } >&2
}

write_fuse_hang() {
        cat >"$1" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/dev/fuse", os.O_RDWR)
opts = ("fd=%d,rootmode=40000,user_id=0,group_id=0" % fd).encode()
if libc.mount(b"nsid-hung", sys.argv[1].encode(), b"fuse", 2 | 4, opts) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
open(sys.argv[2], "w").close()
time.sleep(3600)
PY
}

# write_as_unit OUT BUILD UNIT_IN: OUT, a script that runs "$@" as the systemd unit UNIT_IN
# (a .service.in of the tree) would: no systemd is PID 1 here, so its options are emulated
# with the kernel mechanisms systemd uses. Run it as `unshare -m -u --propagation slave OUT
# PROGRAM...` (a mount and a hostname namespace of its own: ProtectHostname=):
#  - ProtectSystem=full: /usr, /boot, /etc read-only; ProtectHome=read-only: /home, /root,
#    /run/user read-only; PrivateTmp=: a /var/tmp of its own (not /tmp, where the tests'
#    files are);
#  - CapabilityBoundingSet= (from the unit) and NoNewPrivileges=yes (setpriv);
#  - SystemCallFilter=~... with SystemCallErrorNumber=EPERM (syscall-deny, BUILD's); an
#    ASan build then runs without LeakSanitizer, which needs ptrace.
write_as_unit() {
        local out=$1 build=$2 unit_in=$3 bnd deny
        bnd=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit_in" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
        deny=$(realpath "$build/tests/integration/syscall-deny")
        [ -n "$bnd" ] && [ -x "$deny" ] || return 1
        cat >"$out" <<EOF
#!/bin/sh
for d in /usr /boot /etc /home /root /run/user; do
        [ -d "\$d" ] || continue
        mount --bind "\$d" "\$d" && mount -o remount,bind,ro "\$d" || exit 1
done
mount -t tmpfs -o mode=1777 tmpfs /var/tmp || exit 1
# (LeakSanitizer stops the world with ptrace, which the unit's filter refuses: in the ASan
# tier the program runs so without its leak check; everything else of ASan stays)
export ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0"
exec setpriv --bounding-set=-all,$bnd --no-new-privs -- "$deny" "\$@"
EOF
        chmod +x "$out"
}
