# bench-idmapd (issue 6, "Numbers"): nsid-idmapd's memory with 100 namespaces and 100,000
# cached answers (on this host), and, in the qemu lab, upcalls per second and p99 latency of
# client pipe upcalls and knfsd channel requests against nfs-utils' rpc.idmapd in the same
# guest (bench/idmapd/lab-bench.sh, a scenario run by path, not a test). See
# bench/idmapd/bench-idmapd-run for the parts and their knobs.
add_custom_target(bench-idmapd
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/idmapd/bench-idmapd-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-idmapd
  USES_TERMINAL
  COMMENT "nsid-idmapd: memory (host), throughput and p99 vs rpc.idmapd (lab)")
add_dependencies(bench bench-idmapd)
