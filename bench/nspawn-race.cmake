# bench-nspawn-race (issue 21, "measure how often it wins in 20 runs"): a systemd-nspawn
# container that mounts the export at once, 20 runs on 6.12 (NSID_BENCH_KERNEL=6.1 for the
# other; NSID_BENCH_RUNS for another count): how often the mount wins the race against the
# identifier the udev rule's reconcile sets. The lab scenario tests/vm/scenarios/nspawn.sh
# with argument RUNS (`make test` runs it with 5, which keeps every check); the figure is its
# "# finding nspawn-race" line in BUILD/vm-lab/runs/bench-nspawn-race-KERNEL/result.tap.
add_custom_target(bench-nspawn-race
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/nspawn-race-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-uniquifier
  USES_TERMINAL
  COMMENT "nspawn: how often a container's mount wins the race against its identifier, 20 runs (lab)")
add_dependencies(bench bench-nspawn-race)
