#!/bin/bash
# deb.sh: the Debian packages of this tree, for the deb-build test (host) and the deb-smoke
# lab scenario (guest).
#
#   tests/vm/lib/deb.sh build SRC OUT   (host) copy the work tree SRC to OUT/src/nsid-VERSION
#                                       (the work tree stays clean: dpkg-buildpackage writes
#                                       next to its source), build with dpkg-buildpackage -b
#                                       -us -uc, collect *.deb, .changes, .buildinfo and the
#                                       build log in OUT, run lintian (OUT/lintian.txt)
#   tests/vm/lib/deb.sh build-rev SRC REV OUT
#                                       (host) the same for commit REV of the git tree SRC
#                                       (git archive), versioned VERSION~prev so that this
#                                       tree's packages upgrade it; 77 when SRC has no REV
#   deb_files OUT                       (sourced) the three .debs built there, in install order
#   deb_all_files OUT                   (sourced) those and nsid-nfs-keyns-dkms (the DKMS
#                                       package: tests/kernel/dkms-deb.sh, not the lab guest)
#
# NSID_DEB_LINTIAN=0 skips lintian; its findings never fail the build, they are printed.

deb_files() {
  local out=$1 p f
  for p in libnsid0 libnsid-dev nsid; do
    f=$(ls -1 "$out/${p}_"*.deb 2>/dev/null | head -n1)
    [ -n "$f" ] || { echo "deb_files: no ${p}_*.deb in $out" >&2; return 1; }
    echo "$f"
  done
}

deb_all_files() {
  local out=$1 f
  deb_files "$out" || return 1
  f=$(ls -1 "$out"/nsid-nfs-keyns-dkms_*_all.deb 2>/dev/null | head -n1)
  [ -n "$f" ] || { echo "deb_files: no nsid-nfs-keyns-dkms_*_all.deb in $out" >&2; return 1; }
  echo "$f"
}

# deb_guest_prune_db DEB... -- PKG...: (guest) limit dpkg's database to the packages the given
# .debs depend on plus PKG...: dpkg reads the file list of every installed package for each
# install or removal, and the host's ~1000 lists over 9p under TCG take minutes. Only the
# guest's overlay changes. What this gives up, the check against files of other installed
# packages, deb_build does on the host (deb_host_conflicts).
deb_guest_prune_db() {
  local keep=" " f d
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    for d in $(dpkg-deb -f "$1" Depends | tr ',|' '\n\n' | awk '{print $1}'); do
      keep="$keep${d%%:*} "
    done
    shift
  done
  [ "${1:-}" = -- ] && shift
  keep="$keep$* "
  awk -v keep="$keep" 'BEGIN { RS = ""; ORS = "\n\n" }
    { p = $0; sub(/^(.*\n)?Package: /, "", p); sub(/\n.*/, "", p)
      if (index(keep, " " p " ")) print }' /var/lib/dpkg/status > /var/lib/dpkg/status.nsid-lab &&
  mv /var/lib/dpkg/status.nsid-lab /var/lib/dpkg/status || return 1
  awk -v keep="$keep" '{ p = $2; sub(/\/.*/, "", p); sub(/:.*/, "", p); if (index(keep, " " p " ")) print }' \
    /var/lib/dpkg/triggers/File > /var/lib/dpkg/triggers/File.nsid-lab &&
  mv /var/lib/dpkg/triggers/File.nsid-lab /var/lib/dpkg/triggers/File || return 1
  rm -f /var/lib/dpkg/available
}

# deb_host_conflicts OUT: (host) files of the built packages that an installed package owns
# (dpkg -i would refuse them). Prints them; 0 when there are none.
deb_host_conflicts() {
  local out=$1 f paths owned
  paths=$(for f in $(deb_all_files "$out"); do dpkg-deb -c "$f"; done |
          awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print p }' | sort -u)
  [ -n "$paths" ] || { echo "deb-build: no files in the packages?" >&2; return 1; }
  # shellcheck disable=SC2086
  owned=$(dpkg-query -S $paths 2>/dev/null | grep -v '^diversion by ' || true)
  [ -z "$owned" ] && return 0
  echo "$owned"
  return 1
}

deb_build() {
  local src=$1 out=$2 version work t0 rc
  src=$(cd "$src" && pwd) || return 1
  [ -f "$src/debian/control" ] || { echo "deb-build: $src/debian/control missing" >&2; return 1; }
  version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version) || return 1
  case "$out" in ""|/|"$src"|"$src/") echo "deb-build: refusing OUT=$out" >&2; return 1 ;; esac
  mkdir -p "$out" || return 1
  out=$(cd "$out" && pwd)
  rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/lintian.txt "$out"/build.log
  work="$out/src/nsid-$version"
  mkdir -p "$work" || return 1

  # The work tree as it is now (tracked and untracked files, not what .gitignore hides: build
  # trees); without git, everything but build*/ directories.
  if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z -c -o --exclude-standard |
       tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work" || return 1
  else
    (cd "$src" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$work" || return 1
  fi

  echo "deb-build: building nsid $version in $work"
  t0=$EPOCHSECONDS
  (cd "$work" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
     dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1
  rc=$?
  echo "deb-build: dpkg-buildpackage exit $rc after $((EPOCHSECONDS - t0)) s (log: $out/build.log)"
  if [ "$rc" != 0 ]; then
    tail -n 40 "$out/build.log" | sed 's/^/  | /'
    return 1
  fi
  mv "$out/src/"*.deb "$out/src/"*.changes "$out/src/"*.buildinfo "$out/" || return 1
  grep -E '^dh_missing|not installed|warning:' "$out/build.log" | sed 's/^/  | /'
  local f
  for f in $(deb_all_files "$out"); do
    echo "deb-build: ${f##*/}: $(dpkg-deb -f "$f" Installed-Size) KiB, $(dpkg-deb -c "$f" | grep -vc '/$') files"
  done
  local clash
  clash=$(deb_host_conflicts "$out") ||
    { echo "deb-build: files already owned by installed packages: $clash" >&2; return 1; }
  echo "deb-build: no file of the packages belongs to a package installed here"
  # nothing of the build lands in the work tree or next to it
  local dirt
  dirt=$(ls -d "$src"/obj-* "$src/debian/tmp" "$src/debian/.debhelper" "$src/debian/files" \
         "$src"/../nsid_"$version"_*.changes 2>/dev/null)
  [ -z "$dirt" ] || { echo "deb-build: build output in or beside the work tree: $dirt" >&2; return 1; }
  if [ "${NSID_DEB_LINTIAN:-1}" != 0 ] && command -v lintian >/dev/null; then
    t0=$EPOCHSECONDS
    lintian --info --display-info --pedantic "$out"/nsid_*.changes > "$out/lintian.txt" 2>&1
    echo "deb-build: lintian (exit $?, $((EPOCHSECONDS - t0)) s): $(grep -cE '^E:' "$out/lintian.txt") errors, $(grep -cE '^W:' "$out/lintian.txt") warnings, $(grep -cE '^[IP]:' "$out/lintian.txt") info/pedantic"
    grep -E '^[EWIP]:' "$out/lintian.txt" | sed 's/^/  | /'
  fi
  echo "deb-build: packages in $out"
}

deb_build_rev() {
  local src=$1 rev=$2 out=$3 tmp rc
  if ! git -C "$src" rev-parse --verify -q "$rev^{commit}" >/dev/null 2>&1; then
    echo "SKIP: no commit $rev in $src (a shallow clone, or not a git tree)"
    return 77
  fi
  tmp=$(mktemp -d /tmp/nsid-deb-rev.XXXXXX) || return 1
  git -C "$src" archive "$rev" | tar -x -C "$tmp" || { rm -rf "$tmp"; return 1; }
  sed -i '1s/^nsid (\([^)]*\))/nsid (\1~prev)/' "$tmp/debian/changelog"
  echo "deb-build: commit $(git -C "$src" rev-parse --short "$rev") as $(dpkg-parsechangelog -l "$tmp/debian/changelog" -S Version)"
  deb_build "$tmp" "$out"; rc=$?
  rm -rf "$tmp"
  return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -u
  case "${1:-}" in
    build) shift; deb_build "${1:?usage: deb.sh build SRC OUT}" "${2:?usage: deb.sh build SRC OUT}" ;;
    build-rev) shift; deb_build_rev "${1:?usage: deb.sh build-rev SRC REV OUT}" \
                 "${2:?usage: deb.sh build-rev SRC REV OUT}" "${3:?usage: deb.sh build-rev SRC REV OUT}" ;;
    *) echo "usage: $0 build SRC OUT | build-rev SRC REV OUT" >&2; exit 2 ;;
  esac
fi
