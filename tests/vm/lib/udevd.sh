# udevd.sh: a real systemd-udevd in the lab guest, running the installed rules (bash, as
# root; source lab.sh first).
# The guest has no systemd as PID 1, so the nsid rule's /usr/bin/systemd-run is replaced
# (bind mount) by a shim that logs its arguments and runs the unit's command in the
# foreground: the rule, its match and its RUN line are udevd's, unchanged. (The real
# systemd-run --no-block returns as soon as PID 1 has queued the service; the shim holds the
# udevd worker until the command ends: the command starts as early as with systemd.)
#
#   udevd_start DIR LOG [SHIMLOG]
#                           shim in DIR (its log SHIMLOG, default DIR/systemd-run.log: "systemd-run ARGS",
#                           the command's output, "exit N", each line of the shim's own
#                           prefixed by the time in ms), bound over /usr/bin/systemd-run;
#                           systemd-udevd --debug, its output to LOG; UDEVD_PID (call it
#                           in the scenario's shell, not under check: that is a subshell)
#   udevd_stop              udevd exits, the shim is unbound
#   udevd_fired             how often the rule's command ran (0 before the shim's log exists)
UDEVD_DIR= UDEVD_SHIMLOG=

udevd_start() {
  UDEVD_DIR=$1 UDEVD_SHIMLOG=${3:-$1/systemd-run.log}
  cat > "$UDEVD_DIR/systemd-run" <<EOF
#!/bin/bash
# systemd-run stand-in (no systemd as PID 1 in the lab guest): log, skip the options, run
t=\${EPOCHREALTIME/./}
echo "systemd-run \$* (at \$(( t / 1000 )))" >> "$UDEVD_SHIMLOG"
# (the unit's properties, -p NAME=VALUE, are systemd's to apply: not applied here)
while [ \$# -gt 0 ]; do
  case "\$1" in -p) shift 2 ;; --*) shift ;; *) break ;; esac
done
"\$@" >> "$UDEVD_SHIMLOG" 2>&1
rc=\$?
t=\${EPOCHREALTIME/./}
echo "exit \$rc (at \$(( t / 1000 )))" >> "$UDEVD_SHIMLOG"
EOF
  chmod 755 "$UDEVD_DIR/systemd-run" || return 1
  mount --bind "$UDEVD_DIR/systemd-run" /usr/bin/systemd-run || return 1
  mkdir -p /run/udev
  /lib/systemd/systemd-udevd --debug > "$2" 2>&1 &
  UDEVD_PID=$!
  wait_for 10 udevadm control --ping
}

udevd_stop() {
  udevadm control --exit 2>/dev/null; wait "$UDEVD_PID" 2>/dev/null
  umount /usr/bin/systemd-run
}

udevd_fired() { cat "$UDEVD_SHIMLOG" 2>/dev/null | grep -c "nsid-uniquifier --quiet reconcile"; }
