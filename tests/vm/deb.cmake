# Debian packages (issue 8), included at the end of tests/vm/CMakeLists.txt.
#  - deb-build (fixture nsid-debs): dpkg-buildpackage -b -us -uc on a copy of the work tree in
#    BUILD/deb/src (the work tree stays clean), packages in BUILD/deb; tests/vm/lib/deb.sh.
#  - deb-lintian: lintian on the built packages; fails on errors (debian/*.lintian-overrides
#    say why the overridden ones are wrong), prints warnings.
#  - vm-deb-smoke-<kernel> (tests/vm/scenarios/deb-smoke.sh) installs them in a lab guest and
#    needs the fixture; ctest -R vm-deb-smoke pulls deb-build in by itself.
#  - deb-dkms (tests/kernel/dkms-deb.sh): nsid-nfs-keyns-dkms unpacked, the real dkms adds,
#    builds (the patched nfsv4.ko for the 6.12 lab kernel, once) and installs it into scratch
#    trees, depmod resolves nfsv4 to updates/dkms, remove --all cleans up; a missing or
#    mismatched linux-source fails the build with build-nfsv4's refusal in make.log.
#  - deb-dkms-maintscripts (tests/kernel/dkms-maintscripts.sh): its postinst and prerm with a
#    fake dkms (every branch) and with the real one (added, refused build, removed).
#    Both need root and leave the system's /var/lib/dkms, /usr/src, /lib/modules alone.
add_test(NAME deb-build
         COMMAND ${CMAKE_COMMAND} -E env NSID_DEB_LINTIAN=0
                 ${CMAKE_CURRENT_SOURCE_DIR}/lib/deb.sh build ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/deb)
set_tests_properties(deb-build PROPERTIES
  LABELS "package;nosan" TIMEOUT 900 FIXTURES_SETUP nsid-debs)
add_test(NAME deb-lintian
         COMMAND sh -c "command -v lintian >/dev/null || { echo 'SKIP: lintian missing (apt install lintian)'; exit 77; }; lintian --info --display-info ${CMAKE_BINARY_DIR}/deb/nsid_*.changes")
set_tests_properties(deb-lintian PROPERTIES
  LABELS "package;nosan" TIMEOUT 600 FIXTURES_REQUIRED nsid-debs SKIP_RETURN_CODE 77)
add_test(NAME deb-dkms
         COMMAND ${CMAKE_SOURCE_DIR}/tests/kernel/dkms-deb.sh ${CMAKE_BINARY_DIR}/deb
                 ${CMAKE_BINARY_DIR}/deb-dkms)
# The module build is ~90 s on an idle machine, several times that beside the lab.
set_tests_properties(deb-dkms PROPERTIES
  LABELS "package;nosan" TIMEOUT 1500 FIXTURES_REQUIRED nsid-debs SKIP_RETURN_CODE 77)
add_test(NAME deb-dkms-maintscripts
         COMMAND ${CMAKE_SOURCE_DIR}/tests/kernel/dkms-maintscripts.sh ${CMAKE_BINARY_DIR}/deb
                 ${CMAKE_BINARY_DIR}/deb-dkms-maintscripts)
set_tests_properties(deb-dkms-maintscripts PROPERTIES
  LABELS "package;nosan" TIMEOUT 300 FIXTURES_REQUIRED nsid-debs SKIP_RETURN_CODE 77)
#  - deb-build-prev: the packages of the previous commit (HEAD~1, git archive), versioned
#    VERSION~prev, in BUILD/deb-prev: systemd-host upgrades them to this tree's; SKIP (77)
#    in a tree without that commit (a shallow clone), and systemd-host then says so.
#  - vm-systemd-host-<kernel> (tests/vm/scenarios/systemd-host.sh): the packages installed
#    with dpkg in a guest booted with systemd as PID 1 (units, udev rule, timer, remove,
#    reinstall, purge); needs the fixture too.
add_test(NAME deb-build-prev
         COMMAND ${CMAKE_COMMAND} -E env NSID_DEB_LINTIAN=0
                 ${CMAKE_CURRENT_SOURCE_DIR}/lib/deb.sh build-rev ${CMAKE_SOURCE_DIR} HEAD~1
                 ${CMAKE_BINARY_DIR}/deb-prev)
set_tests_properties(deb-build-prev PROPERTIES
  LABELS "package;nosan" TIMEOUT 900 SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "^SKIP: ")
foreach(kernel 6.1 6.12)
  if(TEST vm-systemd-host-${kernel})
    # (ordering only: without the previous packages the scenario installs this tree's alone)
    set_tests_properties(vm-systemd-host-${kernel} PROPERTIES DEPENDS deb-build-prev)
  endif()
  foreach(scenario deb-smoke systemd-host)
    if(TEST vm-${scenario}-${kernel})
      set_tests_properties(vm-${scenario}-${kernel} PROPERTIES FIXTURES_REQUIRED nsid-debs)
    endif()
  endforeach()
endforeach()
