#!/bin/bash
# deb-dkms: the built nsid-nfs-keyns-dkms package under the real dkms, for the 6.12 lab
# kernel, without touching the system's /var/lib/dkms, /usr/src or /lib/modules.
#
#   tests/kernel/dkms-deb.sh DEB-DIR WORKDIR
#
# The .deb is unpacked (dpkg-deb -x) into WORKDIR/root; dkms runs with --sourcetree
# (WORKDIR/root/usr/src), --dkmstree and --installtree (scratch trees in WORKDIR/sys), in a
# private mount namespace where those scratch trees are also bind-mounted over
# /var/lib/dkms and /lib/modules and the package's /usr/share is overlaid on the system's.
# The namespace is needed, not decoration: dkms 3.0.10 runs depmod on /lib/modules/RELEASE
# whatever --installtree says, keeps its signing key in /var/lib/dkms, reads the kernel's
# module suffix from /lib/modules, and reads the package's
# /usr/share/dkms/modules_to_force_install/ from that fixed path. The install tree holds
# copies of the stock nfsv4 module, its dependencies and dependents, so dkms meets the
# stock module as on a real system.
#
#  1. dkms add, build (the real build-nfsv4 build, ~90 s, done once), install: nfsv4.ko* in
#     the install tree's RELEASE/updates/dkms, vermagic RELEASE, and depmod (dkms's own,
#     then depmod -b on the scratch tree) resolving nfsv4 to updates/dkms, where it
#     resolved to kernel/fs/nfs before; dkms remove --all: no nfsv4.ko* left in updates,
#     no dkms tree entry, modules.dep back to the stock module.
#  2. the linux-source missing (NSID_LINUX_SOURCE_DIR names an empty directory), then one
#     of another release (a 6.12.1 tarball): dkms build fails (exit 10) and names its
#     make.log, build-nfsv4's refusal is in that make.log, dkms install fails too and
#     installs nothing.
#  3. a kernel series nsid has no patch for: DKMS refuses it by BUILD_EXCLUSIVE_KERNEL
#     (exit 77) without building.
# At the end the system's /var/lib/dkms, /usr/src and /lib/modules/RELEASE are as before.
# SKIP (77) when not root, without dkms, the 6.12 lab kernel, its headers or linux-source,
# or when a private mount namespace with an overlay cannot be made.
set -u
debs=${1:?usage: dkms-deb.sh DEB-DIR WORKDIR} work=${2:?usage: dkms-deb.sh DEB-DIR WORKDIR}
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
check() { # description command... : ok when the command succeeds
  local what=$1; shift
  if "$@"; then ok "$what"; else notok "$what"; fi
}
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "dkms install and the mount namespace need root"
for t in dkms unshare depmod modinfo dpkg-deb; do
  command -v "$t" >/dev/null || PATH=$PATH:/usr/sbin:/sbin command -v "$t" >/dev/null ||
    skip "no $t (scripts/install-deps lab installs dkms)"
done
PATH=$PATH:/usr/sbin:/sbin
img=$(ls /boot/vmlinuz-6.12.* 2>/dev/null | head -n 1)
[ -n "$img" ] || skip "no Linux 6.12 lab kernel (/boot/vmlinuz-6.12.*)"
rel=${img#/boot/vmlinuz-}
rel_re=$(printf '%s\n' "$rel" | sed 's/[.+]/\\&/g') # 6.12.118+deb12-amd64 in an ERE
[ -f "/usr/src/linux-headers-$rel/Module.symvers" ] || skip "no linux-headers-$rel"
[ -f /usr/src/linux-source-6.12.tar.xz ] || skip "no linux-source-6.12"
[ -f "/lib/modules/$rel/modules.dep" ] || skip "no /lib/modules/$rel/modules.dep"
deb=$(ls "$debs"/nsid-nfs-keyns-dkms_*_all.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "not ok - no nsid-nfs-keyns-dkms_*_all.deb in $debs (run deb-build)"; exit 1; }

case "$work" in ""|/) echo "refusing WORKDIR '$work'"; exit 2 ;; esac
rm -rf "$work"
mkdir -p "$work" && work=$(cd "$work" && pwd) || exit 1
root=$work/root sys=$work/sys
dtree=$sys/var/lib/dkms itree=$sys/lib/modules
mkdir -p "$root" "$dtree" "$itree/$rel" "$work/empty" || exit 1

# The private namespace, checked before anything else needs it.
unshare -m --propagation private sh -c \
  "mount -t overlay overlay -o lowerdir='$work/empty':/usr/share /usr/share" 2>/dev/null ||
  skip "cannot make a private mount namespace with an overlay on /usr/share"

# What must not change on the system.
host_state() {
  echo "/var/lib/dkms:"; find /var/lib/dkms 2>/dev/null | sort
  echo "/usr/src:"; ls -la --time-style=+%s /usr/src
  echo "/lib/modules/$rel:"; ls -la --time-style=+%s "/lib/modules/$rel"
  ls -d "/lib/modules/$rel/updates" 2>/dev/null
  sha256sum "/lib/modules/$rel/modules.dep" "/lib/modules/$rel/modules.dep.bin"
}
host_state > "$work/host-before"

dpkg-deb -x "$deb" "$root" || { echo "not ok - dpkg-deb -x $deb"; exit 1; }
src=$(ls -d "$root"/usr/src/nsid-nfs-keyns-*/ 2>/dev/null | head -n 1)
[ -n "$src" ] || { echo "not ok - no usr/src/nsid-nfs-keyns-VERSION in $deb"; exit 1; }
src=${src%/}
mod=nsid-nfs-keyns ver=${src##*/nsid-nfs-keyns-}
echo "# $(basename "$deb"): DKMS module $mod/$ver for $rel"

# The scratch install tree: the stock nfsv4, what it needs and what needs it (regular files,
# as dkms's version check and depmod see them on a real system), the kernel's lists and the
# headers link; depmod makes its modules.dep.
# shellcheck disable=SC2046 # module paths have no spaces
( cd "/lib/modules/$rel" &&
  awk -F': ' '$1 ~ /\/nfsv4\.ko/ {print $1; n = split($2, d, " "); for (i = 1; i <= n; i++) print d[i]}
              $2 ~ /\/nfsv4\.ko/ {print $1}' modules.dep | sort -u > "$work/modules" &&
  cp --parents $(cat "$work/modules") modules.order modules.builtin modules.builtin.modinfo \
     "$itree/$rel/" ) || { echo "not ok - copying the stock NFS modules"; exit 1; }
ln -s "$(readlink -f "/lib/modules/$rel/build")" "$itree/$rel/build"
depmod -b "$sys" "$rel" || { echo "not ok - depmod -b $sys $rel"; exit 1; }
resolves() { # the path modules.dep gives nfsv4 in the scratch tree
  awk -F: '$1 ~ /(^|\/)nfsv4\.ko(\.[a-z]+)?$/ {print $1}' "$itree/$rel/modules.dep"
}
base=$(resolves)
case "$base" in
kernel/fs/nfs/nfsv4.ko*) ok "before: depmod resolves nfsv4 to $base ($(wc -l < "$work/modules") stock modules copied)" ;;
*) notok "before: depmod resolves nfsv4 to '$base', not kernel/fs/nfs" ;;
esac

# dkms with the scratch trees, in the private namespace. Stdout and stderr to $work/dkms.out.
dkms_ns() {
  unshare -m --propagation private /bin/sh -c '
    set -e
    mount --bind "$0/lib/modules" /lib/modules
    mount --bind "$0/var/lib/dkms" /var/lib/dkms
    mount -t overlay overlay -o lowerdir="$1/usr/share":/usr/share /usr/share
    shift
    exec dkms "$@"' "$sys" "$root" "$@" \
      --dkmstree "$dtree" --sourcetree "$root/usr/src" --installtree "$itree" > "$work/dkms.out" 2>&1
}
run() { # expected-exit description dkms-args...: runs dkms, prints its output when unexpected
  local want=$1 what=$2 rc t0=$EPOCHSECONDS; shift 2
  dkms_ns "$@"; rc=$?
  if [ "$rc" = "$want" ]; then
    ok "$what: dkms $1 exit $rc ($((EPOCHSECONDS - t0)) s)"
  else
    notok "$what: dkms $* exit $rc, expected $want"; sed 's/^/#   /' "$work/dkms.out"
  fi
}
say() { sed 's/^/#   /' "$work/dkms.out"; }
installed() { find "$itree/$rel" -path '*/updates/*' -name 'nfsv4.ko*' | sed "s|^$itree/$rel/||"; }

# 1. build once, install, remove
run 0 "add" add -m "$mod" -v "$ver"
check "add: $dtree/$mod/$ver/source is the unpacked package's tree" \
  test "$(readlink "$dtree/$mod/$ver/source")" = "$src"
run 0 "build for $rel" build -m "$mod" -v "$ver" -k "$rel" -j 2
log=$(ls "$dtree/$mod/$ver/$rel"/*/log/make.log 2>/dev/null | head -n 1)
if [ -n "$log" ] && grep -q "^build-nfsv4: .*vermagic and [0-9]* symbol CRCs match the stock module" "$log"; then
  ok "build: make.log: $(grep '^build-nfsv4: .*symbol CRCs match' "$log" | cut -c1-150)"
else
  notok "build: no build-nfsv4 success line in make.log ($log)"; [ -z "$log" ] || tail -n 20 "$log" | sed 's/^/#   /'
fi
run 0 "install for $rel" install -m "$mod" -v "$ver" -k "$rel" -j 2
grep -qi "exactly matches" "$work/dkms.out" && { notok "install: dkms kept the stock module (modules_to_force_install not seen)"; say; }
ko=$(installed)
case "$ko" in
updates/dkms/nfsv4.ko*) ok "install: $ko in the scratch install tree" ;;
*) notok "install: nfsv4.ko in updates/dkms expected, found '$ko'"; say ;;
esac
if [ -n "$ko" ]; then
  vm=$(modinfo -F vermagic "$itree/$rel/$ko" 2>/dev/null)
  case "$vm" in
  "$rel "*) ok "install: vermagic '$vm'" ;;
  *) notok "install: vermagic '$vm' is not for $rel" ;;
  esac
  echo "# signer: '$(modinfo -F signer "$itree/$rel/$ko" 2>/dev/null)' (dkms's own key, made in the scratch /var/lib/dkms)"
fi
r=$(resolves)
case "$r" in
updates/dkms/nfsv4.ko*) ok "install: dkms's depmod resolves nfsv4 to $r" ;;
*) notok "install: dkms's depmod resolves nfsv4 to '$r'" ;;
esac
depmod -b "$sys" "$rel"
r=$(resolves)
case "$r" in
updates/dkms/nfsv4.ko*) ok "install: depmod -b $sys $rel resolves nfsv4 to $r (search order: updates before built-in)" ;;
*) notok "install: depmod -b resolves nfsv4 to '$r'" ;;
esac
dkms_ns status -m "$mod" -v "$ver"
check "status: $(grep "^$mod/" "$work/dkms.out" | tr '\n' ' ')" grep -q "^$mod/$ver, $rel, .*: installed" "$work/dkms.out"
run 0 "remove --all" remove -m "$mod" -v "$ver" --all
check "remove: no nfsv4.ko left in updates/ ($(installed | tr '\n' ' '))" test -z "$(installed)"
check "remove: no $mod in the dkms tree" test ! -e "$dtree/$mod"
r=$(resolves)
check "remove: dkms's depmod resolves nfsv4 to $r again" test "$r" = "$base"

# 2. no source, wrong source
refused() { # description source-dir message-regex
  local what=$1 dir=$2 re=$3 mlog
  run 0 "$what: add" add -m "$mod" -v "$ver"
  NSID_LINUX_SOURCE_DIR=$dir run 10 "$what: build fails" build -m "$mod" -v "$ver" -k "$rel" -j 2
  if grep -q "make.log" "$work/dkms.out"; then
    ok "$what: dkms names make.log: $(grep -m1 'make.log' "$work/dkms.out")"
  else
    notok "$what: dkms's output does not name make.log"
  fi
  mlog=$dtree/$mod/$ver/build/make.log
  if grep -qE "$re" "$mlog" 2>/dev/null; then
    ok "$what: make.log: $(grep -E -m1 "$re" "$mlog")"
  else
    notok "$what: make.log ($mlog) without /$re/"; sed 's/^/#   /' "$mlog" 2>/dev/null | tail -n 20
  fi
  NSID_LINUX_SOURCE_DIR=$dir run 10 "$what: install fails" install -m "$mod" -v "$ver" -k "$rel" -j 2
  check "$what: nothing installed" test -z "$(installed)"
  check "$what: not built" test ! -e "$dtree/$mod/$ver/$rel"
  run 0 "$what: remove --all" remove -m "$mod" -v "$ver" --all
  check "$what: no $mod in the dkms tree" test ! -e "$dtree/$mod"
}
mkdir -p "$work/no-source" "$work/old-source/linux-source-6.12/fs/nfs"
refused "linux-source missing" "$work/no-source" \
  "^build-nfsv4: refused: no kernel source $work/no-source/linux-source-6\.12\.tar\.xz: install linux-source-6\.12"
# An older 6.12 point release, as a linux-source that lags behind the kernel would be: its
# Makefile and fs/nfs are all build-nfsv4 reads before it compares the versions.
printf 'VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 1\nEXTRAVERSION =\n' \
  > "$work/old-source/linux-source-6.12/Makefile"
tar -C "$work/old-source" -cJf "$work/old-source/linux-source-6.12.tar.xz" linux-source-6.12
refused "linux-source of another release (6.12.1)" "$work/old-source" \
  "^build-nfsv4: refused: .*linux-source-6\.12\.tar\.xz is Linux 6\.12\.1 but the headers of $rel_re are Linux 6\.12\.[0-9]+"

# 3. a series without a patch (5.10): BUILD_EXCLUSIVE_KERNEL, no build attempted
run 0 "other series: add" add -m "$mod" -v "$ver"
run 77 "other series: build for 5.10.0-99-amd64 is excluded" build -m "$mod" -v "$ver" -k 5.10.0-99-amd64 \
  --kernelsourcedir "/usr/src/linux-headers-$rel"
if grep -q "BUILD_EXCLUSIVE" "$work/dkms.out"; then
  ok "other series: $(grep -m1 BUILD_EXCLUSIVE "$work/dkms.out" | cut -c1-150)"
else
  notok "other series: dkms's output does not say BUILD_EXCLUSIVE"
fi
run 0 "other series: remove --all" remove -m "$mod" -v "$ver" --all
check "other series: no $mod in the dkms tree" test ! -e "$dtree/$mod"

host_state > "$work/host-after"
if cmp -s "$work/host-before" "$work/host-after"; then
  ok "the system's /var/lib/dkms, /usr/src and /lib/modules/$rel are unchanged"
else
  notok "the system changed:"; diff "$work/host-before" "$work/host-after" | sed 's/^/#   /'
fi
[ "$fail" != 0 ] || rm -rf "$work"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
