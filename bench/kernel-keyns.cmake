# bench-kernel-keyns (issues 18 and 19): tests/vm/scenarios/kernel-keyns.sh with the 50
# names `make test` asked before it was trimmed to 20 (which keeps every check): two
# containers ask them at the same moment (the findings "stock-simultaneous" and
# "patched-simultaneous": how many wrong answers, ms a name), and 10 churn containers
# (finding "patched-teardown"). 6.12 by default, NSID_BENCH_KERNEL=6.1 for the other,
# NSID_BENCH_ARGS="ROUNDS CHURN" for other sizes (e.g. "50 200"). Needs the patched modules
# (ctest -R kernel-nfsv4). Findings in BUILD/vm-lab/runs/bench-kernel-keyns-KERNEL/.
add_custom_target(bench-kernel-keyns
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/kernel-keyns-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-idmap nsid-idmapd nsidctl
  USES_TERMINAL
  COMMENT "the NFS idmapper's key cache, stock vs patched nfsv4: 50 simultaneous names (lab)")
add_dependencies(bench bench-kernel-keyns)
