#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Cost of nsid-uniquifier `set` per container and of `reconcile` over N network namespaces,
# as ratios to the cost of creating the same namespaces with `ip netns add` in the same run.
# Target: reconcile over 1,000 namespaces costs less than creating them.
#
# The identifier write goes through the test hook NSID_TEST_SYSFS_NFS_CLIENT_DIR: this host has
# no nfs module, so /sys/fs/nfs/net/nfs_client/identifier does not exist. Everything else is
# real: one worker per namespace joins it and mounts a private sysfs instance of it, the
# registry is SQLite on disk with one transaction per change.
#
# usage: bench-uniquifier.sh BUILD_DIR   (env BENCH_NETNS=1000, BENCH_SET=200)
set -u
B=${1:?usage: $0 BUILD_DIR}
U=$B/uniquifier/nsid-uniquifier
N=${BENCH_NETNS:-1000}
M=${BENCH_SET:-200}
[ -x "$U" ] || { echo "bench: $U not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench: needs root (ip netns add)" >&2; exit 1; }

T=$(mktemp -d /tmp/nsid-bench.XXXXXX)
P=nsidb$$
cleanup() {
    for f in /run/netns/"$P"-*; do [ -e "$f" ] && ip netns del "${f##*/}" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT INT TERM

export NSID_STATE_DIR=$T/state NSID_TEST_SYSFS_NFS_CLIENT_DIR=$T/fake
mkdir -p "$T/fake"

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }

echo "nsid-uniquifier benchmark: $(uname -r), $(nproc) CPUs, $N namespaces for reconcile, $M for set"
echo "NOTE: no nfs module on this host: identifiers go to per-netns fake files (test hook"
echo "      NSID_TEST_SYSFS_NFS_CLIENT_DIR); namespaces, workers, sysfs mounts and SQLite are real."

t0=$(now)
for i in $(seq 1 "$N"); do ip netns add "$P-r$i" || exit 1; done
t1=$(now)
add_ms=$(ms "$t0" "$t1")

t0=$(now)
"$U" -q reconcile > "$T/rec1" || { echo "bench: reconcile failed" >&2; exit 1; }
t1=$(now)
rec_ms=$(ms "$t0" "$t1")
setnow=$(grep -c "/run/netns/$P-r.* set$" "$T/rec1")
[ "$setnow" = "$N" ] || { echo "bench: reconcile set $setnow of $N namespaces" >&2; exit 1; }

t0=$(now)
"$U" -q reconcile > "$T/rec2" || exit 1
t1=$(now)
rec2_ms=$(ms "$t0" "$t1")

t0=$(now)
for i in $(seq 1 "$M"); do ip netns add "$P-s$i" || exit 1; done
t1=$(now)
add2_ms=$(ms "$t0" "$t1")

t0=$(now)
for i in $(seq 1 "$M"); do
    "$U" -q set --netns "/run/netns/$P-s$i" --container-id "bench-$i" > /dev/null || exit 1
done
t1=$(now)
set_ms=$(ms "$t0" "$t1")

t0=$(now)
for f in /run/netns/"$P"-*; do ip netns del "${f##*/}"; done
t1=$(now)
del_ms=$(ms "$t0" "$t1")
total=$((N + M))

awk -v n="$N" -v m="$M" -v add="$add_ms" -v rec="$rec_ms" -v rec2="$rec2_ms" \
    -v add2="$add2_ms" -v set="$set_ms" -v del="$del_ms" -v total="$total" 'BEGIN {
    printf "\n%-48s %10s %12s %8s\n", "operation", "total ms", "per netns ms", "ratio"
    printf "%-48s %10d %12.3f %8s\n", "ip netns add (" n " namespaces)", add, add / n, "1.00"
    printf "%-48s %10d %12.3f %8.2f\n", "reconcile, all " n " unset (sets every one)", rec, rec / n, rec / add
    printf "%-48s %10d %12.3f %8.2f\n", "reconcile again, all " n " already set", rec2, rec2 / n, rec2 / add
    printf "%-48s %10d %12.3f %8s\n", "ip netns add (" m " namespaces)", add2, add2 / m, "1.00"
    printf "%-48s %10d %12.3f %8.2f\n", "set --container-id, one process per container", set, set / m, set / add2
    printf "%-48s %10d %12.3f\n", "ip netns del (cleanup, " total " namespaces)", del, del / total
    printf "\ntarget: reconcile over %d namespaces costs less than creating them: %s (%.2fx)\n",
        n, (rec < add ? "MET" : "NOT MET"), rec / add
}'
left=$(ls /run/netns 2>/dev/null | grep -c "^$P-")
[ "$left" = 0 ] || echo "bench: $left namespaces left behind!" >&2
