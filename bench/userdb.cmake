add_executable(nsid-bench-userdb ${CMAKE_CURRENT_SOURCE_DIR}/bench-userdb.c)
target_link_libraries(nsid-bench-userdb PRIVATE nsid_testing)
add_custom_target(bench-userdb
  COMMAND nsid-bench-userdb
  DEPENDS nsid-bench-userdb
  USES_TERMINAL
  COMMENT "nsid_userdb_parse() of 100,000 passwd and group entries (target: under 100 ms)")
add_dependencies(bench bench-userdb)
