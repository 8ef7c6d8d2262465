#!/bin/bash
# lab-test: 6.1 6.12
# idmap-paths: with NFSv4 name mapping on (nfs4_disable_idmapping=N on client and server),
# which upcall path does the client take?
#   1. mount from a container netns owned by the initial user ns, request-key rule for
#      id_resolver present (a logging helper that execs nfsidmap)
#   2. the same without any id_resolver rule, rpc.idmapd -C answering the container's
#      rpc_pipefs (the container's passwd maps the user to a different uid)
#   3. can a client in a user-namespaced container mount at all? mount(8) from inside, and an
#      fsopen("nfs4") context opened in the container's namespaces and completed by init root.
# Evidence: the helper's log, the key types in /proc/keys (id_resolver = request-key,
# id_legacy = the pipe), and the uid the container sees.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
PROBE="$LAB_BUILD/tests/vm/nsid-fsopen-probe"
RKHELPER="$LAB_SRC/tests/vm/helpers/rk-log-helper"
RKLOG=/run/nsid-lab/rk.log
mkdir -p /run/nsid-lab
: > "$RKLOG"

# A user the server knows as 1500 and the containers know differently.
echo "labalice:x:1500:1500::/nonexistent:/usr/sbin/nologin" >> /etc/passwd
echo "labalice:x:1500:" >> /etc/group
check "knfsd started with idmapping on (rpc.idmapd -S)" nfs_server_start on || bail "no server"
check_eq "client nfs4_disable_idmapping" N "$(</sys/module/nfs/parameters/nfs4_disable_idmapping)"
check_eq "server nfs4_disable_idmapping" N "$(</sys/module/nfsd/parameters/nfs4_disable_idmapping)"
echo data > "$LAB_EXPORT/f-alice"
chown 1500:1500 "$LAB_EXPORT/f-alice"

# /proc/keys shows the type cut to 9 characters: "id_resolv" (request-key) or "id_legacy" (pipe)
keys() { grep -E " (id_resolv|id_legacy) " /proc/keys; }
nkeys() { local t=${1:0:9}; keys | grep -cE " $t +$2:"; }
show_keys() { keys | while read -r l; do note "/proc/keys: $l"; done; }

# ---- 1. request-key rule present -------------------------------------------------------------
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* 2>/dev/null
echo "create id_resolver * * $RKHELPER %k %d" > /etc/request-key.d/nsid-lab-id_resolver.conf
nfsidmap -c 2>/dev/null
check "container i1 created" container_create i1 || bail "no container"
check "i1 mounts (vers=4.2)" container_mount i1 vers=4.2 || bail "mount failed"
nfs_server_wait_grace
uid1=$(container_exec i1 stat -c %u /mnt/nfs/f-alice)
note "i1 sees f-alice owned by uid $uid1; helper log:"
while read -r l; do note "rk.log: $l"; done < "$RKLOG"
show_keys
note "nfsidmap -l: $(nfsidmap -l 2>&1 | tr '\n' ' ')"
while read -r serial desc; do
  note "helper's key $serial: $(keyctl describe "$serial" 2>&1)"
done < "$RKLOG"
check_eq "with a rule: the owner maps to the init namespace's uid" 1500 "$uid1"
check "with a rule: the request-key helper was called for uid:labalice@$LAB_DOMAIN" grep -q "uid:labalice@$LAB_DOMAIN" "$RKLOG"
check "with a rule: the answer is an id_resolver key" test "$(nkeys id_resolver "uid:labalice@$LAB_DOMAIN")" -ge 1
check_eq "with a rule: no id_legacy (pipe) key" 0 "$(nkeys id_legacy "uid:labalice@$LAB_DOMAIN")"
finding idmap-rule "init-userns client, id_resolver rule present: helper called ($(grep -c . "$RKLOG") call(s)), key type id_resolver, uid $uid1"

# ---- 2. no request-key rule: the pipe ---------------------------------------------------------
rm -f /etc/request-key.d/nsid-lab-id_resolver.conf
: > "$RKLOG"
nfsidmap -c 2>/dev/null
check_eq "keyring cleared" 0 "$(keys | grep -c labalice)"
sed 's/^labalice:x:1500:1500:/labalice:x:4001:4001:/' /etc/passwd > /run/nsid-lab/passwd-i2
sed 's/^labalice:x:1500:/labalice:x:4001:/' /etc/group > /run/nsid-lab/group-i2
check "container i2 created (labalice = 4001 inside)" container_create i2 --passwd /run/nsid-lab/passwd-i2 --group /run/nsid-lab/group-i2 || bail "no container"
check "i2: rpc_pipefs of its netns mounted, rpc.idmapd -C started" container_exec i2 sh -c \
  'mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs && rpc.idmapd -C -p /var/lib/nfs/rpc_pipefs'
check "i2 mounts (vers=4.2)" container_mount i2 vers=4.2 || bail "mount failed"
t0=$(lab_ms)
uid2=$(container_exec i2 stat -c %u /mnt/nfs/f-alice)
ms=$(( $(lab_ms) - t0 ))
note "i2 sees f-alice owned by uid $uid2 (first stat took $ms ms)"
show_keys
check_eq "no rule: the container's rpc.idmapd answered through the pipe (uid 4001)" 4001 "$uid2"
check "no rule: the answer is an id_legacy key" test "$(nkeys id_legacy "uid:labalice@$LAB_DOMAIN")" -ge 1
check_eq "no rule: our helper was not called" 0 "$(grep -c . "$RKLOG")"
# the failed request-key attempt stays cached as a negative id_resolver key (flag N, 60 s)
neg=$(keys | grep -E '^[0-9a-f]+ [A-Z-]*N[A-Z-]* .* id_resolv uid:labalice@' | grep -c .)
check "no rule: the failed request-key attempt is cached as a negative id_resolver key" test "$neg" -ge 1
finding idmap-norule "init-userns client, no id_resolver rule: /sbin/request-key finds no rule, kernel falls back to the pipe; key type id_legacy, uid $uid2 from the container's rpc.idmapd; negative id_resolver keys for uid:labalice: $neg"

# ---- 3. user-namespaced client ----------------------------------------------------------------
check "container iu (own user namespace) created" container_create iu --userns || bail "no container"
out=$(container_exec iu timeout 30 mount -t nfs4 -o vers=4.2 "$LAB_SERVER_IP:/" /mnt/nfs 2>&1); rc=$?
note "mount(8) inside iu: exit $rc: $out"
check "mount(8) from inside a user-namespaced container is refused" test "$rc" != 0
finding idmap-userns-mount "mount -t nfs4 inside unshare -U -r -m -n: exit $rc: $out"

check "container i3 (init user ns) created" container_create i3
ctl=$("$PROBE" --pid "$(container_pid i3)" --source "$LAB_SERVER_IP:/" --opt vers=4.2 \
      --opt "addr=$LAB_SERVER_IP" --opt "clientaddr=$(<"$LAB_CROOT/i3/ip")" 2>&1)
note "fsopen probe, i3 (control, netns owned by init userns): $(echo $ctl)"
check "control: fsopen in i3's namespaces + create by root works" grep -q '^create: ok' <<<"$ctl"

us=$("$PROBE" --pid "$(container_pid iu)" --source "$LAB_SERVER_IP:/" --opt vers=4.2 \
     --opt "addr=$LAB_SERVER_IP" --opt "clientaddr=$(<"$LAB_CROOT/iu/ip")" 2>&1)
note "fsopen probe, iu (user namespace): $(echo $us)"
finding idmap-userns-fsopen "fsopen(nfs4) in iu's user+mount+net ns, fsconfig create by init root: $(echo $us)"
check "fsopen(nfs4) is allowed inside the user namespace" grep -q '^fsopen: ok' <<<"$us"
check "FSCONFIG_CMD_CREATE by init root of a userns-owned nfs4 context is refused (EPERM)" grep -q '^create: EPERM' <<<"$us"
lab_done
