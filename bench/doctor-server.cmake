add_executable(nsid-rusage-run ${CMAKE_CURRENT_SOURCE_DIR}/rusage-run.c)
add_custom_target(bench-doctor-server
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/bench-doctor-server.sh ${CMAKE_BINARY_DIR}
  DEPENDS nsidctl nsid-rusage-run
  USES_TERMINAL
  COMMENT "nsidctl doctor --server over 5,000 knfsd client records: time and peak memory")
add_dependencies(bench bench-doctor-server)
