#!/bin/bash
# lab-needs: podman crun conmon
# bench-podman-hook, guest side (a lab scenario run by path by bench/lab/podman-hook-bench-run,
# not a test): what nsid's OCI hook adds to a container's start (issue 21, "Numbers"). In one
# boot, `podman run --rm --network none IMAGE true` (Podman + crun from Debian's packages, a
# container that exits at once, its own new network namespace each time) N times (default 20)
# with the hook and N times without, alternating (with first on odd rounds, without first on
# even ones) so that drift in the machine's load falls on both. The two differ only in
# --hooks-dir: the directory the package installs the hook entry in, or an empty one.
# Before the runs, one container of each variant reads its own netns's identifier (its
# sysfs): set with the hook, "(null)" without. Lines "# bench with|without MS" per run, then
# "# bench-result N median_with median_without ratio median_of_round_ratios"; then the hook
# alone, run as crun runs it N times: "# bench-hook N median min max".
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/podman.sh"
N=${1:-20}
HOOKS=/usr/share/containers/oci/hooks.d
EMPTY=/run/nsid-lab/no-hooks
mkdir -p "$EMPTY"
check "nsid installed (cmake --install --prefix /usr)" lab_install_nsid || bail "install failed"
check "the hook entry installed in $HOOKS" test -s "$HOOKS/nsid-uniquifier.json" || bail "no hook"
ver=$(podman_setup 2>&1) || { note "$ver"; bail "podman does not run here"; }
lab_modprobe nfs nfsv4 || bail "no nfs module"
check "a local image" podman_image "$PODMAN_IMAGE" /etc/passwd /etc/group || bail "no image"
note "podman $ver, $(crun --version | head -n1), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"

one() { # with|without -> ms (or fails)
  local d=$HOOKS t0 rc
  [ "$1" = without ] && d=$EMPTY
  t0=$(lab_ms)
  podman run --rm --hooks-dir "$d" --network none "$PODMAN_IMAGE" true >/dev/null 2>"$PODMAN_WORK/run.err"
  rc=$?
  echo $(( $(lab_ms) - t0 ))
  return $rc
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# warm-up: the first runs page podman, conmon and crun in through 9p
for v in with without; do one $v >/dev/null || { note "$(cat "$PODMAN_WORK/run.err")"; bail "podman run ($v) failed"; }; done
# what the two variants do: the container's own sysfs shows its netns's identifier
idw=$(podman run --rm --hooks-dir "$HOOKS" --network none "$PODMAN_IMAGE" cat /sys/fs/nfs/net/nfs_client/identifier 2>&1)
ido=$(podman run --rm --hooks-dir "$EMPTY" --network none "$PODMAN_IMAGE" cat /sys/fs/nfs/net/nfs_client/identifier 2>&1)
check "with the hook the container's netns has an identifier ($idw)" grep -qx '[0-9a-f]\{32\}' <<<"$idw"
check "without it, none ($ido)" test "$ido" = "(null)"
fails=0
: > "$PODMAN_WORK/with" ; : > "$PODMAN_WORK/without"
for i in $(seq 1 "$N"); do
  if [ $((i % 2)) = 1 ]; then order="with without"; else order="without with"; fi
  for v in $order; do
    ms=$(one $v) || { fails=$((fails + 1)); note "run $i $v failed: $(cat "$PODMAN_WORK/run.err")"; continue; }
    echo "$ms" >> "$PODMAN_WORK/$v"
    note "bench $v $ms"
  done
done
check_eq "all $((2 * N)) runs exited 0" 0 "$fails"
mw=$(median < "$PODMAN_WORK/with") mo=$(median < "$PODMAN_WORK/without")
ratio=$(awk -v a="$mw" -v b="$mo" 'BEGIN { printf "%.3f", a / b }')
# each round's two runs are next to each other in time: the median of their ratios
pr=$(paste -d' ' "$PODMAN_WORK/with" "$PODMAN_WORK/without" | awk '{ print $1 / $2 }' | sort -g |
     awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
note "bench-result $N $mw $mo $ratio $pr"

# The hook alone, as crun runs it: the state JSON on stdin, a new network namespace each time
# (made before the clock starts). Far less noisy than a whole podman run under TCG.
: > "$PODMAN_WORK/hook"
for i in $(seq 1 "$N"); do
  unshare -n sleep 1000 </dev/null >/dev/null 2>&1 &
  hp=$!
  wait_for 10 sh -c "[ /proc/$hp/exe -ef $(type -P sleep) ]"
  st=$(printf '{"ociVersion":"1.0.2","id":"bench-%s-%s","status":"creating","pid":%s,"bundle":"/run/x"}' "$i" "$RANDOM" "$hp")
  t0=$(lab_ms)
  /usr/sbin/nsid-uniquifier --quiet oci-hook <<<"$st" >/dev/null || note "hook run $i failed"
  echo $(( $(lab_ms) - t0 )) >> "$PODMAN_WORK/hook"
  kill "$hp"; wait "$hp" 2>/dev/null
done
mh=$(median < "$PODMAN_WORK/hook")
note "bench-hook $N $mh $(sort -n "$PODMAN_WORK/hook" | head -n1) $(sort -n "$PODMAN_WORK/hook" | tail -n1)"
finding podman-hook-overhead "podman run --rm true, $N runs each, one boot (load $(cut -d' ' -f1 /proc/loadavg)): median with the hook $mw ms, without $mo ms, ratio ${ratio}x (target < 1.05x); median of the rounds' ratios ${pr}x; the hook alone $mh ms median (${mh}/${mo} = $(awk -v a="$mh" -v b="$mo" 'BEGIN { printf "%.3f", a / b }') of a start)"
check "median start with the hook under 1.05x without (${ratio}x)" awk -v r="$ratio" 'BEGIN { exit !(r < 1.05) }'
lab_done
