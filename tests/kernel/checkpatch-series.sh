#!/bin/bash
# kernel-checkpatch: every patch of kernel/patches/<series>/ passes the kernel's own
# scripts/checkpatch.pl --strict (from Debian's linux-source of the newest series), with one
# exception: the missing Signed-off-by, which the person who sends the series adds.
# Prints "N passed, N failed"; SKIP (77) when no linux-source package is installed.
set -u
patches=$(cd "${1:?usage: checkpatch-series.sh KERNEL_PATCHES_DIR}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
# one checkpatch.pl for every series: the newest kernel's (the rules only grow)
newest=$(ls -d "$patches"/*/ | xargs -n1 basename | sort -V | tail -n 1)
tarball=/usr/src/linux-source-$newest.tar.xz
if [ ! -f "$tarball" ]; then
  echo "SKIP: $tarball missing (scripts/install-deps installs linux-source-$newest)"
  exit 77
fi
tar -C "$work" --strip-components=1 -xJf "$tarball" \
  "linux-source-$newest/scripts/checkpatch.pl" "linux-source-$newest/scripts/spelling.txt" \
  "linux-source-$newest/scripts/const_structs.checkpatch" || { echo "not ok - no checkpatch.pl in $tarball"; exit 1; }
for dir in "$patches"/*/; do
  series=$(basename "$dir")
  for p in "$dir"/0[0-9][0-9][1-9]-*.patch; do
    out=$(cd "$work" && perl scripts/checkpatch.pl --strict --no-tree --no-color "$p" 2>&1)
    # everything it reports but the Signed-off-by line
    left=$(printf '%s\n' "$out" | grep -E '^(ERROR|WARNING|CHECK):' | grep -v '^ERROR: Missing Signed-off-by')
    total=$(printf '%s\n' "$out" | grep -E '^total:')
    if [ -z "$left" ] && printf '%s\n' "$total" | grep -qE '^total: [01] errors, 0 warnings, 0 checks'; then
      echo "ok - $series/$(basename "$p"): $total (the error is the missing Signed-off-by)"
      pass=$((pass + 1))
    else
      echo "not ok - $series/$(basename "$p"): $total"
      printf '%s\n' "$out" | sed 's/^/#   /'
      fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
