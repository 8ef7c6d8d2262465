#!/bin/bash
# make demo: boot the lab once (6.12, or $NSID_DEMO_KERNEL) and show several containers
# mounting one NFS server, before and after nsid: client identity, then ID mapping.
# Usage: tests/vm/demo.sh BUILD_DIR
set -u
build=${1:?usage: tests/vm/demo.sh BUILD_DIR}
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
kernel=${NSID_DEMO_KERNEL:-6.12}
out="$build/vm-lab/runs/demo-$kernel"
mkdir -p "$build/vm-lab/runs"
echo "demo: booting Linux $kernel under qemu (TCG, three minutes or more on a busy host)..."
# about 3 minutes of guest time (TCG, host shared with other guests); room for a loaded host
"$here/lab-run" "$here/demo-guest.sh" "$kernel" --build "$build" --out "$out" \
  --timeout "${NSID_DEMO_TIMEOUT:-600}" > "$out.log" 2>&1
rc=$?
if [ "$rc" = 77 ]; then
  # lab-run's skip: say why the demo did not run instead of "something failed"
  echo "demo: not run: the lab cannot boot here:" >&2
  grep -E 'SKIP|skip' "$out.log" | sed 's/^/  /' >&2
  exit 77
fi
if [ -s "$out/demo.txt" ]; then
  cat "$out/demo.txt"
fi
grep -E '^(not ok|[0-9]+ passed)' "$out.log"
if [ "$rc" != 0 ]; then
  echo "demo: something failed; full output in $out.log, console log in $out/console.log" >&2
  exit "$rc"
fi
echo "demo: checks and artefacts in $out"
