# Tests of kernel/, nsid's patch series for the NFS idmapper keys (issue 18), and its builds;
# included at the end of tests/vm/CMakeLists.txt (the lab scenarios need the modules).
#  - kernel-nfsv4-<series> (fixture nsid-kmod-<series>): kernel/build-nfsv4 builds the patched
#    nfsv4.ko for the lab's Debian kernel of that series into BUILD/kernel/<release>/, from
#    Debian's linux-source and linux-headers packages; vm-kernel-keyns-<series> loads it.
#  - kernel-checkpatch: the kernel's own checkpatch.pl --strict on every patch.
#  - kernel-build-refuses: build-nfsv4 refuses headers and source of different kernels.
foreach(series 6.1 6.12)
  add_test(NAME kernel-nfsv4-${series}
           COMMAND ${CMAKE_SOURCE_DIR}/kernel/build-nfsv4 ${series} --build ${CMAKE_BINARY_DIR}
                   --jobs 2)
  set_tests_properties(kernel-nfsv4-${series} PROPERTIES
    LABELS "kernel;nosan" TIMEOUT 900 FIXTURES_SETUP nsid-kmod-${series})
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
