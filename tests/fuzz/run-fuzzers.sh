#!/bin/sh
# Run every libFuzzer target of a -DNSID_FUZZ=ON build for FUZZ_SECONDS each.
#
#   FUZZ_SECONDS=60 tests/fuzz/run-fuzzers.sh BUILD_DIR [TARGET...]
#
# For each BUILD_DIR/tests/fuzz/fuzz-<name> the seed corpus tests/fuzz/corpus/<name>/ is
# only read (passed as the second corpus directory, so libFuzzer never writes to it); new
# inputs go to a scratch working corpus. Prints one row per target (executions, cov, ft,
# corpus size, crashes). Crash/timeout/OOM inputs are kept in $FUZZ_OUT/crashes/<name>/.
# Exit status: 0 if no target crashed, 1 otherwise, 2 on usage errors.
#
# Environment: FUZZ_SECONDS (default 60), FUZZ_OUT (default BUILD_DIR/fuzz-out; logs,
# working corpora, crashes), FUZZ_JOBS (targets run in parallel, default 1),
# FUZZ_ARGS (extra libFuzzer flags).
set -u

usage() { echo "usage: FUZZ_SECONDS=N $0 BUILD_DIR [TARGET...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$1; shift
src=$(cd "$(dirname "$0")" && pwd)
secs=${FUZZ_SECONDS:-60}
case $secs in ''|*[!0-9]*) echo "FUZZ_SECONDS must be a number" >&2; exit 2 ;; esac
out=${FUZZ_OUT:-$build/fuzz-out}
jobs=${FUZZ_JOBS:-1}
fdir=$build/tests/fuzz
[ -d "$fdir" ] || { echo "$0: no $fdir (build with CC=clang -DNSID_FUZZ=ON)" >&2; exit 2; }

if [ $# -gt 0 ]; then
  targets=$*
else
  targets=$(cd "$fdir" && for f in fuzz-*; do
              [ -f "$f" ] && [ -x "$f" ] && echo "${f#fuzz-}"; done)
fi
[ -n "$targets" ] || { echo "$0: no fuzz-* binaries in $fdir" >&2; exit 2; }
mkdir -p "$out"

run_one() {
  t=$1
  bin=$fdir/fuzz-$t
  seed=$src/corpus/$t
  work=$out/corpus/$t
  crash=$out/crashes/$t
  log=$out/$t.log
  rm -rf "$work"; mkdir -p "$work" "$crash"
  # inputs an earlier run kept are set aside: this run's count is this run's findings
  if [ -n "$(ls -A "$crash")" ]; then
    mkdir -p "$out/crashes-earlier/$t" && mv "$crash"/* "$out/crashes-earlier/$t/"
  fi
  # A copy of the seeds as the starting working corpus; the seed dir itself is read-only
  # input (libFuzzer writes new units only to the first directory).
  [ -d "$seed" ] && cp -pR "$seed"/. "$work"/
  set -- "$work"
  [ -d "$seed" ] && set -- "$@" "$seed"
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
         -artifact_prefix="$crash/" ${FUZZ_ARGS:-} "$@" >"$log" 2>&1
  echo $? >"$out/$t.rc"
}

# Run the targets (FUZZ_JOBS at a time).
running=0
for t in $targets; do
  [ -x "$fdir/fuzz-$t" ] || { echo "$0: no $fdir/fuzz-$t" >&2; exit 2; }
  echo "fuzz: $t for ${secs}s" >&2
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait; running=0; fi
done
wait

status=0
printf '%-14s %12s %8s %8s %8s %7s  %s\n' target execs exec/s cov ft corpus crashes
for t in $targets; do
  log=$out/$t.log
  rc=$(cat "$out/$t.rc" 2>/dev/null || echo 99)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
  # the last status line: "#N  DONE/pulse/NEW  cov: C ft: F corp: U/..."
  last=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1)
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
  ncrash=$(find "$out/crashes/$t" -type f 2>/dev/null | wc -l)
  if [ "$rc" != 0 ] || [ "$ncrash" -gt 0 ]; then
    status=1
    [ "$ncrash" -gt 0 ] || ncrash="rc=$rc"
  fi
  printf '%-14s %12s %8s %8s %8s %7s  %s\n' "$t" "${execs:--}" "${eps:--}" "${cov:--}" \
         "${ft:--}" "${corp:--}" "$ncrash"
done
if [ "$status" != 0 ]; then
  echo "fuzz: crashes (inputs and logs in $out/crashes, $out/*.log)" >&2
fi
exit $status
