# bench-server-watch (issue 31's figures): nsidctl watch --server following takeovers made by
# nsid-nfsd-takeover-gen (two connections presenting one owner string in turn: EXCHANGE_ID,
# CREATE_SESSION) on the lab's knfsd: the takeovers per second knfsd sustains with and
# without the watcher (its cost to the server), and a paced run at 1,000 a second: every
# replacement knfsd traced (counted apart) recorded, none lost, the watcher's CPU. The lab
# scenario tests/vm/scenarios/bench-server-watch.sh (no lab-test line: not in `make test`);
# 6.12 by default, NSID_BENCH_KERNEL=6.1 for the other.
add_executable(nsid-nfsd-takeover-gen ${CMAKE_CURRENT_SOURCE_DIR}/nfsd-takeover-gen.c)
add_custom_target(bench-server-watch
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/server-watch-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsidctl nsid-nfsd-takeover-gen
  USES_TERMINAL
  COMMENT "nsidctl watch --server at 1,000 takeovers a second, and its cost to knfsd (lab)")
add_dependencies(bench bench-server-watch)
