add_custom_target(bench-uniquifier
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/bench-uniquifier.sh ${CMAKE_BINARY_DIR}
  DEPENDS nsid-uniquifier
  USES_TERMINAL
  COMMENT "nsid-uniquifier: set and reconcile vs ip netns add")
add_dependencies(bench bench-uniquifier)
