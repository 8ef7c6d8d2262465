#!/bin/bash
# deb-dkms-maintscripts: the maintainer scripts of the built nsid-nfs-keyns-dkms package
# (postinst and prerm, as dpkg-deb -e gives them, tokens filled in), which are written by
# hand (see debian/nsid-nfs-keyns-dkms.postinst for why not dh_dkms).
#
#   tests/kernel/dkms-maintscripts.sh DEB-DIR WORKDIR
#
#  A. every branch, with a fake dkms (logs its arguments, answers status and fails as told)
#     and a fake uname -r on PATH: configure adds once and installs for the running kernel
#     when its headers exist; a failed build (exit 10) or an excluded kernel (77) leaves the
#     configuration successful and says why; no install for a kernel that is not here; a
#     failed dkms add fails the configuration; abort-upgrade configures again; prerm runs
#     dkms remove --all only when the module is added, and a failing remove does not block
#     the removal.
#  B. the same scripts with the real dkms, in a private mount namespace where /var/lib/dkms
#     and /lib/modules are scratch trees and the package's /usr/src and /usr/share are
#     overlaid on the system's (as after dpkg unpacked it), uname -r the 6.12 lab kernel,
#     its linux-source hidden (NSID_LINUX_SOURCE_DIR) so the build is refused in seconds:
#     configure exits 0 and prints build-nfsv4's refusal from DKMS's make.log, the module is
#     added and nothing installed; configured again for a kernel without headers it adds
#     nothing twice (the real dkms status parsed); prerm remove leaves no DKMS tree entry.
#     The successful build and install under real dkms are deb-dkms's (tests/kernel/dkms-deb.sh).
# The system's /var/lib/dkms, /usr/src and /lib/modules/RELEASE are checked unchanged.
# Part B SKIPs (77, with A's results printed) when not root, without dkms or the 6.12 lab
# kernel's headers, or without a private mount namespace and overlays.
set -u
debs=${1:?usage: dkms-maintscripts.sh DEB-DIR WORKDIR} work=${2:?usage: dkms-maintscripts.sh DEB-DIR WORKDIR}
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
skip() { echo "$pass passed, $fail failed before the skip"; [ "$fail" = 0 ] || exit 1; echo "SKIP: $*"; exit 77; }
PATH=$PATH:/usr/sbin:/sbin

deb=$(ls "$debs"/nsid-nfs-keyns-dkms_*_all.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "not ok - no nsid-nfs-keyns-dkms_*_all.deb in $debs (run deb-build)"; exit 1; }
case "$work" in ""|/) echo "refusing WORKDIR '$work'"; exit 2 ;; esac
rm -rf "$work"
mkdir -p "$work/control" "$work/fake" "$work/root" && work=$(cd "$work" && pwd) || exit 1
dpkg-deb -e "$deb" "$work/control" && dpkg-deb -x "$deb" "$work/root" || { echo "not ok - dpkg-deb"; exit 1; }
postinst=$work/control/postinst prerm=$work/control/prerm
src=$(ls -d "$work"/root/usr/src/nsid-nfs-keyns-*/ | head -n 1); src=${src%/}
mod=nsid-nfs-keyns ver=${src##*/nsid-nfs-keyns-}
echo "# $(basename "$deb"): $mod/$ver"
if grep -nE '#(DKMS_[A-Z_]*|DEBHELPER)#' "$postinst" "$prerm"; then
  notok "tokens left in the scripts"
else
  ok "postinst and prerm name $mod/$ver (no #TOKEN# left)"
fi
real_uname=$(command -v uname)

# A. fake dkms and uname
fb=$work/fake/bin
mkdir -p "$fb"
cat > "$fb/dkms" <<'EOF'
#!/bin/sh
# fake dkms: log the call; status answers FAKE_STATUS; ACTION fails with FAKE_RC_<ACTION>
echo "$*" >> "$FAKE_LOG"
case "$1" in
status) [ -z "${FAKE_STATUS:-}" ] || echo "$FAKE_STATUS"; exit 0 ;;
add) exit "${FAKE_RC_ADD:-0}" ;;
install) echo "fake dkms: install"; exit "${FAKE_RC_INSTALL:-0}" ;;
remove) exit "${FAKE_RC_REMOVE:-0}" ;;
esac
exit 0
EOF
cat > "$fb/uname" <<EOF
#!/bin/sh
[ "\$*" = -r ] && [ -n "\${FAKE_UNAME_R:-}" ] && { echo "\$FAKE_UNAME_R"; exit 0; }
exec $real_uname "\$@"
EOF
chmod +x "$fb/dkms" "$fb/uname"
# A release whose headers are installed here (/lib/modules/R/build/include), if any.
hrel=""
for d in /lib/modules/*/build/include; do
  [ -e "$d" ] || continue; hrel=${d#/lib/modules/}; hrel=${hrel%/build/include}; break
done

# case_a description script args expected-exit expected-calls(;-separated) output-regex|EMPTY
#        [VAR=value...]: runs the script as dpkg does (its #!/bin/sh) with the fakes
case_a() {
  local what=$1 script=$2 args=$3 want=$4 calls=$5 re=$6 rc got out_ok; shift 6
  : > "$work/fake/log"
  # shellcheck disable=SC2086 # args are words
  env PATH="$fb:$PATH" FAKE_LOG="$work/fake/log" "$@" sh "$script" $args > "$work/fake/out" 2>&1
  rc=$?
  got=$(paste -sd';' "$work/fake/log")
  if [ "$re" = EMPTY ]; then [ ! -s "$work/fake/out" ]; else grep -qE "$re" "$work/fake/out"; fi
  out_ok=$?
  if [ "$rc" = "$want" ] && [ "$got" = "$calls" ] && [ "$out_ok" = 0 ]; then
    ok "A. $what: exit $rc, dkms calls '$got'"
  else
    notok "A. $what: exit $rc (want $want), dkms calls '$got' (want '$calls'), output without /$re/:"
    sed 's/^/#   /' "$work/fake/out"
  fi
}
S="status -m $mod -v $ver"
ADDED="$mod/$ver: added"
if [ -n "$hrel" ]; then
  case_a "configure, headers of the running kernel $hrel" "$postinst" configure 0 \
    "$S;add -m $mod -v $ver;install -m $mod -v $ver -k $hrel" "is installed for $hrel; it is used once every NFS mount is unmounted" \
    FAKE_UNAME_R="$hrel"
  case_a "configure again, already added" "$postinst" configure 0 \
    "$S;install -m $mod -v $ver -k $hrel" "is installed for $hrel" FAKE_UNAME_R="$hrel" FAKE_STATUS="$ADDED"
  case_a "configure, the build fails (dkms exit 10)" "$postinst" configure 0 \
    "$S;add -m $mod -v $ver;install -m $mod -v $ver -k $hrel" \
    "DKMS could not build nfsv4 for $hrel \(exit 10\); the stock module stays in use" \
    FAKE_UNAME_R="$hrel" FAKE_RC_INSTALL=10
  case_a "configure, the build fails: the command to retry" "$postinst" configure 0 \
    "$S;add -m $mod -v $ver;install -m $mod -v $ver -k $hrel" \
    "Once fixed: dkms install -m $mod -v $ver -k $hrel" FAKE_UNAME_R="$hrel" FAKE_RC_INSTALL=10
  case_a "configure, a kernel DKMS excludes (exit 77)" "$postinst" configure 0 \
    "$S;add -m $mod -v $ver;install -m $mod -v $ver -k $hrel" "nsid has no patch for that kernel series" \
    FAKE_UNAME_R="$hrel" FAKE_RC_INSTALL=77
  case_a "abort-upgrade configures again" "$postinst" "abort-upgrade 0.2.0" 0 \
    "$S;add -m $mod -v $ver;install -m $mod -v $ver -k $hrel" "is installed for $hrel" FAKE_UNAME_R="$hrel"
else
  echo "# A: no kernel headers installed here: the install branches are not run"
fi
case_a "configure, the running kernel is not installed here" "$postinst" configure 0 \
  "$S;add -m $mod -v $ver" "the running kernel 9\.9\.9-nsid-fake is not installed here" FAKE_UNAME_R=9.9.9-nsid-fake
case_a "configure, dkms add fails: the configuration fails" "$postinst" configure 3 \
  "$S;add -m $mod -v $ver" EMPTY FAKE_UNAME_R=9.9.9-nsid-fake FAKE_RC_ADD=3
case_a "prerm remove" "$prerm" remove 0 "$S;remove -m $mod -v $ver --all" EMPTY FAKE_STATUS="$ADDED"
case_a "prerm upgrade" "$prerm" "upgrade 0.2.0" 0 "$S;remove -m $mod -v $ver --all" EMPTY FAKE_STATUS="$ADDED"
case_a "prerm remove, not added: no dkms remove" "$prerm" remove 0 "$S" EMPTY
case_a "prerm remove, dkms remove fails: removal goes on" "$prerm" remove 0 \
  "$S;remove -m $mod -v $ver --all" "dkms remove failed \(exit 4\)" FAKE_STATUS="$ADDED" FAKE_RC_REMOVE=4
case_a "prerm failed-upgrade: nothing" "$prerm" "failed-upgrade 0.2.0" 0 "" EMPTY FAKE_STATUS="$ADDED"

# B. real dkms in a private mount namespace
[ "$(id -u)" = 0 ] || skip "part B needs root (dkms install, mount namespace)"
command -v dkms >/dev/null || skip "part B needs dkms (scripts/install-deps lab)"
img=$(ls /boot/vmlinuz-6.12.* 2>/dev/null | head -n 1)
rel=${img#/boot/vmlinuz-}
[ -n "$img" ] && [ -e "/lib/modules/$rel/build/include" ] || skip "part B needs the 6.12 lab kernel and its headers"
sys=$work/sys
mkdir -p "$sys/var/lib/dkms" "$sys/lib/modules/$rel/kernel/fs/nfs" "$sys/lib/modules/6.12.999-nsid-noheaders" \
  "$work/empty" "$work/no-source"
unshare -m --propagation private sh -c \
  "mount -t overlay overlay -o lowerdir='$work/empty':/usr/share /usr/share" 2>/dev/null ||
  skip "part B: cannot make a private mount namespace with an overlay"
cp /lib/modules/"$rel"/kernel/fs/nfs/nfsv4.ko* "$sys/lib/modules/$rel/kernel/fs/nfs/"
cp "/lib/modules/$rel/modules.dep" "$sys/lib/modules/$rel/"
ln -s "$(readlink -f "/lib/modules/$rel/build")" "$sys/lib/modules/$rel/build"
host_state() {
  echo "/var/lib/dkms:"; find /var/lib/dkms 2>/dev/null | sort
  echo "/usr/src:"; ls -la --time-style=+%s /usr/src
  echo "/lib/modules/$rel:"; ls -la --time-style=+%s "/lib/modules/$rel"
  sha256sum "/lib/modules/$rel/modules.dep"
}
host_state > "$work/host-before"
# ns_run KERNEL SCRIPT ARGS...: run a maintainer script as dpkg would, in the namespace
ns_run() {
  local k=$1; shift
  env PATH="$fb/../real:$PATH" unshare -m --propagation private /bin/sh -c '
    set -e
    mount --bind "$0/var/lib/dkms" /var/lib/dkms
    mount --bind "$0/lib/modules" /lib/modules
    mount -t overlay overlay -o lowerdir="$1/usr/src":/usr/src /usr/src
    mount -t overlay overlay -o lowerdir="$1/usr/share":/usr/share /usr/share
    shift
    exec "$@"' "$sys" "$work/root" \
    env FAKE_UNAME_R="$k" NSID_LINUX_SOURCE_DIR="$work/no-source" sh "$@" > "$work/b.out" 2>&1
}
# only the fake uname: the real dkms
mkdir -p "$work/fake/real" && cp "$fb/uname" "$work/fake/real/uname"
dt=$sys/var/lib/dkms/$mod
t0=$EPOCHSECONDS
ns_run "$rel" "$postinst" configure; rc=$?
if [ "$rc" = 0 ] && grep -q "DKMS could not build nfsv4 for $rel (exit 10)" "$work/b.out" &&
   grep -q "^  build-nfsv4: refused: no kernel source $work/no-source/linux-source-6.12.tar.xz" "$work/b.out" &&
   grep -q "whole log: /var/lib/dkms/$mod/$ver/build/make.log" "$work/b.out"; then
  ok "B. configure, source missing: exit 0 ($((EPOCHSECONDS - t0)) s), printed: $(grep -m1 '^  build-nfsv4: refused' "$work/b.out")"
else
  notok "B. configure, source missing: exit $rc"; sed 's/^/#   /' "$work/b.out"
fi
if [ "$(readlink "$dt/$ver/source")" = "/usr/src/$mod-$ver" ] && [ ! -e "$dt/$ver/$rel" ] &&
   [ -z "$(find "$sys/lib/modules" -path '*/updates/*' -name 'nfsv4.ko*')" ]; then
  ok "B. configure: added (source -> /usr/src/$mod-$ver), not built, nothing in updates/"
else
  notok "B. configure: dkms tree or install tree not as expected"; find "$sys" | sed 's/^/#   /' | head -n 40
fi
ns_run 6.12.999-nsid-noheaders "$postinst" configure; rc=$?
if [ "$rc" = 0 ] && grep -q "its headers are not installed" "$work/b.out" && ! grep -qi "already contains\|error" "$work/b.out"; then
  ok "B. configure again, running kernel without headers: exit 0, no second add: $(head -n 1 "$work/b.out" | cut -c1-120)"
else
  notok "B. configure again: exit $rc"; sed 's/^/#   /' "$work/b.out"
fi
ns_run "$rel" "$prerm" remove; rc=$?
if [ "$rc" = 0 ] && [ ! -e "$dt" ]; then
  ok "B. prerm remove: exit 0, no $mod in the DKMS tree ($(grep -m1 'Deleting module' "$work/b.out"))"
else
  notok "B. prerm remove: exit $rc, $dt: $(ls "$dt" 2>&1)"; sed 's/^/#   /' "$work/b.out"
fi
ns_run "$rel" "$prerm" remove; rc=$?
if [ "$rc" = 0 ] && [ ! -s "$work/b.out" ]; then
  ok "B. prerm remove again (not added): exit 0, silent"
else
  notok "B. prerm remove again: exit $rc"; sed 's/^/#   /' "$work/b.out"
fi
host_state > "$work/host-after"
if cmp -s "$work/host-before" "$work/host-after"; then
  ok "the system's /var/lib/dkms, /usr/src and /lib/modules/$rel are unchanged"
else
  notok "the system changed:"; diff "$work/host-before" "$work/host-after" | sed 's/^/#   /'
fi
[ "$fail" != 0 ] || rm -rf "$work"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
