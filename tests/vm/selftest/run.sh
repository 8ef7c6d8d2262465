#!/bin/bash
# ctest vm-lab-selftest: lab-run itself must report a failing scenario and a hung guest as
# failures, keep the console log and print its path, and a lab that cannot run (a kernel
# that is not installed) as a skip, never a pass. Usage: run.sh BUILD_DIR [KERNEL]
# SKIP (77) when lab-run cannot boot KERNEL here (not root, the kernel, qemu or busybox
# missing): the failing and the hung guest are what this test is about.
set -u
build=$1 kernel=${2:-6.1}
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
runner="$here/../lab-run"
pass=0 fail=0 n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok $n - $2"; else fail=$((fail + 1)); echo "not ok $n - $2"; fi; }
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: lab-run needs root (run as root)"; exit 77; }

err=$("$runner" smoke 0.99 --build "$build" 2>&1 >/dev/null); rc=$?
ok $([ "$rc" = 77 ]; echo $?) "a missing kernel is a skip (77), not a pass or a failure (got $rc)"
echo "$err" | grep -q "SKIP: kernel 0.99 is not installed"; ok $? "the missing kernel is named"

out="$build/vm-lab/runs/selftest-fails-$kernel"
err=$("$runner" "$here/fails.sh" "$kernel" --build "$build" --out "$out" --timeout 120 2>&1 >/dev/null); rc=$?
if [ "$rc" = 77 ]; then
  echo "$pass passed, $fail failed; the guest runs skipped"
  [ "$fail" = 0 ] || exit 1
  echo "SKIP: lab-run cannot boot $kernel here: $(echo "$err" | grep -m1 'SKIP:')"
  exit 77
fi
ok $([ "$rc" = 1 ]; echo $?) "a scenario with a failing check makes lab-run exit 1 (got $rc)"
echo "$err" | grep "FAIL: fails on" | grep -q "1 passed, 1 failed"; ok $? "the failure names the count"
echo "$err" | grep -q "console log kept: $out/console.log"; ok $? "the console log path is printed"
grep -q "not ok 2 - this check fails on purpose" "$out/console.log"; ok $? "the console log holds the result block"

out="$build/vm-lab/runs/selftest-hangs-$kernel"
t0=$(date +%s)
# (35 s: lab-run starts a guest only with 30 s or more of its limit left)
err=$("$runner" "$here/hangs.sh" "$kernel" --build "$build" --out "$out" --timeout 35 2>&1 >/dev/null); rc=$?
secs=$(( $(date +%s) - t0 ))
ok $([ "$rc" = 1 ]; echo $?) "a hung guest makes lab-run exit 1 (got $rc)"
echo "$err" | grep -q "guest hung: killed after 35s"; ok $? "the hang is reported as such"
ok $([ "$secs" -le 50 ]; echo $?) "the hung guest was killed in time (${secs}s for a 35 s limit)"
test -s "$out/console.log"; ok $? "the hung guest's console log is kept"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
