# bench-keyns (issues 18 and 19, "Numbers"): what a user waits for, end to end: a cold
# `ls -ln` in a container of 300 files with 300 owners, in one lab boot (6.12 by default,
# NSID_BENCH_KERNEL=6.1), nfs-utils' default, rpc.idmapd per container and nsid's set-up on
# the stock nfsv4 module, then nfsidmap, nsid and nsid-idmapd on the pipes alone on the
# patched module (kernel/). Prints the table; artefacts in BUILD/vm-lab/runs/bench-keyns-*.
add_custom_target(bench-keyns
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/keyns-ls-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-idmap nsid-idmapd
  USES_TERMINAL
  COMMENT "cold ls -ln in a container: nfs-utils vs nsid, stock vs patched nfsv4 (lab)")
add_dependencies(bench bench-keyns)
