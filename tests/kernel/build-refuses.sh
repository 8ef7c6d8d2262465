#!/bin/bash
# kernel-build-refuses: kernel/build-nfsv4 refuses, with exit 3 and a message naming the
# mismatch, to build a module from a source and headers of different kernels (6.1's source
# with 6.12's headers), without the source (NSID_LINUX_SOURCE_DIR names an empty place), for a
# kernel that is not installed, and for a series it has no patch for; nothing is left where
# the module would go. SKIP (77) without both lab kernels' headers.
set -u
build=${1:?usage: build-refuses.sh BUILD-NFSV4 WORKDIR} work=${2:?}
pass=0 fail=0
h612=$(ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | head -n 1)
r61=$(ls /boot/vmlinuz-6.1.* 2>/dev/null | head -n 1); r61=${r61#/boot/vmlinuz-}
if [ -z "$h612" ] || [ -z "$r61" ] || [ ! -f /usr/src/linux-source-6.1.tar.xz ]; then
  echo "SKIP: needs the 6.1 kernel, linux-source-6.1 and 6.12's headers (scripts/install-deps lab)"
  exit 77
fi
refused() { # description expected-message-regex args...
  local what=$1 re=$2 out rc; shift 2
  rm -rf "$work"; mkdir -p "$work"
  out=$("$build" "$@" --out "$work/out" 2>&1); rc=$?
  if [ "$rc" = 3 ] && printf '%s\n' "$out" | grep -qE "$re" && [ ! -e "$work/out/nfsv4.ko" ]; then
    echo "ok - $what: exit 3, '$(printf '%s\n' "$out" | grep -E "$re" | head -n 1)'"
    pass=$((pass + 1))
  else
    echo "not ok - $what: exit $rc"; printf '%s\n' "$out" | sed 's/^/#   /'
    fail=$((fail + 1))
  fi
}
refused "6.1 source with 6.12 headers" "refused: .*linux-source-6.1.tar.xz is Linux 6\.1\.[0-9]+ but the headers of $r61 are Linux 6\.12\." \
  "$r61" --headers "$h612"
NSID_LINUX_SOURCE_DIR=$work/nowhere refused "a source that is not there (NSID_LINUX_SOURCE_DIR)" \
  "refused: no kernel source $work/nowhere/linux-source-6\.1\.tar\.xz: install linux-source-6\.1" "$r61"
refused "a kernel that is not installed" "refused: no kernel headers for 6\.1\.0-999-amd64" 6.1.0-999-amd64
refused "a series without a patch" "refused: no nsid patch series for Linux 5\.10" 5.10.0-30-amd64
refused "a series that is not installed" "refused: no Linux 9\.9 kernel installed" 9.9
rm -rf "$work"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
