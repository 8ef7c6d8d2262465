# Tests of kernel/, nsid's patch series for the NFS idmapper keys (issue 18), and its builds;
# included at the end of tests/vm/CMakeLists.txt (the lab scenarios need the modules).
#  - kernel-nfsv4-<series> (fixture nsid-kmod-<series>): kernel/build-nfsv4 builds the patched
#    nfsv4.ko for the lab's Debian kernel of that series into BUILD/kernel/<release>/, from
#    Debian's linux-source and linux-headers packages; vm-kernel-keyns-<series> loads it.
#  - kernel-checkpatch: the kernel's own checkpatch.pl --strict on every patch.
#  - kernel-build-refuses: build-nfsv4 refuses headers and source of different kernels.
#  Without the lab kernel of that series installed, kernel-nfsv4-<series> is skipped (77), as
#  lab-run skips its scenarios then; with the kernel but not its headers or linux-source,
#  build-nfsv4 refuses (exit 3): a failure, and ctest does not run the scenario that needs it.
foreach(series 6.1 6.12)
  add_test(NAME kernel-nfsv4-${series}
           COMMAND sh -c "ls /boot/vmlinuz-$1.* >/dev/null 2>&1 || { echo \"SKIP: no Linux $1 kernel installed (no /boot/vmlinuz-$1.*: scripts/install-deps lab)\"; exit 77; }; exec \"$0\" \"$@\""
                   ${CMAKE_SOURCE_DIR}/kernel/build-nfsv4 ${series} --build ${CMAKE_BINARY_DIR}
                   --jobs 2)
  set_tests_properties(kernel-nfsv4-${series} PROPERTIES
    LABELS "kernel;nosan" TIMEOUT 900 FIXTURES_SETUP nsid-kmod-${series} SKIP_RETURN_CODE 77)
endforeach()
add_test(NAME kernel-checkpatch COMMAND ${CMAKE_SOURCE_DIR}/tests/kernel/checkpatch-series.sh ${CMAKE_SOURCE_DIR}/kernel/patches)
set_tests_properties(kernel-checkpatch PROPERTIES LABELS "kernel;nosan" TIMEOUT 300
                     SKIP_RETURN_CODE 77)
add_test(NAME kernel-build-refuses
         COMMAND ${CMAKE_SOURCE_DIR}/tests/kernel/build-refuses.sh
                 ${CMAKE_SOURCE_DIR}/kernel/build-nfsv4 ${CMAKE_BINARY_DIR}/kernel-refuses)
set_tests_properties(kernel-build-refuses PROPERTIES LABELS "kernel;nosan" TIMEOUT 300
                     SKIP_RETURN_CODE 77)
foreach(series 6.1 6.12)
  if(TEST vm-kernel-keyns-${series})
    set_tests_properties(vm-kernel-keyns-${series} PROPERTIES FIXTURES_REQUIRED nsid-kmod-${series})
  endif()
endforeach()
