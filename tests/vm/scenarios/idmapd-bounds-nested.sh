#!/bin/bash
# idmapd-bounds-nested (issue #29, items 2 and 3) on the lab kernels: the host test
# tests/integration/itest-idmapd-bounds-nested.sh run as it is inside the guest (the
# guest runs the host's root: same script, same build), each of its lines a check here:
#  - 8 netns from root in a root-made container: 5 served (its own budget), 3 refused;
#  - a second root-made container's netns served on its own budget;
#  - a user nesting user namespaces as 8 subordinate uids: all charged to it, 5 served.
# lab-test: 6.1 6.12
# lab-cost: 20
. "$LAB_LIB/lab.sh"
W=/run/nsid-lab/bounds-nested
mkdir -p "$W"
note "kernel $(uname -r)"
# (the test makes its files under /tmp: the guest's tmpfs)
bash "$LAB_SRC/tests/integration/itest-idmapd-bounds-nested.sh" "$LAB_BUILD" >"$W/out" 2>&1
rc=$?
while IFS= read -r l; do
  case "$l" in
    "ok: "*) check "${l#ok: }" true ;;
    "FAIL: "*) check "${l#FAIL: }" false ;;
  esac
done <"$W/out"
check_eq "the host test's exit status" 0 "$rc"
[ "$rc" = 0 ] || { note "its output:"; tail -n 20 "$W/out" | while IFS= read -r l; do note "  $l"; done; }
lab_done
