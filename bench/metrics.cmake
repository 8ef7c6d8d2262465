add_custom_target(bench-metrics
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/bench-metrics.sh ${CMAKE_BINARY_DIR}
  DEPENDS nsid-idmapd
  USES_TERMINAL
  COMMENT "nsid-idmapd's lookups with its metrics against the daemon before them (same boot)")
add_dependencies(bench bench-metrics)
