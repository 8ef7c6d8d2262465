#!/bin/sh
# Run one program once under valgrind memcheck: any memory error or definitely lost block
# fails the test (exit 99), as does the program failing with an unexpected status. Without
# valgrind it cannot run: SKIP, exit 77.
#
#   vg-run.sh EXPECTED_STATUS PROGRAM [ARGS...]
#
# EXPECTED_STATUS is one exit status or a comma-separated list of them ("0,1").
#
# A scratch state directory, machine-id and fake NFS client directory are provided through
# the programs' documented environment (NSID_STATE_DIR, NSID_MACHINE_ID_FILE,
# NSID_TEST_SYSFS_NFS_CLIENT_DIR: this host has no nfs module) and as $VG_TMP for arguments
# ("@TMP@" in an argument is replaced by it).
set -u
want=${1:?usage: $0 EXPECTED_STATUS PROGRAM [ARGS...]}; shift
command -v valgrind >/dev/null || { echo "SKIP: valgrind missing (apt install valgrind)"; exit 77; }
VG_TMP=$(mktemp -d /tmp/nsid-valgrind.XXXXXX)
trap 'rm -rf "$VG_TMP"' EXIT
mkdir -p "$VG_TMP/state" "$VG_TMP/fake"
echo 00112233445566778899aabbccddeeff >"$VG_TMP/machine-id"
printf '[General]\nDomain = example.test\n' >"$VG_TMP/idmapd.conf"
: >"$VG_TMP/nsid.conf"
export NSID_STATE_DIR="$VG_TMP/state" NSID_MACHINE_ID_FILE="$VG_TMP/machine-id"
export NSID_TEST_SYSFS_NFS_CLIENT_DIR="$VG_TMP/fake" VG_TMP

prog=$1; shift
n=$#
i=0
while [ "$i" -lt "$n" ]; do
  a=$1; shift
  case $a in *@TMP@*) a=$(printf '%s' "$a" | sed "s#@TMP@#$VG_TMP#g") ;; esac
  set -- "$@" "$a"
  i=$((i + 1))
done

valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
         --show-leak-kinds=definite --track-fds=no --child-silent-after-fork=yes \
         --log-file="$VG_TMP/vg.log" "$prog" "$@" </dev/null >"$VG_TMP/out" 2>"$VG_TMP/err"
rc=$?
sed 's/^/stdout: /' "$VG_TMP/out" | head -n 20
sed 's/^/stderr: /' "$VG_TMP/err" | head -n 20
if [ -s "$VG_TMP/vg.log" ]; then
  echo "valgrind report:"; cat "$VG_TMP/vg.log"
fi
if [ "$rc" = 99 ] || grep -q 'definitely lost: [1-9]\|ERROR SUMMARY: [1-9]' "$VG_TMP/vg.log"; then
  echo "FAIL: memcheck errors or definite leaks"; exit 1
fi
case ",$want," in
  *",$rc,"*) ;;
  *) echo "FAIL: exit status $rc, want $want"; exit 1 ;;
esac
echo "ok: $(basename "$prog") $* (exit $rc, memcheck clean)"
