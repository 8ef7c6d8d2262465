#!/bin/bash
# lab-test: 6.1 6.12
# idmap-helper: nsid-idmap as the id_resolver request-key helper of a real NFS client, with
# NFSv4 name mapping on (nfs4_disable_idmapping=N on client and server) (issue 5, "Lab").
#   - the rule installed is idmap/nsid-idmap.conf.in (nfs-common's id_resolver.conf removed);
#     the helper logs to syslog (busybox syslogd here) as installed, no extra options;
#   - knfsd's channels are answered by rpc.idmapd -S in a private mount namespace whose
#     passwd also has labdave (1503), a user the client does not know;
#   - the client is a container netns owned by the initial user namespace (noac mount, so
#     each stat asks the server again and maps the owner names again).
# Checks: owners and groups of several server-side users as the container sees them; unknown
# users -> the configured Nobody-User/Nobody-Group; chown/chgrp round-trips (the server
# stores the ids the names map to); -l, -u, -r, -c against nfs-utils' nfsidmap on the same
# keyring (outputs and exit codes); the cache question of KERNEL-FACTS §3 (who may
# invalidate a fresh key, and what an invalidation before the reader's check does).
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
BIN="$LAB_BUILD/idmap/nsid-idmap"
FLOOR="$LAB_BUILD/bench/nsid-rk-floor"
W=/run/nsid-lab/idmap-helper
mkdir -p "$W"
D=$LAB_DOMAIN

# users: the guest's initial namespace is both the server and the client host
cat >> /etc/passwd <<PW
labalice:x:1500:1500::/nonexistent:/usr/sbin/nologin
labbob:x:1501:1501::/nonexistent:/usr/sbin/nologin
labcarol:x:1502:1502::/nonexistent:/usr/sbin/nologin
labcache1:x:1511:1500::/nonexistent:/usr/sbin/nologin
labcache2:x:1512:1500::/nonexistent:/usr/sbin/nologin
labnobody:x:1599:1599::/nonexistent:/usr/sbin/nologin
PW
cat >> /etc/group <<GR
labalice:x:1500:
labbob:x:1501:
labcarol:x:1502:
labstaff:x:1600:
labnogroup:x:1599:
GR
cp /etc/passwd "$W/passwd-server"; cp /etc/group "$W/group-server"
echo "labdave:x:1503:1503::/nonexistent:/usr/sbin/nologin" >> "$W/passwd-server"
echo "labdave:x:1503:" >> "$W/group-server"

check "knfsd started" nfs_server_start off || bail "no server"
echo N > /sys/module/nfs/parameters/nfs4_disable_idmapping
echo N > /sys/module/nfsd/parameters/nfs4_disable_idmapping
cat > /etc/idmapd.conf <<EOC
[General]
Domain = $D
[Mapping]
Nobody-User = labnobody
Nobody-Group = labnogroup
[Translation]
Method = nsswitch
EOC
check "server rpc.idmapd -S (private passwd with labdave)" unshare -m --propagation private sh -c \
  "mount --bind $W/passwd-server /etc/passwd && mount --bind $W/group-server /etc/group && rpc.idmapd -S -p /var/lib/nfs/rpc_pipefs"
check_eq "client nfs4_disable_idmapping" N "$(</sys/module/nfs/parameters/nfs4_disable_idmapping)"
check_eq "server nfs4_disable_idmapping" N "$(</sys/module/nfsd/parameters/nfs4_disable_idmapping)"
check "syslogd for the helper's log" busybox syslogd -O "$W/syslog"

# the rule nsid installs, and nothing else for id_resolver
rm -f /etc/request-key.d/id_resolver.conf /etc/request-key.d/*nfs* 2>/dev/null
RULE=/etc/request-key.d/nsid-idmap.conf
sed "s|@NSID_IDMAP_PATH@|$BIN|" "$LAB_SRC/idmap/nsid-idmap.conf.in" > "$RULE"
note "rule: $(grep -v '^#' "$RULE")"
nfsidmap -c 2>/dev/null

E=$LAB_EXPORT
for f in alice:1500:1500 bob:1501:1600 carol:1502:1502 dave:1503:1503 cache1:1511:1500 cache2:1512:1500 new:0:0; do
  IFS=: read -r n u g <<<"$f"
  echo data > "$E/f-$n"; chown "$u:$g" "$E/f-$n"
done

check "container c1 (init user ns) created" container_create c1 || bail "no container"
check "c1 mounts (vers=4.2, noac)" container_mount c1 vers=4.2,noac || bail "mount failed"
nfs_server_wait_grace
owner() { container_exec c1 stat -c %u:%g "/mnt/nfs/$1"; }
check_eq "labalice's file: 1500:1500" 1500:1500 "$(owner f-alice)"
check_eq "labbob's file, group labstaff: 1501:1600" 1501:1600 "$(owner f-bob)"
check_eq "labcarol's file: 1502:1502" 1502:1502 "$(owner f-carol)"
check_eq "labdave (unknown to the client): the configured nobody labnobody:labnogroup" 1599:1599 "$(owner f-dave)"
# The ID keys that still serve lookups: an invalidated (i), revoked (R) or dead (D) key stays
# in /proc/keys until the keys garbage collector runs, later under load (seen once: nsid-idmap
# -r's invalidated key counted as left).
keys() { awk '($8 == "id_resolv" || $8 == "id_legacy") && $2 !~ /[RDi]/' /proc/keys; }
keys | while read -r l; do note "/proc/keys: $l"; done
check "answers are id_resolver keys (request-key path)" grep -q " id_resolv uid:labalice@$D" <(keys)
check_eq "no id_legacy (pipe) keys" 0 "$(keys | grep -c ' id_legacy ')"
c1net=$(readlink "/proc/$(container_pid c1)/ns/net" | tr -dc 0-9)
# (the syslog listener writes a moment after the helper logged)
check "nsid-idmap answered uid:labalice@$D -> 1500 (syslog)" wait_for 10 grep -q "uid:labalice@$D -> 1500 (host context" "$W/syslog"
grep nsid-idmap "$W/syslog" | tail -n 12 | while read -r l; do note "syslog: $l"; done
check "... and logged the requester in c1's netns" grep -qE "uid:labalice@$D -> 1500 .*requester pid [0-9]+ \(stat\) net:\[$c1net\]" "$W/syslog"

# chown/chgrp round-trips: ids -> names (user:/group: upcalls) -> server ids -> names -> ids
check "c1: chown labbob:labstaff f-new" container_exec c1 chown labbob:labstaff /mnt/nfs/f-new
check_eq "server stores 1501:1600" 1501:1600 "$(stat -c %u:%g "$E/f-new")"
check_eq "c1 sees 1501:1600" 1501:1600 "$(owner f-new)"
check "c1: chown labcarol f-new" container_exec c1 chown labcarol /mnt/nfs/f-new
check_eq "server stores 1502:1600" 1502:1600 "$(stat -c %u:%g "$E/f-new")"
check "nsid-idmap answered user:1501 -> labbob@$D" grep -q "user:1501 -> \"labbob@$D\"" "$W/syslog"

# ---- admin commands against nfsidmap on the same keyring -----------------------------------
same() { # desc, cmd args (run as "nfsidmap ARGS" and "nsid-idmap ARGS"): same output and exit
  local desc=$1; shift
  local a b ra rb
  a=$(nfsidmap "$@" 2>&1); ra=$?
  b=$("$BIN" "$@" 2>&1); rb=$?
  a=${a//nfsidmap: /}; b=${b//nsid-idmap: /}
  check_eq "$desc: output and exit as nfsidmap's" "$a (exit $ra)" "$b (exit $rb)"
}
nkey() { keys | grep -c " id_resolv $1"; }
same "-l" -l
note "nsid-idmap -l: $("$BIN" -l 2>&1 | tr '\n' '|')"
# -u: both invalidate uid:labalice@ (the reader set KEY_FLAG_ROOT_CAN_INVAL on it)
a=$(nfsidmap -u "labalice@$D" 2>&1); ra=$?
check_eq "nfsidmap -u labalice@$D removes the uid key" 0 "$(nkey "uid:labalice@$D")"
owner f-alice >/dev/null # asks again: the key is back
check_eq "re-populated" 1 "$(nkey "uid:labalice@$D")"
b=$("$BIN" -u "labalice@$D" 2>&1); rb=$?
check_eq "nsid-idmap -u labalice@$D: output and exit as nfsidmap's" "${a//nfsidmap: /} (exit $ra)" "${b//nsid-idmap: /} (exit $rb)"
check_eq "nsid-idmap -u removes the uid key" 0 "$(nkey "uid:labalice@$D")"
check_eq "... and leaves gid:labalice@$D" 1 "$(nkey "gid:labalice@$D")"
# -r: uid and gid keys of the name
a=$(nfsidmap -r "labcarol@$D" 2>&1); ra=$?
check_eq "nfsidmap -r labcarol@$D removes uid and gid keys" 0 "$(( $(nkey "uid:labcarol@$D") + $(nkey "gid:labcarol@$D") ))"
owner f-carol >/dev/null
b=$("$BIN" -r "labcarol@$D" 2>&1); rb=$?
check_eq "nsid-idmap -r labcarol@$D: output and exit as nfsidmap's" "${a//nfsidmap: /} (exit $ra)" "${b//nsid-idmap: /} (exit $rb)"
check_eq "nsid-idmap -r removes uid and gid keys" 0 "$(( $(nkey "uid:labcarol@$D") + $(nkey "gid:labcarol@$D") ))"
same "-u of a name without a key" -u "nosuch@$D"
# a prefix: nfsidmap matches it (and removes labbob's key), nsid-idmap wants the exact name
owner f-bob >/dev/null
b=$("$BIN" -u labb 2>&1); rb=$?
check_eq "nsid-idmap -u labb (a prefix): not found, exit 1; labbob's key stays" "1 1" "$rb $(nkey "uid:labbob@$D")"
a=$(nfsidmap -u labb 2>&1); ra=$?
note "nfsidmap -u labb: exit $ra, '$a', uid:labbob keys left: $(nkey "uid:labbob@$D") (prefix match, documented difference)"
# -c
owner f-alice >/dev/null; owner f-carol >/dev/null
a=$(nfsidmap -c 2>&1); ra=$?
check_eq "nfsidmap -c empties the keyring" 0 "$(keys | grep -c ' id_resolv ')"
owner f-alice >/dev/null; owner f-carol >/dev/null
check "re-populated" test "$(keys | grep -c ' id_resolv ')" -ge 2
b=$("$BIN" -c 2>&1); rb=$?
check_eq "nsid-idmap -c: output and exit as nfsidmap's" "${a//nfsidmap: /} (exit $ra)" "${b//nsid-idmap: /} (exit $rb)"
check_eq "nsid-idmap -c empties the keyring" 0 "$(keys | grep -c ' id_resolv ')"
same "-l of the empty keyring" -l
owner f-alice >/dev/null # gid:labalice@ cached by nsid-idmap: the files below only ask for their uid

# ---- the cache question (KERNEL-FACTS §3) --------------------------------------------------
# Who may invalidate a fresh key, and what an invalidation before the kernel's reader has
# checked the key does to that reader. The floor helper answers the uid and then:
#  unlinked: invalidates as root without possessing the key (what a daemon can do), before
#            exiting, i.e. while the kernel's reader still waits for the helper;
#  granted:  while it holds the authority, lets the key's owner (root) search it
#            (KEYCTL_SETPERM), answers, and invalidates it (as root, allowed now) before
#            exiting, i.e. before the waiting reader has checked the key.
CLOG=$W/cache.log
echo "create id_resolver * * $FLOOR --answer=1511 --invalidate=unlinked --log=$CLOG %k %d" > "$RULE"
u=$(owner f-cache1)
note "cache.log: $(cat "$CLOG" 2>/dev/null)"
check "unlinked: root's invalidation before the reader returned is refused (EACCES)" grep -q "uid:labcache1@$D setperm=- instantiate=ok invalidate=EACCES" "$CLOG"
check_eq "unlinked: the reader got the answer" 1511:1500 "$u"
ser=$(keys | awk -v d="uid:labcache1@$D" '$9 == d || index($0, " " d) { print $1; exit }')
r=$(keyctl invalidate $((16#${ser:-0})) 2>&1); rc=$?
check_eq "after the reader returned, root may invalidate it (KEY_FLAG_ROOT_CAN_INVAL set by the reader)" "0 0" "$rc $(nkey "uid:labcache1@$D")"
[ "$rc" = 0 ] || note "keyctl invalidate 0x$ser: $r"
# a key asked for by user space (keyctl request2) never gets that flag
echo "create id_resolver * * $FLOOR --answer=1511 --log=$CLOG %k %d" > "$RULE"
k=$(keyctl request2 id_resolver "uid:labcache9@$D" "" @s 2>&1)
r=$(keyctl session - keyctl invalidate "$k" 2>&1); rc=$?
check "a user-space requester's key: root (another session) cannot invalidate it" test "$rc" != 0
note "keyctl invalidate from another session: exit $rc: $r"
echo "create id_resolver * * $FLOOR --answer=1512 --invalidate=granted --log=$CLOG %k %d" > "$RULE"
# a user-space reader first (request_key(2) waits interruptibly; bounded by timeout)
r=$(timeout 20 keyctl request2 id_resolver "uid:labcache3@$D" "" @s 2>&1); rc=$?
note "granted, user-space reader: exit $rc: $r; cache.log: $(tail -n 1 "$CLOG")"
check "granted: the helper let root search the key, answered and invalidated it before exiting" grep -q "uid:labcache3@$D setperm=ok instantiate=ok invalidate=ok" "$CLOG"
check "granted, user-space reader: request_key fails (its check of the key failed)" test "$rc" != 0 -a "$rc" != 124
# the NFS reader: its wait is uninterruptible, so it runs in the background with a bound
container_exec c1 stat -c %u:%g /mnt/nfs/f-cache2 > "$W/linked-out" 2>&1 &
sp=$!
for _ in {1..150}; do kill -0 "$sp" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$sp" 2>/dev/null; then
  st=$(awk '{print $3}' "/proc/$sp/stat" 2>/dev/null)
  wchan=$(cat "/proc/$sp/wchan" 2>/dev/null)
  stack=$(cut -d' ' -f1 "/proc/$sp/stack" 2>/dev/null | head -n 8 | tr '\n' ' ')
  note "granted, NFS reader: still waiting after 15 s: state $st wchan $wchan stack: $stack"
  u=hung
  disown "$sp" 2>/dev/null
else
  wait "$sp"; u=$(cat "$W/linked-out")
  note "granted, NFS reader: stat -> $u"
fi
note "cache.log: $(tail -n 1 "$CLOG")"
keys | grep labcache2 | while read -r l; do note "/proc/keys: $l"; done
check "granted, NFS reader: it did not get the answer 1512" test "${u%%:*}" != 1512
finding idmap-cache-invalidate "fresh id_resolver key: root's KEYCTL_INVALIDATE before the NFS reader returned: $(grep -o 'uid:labcache1.*' "$CLOG" | head -n 1 | sed 's/.*invalidate=//'); after it returned: ok; key of a user-space requester: refused; invalidated (search permission granted by the helper) before the reader checked it: user-space reader '$r', NFS reader stat -> $u${stack:+ (state $st, wchan $wchan, stack: $stack)}"
sed "s|@NSID_IDMAP_PATH@|$BIN|" "$LAB_SRC/idmap/nsid-idmap.conf.in" > "$RULE"
lab_done
