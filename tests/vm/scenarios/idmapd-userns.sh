#!/bin/bash
# lab-test: 6.1 6.12
# idmapd-userns: namespace-local ids on the wire (issue 6, proof "idmapd-userns").
# knfsd converts ids in the user namespace of the cred that created its listener (xpt_cred:
# f_cred of whoever opened /proc/fs/nfsd/portlist). A server container "srv": netns made by
# root (the nfsd fs mounts only in a netns owned by the initial user ns: checked first), every
# process in its own user namespace U with uid/gid map "0 0 1, 1 100001 65535" (container
# root is the host's root, container uid 1000 is host uid 101000), knfsd started from inside
# by rpc.nfsd. A second listener (port 2050) written by the guest's root is the control.
# Clients c1 (port 2049) and c2 (port 2050): containers in the initial user namespace.
#  1. numeric ids (nfs4_disable_idmapping=Y): a file owned by host 101000 on disk travels as
#     1000 through U's listener and as 101000 through root's; chown to 1000 from the client
#     leaves 101000 on disk through U's listener, 1000 through root's.
#  2. names (N): the translate-twice answer (101000 for labalice@, what a daemon answering in
#     host ids would say) written by hand into knfsd's nametoid channel is refused (chown
#     fails); nsid-idmapd answers srv's channels with srv's own passwd in U's ids: the
#     channels show "user 1000 -> labalice@lab.example" and "labalice@lab.example -> 1000",
#     c1 sees 1000 (labalice on the client), chown to labalice leaves 101000 on disk.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/userns.sh"
NSIDD="$LAB_BUILD/idmapd/nsid-idmapd"
W=/run/nsid-lab/idmapd-userns
SOCK=$W/idmapd.sock
LOGS=/lab-out
[ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
mkdir -p "$W"
SRV_IP=$LAB_NET_PREFIX.5
MAP="0 0 1,1 100001 65535"
mount_srv() { LAB_SERVER_IP=$SRV_IP container_mount "$@"; }

# labalice is uid 1000 in the guest (the clients' user database) and in srv's own passwd
sed -i '/^[^:]*:[^:]*:1000:/d' /etc/passwd
sed -i '/^[^:]*:[^:]*:1000:/d' /etc/group
echo "labalice:x:1000:1000::/nonexistent:/usr/sbin/nologin" >> /etc/passwd
echo "labalice:x:1000:" >> /etc/group
printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' "$LAB_DOMAIN" > /etc/idmapd.conf
check "modules loaded, numeric ids (nfs4_disable_idmapping=Y)" nfs_modules off || bail "no modules"
check "lab bridge" lab_bridge_up || bail "no bridge"
mkdir -p "$LAB_EXPORT"
check "export tmpfs" mount -t tmpfs -o mode=0777 nsid-lab-export "$LAB_EXPORT"
echo "$LAB_EXPORT $LAB_NET_PREFIX.0/24(rw,no_root_squash,fsid=0,no_subtree_check,insecure,sync)" > /etc/exports
rm -f /etc/exports.d/* 2>/dev/null
: > /var/lib/nfs/etab; : > /var/lib/nfs/rmtab
echo data > "$LAB_EXPORT/f-disk"
chown 101000:101000 "$LAB_EXPORT/f-disk"

# ---- 0. where can knfsd's control fs be mounted? -----------------------------------------------
unshare --user --map-root-user --net sleep infinity </dev/null >/dev/null 2>&1 &
QPID=$!
_userns_wait_exec "$QPID"
out=$(nsenter -t "$QPID" -n unshare -m sh -c 'mount -t nfsd nfsd /proc/fs/nfsd && echo mounted' 2>&1); rc=$?
note "nfsd fs in a netns owned by a user namespace, mounted by the guest's root: exit $rc: $out"
check "the nfsd fs cannot be mounted in a netns owned by a user namespace (even by init root)" test "$rc" != 0
finding userns-nfsd-mount "mount -t nfsd by init root inside a netns owned by a child user namespace: exit $rc: $(echo $out)"
out=$(nsenter -t "$QPID" -n unshare -m sh -c 'mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs && echo mounted' 2>&1); rc=$?
note "rpc_pipefs in that netns, mounted by the guest's root: exit $rc: $out"
check "rpc_pipefs cannot be mounted there either (no idmap pipe can be served in such a netns)" test "$rc" != 0
finding userns-rpc-pipefs-mount "mount -t rpc_pipefs by init root inside a netns owned by a child user namespace: exit $rc: $(echo $out)"
kill -9 "$QPID"; wait "$QPID" 2>/dev/null

# ---- the server container ---------------------------------------------------------------------
mkdir -p "$LAB_CROOT/srv/etc"
cp /etc/passwd /etc/group "$LAB_CROOT/srv/etc/"
printf '[General]\nDomain = %s\n' "$LAB_DOMAIN" > "$LAB_CROOT/srv/etc/idmapd.conf"
check "srv: netns by root, holder in its own user namespace ($MAP)" userns_server_create srv "$SRV_IP" "$MAP" || bail "no srv"
SPU=$(userns_server_pid srv)
note "srv uid_map: $(tr -s ' \n' ' ,' < /proc/$SPU/uid_map)"
out=$(userns_server_exec srv sh -c 'id; exportfs -ra && rpc.mountd -N 2 -N 3 && rpc.nfsd -N 3 8 && cat /proc/fs/nfsd/portlist' 2>&1); rc=$?
note "rpc.nfsd run by root of the user namespace: exit $rc: $(echo $out)"
check "knfsd started from inside the user namespace (exportfs, rpc.mountd, rpc.nfsd)" test "$rc" = 0 || bail "no knfsd"
LAB_SERVER_STARTED=$EPOCHSECONDS
check "control listener tcp 2050 written by the guest's root" userns_server_root srv sh -c 'echo "tcp 2050" > /proc/fs/nfsd/portlist'
note "srv portlist: $(userns_server_root srv cat /proc/fs/nfsd/portlist | tr '\n' ' ')"
userns_server_drop_root_holder srv

check "c1 created" container_create c1 || bail "no c1"
check "c2 created" container_create c2 || bail "no c2"
check "c1 mounts srv through the user-namespaced listener (2049)" mount_srv c1 vers=4.2 || bail "c1 mount"
check "c2 mounts srv through root's listener (2050)" mount_srv c2 vers=4.2,port=2050 || bail "c2 mount"
nfs_server_wait_grace

# ---- 1. numeric ids -----------------------------------------------------------------------------
# (RPCs with a non-root client user's credential hung in this setup on both kernels, through
# either listener: READDIR, ACCESS and OPEN as uid 1000 never reached the server; the checks
# use root's requests, GETATTR and SETATTR, each bounded: a hung NFS call is killed)
nfs_t() { timeout -s KILL 30 "$@"; }
in_c() { local k=$1; shift; nfs_t nsenter -t "$(container_pid "$k")" -m -u -n "$@"; }
u1=$(in_c c1 stat -c %u:%g /mnt/nfs/f-disk)
u2=$(in_c c2 stat -c %u:%g /mnt/nfs/f-disk)
check_eq "numeric: 101000 on disk travels as 1000 through U's listener" 1000:1000 "$u1"
check_eq "numeric: ... and as 101000 through root's listener (control)" 101000:101000 "$u2"
for f in f-c1 f-c2; do echo x > "$LAB_EXPORT/$f"; done
check "numeric: chown to 1000 through U's listener (SETATTR owner \"1000\")" in_c c1 chown 1000:1000 /mnt/nfs/f-c1
check "numeric: chown to 1000 through root's listener" in_c c2 chown 1000:1000 /mnt/nfs/f-c2
d1=$(stat -c %u:%g "$LAB_EXPORT/f-c1")
d2=$(stat -c %u:%g "$LAB_EXPORT/f-c2")
check_eq "numeric: owner 1000 through U's listener is 101000 on disk" 101000:101000 "$d1"
check_eq "numeric: ... through root's listener 1000 on disk (control)" 1000:1000 "$d2"
finding userns-numeric "listener by root of U (map $MAP): disk 101000 -> wire $u1, owner 1000 -> disk $d1; listener by init root: disk 101000 -> wire $u2, owner 1000 -> disk $d2"

# ---- 2. names ------------------------------------------------------------------------------------
in_c c1 umount /mnt/nfs
in_c c2 umount /mnt/nfs
nfs_modules on
check_eq "names: nfs4_disable_idmapping=N on the server" N "$(</sys/module/nfsd/parameters/nfs4_disable_idmapping)"
nfsidmap -c 2>/dev/null
[ -f /etc/request-key.d/id_resolver.conf ] || echo 'create id_resolver * * /usr/sbin/nfsidmap -t 600 %k %d' > /etc/request-key.d/id_resolver.conf
check "c1 mounts again with name mapping" mount_srv c1 vers=4.2 || bail "c1 mount"
chan() { userns_server_root srv cat "/proc/net/rpc/nfs4.$1/content" 2>/dev/null | grep -v '^#'; }
flush_chan() { for c in nametoid idtoname; do echo "$EPOCHSECONDS" > "/proc/$SPU/net/rpc/nfs4.$c/flush"; done; }

# 2a. a hand-written answer in host ids (what translating twice would give) is refused
echo data > "$LAB_EXPORT/f-bad"
( # answer the first nametoid request for labalice with 101000, as a host-ids daemon would
  exec 3<> "/proc/$SPU/net/rpc/nfs4.nametoid/channel" || exit 1
  for _ in {1..150}; do
    if IFS= read -r line <&3 && [ -n "$line" ]; then
      echo "$line" >> "$W/bad-requests"
      case "$line" in *labalice*)
        printf '%s %s 101000\n' "$line" $((EPOCHSECONDS + 60)) >&3; exit 0 ;;
      esac
      printf '%s %s\n' "$line" $((EPOCHSECONDS + 60)) >&3
    fi
    sleep 0.1
  done
) &
RP=$!
bad=$(in_c c1 chown 1000:1000 /mnt/nfs/f-bad 2>&1); brc=$?
wait "$RP"
note "hand-written nametoid requests: $(tr '\n' '|' < "$W/bad-requests" 2>/dev/null)"
note "chown with the host-ids answer: exit $brc: $bad; on disk $(stat -c %u:%g "$LAB_EXPORT/f-bad")"
check "names: knfsd refuses labalice -> 101000 (not an id of U): chown fails" test "$brc" != 0
check_eq "names: ... and the file keeps its owner" 0:0 "$(stat -c %u:%g "$LAB_EXPORT/f-bad")"
finding userns-host-answer "nametoid answered labalice@$LAB_DOMAIN -> 101000 by hand: chown exit $brc ($bad)"
flush_chan

# 2b. nsid-idmapd
cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
rescan-interval = 2
state-dir = $W/state
CONF
"$NSIDD" -f --config="$W/nsid.conf" --socket="$SOCK" -v </dev/null >/dev/null 2>>"$LOGS/idmapd-daemon.log" &
DPID=$!
ready() { for _ in {1..200}; do timeout 5 "$NSIDD" --socket="$SOCK" --ctl=status >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }
check "nsid-idmapd started" ready || bail "no daemon"
check "srv registered" "$NSIDD" --socket="$SOCK" --ctl="register $SPU"
wait_for 10 grep -q "serving knfsd" "$LOGS/idmapd-daemon.log"
grep -E "srv|netns" "$LOGS/idmapd-daemon.log" | tail -n 5 | while read -r l; do note "daemon: $l"; done

n1=$(in_c c1 stat -c %u:%g /mnt/nfs/f-disk)
# (also true with a negative answer: knfsd then sends the id as a number, and it is 1000)
check_eq "names: 101000 on disk -> 1000 on the client" 1000:1000 "$n1"
check "names: idtoname channel: U's 1000 answered labalice@$LAB_DOMAIN" grep -qE "user 1000 labalice@$LAB_DOMAIN\$" <<<"$(chan idtoname)"
echo data > "$LAB_EXPORT/f-own"
out=$(in_c c1 chown 1000:1000 /mnt/nfs/f-own 2>&1); rc=$?
check "names: chown to labalice through U's listener works" test "$rc" = 0 || note "chown: $out"
check_eq "names: ... and leaves 101000 on disk" 101000:101000 "$(stat -c %u:%g "$LAB_EXPORT/f-own")"
check "names: nametoid channel: labalice@$LAB_DOMAIN answered U's 1000" grep -qE "user labalice@$LAB_DOMAIN 1000\$" <<<"$(chan nametoid)"
chan idtoname | while read -r l; do note "idtoname: $l"; done
chan nametoid | while read -r l; do note "nametoid: $l"; done
for v in ns-ids host-ids; do
  note "ctl lookup uid labalice@$LAB_DOMAIN $v: $("$NSIDD" --socket="$SOCK" --ctl="lookup pid:$SPU uid labalice@$LAB_DOMAIN $v" 2>&1)"
done
finding userns-names "nsid-idmapd on srv's channels: disk 101000 -> client $n1; chown labalice -> disk $(stat -c %u:%g "$LAB_EXPORT/f-own"); idtoname: $(chan idtoname | tr '\n' '|'); nametoid: $(chan nametoid | tr '\n' '|')"
"$NSIDD" --socket="$SOCK" --status > "$W/status.txt" 2>&1
while read -r l; do note "status: $l"; done < "$W/status.txt"
kill -TERM "$DPID"; wait "$DPID"
lab_done
