# bench-idmapd-sssd (issue 28's figure): a cold `ls -ln` of 1,000 files owned by 1,000
# distinct directory users (slapd with 10,000 users, SSSD's LDAP provider in the container),
# seen from inside that container over NFSv4.2 with name mapping on both sides: nsid's
# default set-up (its request-key rule, nsid-idmapd with no configuration) against
# rpc.idmapd run in the container, passes "rpc nsid nsid rpc" in one lab boot, then the same
# listing warm. The lab scenario tests/vm/scenarios/bench-idmapd-sssd.sh (no lab-test line:
# not in `make test`); 6.12 by default, NSID_BENCH_KERNEL=6.1 for the other. Prints its
# "figure:" lines (times and the ratios nsid/rpc.idmapd cold and warm); artefacts in
# BUILD/vm-lab/runs/bench-idmapd-sssd-KERNEL/.
add_custom_target(bench-idmapd-sssd
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lab/idmapd-sssd-bench-run ${CMAKE_BINARY_DIR}
  DEPENDS nsid-idmap nsid-idmapd nsid-nss-query
  USES_TERMINAL
  COMMENT "cold ls -ln of 1,000 SSSD owners in a container: nsid vs rpc.idmapd there (lab)")
add_dependencies(bench bench-idmapd-sssd)
