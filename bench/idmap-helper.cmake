# bench-idmap-helper (issue 5, "Numbers"): per-upcall cost of id_resolver request-key helpers
# through the real kernel upcall, in the qemu lab (one boot of Debian's 6.1 kernel, or
# NSID_BENCH_KERNEL=6.12): the floor (a helper that only instantiates), nfs-utils' nfsidmap,
# a floor for helpers resolving through libnfsidmap (rk-nfsidmap-floor.c),
# nsid-idmap without nsid-idmapd and nsid-idmap with nsid-idmapd running (fast path).
# Prints a table with the ratios to the floor. The scenario bench/lab/idmap-helper-bench.sh is
# not a test (no "# lab-test:" line); artefacts in BUILD/vm-lab/runs/bench-idmap-helper-KERNEL.
add_executable(nsid-rk-floor ${CMAKE_CURRENT_SOURCE_DIR}/rk-floor-helper.c)
add_executable(nsid-rk-nfsidmap-floor ${CMAKE_CURRENT_SOURCE_DIR}/rk-nfsidmap-floor.c)
target_link_libraries(nsid-rk-nfsidmap-floor PRIVATE PkgConfig::NFSIDMAP ${CMAKE_DL_LIBS})
target_compile_definitions(nsid-rk-nfsidmap-floor PRIVATE
  NSID_NFSIDMAP_PLUGIN_DIR="${NSID_NFSIDMAP_PLUGIN_DIR}")
add_executable(nsid-rk-bench-req ${CMAKE_CURRENT_SOURCE_DIR}/rk-bench-req.c)
add_custom_target(bench-idmap-helper
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/idmap-helper-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-rk-floor nsid-rk-nfsidmap-floor nsid-rk-bench-req nsid-idmap nsid-idmapd
  USES_TERMINAL
  COMMENT "id_resolver helpers in the lab: floor, nfsidmap, nsid-idmap, nsid-idmap + nsid-idmapd")
add_dependencies(bench bench-idmap-helper)

# bench-idmap-footprint: the distinct instructions each helper runs for one upcall (callgrind
# on this host, through the real request-key path): the noise-free counterpart of
# bench-idmap-helper's lab timings (see bench/footprint/idmap-helper-footprint).
add_custom_target(bench-idmap-footprint
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/footprint/idmap-helper-footprint ${CMAKE_BINARY_DIR}
  DEPENDS nsid-rk-floor nsid-rk-nfsidmap-floor nsid-idmap nsid-idmapd
  USES_TERMINAL
  COMMENT "distinct instructions per id_resolver upcall: floor, libnfsidmap floor, nsid-idmap")
add_dependencies(bench bench-idmap-footprint)
