#!/bin/bash
# lxc: real LXC containers (Debian's lxc: lxc-start, lxc-attach) with nsid as installed
# (cmake --install, prefix /usr, where the package puts it) and configured as README says:
#   lxc.hook.start-host = /usr/share/lxc/hooks/nsid-uniquifier
# Each container: a local rootfs directory (no image server is reachable from the lab), a veth
# on the lab bridge labbr0, init `sleep infinity`; everything inside runs through lxc-attach.
#   - 3 containers with the same hostname mount the lab's knfsd export from inside: the server
#     lists 3 confirmed clients, named by the identifiers the hook set;
#   - a container destroyed and created again with the same name (the key) gets its old
#     identity back (though its rootfs and machine-id are new); a new name gets another;
#   - with `--no-name-key` after the hook's path (the opt-out, as nsid-uniquifier(8) documents
#     it: the name, chosen by whoever creates the container, is ignored like an annotation
#     with --no-annotation-key), the key is the container's own /etc/machine-id: a
#     container created again with the same name gets another identity;
#   - ID mapping as the package sets it up by default (nsid's request-key rule, nfs-common's
#     diverted, nsid-idmapd with no configuration): a container whose /etc/passwd gives the
#     server's labalice another uid sees its own owners, and the host its own.
# lab-test: 6.1 6.12
# lab-cost: 250
# lab-timeout: 900
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
. "$LAB_LIB/demo-idmap.sh"
. "$LAB_LIB/lxc.sh"
W=/run/nsid-lab/lxc-scenario
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
note "kernel $(uname -r), $(lxc-start --version 2>&1 | head -n 1 | sed 's/^/lxc /')"

command -v lxc-start >/dev/null || bail "lxc-start missing (scripts/install-deps lab installs lxc)"
check "nsid installed from the build (cmake --install, prefix /usr)" \
  sh -c "cmake --install '$LAB_BUILD' --prefix /usr > '$W/install.log' 2>&1"
check "the installed LXC hook is the built one" cmp "$LXC_HOOK" "$LAB_BUILD/udev-rules/nsid-uniquifier"
check "it runs /usr/sbin/nsid-uniquifier lxc-hook" grep -q '^exec /usr/sbin/nsid-uniquifier --quiet lxc-hook "\$@"' "$LXC_HOOK"
check "cgroup2 mounted (lxc-start needs it; systemd would have done it)" lxc_host_prepare

spec_srv="labalice=1500"
spec_k="labalice=4001"
demo_users_setup "$W" "$spec_srv" "$spec_k" || bail "cannot write the users' files"
check "knfsd started" nfs_server_start off || bail "no server"
check "name mapping on; knfsd's channels answered by rpc.idmapd -S" \
  demo_idmap_on "$W/passwd-server" "$W/group-server" || bail "no server-side mapping"
check "nfs-common's id_resolver rule diverted away (the dpkg-divert README gives)" \
  dpkg-divert --local --rename --divert /etc/request-key.d/id_resolver.conf.disabled \
    --add /etc/request-key.d/id_resolver.conf
check "no request-key rule runs nfsidmap" sh -c '! grep -qs "^[^#]*nfsidmap" /etc/request-key.d/*.conf /etc/request-key.conf'
check "nsid's request-key rule is installed" test -f /etc/request-key.d/nsid-idmap.conf
check "no /etc/nsid.conf: every default" test ! -e /etc/nsid.conf
/usr/sbin/nsid-idmapd -f </dev/null >/dev/null 2>>"$LOGS/nsid-idmapd.log" &
DM_PID=$!
DM_SOCK=/run/nsid/idmapd.sock
check "nsid-idmapd up, as its unit starts it (no option, no configuration)" dm_ready || bail "no daemon"

identity_of() { # key: the identity nsid-uniquifier derives from it (nsidctl identity)
  /usr/sbin/nsidctl --json identity --container-id="$1" | sed -n 's/.*"identity": *"\([0-9a-f]*\)".*/\1/p'
}
key_source_of() { # container: the key source the registry records for its netns
  /usr/sbin/nsidctl --json identity --pid="$(lxc_pid "$1")" | sed -n 's/.*"key_source": *"\([^"]*\)".*/\1/p'
}
is_hex32() { [[ $1 =~ ^[0-9a-f]{32}$ ]]; }

# ---- 3 containers, one hostname -------------------------------------------------------------
for n in c1 c2 c3; do
  check "$n made (hostname app, hook in its config)" lxc_make "$n" --hostname app || bail "no $n"
  check "$n started (lxc-start)" lxc_start "$n" || bail "$n did not start: $(tail -n 5 "$LXC_P/$n/lxc.log")"
  id=$(lxc_identifier "$n")
  check_eq "$n: the hook set the identity of its name, seen from inside" "$(identity_of "$n")" "$id"
  check_eq "$n: hostname app inside" app "$(lxc_exec "$n" hostname)"
done
p1=$(lxc_pid c1)
note "what tells c1 apart on the host (for nsidctl status): init pid $p1, cgroup $(tr '\n' ' ' < "/proc/$p1/cgroup"), environ container=$(tr '\0' '\n' < "/proc/$p1/environ" | sed -n 's/^container=//p'), parent $(cat "/proc/$(awk '{print $4}' "/proc/$p1/stat")/cmdline" | tr '\0' ' ')"
# nsidctl status names each by engine and name (from its cgroup, lxc.payload.NAME)
st=$(/usr/sbin/nsidctl status 2>&1)
printf '%s\n' "$st" | sed 's/^/# status: /'
for n in c1 c2 c3; do
  check "nsidctl status lists $n as an lxc container" \
    grep -qE "^$(stat -L -c %i "/proc/$(lxc_pid "$n")/ns/net") +$(lxc_pid "$n") +lxc +$n " <<<"$st"
done
nfs_server_wait_grace
for n in c1 c2 c3; do check "$n mounts the export from inside (lxc-attach)" lxc_mount "$n"; done
for n in c1 c2 c3; do
  check "$n writes through its mount" lxc_exec "$n" sh -c "echo $n > /mnt/nfs/from-$n"
done
check_eq "the server lists 3 confirmed clients, one per container" 3 "$(nfs_server_confirmed 'app"')"
note "server: $(nfs_server_names 'app"' | tr '\n' ' ')"
for n in c1 c2 c3; do
  check_eq "$n's identifier is in a confirmed client's name" 1 \
      "$(nfs_server_confirmed "$(lxc_identifier "$n")/app\"")"
done

# ---- re-created with the same name; a new name ----------------------------------------------
old1=$(lxc_identifier c1)
mid_before=$(<"$LXC_P/c1/rootfs/etc/machine-id")
check "c1 destroyed (lxc-stop -k, lxc-destroy)" lxc_gone c1
check "c1 made again (new rootfs, new machine-id)" lxc_make c1 --hostname app
check "its machine-id is a new one" test "$mid_before" != "$(<"$LXC_P/c1/rootfs/etc/machine-id")"
check "c1 started again" lxc_start c1
check_eq "c1 re-created: its old identity back" "$old1" "$(lxc_identifier c1)"
check "c1 mounts again" lxc_mount c1
check "and reads what it wrote before" lxc_exec c1 grep -qx c1 /mnt/nfs/from-c1
check_eq "c1's old identity is a confirmed client again" 1 "$(nfs_server_confirmed "$old1/app\"")"
new_c4() { lxc_make c4 --hostname app && lxc_start c4; }
check "c4 (a new name) made and started" new_c4
id4=$(lxc_identifier c4)
check "c4 has an identifier" is_hex32 "$id4"
others="$old1 $(lxc_identifier c2) $(lxc_identifier c3)"
check "c4's identity is another one than c1's, c2's, c3's" test "${others/$id4/}" = "$others"

# ---- the opt-out: --no-name-key --------------------------------------------------------------
check "o1 made with 'lxc.hook.start-host = $LXC_HOOK --no-name-key'" \
  lxc_make o1 --hostname app --hook-args --no-name-key
check "its config line is exactly that" grep -qx "lxc.hook.start-host = $LXC_HOOK --no-name-key" "$LXC_P/o1/config"
check "o1 started" lxc_start o1 || bail "o1 did not start: $(tail -n 5 "$LXC_P/o1/lxc.log")"
oa=$(lxc_identifier o1)
check "o1 has an identifier" is_hex32 "$oa"
check "it is not the identity of its name" test "$oa" != "$(identity_of o1)"
check_eq "o1's key: its own /etc/machine-id" machine-id "$(key_source_of o1)"
check_eq "o1's identity is its machine-id's" "$(identity_of "$(<"$LXC_P/o1/rootfs/etc/machine-id")")" "$oa"
again_o1() { lxc_gone o1 && lxc_make o1 --hostname app --hook-args --no-name-key && lxc_start o1; }
check "o1 destroyed and made again with the same name and hook line" again_o1
ob=$(lxc_identifier o1)
check "o1 has an identifier again" is_hex32 "$ob"
check "o1 re-created: another identity (the name is ignored)" test "$ob" != "$oa"

# ---- ID mapping: a rootfs whose /etc/passwd differs from the host's --------------------------
check "k1 made with its own /etc/passwd (labalice 4001; the host's is 1500)" \
  lxc_make k1 --passwd "$W/passwd-1" --group "$W/group-1"
check "k1 started" lxc_start k1 || bail "k1 did not start"
check_eq "k1's rootfs says labalice is 4001" 4001 "$(lxc_exec k1 id -u labalice)"
check_eq "the host says labalice is 1500" 1500 "$(id -u labalice)"
check "k1 mounts the export" lxc_mount k1
HMNT=/mnt/host-nfs
mkdir -p "$HMNT"
check "the host mounts the export" timeout 30 mount -t nfs4 -o vers=4.2 "$LAB_SERVER_IP:/" "$HMNT"
demo_keys_clear
mkdir -p "$LAB_EXPORT/own"; echo x > "$LAB_EXPORT/own/alice"; chown 1500:1500 "$LAB_EXPORT/own/alice"
k=$(lxc_exec k1 timeout 20 stat -c %u:%g /mnt/nfs/own/alice)
h=$(timeout 20 stat -c %u:%g "$HMNT/own/alice")
check_eq "k1 sees its own labalice (4001), the host its own (1500)" "4001:4001 1500:1500" "$k $h"
check "k1 chowns a file to its labalice" lxc_exec k1 sh -c "echo y > /mnt/nfs/own/k1 && chown 4001:4001 /mnt/nfs/own/k1"
check_eq "the server stores labalice (1500)" 1500:1500 "$(stat -c %u:%g "$LAB_EXPORT/own/k1")"
check_eq "k1 sees it as 4001" 4001:4001 "$(lxc_exec k1 timeout 20 stat -c %u:%g /mnt/nfs/own/k1)"

umount "$HMNT" 2>/dev/null
dm_stop
rm -f /etc/request-key.d/nsid-idmap.conf
lab_done
