# Where the files that other programs read go: chosen at install time, from the prefix that
# `cmake --install --prefix` (or `make install PREFIX=`) gives, because udev, systemd and the
# OCI runtimes read only their own directories:
#   prefix /usr        (the package, a distribution's build): the distribution's directories,
#                      from udev's and systemd's pkg-config files (/lib/udev/rules.d and
#                      /lib/systemd/system on Debian 12), /usr/share/containers/oci/hooks.d;
#   prefix /usr/local  (the default of `make install`): the local directories udev and
#                      systemd also read (/usr/local/lib/udev/rules.d,
#                      /usr/local/lib/systemd/system) and /etc/containers/oci/hooks.d;
#   any other prefix   (/opt/...): /etc/udev/rules.d, /etc/systemd/system,
#                      /etc/containers/oci/hooks.d (nothing reads them under /opt).
# request-key reads only /etc/request-key.d, whatever the prefix.
# NSID_SBINDIR is where the programs go, for the files that name them (units, rules, hooks).
# nsid_install_files(DIRVAR FILE... [RENAME NAME]) installs into the directory chosen.
pkg_get_variable(_nsid_pc_udevdir udev udevdir)
if(NOT _nsid_pc_udevdir)
  set(_nsid_pc_udevdir "/lib/udev")
endif()
pkg_get_variable(_nsid_pc_unitdir systemd systemdsystemunitdir)
if(NOT _nsid_pc_unitdir)
  set(_nsid_pc_unitdir "/lib/systemd/system")
endif()
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(NSID_UDEV_RULES_DIR \"${_nsid_pc_udevdir}/rules.d\")
    set(NSID_UNIT_DIR \"${_nsid_pc_unitdir}\")
    set(NSID_OCI_HOOKS_DIR \"/usr/share/containers/oci/hooks.d\")
  elseif(CMAKE_INSTALL_PREFIX STREQUAL \"/usr/local\")
    set(NSID_UDEV_RULES_DIR \"/usr/local/lib/udev/rules.d\")
    set(NSID_UNIT_DIR \"/usr/local/lib/systemd/system\")
    set(NSID_OCI_HOOKS_DIR \"/etc/containers/oci/hooks.d\")
  else()
    set(NSID_UDEV_RULES_DIR \"/etc/udev/rules.d\")
    set(NSID_UNIT_DIR \"/etc/systemd/system\")
    set(NSID_OCI_HOOKS_DIR \"/etc/containers/oci/hooks.d\")
  endif()
  set(NSID_REQUEST_KEY_DIR \"${NSID_REQUEST_KEY_DIR}\")
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_SBINDIR}\")
    set(NSID_SBINDIR \"${CMAKE_INSTALL_SBINDIR}\")
  else()
    set(NSID_SBINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}\")
  endif()
")

function(nsid_install_files dirvar)
  cmake_parse_arguments(PARSE_ARGV 1 a "" "RENAME;SUBDIR" "")
  set(files "")
  foreach(f IN LISTS a_UNPARSED_ARGUMENTS)
    string(APPEND files " \"${f}\"")
  endforeach()
  set(dest "\${${dirvar}}")
  if(a_SUBDIR)
    string(APPEND dest "/${a_SUBDIR}")
  endif()
  set(rename "")
  if(a_RENAME)
    set(rename "RENAME \"${a_RENAME}\"")
  endif()
  install(CODE "file(INSTALL DESTINATION \"${dest}\" TYPE FILE FILES ${files} ${rename})")
endfunction()
