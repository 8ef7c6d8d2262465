#!/bin/bash
# lab-test: 6.1 6.12
# idmapd-server: knfsd inside a server container netns, its idmap channels answered by
# nsid-idmapd from that container's own database and domain (issue 6, proof "idmapd-server").
#   - container s1 runs its own knfsd (nfsd filesystem mounted in its mount ns, threads
#     started in its netns) with its own passwd/group and idmapd.conf Domain = srv.example;
#     the guest's (host's) database knows none of its users and its domain is lab.example;
#   - container c1 is an NFS client of s1 (no request-key rule for id_resolver, so its mount
#     falls back to the idmap pipe) with the same names under other uids;
#   - name mapping on in nfs and nfsd; the host's rpc.idmapd is not running; nsid-idmapd
#     answers s1's /proc/net/rpc/nfs4.{nametoid,idtoname}/channel and c1's pipe.
# Then, in the same guest, the same questions with rpc.idmapd run inside s1's netns: first
# joined to the netns only (as `ip netns exec` would run it: the host's database and domain),
# then to the netns and s1's mount namespace (the container's files).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
W=/run/nsid-lab/idmapd-server
LOGS=/lab-out
[ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
mkdir -p "$W"

# users: s1 knows srvalice/srvbob as 7001/7002 (group srvstaff 7101), c1 as 5001/5002
# (srvstaff 5101) plus cliuser 5003 that s1 does not know; the guest knows none of them
{ cat /etc/passwd; printf 'srvalice:x:7001:7101::/:/bin/sh\nsrvbob:x:7002:7101::/:/bin/sh\n'; } > "$W/passwd-s1"
{ cat /etc/group; printf 'srvstaff:x:7101:\n'; } > "$W/group-s1"
{ cat /etc/passwd; printf 'srvalice:x:5001:5101::/:/bin/sh\nsrvbob:x:5002:5101::/:/bin/sh\ncliuser:x:5003:5101::/:/bin/sh\n'; } > "$W/passwd-c1"
{ cat /etc/group; printf 'srvstaff:x:5101:\n'; } > "$W/group-c1"
for k in s1 c1; do
  mkdir -p "$LAB_CROOT/$k/etc"
  printf '[General]\nDomain = srv.example\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' > "$LAB_CROOT/$k/etc/idmapd.conf"
done
printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' "$LAB_DOMAIN" > /etc/idmapd.conf
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* /etc/request-key.d/*nsid* 2>/dev/null

check "nfs and nfsd loaded with name mapping on" nfs_modules on || bail "modules"
check "lab bridge up" lab_bridge_up || bail "bridge"
check "server container s1: its own knfsd started in its netns" \
  srv_container_start s1 --passwd "$W/passwd-s1" --group "$W/group-s1" || bail "no server"
check "client container c1" container_create c1 --passwd "$W/passwd-c1" --group "$W/group-c1" || bail "no client"
SINO=$(netns_ino s1) CINO=$(netns_ino c1)
note "s1 netns:[$SINO] at $(srv_ip s1), c1 netns:[$CINO]"
check "s1's knfsd listens in s1's netns only" sh -c "[ \"\$(cat /proc/fs/nfsd/threads 2>/dev/null || echo 0)\" = 0 ] && [ \"\$(nsenter -t $(container_pid s1) -m cat /proc/fs/nfsd/threads)\" = 8 ]"
check "the host's rpc.idmapd is not running" sh -c '! pidof rpc.idmapd'
sx() { container_exec s1 "$@"; }
cx() { container_exec c1 "$@"; }
check "files on s1's export owned by s1's uids" sx sh -ec "cd '$SRV_EXPORT'
  for f in f1:7001 f2:7002 g1:7001 g2:7001 h1:7001; do echo data > \${f%:*}; chown \${f#*:}:7101 \${f%:*}; done"

# ---- nsid-idmapd ---------------------------------------------------------------------------
cat > "$W/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
rescan-interval = 2
state-dir = $W/state
CONF
dm_start "$W/nsid.conf" "$LOGS/idmapd-server-daemon.log"
check "nsid-idmapd started" dm_ready || bail "no daemon"
for k in s1 c1; do "$DM_BIN" --socket="$DM_SOCK" --ctl="register $(container_pid $k)" >/dev/null; done
check "nsid-idmapd serves s1's knfsd channels" wait_for 10 grep -q "netns:\[$SINO\].*serving knfsd's nfs4.nametoid" "$LOGS/idmapd-server-daemon.log"
check "c1 mounts s1's export (vers=4.2)" cli_mount c1 s1 || bail "mount"
check "nsid-idmapd serves c1's idmap pipe" wait_for 10 grep -q "netns:\[$CINO\].*serving clnt" "$LOGS/idmapd-server-daemon.log"
t0=$(lab_ms)
got=$(cx stat -c '%U:%G %u:%g' /mnt/nfs/f1)
t1=$(lab_ms)
check_eq "c1 sees f1 owned by srvalice:srvstaff (s1's 7001:7101 -> srvalice@srv.example -> c1's 5001:5101)" "srvalice:srvstaff 5001:5101" "$got"
check_eq "c1 sees f2 owned by srvbob" "srvbob:srvstaff 5002:5101" "$(cx stat -c '%U:%G %u:%g' /mnt/nfs/f2)"
note "first stat through both daemons' paths took $((t1 - t0)) ms"
req=$(dm_ns_json "$SINO" channel_requests)
up=$(dm_ns_json "$CINO" pipe_upcalls)
check "s1's channel requests were answered by nsid-idmapd ($req)" test "${req:-0}" -ge 2
check "c1's pipe upcalls were answered by nsid-idmapd ($up)" test "${up:-0}" -ge 2
check_eq "nsid-idmapd's context for s1 is the container's (its domain)" "srv.example" "$(dm_ns_json "$SINO" domain)"
srv_wait_grace
check "c1: chown srvbob f1" cx chown srvbob /mnt/nfs/f1
check_eq "on s1, f1 now belongs to s1's srvbob (7002: srvbob@srv.example mapped in s1's database)" 7002 "$(sx stat -c %u "$SRV_EXPORT/f1")"
out=$(cx chown cliuser /mnt/nfs/f2 2>&1); rc=$?
note "c1: chown cliuser f2 (cliuser unknown to s1): exit $rc: $out"
check "c1: chown to a user s1 does not know is refused" test "$rc" != 0
check_eq "on s1, f2 still belongs to srvbob" 7002 "$(sx stat -c %u "$SRV_EXPORT/f2")"
check "the host's rpc.idmapd is still not running" sh -c '! pidof rpc.idmapd'
"$DM_BIN" --socket="$DM_SOCK" --status > "$W/status.txt"
while read -r l; do note "status: $l"; done < "$W/status.txt"
finding idmapd-server-nsid "nsid-idmapd: s1's knfsd (own netns) mapped 7001 -> srvalice@srv.example and srvbob@srv.example -> 7002 from s1's passwd and domain; c1 saw srvalice (5001); $req channel requests, $up pipe upcalls"
dm_stop
check_eq "nsid-idmapd exited cleanly on SIGTERM" 0 "$?"

# ---- rpc.idmapd inside s1's netns, for comparison ----------------------------------------------
nfsidmap -c 2>/dev/null
# c1's pipe: rpc.idmapd -C inside c1 (its netns, its mount ns with its rpc_pipefs), and c1
# mounts again so that its new client directory is announced to it
cx mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs
nsenter -t "$(container_pid c1)" -m -u -n rpc.idmapd -f -vvv -C -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>"$LOGS/rpc.idmapd-client.log" &
CRP=$!
# rpc.idmapd is up once it has opened what it serves: an inotify watch on rpc_pipefs for the
# client pipes (-C), knfsd's channels (-S); a daemon that died has no fd left to show
idmapd_serving() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q "$2"; }
check "c1: rpc.idmapd -C running in c1 (netns + mount ns, rpc_pipefs mounted there)" \
  wait_for 10 idmapd_serving "$CRP" inotify
cx umount /mnt/nfs
check "c1 mounts s1's export again" cli_mount c1 s1
mkdir -p /var/lib/nfs/rpc_pipefs
SPID=$(container_pid s1)
# A: joined to s1's netns only
srv_flush s1
nsenter -t "$SPID" -n rpc.idmapd -f -vvv -S -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>"$LOGS/rpc.idmapd-netns.log" &
RP=$!
check "rpc.idmapd -S running in s1's netns (host mount ns)" \
  wait_for 10 idmapd_serving "$RP" nfs4.nametoid/channel
gotA=$(cx stat -c '%U:%G %u:%g' /mnt/nfs/g1)
note "rpc.idmapd in s1's netns only: c1 sees g1 (s1's 7001:7101) as $gotA"
check "netns only: rpc.idmapd does not answer from s1's database (no srvalice)" test "${gotA%%:*}" != srvalice
outA=$(cx chown srvbob /mnt/nfs/g1 2>&1); rcA=$?
check "netns only: chown srvbob (srvbob@srv.example) is refused: the host's database and domain" test "$rcA" != 0
kill -TERM "$RP"; wait "$RP" 2>/dev/null
finding idmapd-server-rpc-netns "rpc.idmapd -S joined to s1's netns only: g1 (7001) seen by c1 as '$gotA'; chown srvbob: exit $rcA ($outA); it answers from the host's passwd and domain ($LAB_DOMAIN)"
# B: joined to s1's netns and mount namespace (its /etc)
srv_flush s1
nfsidmap -c 2>/dev/null
nsenter -t "$SPID" -m -u -n rpc.idmapd -f -vvv -S -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>"$LOGS/rpc.idmapd-container.log" &
RP=$!
check "rpc.idmapd -S running inside s1 (netns and mount ns)" \
  wait_for 10 idmapd_serving "$RP" nfs4.nametoid/channel
gotB=$(cx stat -c '%U:%G %u:%g' /mnt/nfs/g2)
check_eq "inside s1: rpc.idmapd answers from s1's database like nsid-idmapd" "srvalice:srvstaff 5001:5101" "$gotB"
check "inside s1: c1: chown srvbob g2" cx chown srvbob /mnt/nfs/g2
check_eq "inside s1: g2 belongs to s1's srvbob" 7002 "$(sx stat -c %u "$SRV_EXPORT/g2")"
kill -TERM "$RP"; wait "$RP" 2>/dev/null
finding idmapd-server-rpc-container "rpc.idmapd -S inside s1 (netns + mount ns): g2 seen as '$gotB', chown srvbob -> $(sx stat -c %u "$SRV_EXPORT/g2"): the container's files, but one rpc.idmapd per container, running with the container's /etc (its nsswitch.conf and NSS modules) inside it"
kill -TERM "$CRP"; wait "$CRP" 2>/dev/null
lab_done
