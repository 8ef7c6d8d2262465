# nsid-idmapd soak (issue 7, "Faults"): netns churn, control-socket lookups and the real
# request-key path (nsid-idmap's fast path) at a high rate for SOAK_SECONDS (default 600),
# the daemon's RSS, fds and threads sampled every SOAK_SAMPLE seconds (default 10); fails
# on growth. Root. `SOAK_SECONDS=60 cmake --build BUILD --target bench-idmapd-soak` for less.
add_custom_target(bench-idmapd-soak
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/soak/idmapd-soak.sh ${CMAKE_BINARY_DIR}
  DEPENDS nsid-idmapd nsid-idmap
  USES_TERMINAL
  COMMENT "nsid-idmapd: soak (RSS and fds under 10 minutes of upcalls and netns churn)")
add_dependencies(bench bench-idmapd-soak)
