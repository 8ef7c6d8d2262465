#!/bin/bash
# kernel-checkpatch: every patch of kernel/patches/<series>/ passes the kernel's own
# scripts/checkpatch.pl --strict (from Debian's linux-source of that series), with one
# exception: the missing Signed-off-by, which the person who sends the series adds.
# Prints "N passed, N failed"; SKIP (77) when no linux-source package is installed.
set -u
patches=$(cd "${1:?usage: checkpatch-series.sh KERNEL_PATCHES_DIR}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
for dir in "$patches"/*/; do
  series=$(basename "$dir")
  tarball=/usr/src/linux-source-$series.tar.xz
  if [ ! -f "$tarball" ]; then
    echo "SKIP: $tarball missing (scripts/install-deps installs linux-source-$series)"
    exit 77
  fi
  mkdir -p "$work/$series"
  tar -C "$work/$series" --strip-components=1 -xJf "$tarball" \
    "linux-source-$series/scripts/checkpatch.pl" "linux-source-$series/scripts/spelling.txt" \
    "linux-source-$series/scripts/const_structs.checkpatch" || { echo "not ok - $series: no checkpatch.pl"; exit 1; }
  for p in "$dir"/0[0-9][0-9][1-9]-*.patch; do
    out=$(cd "$work/$series" && perl scripts/checkpatch.pl --strict --no-tree --no-color "$p" 2>&1)
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
