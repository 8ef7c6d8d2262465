# bench-podman-hook (issue 21, "Numbers"): the start overhead of nsid's OCI hook under real
# Podman + crun, in one lab boot (6.12 by default, NSID_BENCH_KERNEL=6.1): `podman run` of a
# container that exits at once, 20 runs with the hook and 20 without, median ratio. Prints the
# table; artefacts in BUILD/vm-lab/runs/bench-podman-hook-*.
add_custom_target(bench-podman-hook
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/podman-hook-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-uniquifier nsidctl nsid-idmap nsid-idmapd
  USES_TERMINAL
  COMMENT "podman run with and without nsid's OCI hook (lab)")
add_dependencies(bench bench-podman-hook)
