#!/bin/bash
# lab-test: full-6.12
# kernel-keys-full: the whole lab kernel kernel/build-kernel builds from Debian's 6.12 source
# with both patches of kernel/patches/6.12 (make kernel-full), and what patch 2 ("keys: create
# a requested key in the domain it was requested in", built-in code) changes:
#   - knfsd in the guest's initial netns, name mapping on, its channels answered by
#     rpc.idmapd -S with the server's passwd (labalice 2500, labbob 2501, labcarol 2502);
#   - nfs-common's request-key rule for id_resolver removed, so the client's idmapper falls
#     back to its rpc_pipefs idmap pipe (id_legacy keys);
#   - stock rpc.idmapd -C answering the pipes of the host (the guest's initial netns and
#     passwd: labalice 1500, labbob 1501, labcarol 1502) and of a container c1 (its own
#     passwd: 4001, 4002, 4003); both mount the export (the host at /mnt/host-nfs).
# (a) each sees its own owner in both orders (patch 1: the keys are per network namespace);
# (b) patch 2: a process in the host's namespaces stats a file through c1's mount
#     (/proc/PID/root/mnt/nfs/...) first, with a name nobody has looked up: it gets c1's
#     answer (it is c1's client), and the host then gets its own on its mount. With patch 1
#     alone the key made for c1's client lands in the host's domain: the host sees c1's uid
#     (measured: 4002, and one key for the name where there are two with patch 2);
# (c) the other order: the host first, then through c1's mount, then the host on a new file:
#     still its own (measured with patch 1 alone: c1's 4003, its key replaced the host's).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/demo-idmap.sh"
W=/run/nsid-lab/kernel-keys
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
INFO="$LAB_BUILD/kernel/full-6.12/BUILD-INFO"
HM=/mnt/host-nfs

# ---- the kernel ------------------------------------------------------------------------------
T0=$(</proc/sys/kernel/tainted)
finding kernel-release "$(uname -r); /proc/sys/kernel/tainted=$T0 at start"
if [ -r "$INFO" ]; then
  while read -r l; do note "BUILD-INFO: $l"; done < <(grep -E '^(release|uts_version|linux|patch|config|make_seconds|build_seconds)=' "$INFO")
  check_eq "booted the kernel kernel/build-kernel built (its release and uname -v)" \
    "$(sed -n 's/^release=//p' "$INFO") $(sed -n 's/^uts_version=//p' "$INFO")" "$(uname -r) $(uname -v)"
else
  check "BUILD-INFO of the kernel ($INFO) readable" false
fi
check "no module support: everything the lab needs is built in" test ! -e /proc/modules

# ---- users: server, host (the guest), c1 -----------------------------------------------------
demo_users_file /etc/passwd /etc/passwd "labalice=1500 labbob=1501 labcarol=1502"
demo_users_file /etc/group /etc/group "labalice=1500 labbob=1501 labcarol=1502"
demo_users_file "$W/passwd-server" /etc/passwd "labalice=2500 labbob=2501 labcarol=2502"
demo_users_file "$W/group-server" /etc/group "labalice=2500 labbob=2501 labcarol=2502"
demo_users_file "$W/passwd-c1" /etc/passwd "labalice=4001 labbob=4002 labcarol=4003"
demo_users_file "$W/group-c1" /etc/group "labalice=4001 labbob=4002 labcarol=4003"
sfile() { # path uid: a file on the export owned by a server uid
  mkdir -p "$LAB_EXPORT/${1%/*}"
  echo "$1" > "$LAB_EXPORT/$1" && chown "$2:$2" "$LAB_EXPORT/$1"
}

check "knfsd started" nfs_server_start off || bail "no server"
check "name mapping on; knfsd's channels answered by rpc.idmapd -S with the server's passwd" \
  demo_idmap_on "$W/passwd-server" "$W/group-server" || bail "no server-side mapping"
check_eq "client nfs4_disable_idmapping" N "$(</sys/module/nfs/parameters/nfs4_disable_idmapping)"
check "request-key rule for id_resolver removed (upcalls go to the idmap pipes)" demo_rk_rule off
check "kernel ID key cache empty" demo_keys_clear
for f in a/host-first a/c1-first; do sfile "$f" 2500; done
sfile b/bob 2501
for f in c/one c/two; do sfile "$f" 2502; done

# the host's rpc.idmapd -C on the initial netns's pipes (the guest's passwd)
host_rpcidmapd() {
  rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-host.log" &
  echo $! > "$W/rpc.idmapd-host.pid"
  wait_for 10 sh -c "ls -l /proc/$!/fd 2>/dev/null | grep -q inotify"
}
host_mount() { mkdir -p "$HM" && timeout 30 mount -t nfs4 -o vers=4.2 "$LAB_SERVER_IP:/" "$HM"; }
check "host: rpc.idmapd -C on the initial netns's pipes" host_rpcidmapd || bail "no host rpc.idmapd"
check "host mounts the export at $HM" host_mount || bail "no host mount"
check "c1 created (own passwd), rpc.idmapd -C on its own pipes" \
  demo_client_rpcidmapd c1 "$W/passwd-c1" "$W/group-c1" "$LOGS/rpc.idmapd-c1.log" || bail "no c1"
check "c1 mounts the export" container_mount c1 vers=4.2 || bail "no c1 mount"
nfs_server_wait_grace
C1=$(container_pid c1)

host_owner() { timeout 20 stat -c %u:%g "$HM/$1" 2>/dev/null || echo "?"; }
via_c1_root() { timeout 20 stat -c %u:%g "/proc/$C1/root/mnt/nfs/$1" 2>/dev/null || echo "?"; }
c1_owner() { demo_owners c1 "$1"; }
keys_for() { grep -cE " id_legacy +uid:$1@$LAB_DOMAIN:" /proc/keys; }

# ---- (a) each namespace its own answer, both orders --------------------------------------------
h=$(host_owner a/host-first); c=$(c1_owner a/host-first)
check_eq "(a) host first: the host sees its own labalice" 1500:1500 "$h"
check_eq "(a) host first: then c1 sees its own labalice" 4001:4001 "$c"
check "kernel ID key cache empty" demo_keys_clear
c2=$(c1_owner a/c1-first); h2=$(host_owner a/c1-first)
check_eq "(a) c1 first: c1 sees its own labalice" 4001:4001 "$c2"
check_eq "(a) c1 first: then the host sees its own labalice" 1500:1500 "$h2"
finding full-idmap-orders "host first: host $h, c1 $c; c1 first: c1 $c2, host $h2 (own: host 1500, c1 4001)"

# ---- (b) patch 2: a lookup on c1's client made by a task in the host's namespaces -------------
check "kernel ID key cache empty" demo_keys_clear
check_eq "labbob never looked up: no key for him" 0 "$(keys_for labbob)"
v=$(via_c1_root b/bob)
check_eq "(b) the host's task through /proc/<c1>/root: c1's answer (c1's client)" 4002:4002 "$v"
hb=$(host_owner b/bob)
check_eq "(b) then the host on its own mount: its own labbob (patch 1 alone: 4002)" 1501:1501 "$hb"
nk=$(keys_for labbob)
check_eq "(b) two id_legacy keys for uid:labbob, one in each namespace's domain" 2 "$nk"
cb=$(c1_owner b/bob)
check_eq "(b) c1 itself: its own labbob" 4002:4002 "$cb"
while read -r l; do note "/proc/keys: $l"; done < <(grep -E " id_(legacy|resolv) " /proc/keys)
finding full-keys-requested-domain "a host task through /proc/<c1>/root first: $v (c1's 4002), then the host's own mount: $hb (own 1501), c1: $cb; id_legacy keys for uid:labbob: $nk"

# ---- (c) the host first, then through c1's mount, then the host again --------------------------
check "kernel ID key cache empty" demo_keys_clear
h1=$(host_owner c/one); v1=$(via_c1_root c/one); h3=$(host_owner c/two); c3=$(c1_owner c/two)
check_eq "(c) the host first: its own labcarol" 1502:1502 "$h1"
check_eq "(c) then the host's task through /proc/<c1>/root: c1's labcarol" 4003:4003 "$v1"
check_eq "(c) then the host on a new file: still its own labcarol (patch 1 alone: 4003)" 1502:1502 "$h3"
check_eq "(c) c1 on the new file: its own labcarol" 4003:4003 "$c3"
finding full-keys-host-first "host $h1, host task via c1's mount $v1, host on a new file $h3, c1 $c3"

t=$(</proc/sys/kernel/tainted)
check_eq "no taint added during the run (/proc/sys/kernel/tainted)" "$T0" "$t"
check "no oops, BUG or WARNING in dmesg" sh -c '! dmesg | grep -qE "Oops|BUG:|WARNING: CPU|Call Trace"'
finding kernel-tainted "$(uname -r): /proc/sys/kernel/tainted=$T0 at start, $t at the end"
lab_done
