#!/bin/bash
# lab-test: 6.1
# lab-test-extra: 6.12
# lab-cost: 250
# lab-timeout: 900
# lab-needs: podman crun conmon
# podman-identity: rootful Podman + crun from Debian's packages, with nsid installed as
# `make install PREFIX=/usr` installs it (the OCI hook entry in
# /usr/share/containers/oci/hooks.d, read by Podman as it reads it on any host; no copy of it
# is edited). The guest has no network device, so each container gets a network namespace
# made beforehand with a veth on the lab bridge (--network ns:PATH); Podman's own network
# (CNI) is not used.
#   - 3 containers with the same hostname (web), each in its own netns, mount the lab's
#     export from inside (busybox mount in a local image); knfsd lists 3 confirmed clients,
#     each named after the identifier the hook gave its netns;
#   - a container re-created (new netns) with the same org.nsid.key annotation gets its old
#     identifier back; a new key gets another;
#   - with --no-annotation-key in the hook's args (a hooks.d file of the same name in
#     /etc/containers/oci/hooks.d, which Podman 4.3 reads only once containers.conf's
#     hooks_dir names it, as README says) the annotation is ignored: the same key no longer
#     gives the same identifier; while web1 (key web-1) lives, another container asking for
#     web-1 through the packaged hook is refused a start;
#   - nsidctl status names each container by engine and name.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/podman.sh"
W=$PODMAN_WORK
HOOK=/usr/share/containers/oci/hooks.d/nsid-uniquifier.json
ETC_HOOK=/etc/containers/oci/hooks.d/nsid-uniquifier.json
OPTS=vers=4.2,soft,timeo=50,retrans=2

check "nsid installed into the guest (cmake --install --prefix /usr)" lab_install_nsid || bail "install failed"
check "the OCI hook entry is where Podman reads it: $HOOK" test -s "$HOOK"
check "it names the installed program" grep -q '"path": "/usr/sbin/nsid-uniquifier"' "$HOOK"
ver=$(podman_setup 2>&1) || { note "$ver"; bail "podman does not run here"; }
note "podman $ver, $(crun --version | head -n1), conmon $(conmon --version | head -n1)"
check "knfsd started (idmapping off)" nfs_server_start off || bail "no server"
check "a local image (podman import of a busybox tarball)" podman_image "$PODMAN_IMAGE" /etc/passwd /etc/group ||
  bail "no image"

# ---- 3 containers, hostname web ------------------------------------------------------------
declare -A id=()
for k in 1 2 3; do
  check "netns pod-$k on the lab bridge" podman_netns "$k" || bail "no netns"
  check "podman run web$k (hostname web, org.nsid.key=web-$k)" \
    podman_run "web$k" "$k" --hostname web --annotation "org.nsid.key=web-$k" || bail "podman run failed"
  id[$k]=$(podman_identifier "web$k")
done
note "identifiers: ${id[1]} ${id[2]} ${id[3]}"
distinct=$(printf '%s\n' "${id[@]}" | sort -u | grep -c '^[0-9a-f]\{32\}$')
check_eq "the hook gave the 3 netns 3 distinct identifiers" 3 "$distinct"
check_eq "web1's process is in netns pod-1 (the hook's netns is the container's)" \
  "$(stat -L -c %i /run/netns/pod-1)" "$(stat -L -c %i "/proc/$(podman_pid web1)/ns/net")"
podman inspect --format '{{json .Config.Annotations}}' web1 | sed 's/^/# annotations: /'
for k in 1 2 3; do
  check "web$k mounts the export from inside" podman_mount "web$k" "$OPTS"
done
nfs_server_wait_grace
for k in 1 2 3; do
  check "web$k writes" podman exec "web$k" timeout 20 sh -c "echo web$k > /mnt/nfs/web$k"
done
nfs_server_clients | grep '/web"' | while read -r l; do note "$l"; done
check_eq "knfsd: 3 confirmed clients" 3 "$(nfs_server_confirmed '"Linux NFSv4\.2 [0-9a-f]{32}/web"')"
miss=0
for k in 1 2 3; do
  nfs_server_clients | grep -q "name=\"Linux NFSv4\.2 ${id[$k]}/web\" status=confirmed" || miss=$((miss + 1))
done
check_eq "each container's client is named after its identifier" 0 "$miss"
check_eq "no client named by the bare hostname" 0 "$(nfs_server_confirmed '"Linux NFSv4\.2 web"')"

# ---- nsidctl status: engine and name ---------------------------------------------------------
st=$(nsidctl status 2>&1)
printf '%s\n' "$st" | sed 's/^/# status: /'
for k in 1 2 3; do
  check "nsidctl status lists web$k as a podman container" \
    grep -qE "^$(stat -L -c %i /run/netns/pod-$k) +$(podman_pid "web$k") +podman +web$k " <<<"$st"
done
js=$(nsidctl --json status 2>&1)
check "nsidctl --json status: engine podman, container web1, engine_id its id" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
n = [x for x in d["namespaces"] if x["container"] == "web1"]
assert len(n) == 1 and n[0]["engine"] == "podman" and n[0]["engine_id"] == sys.argv[2], n
' "$js" "$(podman inspect --format '{{.Id}}' web1)"

# ---- re-created with the same key, a new key ---------------------------------------------------
check "web1 removed" podman_rm web1
check "its netns removed" podman_netns_del 1
check "a new netns pod-1" podman_netns 1
check "web1 re-created with org.nsid.key=web-1" \
  podman_run web1 1 --hostname web --annotation org.nsid.key=web-1
check_eq "re-created with the same key: its old identifier" "${id[1]}" "$(podman_identifier web1)"
check "it mounts again" podman_mount web1 "$OPTS"
check "the server knows it by its old name" \
  wait_for 20 sh -c "grep -l 'Linux NFSv4.2 ${id[1]}/web' /proc/fs/nfsd/clients/*/info"
check "netns pod-4" podman_netns 4
check "web4 with a new key (web-4)" podman_run web4 4 --hostname web --annotation org.nsid.key=web-4
id4=$(podman_identifier web4)
check "a new key: another identifier ($id4)" sh -c "echo '$id4' | grep -qx '[0-9a-f]\{32\}' &&
  ! printf '%s\n' ${id[*]} | grep -qx '$id4'"

# ---- --no-annotation-key ---------------------------------------------------------------------
# The administrator's copy of the installed entry with the option added, in
# /etc/containers/oci/hooks.d. Podman 4.3 (Debian 12) reads only
# /usr/share/containers/oci/hooks.d unless containers.conf's hooks_dir names more (seen in
# this lab with --log-level=debug): README says to set hooks_dir; a file of the same name in a
# later directory replaces the earlier one (oci-hooks(5)).
mkdir -p "${ETC_HOOK%/*}"
# (detached: an attached `run --rm` here waited 20 s for Podman's conmon timeout, in every run)
hook_dirs_read() { # the directories Podman reads hooks from, one a line
  podman --log-level=debug run -d --rm --network none "$PODMAN_IMAGE" true 2>&1 |
    sed -n 's/.*msg="reading hooks from \([^"]*\)".*/\1/p'
}
check_eq "without hooks_dir, podman reads only the packaged directory" \
  /usr/share/containers/oci/hooks.d "$(hook_dirs_read)"
sed -i '/^\[engine\]/a hooks_dir = ["/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d"]' \
  /etc/containers/containers.conf
check_eq "hooks_dir in containers.conf: the packaged directory, then /etc's" \
  "/usr/share/containers/oci/hooks.d /etc/containers/oci/hooks.d" "$(hook_dirs_read | tr '\n' ' ' | sed 's/ $//')"
python3 -c 'import json,sys
h=json.load(open(sys.argv[1])); h["hook"]["args"].append("--no-annotation-key")
json.dump(h, open(sys.argv[2], "w"), indent=2)' "$HOOK" "$ETC_HOOK"
check "hooks.d override with --no-annotation-key" grep -q -- '--no-annotation-key' "$ETC_HOOK"
check "netns pod-5" podman_netns 5
check "web5 with org.nsid.key=web-1 under --no-annotation-key" \
  podman_run web5 5 --hostname web --annotation org.nsid.key=web-1
id5=$(podman_identifier web5)
check "the annotation is ignored: not web-1's identifier ($id5)" sh -c "echo '$id5' | grep -qx '[0-9a-f]\{32\}' && [ '$id5' != '${id[1]}' ]"
cid5=$(podman inspect --format '{{.Id}}' web5)
check "the registry keys it by its container id" sh -c \
  "nsid-uniquifier --json list | python3 -c 'import json,sys
d=json.load(sys.stdin)[\"namespaces\"]; e=[x for x in d if x.get(\"identifier\")==\"$id5\"]
assert e and e[0].get(\"source\")==\"container-id\", e' 2>&1 || nsid-uniquifier --json list"
rm -f "$ETC_HOOK"
check "netns pod-7" podman_netns 7
out=$(podman_run web7 7 --hostname web --annotation org.nsid.key=web-1 2>&1); rc=$?
check "while web1 (key web-1) lives, a second container with key web-1 is refused a start" \
  test "$rc" != 0 || note "$out"
check "crun says the hook failed" grep -q 'error executing hook `/usr/sbin/nsid-uniquifier`' <<<"$out"
check "netns pod-6" podman_netns 6
check "with the packaged entry again, org.nsid.key=web-1 gets web-1's identifier (web1 gone first)" \
  sh -c "podman rm -f -t 0 web1 >/dev/null && ip netns del pod-1 &&
         podman run -d --privileged --name web6 --network ns:/run/netns/pod-6 --hostname web \
           --annotation org.nsid.key=web-1 $PODMAN_IMAGE sleep 1000000 >/dev/null &&
         [ \"\$(nsenter -t \$(podman inspect --format '{{.State.Pid}}' web6) -n unshare -m sh -c 'mount -t sysfs sysfs /sys && cat /sys/fs/nfs/net/nfs_client/identifier')\" = '${id[1]}' ]"
finding podman-identity "podman $ver + crun: 3 containers hostname web, 3 confirmed clients; key web-1 re-created -> same identifier, new key -> another, --no-annotation-key -> annotation ignored"
lab_done
