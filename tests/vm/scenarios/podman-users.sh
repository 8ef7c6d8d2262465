#!/bin/bash
# lab-test: 6.1 6.12
# lab-cost: 250
# lab-timeout: 900
# lab-needs: podman crun conmon newuidmap
# podman-users: a Podman image whose /etc/passwd differs from the host's, with nsid's default
# ID mapping set-up as installed (make install PREFIX=/usr: the request-key rule
# nsid-idmap.conf, nfs-common's id_resolver.conf diverted aside as README says,
# nsid-idmapd started as its unit starts it, no /etc/nsid.conf); then rootless Podman.
#   - labalice is 1500 on the server and the host, 4001 in the image: a file the server
#     stores as labalice is 4001 (and named labalice) inside the container; a chown to 4001
#     inside stores labalice (1500) on the server;
#   - rootless Podman (a user with subordinate ids, `podman run` as that user): the container
#     starts with the hook installed; an NFS mount inside it is refused by the kernel (NFS
#     cannot be mounted from a user namespace); `podman unshare nsidctl doctor` says so in one
#     line and exits 4; `nsidctl doctor` as that user warns about it.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/demo-idmap.sh"
PODMAN_IMAGE=localhost/nsid-users:latest
. "$LAB_LIB/podman.sh"
W=/run/nsid-lab/podman-users
mkdir -p "$W"
OPTS=vers=4.2,soft,timeo=50,retrans=2

demo_users_setup "$W" "labalice=1500 labbob=1510" "labalice=4001 labbob=4011" ||
  bail "cannot write the users' files"
check "nsid installed into the guest (cmake --install --prefix /usr)" lab_install_nsid || bail "install failed"
check "knfsd started" nfs_server_start off || bail "no server"
check "name mapping on; knfsd's channels answered by rpc.idmapd -S (the server's users)" \
  demo_idmap_on "$W/passwd-server" "$W/group-server" || bail "no server-side mapping"
check "nfs-common's id_resolver.conf diverted aside (README: after make install)" \
  dpkg-divert --local --rename --divert /etc/request-key.d/id_resolver.conf.disabled \
    --add /etc/request-key.d/id_resolver.conf
rules=$(grep -lE '^create[[:space:]]+id_resolver[[:space:]]' /etc/request-key.d/*.conf 2>/dev/null | xargs)
check_eq "the one id_resolver rule is nsid's, naming the installed helper" \
  /etc/request-key.d/nsid-idmap.conf "$rules"
check "no /etc/nsid.conf: every default" test ! -e /etc/nsid.conf
/usr/sbin/nsid-idmapd -f </dev/null >/dev/null 2>"$W/nsid-idmapd.log" &
DM_PID=$!
check "nsid-idmapd up (as its unit starts it, no option)" wait_for 30 test -S /run/nsid/idmapd.sock ||
  { note "$(tail -5 "$W/nsid-idmapd.log")"; bail "no daemon"; }

ver=$(podman_setup 2>&1) || { note "$ver"; bail "podman does not run here"; }
note "podman $ver"
check "an image whose /etc/passwd has labalice as 4001 (the host: 1500)" \
  podman_image "$PODMAN_IMAGE" "$W/passwd-1" "$W/group-1" || bail "no image"
check_eq "the host's labalice is 1500" 1500 "$(id -u labalice)"
check "netns pod-u1" podman_netns u1
check "podman run app1 (hostname app)" podman_run app1 u1 --hostname app || bail "podman run failed"
check_eq "inside, labalice is 4001 (the image's passwd)" 4001 \
  "$(podman exec app1 grep '^labalice:' /etc/passwd | cut -d: -f3)"
check "app1 mounts the export" podman_mount app1 "$OPTS" || bail "no mount"
nfs_server_wait_grace
mkdir -p "$LAB_EXPORT/u" && echo x > "$LAB_EXPORT/u/alice" && chown 1500:1500 "$LAB_EXPORT/u/alice"
echo x > "$LAB_EXPORT/u/bob" && chown 1510:1510 "$LAB_EXPORT/u/bob"
check_eq "a file the server stores as labalice (1500) is 4001:4001 inside" 4001:4001 \
  "$(podman exec app1 timeout 20 stat -c %u:%g /mnt/nfs/u/alice 2>&1)"
check_eq "labbob (1510 on the server) is 4011 inside" 4011 \
  "$(podman exec app1 timeout 20 stat -c %u /mnt/nfs/u/bob 2>&1)"
check_eq "ls -l inside names the owner labalice" labalice \
  "$(podman exec app1 timeout 20 ls -l /mnt/nfs/u/alice 2>&1 | awk '{print $3}')"
check "app1 chowns a new file to its labalice (4001)" \
  podman exec app1 timeout 20 sh -c 'echo y > /mnt/nfs/u/new && chown 4001:4001 /mnt/nfs/u/new'
check_eq "the server stores labalice (1500)" 1500:1500 "$(stat -c %u:%g "$LAB_EXPORT/u/new")"
st=$(nsidctl status 2>&1)
printf '%s\n' "$st" | grep -E 'NETNS|app1' | sed 's/^/# status: /'
check "nsidctl status: app1, podman, its idmap domain lab.example" \
  grep -qE " podman +app1 +app .* lab\.example" <<<"$st"
finding podman-users "podman image passwd labalice=4001, server/host 1500: container sees 4001:4001 and the name, chown 4001 -> 1500 on the server (nsid-idmap rule + nsid-idmapd defaults)"

# ---- rootless Podman --------------------------------------------------------------------------
RL=labrl
RLHOME=/tmp/labrl
useradd -m -d "$RLHOME" -u 1600 -s /bin/bash "$RL" 2>"$W/useradd.err"
grep -q "^$RL:" /etc/subuid || echo "$RL:200000:65536" >> /etc/subuid
grep -q "^$RL:" /etc/subgid || echo "$RL:200000:65536" >> /etc/subgid
check "user $RL with subordinate ids" sh -c "id $RL && grep -q '^$RL:' /etc/subuid"
mount --make-rshared /   # rootless Podman wants / shared (it warns otherwise)
as_rl() { su "$RL" -s /bin/bash -c "cd; export XDG_RUNTIME_DIR=$RLHOME/run; mkdir -p \$XDG_RUNTIME_DIR; $*"; }
# the same image, as a tarball the user can read
cp "$PODMAN_WORK/rootfs-localhost_nsid_users_latest.tar" "$RLHOME/img.tar" && chown "$RL:" "$RLHOME/img.tar"
check "rootless: podman import as $RL" as_rl "podman import img.tar localhost/rl:latest >/dev/null"
out=$(as_rl "podman run --rm --cgroups=disabled --network none localhost/rl:latest true" 2>&1); rc=$?
check_eq "rootless: a container starts with nsid's hook installed (exit 0)" 0 "$rc" || note "$out"
out=$(as_rl "podman run --rm --cgroups=disabled --network none --cap-add SYS_ADMIN localhost/rl:latest \
  mount -t nfs4 -o vers=4.2,addr=$LAB_SERVER_IP $LAB_SERVER_IP:/ /mnt/nfs" 2>&1); rc=$?
mout=$out
note "rootless mount: exit $rc: $out"
check "rootless: the NFS mount inside is refused" test "$rc" != 0
check "rootless: refused for lack of permission (the kernel: no NFS mounts in a user namespace)" \
  grep -qiE 'permission denied|not permitted' <<<"$out"
out=$(as_rl "podman unshare nsidctl doctor" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# doctor (podman unshare): /'
check_eq "podman unshare nsidctl doctor: exit 4 (an error)" 4 "$rc"
check "it says in one line that the kernel refuses NFS mounts from a user namespace" \
  grep -qE '^error +user-namespace: .*refuses NFS mounts from a user namespace' <<<"$out"
out=$(as_rl "nsidctl doctor" 2>&1)
printf '%s\n' "$out" | grep -E 'rootless' | sed 's/^/# doctor (as the user): /'
check "nsidctl doctor as $RL: one warning line about rootless containers and NFS" \
  grep -qE '^warning +rootless: .*cannot mount NFS' <<<"$out"
finding podman-rootless "rootless podman: container starts with the hook installed; mount -t nfs4 inside refused ($(grep -oiE 'permission denied|operation not permitted' <<<"$mout" | head -n1)); doctor explains"
kill "$DM_PID" 2>/dev/null
lab_done
