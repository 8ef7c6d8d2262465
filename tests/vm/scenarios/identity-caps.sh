#!/bin/bash
# lab-test: 6.12
# identity-caps: nsid-uniquifier runs with only CAP_SYS_CHROOT, CAP_SYS_PTRACE and
# CAP_SYS_ADMIN (no DAC override) and still writes the real kernel identifier of a network
# namespace owned by a user namespace whose root is an unprivileged host uid (100000), and
# reads that container's machine-id (mode 0400, owned by the container's root) in its worker.
# The identifier file is the host root's in every netns (the nfs_client kobject has no
# per-namespace owner): shown by stat through a sysfs mounted in that netns.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
UNIQ="$LAB_BUILD/uniquifier/nsid-uniquifier"
export NSID_STATE_DIR=/run/nsid-lab/state-caps
mkdir -p "$NSID_STATE_DIR"

check "nsid-uniquifier built" test -x "$UNIQ" || bail "build nsid-uniquifier first"
check "nfs modules" nfs_modules off || bail "no nfs"

# a container: own user namespace (0 -> 100000), mount and network namespaces, its own /etc
# copy with a machine-id only its root may read
E=/run/nsid-lab/caps-etc
rm -rf "$E"; mkdir -p "$E"; cp /etc/passwd /etc/group "$E"/
echo 3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c >"$E/machine-id"
chown 100000:100000 "$E/machine-id"; chmod 0400 "$E/machine-id"
unshare -U -m -n --propagation private sleep 100000 &
P=$!
# its maps can be written once it is in its user namespace (unshare(2), then exec sleep)
in_own_userns() { ! [ "/proc/$1/ns/user" -ef /proc/self/ns/user ]; }
check "container in its own user namespace" wait_for 10 in_own_userns "$P"
echo "0 100000 65536" >"/proc/$P/uid_map"; echo deny >"/proc/$P/setgroups"; echo "0 100000 65536" >"/proc/$P/gid_map"
# bind the /etc copy over its /etc from the host side (setns into its mount namespace)
check "container /etc bound" nsenter -t "$P" -m mount --bind "$E" /etc
check "container netns is owned by its user namespace" \
    test "$(stat -L -c %i "/proc/$P/ns/user")" != "$(stat -L -c %i /proc/self/ns/user)"

out=$("$UNIQ" -v set --pid "$P" 2>/run/nsid-lab/caps.err); rc=$?
note "set: rc=$rc '$out'; $(grep -a "capabilities kept" /run/nsid-lab/caps.err)"
check "set exits 0 with only sys_chroot, sys_ptrace, sys_admin" \
    grep -q "capabilities kept: cap_sys_chroot,cap_sys_ptrace,cap_sys_admin=ep" /run/nsid-lab/caps.err
check "the key is the container's 0400 machine-id (read as its root)" test "${out#* }" = "machine-id set"
# (nsenter -n keeps the host's /sys mount: read through a sysfs of that netns)
kid=$(nsenter -t "$P" -n sh -c 'd=$(mktemp -d); mount -t sysfs sysfs "$d" && cat "$d/fs/nfs/net/nfs_client/identifier"; stat -c "%u:%g %a" "$d/fs/nfs/net/nfs_client/identifier"; umount "$d"; rmdir "$d"' 2>&1)
note "identifier in the container's netns: $kid"
check "the kernel has the identifier" test "$(head -n 1 <<<"$kid")" = "${out%% *}"
check "its identifier file is the host root's (0:0 644)" test "$(tail -n 1 <<<"$kid")" = "0:0 644"
kill -9 "$P" 2>/dev/null
lab_done
