# bench-idmapd-bounds (issue 20 item 5, "Prove it"): 2,000 throwaway user + network namespaces
# from an unprivileged user (4 waves of 500, the last alive while a real container mounts),
# then that container is served within its usual time. The lab scenario
# tests/vm/scenarios/idmapd-bounds.sh with arguments "4 500" (`make test` runs it with one
# wave of 160); 6.12 by default, NSID_BENCH_KERNEL=6.1 for the other. Figures (daemon fds, threads,
# RSS, registry rows; the container's mount and first lookup before and during) are its
# "# figures" lines in BUILD/vm-lab/runs/bench-idmapd-bounds-KERNEL/result.tap.
add_custom_target(bench-idmapd-bounds
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/idmapd-bounds-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-idmapd nsid-uniquifier
  USES_TERMINAL
  COMMENT "2,000 namespaces from an unprivileged user, then a real container (lab)")
add_dependencies(bench bench-idmapd-bounds)
