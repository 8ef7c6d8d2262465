#!/bin/bash
# idmapd-nss: nsid-idmapd answers each container from that container's OWN name service
# (doc/id-mapping.md, "A container's own name service"), on the real NFS client and knfsd,
# against what nfs-utils' rpc.idmapd run inside the same container answers, in one boot.
# The users (knfsd's channels answered by rpc.idmapd -S with the server's passwd, which is
# also the guest's, the "host"; the guest's nsswitch.conf says `files` for passwd and group):
#   server/host: labalice 1501, labcarol 1502, groups labteam 1601, labcarol 1502
#   c1: nsswitch.conf `files systemd`; labalice and labteam are NOT in its passwd/group but
#       systemd user/group records in its /etc/userdb (labalice 4011, gid labteam 4111,
#       read by nss-systemd from the drop-ins, no systemd-userdbd); labcarol 4102 in files
#   c2: files only, but its idmapd.conf says `Method = static,nsswitch` and [Static] maps
#       labcarol@lab.example to its labstatic (4222); labcarol is 4202 and labalice 4201 in
#       its passwd, labteam 4211 in its group
#   c3: nsswitch.conf `files ldap`, nslcd (nss-pam-ldapd) running in it against Debian's
#       slapd in the guest (ldap://192.0.2.1:3890/): labalice 4301, labcarol 4302, labteam
#       4311 only in the directory (when slapd and nslcd are installed; else said, and c3
#       is left out)
# On the export: alice (1501:1601) and carol (1502:1502) per phase.
#   1. baseline: no request-key rule for id_resolver (nfs-common's diverted away), rpc.idmapd
#      -C on the idmap pipes of c1, c2 and the host; the kernel's ID key cache is emptied
#      before each one's look (it has one global cache); c1 chowns a file to labalice:labteam.
#   2. nsid, the package's default set-up: nsid's request-key rule (nsid-idmap.conf),
#      nsid-idmapd with no configuration file, no rpc.idmapd on the client side; the host
#      looks first, then c1, c2 (new files), then the other way round; c1 chowns again.
# Each answer must be the baseline's, c1's and c2's differ from the host's, each
# container's chown of a file to ITS labalice:labteam stores the server's labalice:labteam, and the daemon says c1 and c2 are answered by their
# name service (status answered_by = nss).
# lab-test: 6.1 6.12
# lab-cost: 70
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
. "$LAB_LIB/demo-idmap.sh"

W=/run/nsid-lab/idmapd-nss
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
D=$LAB_DOMAIN
note "kernel $(uname -r); nsid-idmapd $(stat -c '%y' "$DM_BIN" | cut -c1-19), nsid-nss-query $(stat -c '%y' "$LAB_BUILD/idmapd/nsid-nss-query" 2>&1 | cut -c1-19)"

# ---- users and the containers' files ----------------------------------------------------------
sed -i -e 's/^passwd:.*/passwd: files/' -e 's/^group:.*/group: files/' /etc/nsswitch.conf
demo_users_file /etc/passwd /etc/passwd "labalice=1501 labcarol=1502" &&
  demo_users_file /etc/group /etc/group "labalice=1501 labcarol=1502 labteam=1601" &&
  cp /etc/passwd "$W/passwd-server" && cp /etc/group "$W/group-server" || bail "cannot write the server's users"
# c1: no labalice, no labteam in files (labalice's own group line goes too)
demo_users_file "$W/passwd-c1" /etc/passwd "labcarol=4102" &&
  demo_users_file "$W/group-c1" /etc/group "labcarol=4102" &&
  sed -i '/^labalice:/d' "$W/passwd-c1" && sed -i '/^labalice:/d; /^labteam:/d' "$W/group-c1" ||
  bail "cannot write c1's files"
mkdir -p "$W/userdb-c1"
printf '{"userName":"labalice","uid":4011,"gid":4111,"disposition":"regular","realName":"lab alice","homeDirectory":"/nonexistent","shell":"/usr/sbin/nologin"}\n' \
  > "$W/userdb-c1/labalice.user"
printf '{"groupName":"labteam","gid":4111,"disposition":"regular"}\n' > "$W/userdb-c1/labteam.group"
ln -sf labalice.user "$W/userdb-c1/4011.user"
ln -sf labteam.group "$W/userdb-c1/4111.group"
sed -e 's/^passwd:.*/passwd: files systemd/' -e 's/^group:.*/group: files systemd/' \
  /etc/nsswitch.conf > "$W/nsswitch-c1"
# c2: files, and libnfsidmap's static method first
demo_users_file "$W/passwd-c2" /etc/passwd "labalice=4201 labcarol=4202 labstatic=4222" &&
  demo_users_file "$W/group-c2" /etc/group "labalice=4201 labcarol=4202 labstatic=4222 labteam=4211" ||
  bail "cannot write c2's files"
cat > "$W/idmapd-c2.conf" <<EOF
[General]
Domain = $D
[Mapping]
Nobody-User = nobody
Nobody-Group = nogroup
[Translation]
Method = static,nsswitch
[Static]
labcarol@$D = labstatic
EOF

# c3: files without the three, its directory through nslcd
HAVE_LDAP=0
command -v slapd >/dev/null && command -v nslcd >/dev/null && [ -e /usr/lib/x86_64-linux-gnu/libnss_ldap.so.2 ] &&
  getent passwd nslcd >/dev/null && HAVE_LDAP=1
if [ "$HAVE_LDAP" = 1 ]; then
  demo_users_file "$W/passwd-c3" /etc/passwd "labnone=4399" && demo_users_file "$W/group-c3" /etc/group "labnone=4399" &&
    sed -i '/^lab\(alice\|carol\):/d' "$W/passwd-c3" && sed -i '/^lab\(alice\|carol\|team\):/d' "$W/group-c3" ||
    bail "cannot write c3's files"
  sed -e 's/^passwd:.*/passwd: files ldap/' -e 's/^group:.*/group: files ldap/' /etc/nsswitch.conf > "$W/nsswitch-c3"
  printf 'uid nslcd\ngid nslcd\nuri ldap://%s:3890/\nbase dc=dir,dc=test\n' "$LAB_SERVER_IP" > "$W/nslcd-c3.conf"
  chmod 640 "$W/nslcd-c3.conf" && chgrp nslcd "$W/nslcd-c3.conf"
  mkdir -p "$W/run-nslcd-c3" && chown nslcd:nslcd "$W/run-nslcd-c3"
  . "$LAB_LIB/slapd.sh"
  slapd_conf "$W"
  cat > "$W/data.ldif" <<LDIF
dn: dc=dir,dc=test
objectClass: dcObject
objectClass: organization
o: dir
dc: dir

dn: uid=labalice,dc=dir,dc=test
objectClass: account
objectClass: posixAccount
uid: labalice
cn: lab alice
uidNumber: 4301
gidNumber: 4311
homeDirectory: /nonexistent

dn: uid=labcarol,dc=dir,dc=test
objectClass: account
objectClass: posixAccount
uid: labcarol
cn: lab carol
uidNumber: 4302
gidNumber: 4302
homeDirectory: /nonexistent

dn: cn=labteam,dc=dir,dc=test
objectClass: posixGroup
cn: labteam
gidNumber: 4311

dn: cn=labcarol,dc=dir,dc=test
objectClass: posixGroup
cn: labcarol
gidNumber: 4302
LDIF
else
  note "slapd or nslcd (nss-pam-ldapd) not installed (scripts/install-deps all): no c3"
fi
CS="c1 c2"; [ "$HAVE_LDAP" = 1 ] && CS="c1 c2 c3"

# ---- server, containers, the baseline's daemons -------------------------------------------------
check "knfsd started" nfs_server_start off || bail "no server"
check "name mapping on; knfsd's channels answered by rpc.idmapd -S with the server's passwd" \
  demo_idmap_on "$W/passwd-server" "$W/group-server" || bail "no server-side mapping"
check "nfs-common's id_resolver rule diverted away; no id_resolver rule at all (baseline)" demo_rk_rule off
check "c1 created: nsswitch files systemd, labalice only in its /etc/userdb" \
  container_create c1 --passwd "$W/passwd-c1" --group "$W/group-c1" \
    --bind "$W/nsswitch-c1:/etc/nsswitch.conf" --bind "$W/userdb-c1:/etc/userdb" || bail "no c1"
check "c2 created: idmapd.conf Method = static,nsswitch, [Static] labcarol@$D = labstatic" \
  container_create c2 --passwd "$W/passwd-c2" --group "$W/group-c2" \
    --bind "$W/idmapd-c2.conf:/etc/idmapd.conf" || bail "no c2"
if [ "$HAVE_LDAP" = 1 ]; then
  check "slapd: the directory loaded" slapadd -q -f "$W/slapd.conf" -l "$W/data.ldif" || bail "slapadd"
  slapd -d 0 -h "ldap://$LAB_SERVER_IP:3890/" -f "$W/slapd.conf" </dev/null >"$LOGS/slapd.out" 2>&1 &
  check "slapd up on $LAB_SERVER_IP:3890" wait_for 60 ldapsearch -x -LLL -H "ldap://$LAB_SERVER_IP:3890/" -b dc=dir,dc=test uid=labalice dn ||
    bail "no slapd"
  check "c3 created: nsswitch files ldap, its own nslcd.conf" \
    container_create c3 --passwd "$W/passwd-c3" --group "$W/group-c3" \
      --bind "$W/nsswitch-c3:/etc/nsswitch.conf" --bind "$W/nslcd-c3.conf:/etc/nslcd.conf" \
      --bind "$W/run-nslcd-c3:/run/nslcd" || bail "no c3"
  # (nslcd forks into the background inside c3's namespaces)
  container_exec c3 nslcd </dev/null >"$LOGS/nslcd-c3.out" 2>&1
  check "c3: nslcd answers (getent passwd labalice)" wait_for 30 container_exec c3 getent passwd labalice ||
    note "nslcd: $(tail -n 5 "$LOGS/nslcd-c3.out")"
  check_eq "c3: getent passwd labalice, group labteam (nslcd, the directory)" "4301 4311" \
    "$(container_exec c3 getent passwd labalice | cut -d: -f3) $(container_exec c3 getent group labteam | cut -d: -f3)"
  check "c3's passwd file has no labalice" sh -c "! grep -q '^labalice:' '$W/passwd-c3'"
fi

field() { cut -d: -f"$1"; }
c1_files_lack() { ! container_exec c1 grep -q '^labalice:' /etc/passwd && ! container_exec c1 grep -q '^labteam:' /etc/group; }
check "c1's passwd and group files have no labalice, no labteam" c1_files_lack
check_eq "c1: getent passwd labalice (nss-systemd, /etc/userdb)" "4011:4111" \
  "$(container_exec c1 getent passwd labalice | field 3-4)"
check_eq "c1: getent group labteam, getent passwd 4011" "4111 labalice" \
  "$(container_exec c1 getent group labteam | field 3) $(container_exec c1 getent passwd 4011 | field 1)"
check_eq "c2: getent passwd labstatic, labcarol" "4222 4202" \
  "$(container_exec c2 getent passwd labstatic | field 3) $(container_exec c2 getent passwd labcarol | field 3)"
check_eq "host: getent passwd labalice, group labteam" "1501 1601" \
  "$(getent passwd labalice | field 3) $(getent group labteam | field 3)"

rpcidmapd_in() { # key log: rpc.idmapd -C on the container's own idmap pipes (demo_client_rpcidmapd)
  local key=$1 pid
  container_exec "$key" mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs || return 1
  nsenter -t "$(container_pid "$key")" -m -u -n rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs \
    </dev/null >/dev/null 2>>"$2" &
  pid=$!
  echo "$pid" > "$LAB_CROOT/$key/rpc.idmapd.pid"
  wait_for 10 sh -c "ls -l /proc/$pid/fd 2>/dev/null | grep -q inotify"
}
for k in $CS; do
  check "baseline: rpc.idmapd -C on $k's own pipes" rpcidmapd_in "$k" "$LOGS/rpc.idmapd-$k.log" || bail "no rpc.idmapd in $k"
done
rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-host.log" &
HOST_IDMAPD=$!
check "baseline: rpc.idmapd -C on the host's pipes" \
  wait_for 10 sh -c "ls -l /proc/$HOST_IDMAPD/fd 2>/dev/null | grep -q inotify"

HMNT=/mnt/host-nfs
mkdir -p "$HMNT"
check "host mounts the export" timeout 30 mount -t nfs4 -o vers=4.2 "$LAB_SERVER_IP:/" "$HMNT" || bail "host mount"
for k in $CS; do check "$k mounts the export" container_mount "$k" vers=4.2 || bail "$k mount"; done

srv_files() { # dir: the server's alice (labalice:labteam) and carol (labcarol:labcarol), ch (root)
  mkdir -p "$LAB_EXPORT/$1"
  echo alice > "$LAB_EXPORT/$1/alice"; chown 1501:1601 "$LAB_EXPORT/$1/alice"
  echo carol > "$LAB_EXPORT/$1/carol"; chown 1502:1502 "$LAB_EXPORT/$1/carol"
  echo ch > "$LAB_EXPORT/$1/ch"; chown 0:0 "$LAB_EXPORT/$1/ch"
  for k in c2 c3; do echo ch > "$LAB_EXPORT/$1/ch-$k"; chown 0:0 "$LAB_EXPORT/$1/ch-$k"; done
}
owners() { # who dir: "uid:gid uid:gid" of dir/alice dir/carol as stat shows them there
  local out
  if [ "$1" = host ]; then
    out=$(cd "$HMNT/$2" && timeout 20 stat -c %u:%g alice carol 2>>"$W/err")
  else
    out=$(container_exec "$1" sh -c "cd /mnt/nfs/$2 && timeout 20 stat -c %u:%g alice carol" 2>>"$W/err")
  fi
  [ -n "$out" ] || out="? ?"
  echo $out
}
chown_c1() { # dir: c1 chowns dir/ch to labalice:labteam by name (its NSS); the server's view
  container_exec c1 timeout 20 chown labalice:labteam "/mnt/nfs/$1/ch" 2>>"$W/err"
  stat -c %u:%g "$LAB_EXPORT/$1/ch"
}
chown_in() { # key dir: the container chowns dir/ch-KEY to ITS labalice:labteam; the server's view
  container_exec "$1" timeout 20 chown labalice:labteam "/mnt/nfs/$2/ch-$1" 2>>"$W/err"
  stat -c %u:%g "$LAB_EXPORT/$2/ch-$1"
}

# ---- 1. baseline: rpc.idmapd in each namespace --------------------------------------------------
srv_files base
declare -A B N1 N2
for who in $CS host; do
  check "baseline: ID key cache emptied before $who looks" demo_keys_clear
  B[$who]=$(owners "$who" base)
done
demo_keys_clear
B[chown]=$(chown_c1 base)
for k in ${CS#c1 }; do B[chown_$k]=$(chown_in "$k" base); done
B[chown_c1]=$(container_exec c1 stat -c %u:%g /mnt/nfs/base/ch 2>>"$W/err")
note "baseline (rpc.idmapd): host ${B[host]}, c1 ${B[c1]}, c2 ${B[c2]}; c1's chown: server ${B[chown]}, c1 sees ${B[chown_c1]}"
check_eq "baseline: rpc.idmapd in c1 gives labalice's file as its userdb's 4011:4111" 4011:4111 "${B[c1]%% *}"
check_eq "baseline: rpc.idmapd in c2 gives labcarol's file its static labstatic (uid 4222)" 4222 "$(echo "${B[c2]}" | cut -d' ' -f2 | cut -d: -f1)"
check_eq "baseline: the host's rpc.idmapd gives the server's owners" "1501:1601 1502:1502" "${B[host]}"
check_eq "baseline: c1's chown labalice:labteam is stored as the server's 1501:1601" 1501:1601 "${B[chown]}"
for k in ${CS#c1 }; do
  check_eq "baseline: $k's chown to its labalice:labteam is stored as the server's 1501:1601" 1501:1601 "${B[chown_$k]}"
done
[ "$HAVE_LDAP" = 1 ] && check_eq "baseline: rpc.idmapd in c3 gives its directory's 4301:4311 4302:4302" \
  "4301:4311 4302:4302" "${B[c3]}"

for k in $CS; do check "baseline: rpc.idmapd in $k stopped" demo_rpcidmapd_stop "$k"; done
kill "$HOST_IDMAPD" 2>/dev/null
check "baseline: the host's rpc.idmapd stopped" wait_for 10 sh -c "! kill -0 $HOST_IDMAPD 2>/dev/null"
check "ID key cache emptied between the phases" demo_keys_clear

# ---- 2. nsid-idmapd, the package's default set-up -----------------------------------------------
NSID_RULE=/etc/request-key.d/nsid-idmap.conf
sed "s|@NSID_IDMAP_PATH@|$LAB_BUILD/idmap/nsid-idmap --log-file=$LOGS/nsid-idmap.log|" \
  "$LAB_SRC/idmap/nsid-idmap.conf.in" > "$NSID_RULE"
check "nsid's request-key rule installed (the package's nsid-idmap.conf)" \
  grep -q "^create[[:space:]]*id_resolver[[:space:]]*\*[[:space:]]*\*[[:space:]]*$LAB_BUILD/idmap/nsid-idmap .*-t 600 %k %d" "$NSID_RULE"
check "no /etc/nsid.conf: every default" test ! -e /etc/nsid.conf
check "nsid-nss-query is beside nsid-idmapd" test -x "${DM_BIN%/*}/nsid-nss-query"
DM_SOCK=/run/nsid/idmapd.sock
DM_LOG=$LOGS/nsid-idmapd.log
"$DM_BIN" -f </dev/null >/dev/null 2>>"$DM_LOG" &
DM_PID=$!
check "nsid-idmapd up, as its unit starts it (no option, no configuration)" dm_ready || bail "no daemon"
I1=$(netns_ino c1) I2=$(netns_ino c2)
serves() { grep -q "netns:\[$I1\].*serving clnt.*/idmap" "$DM_LOG" && grep -q "netns:\[$I2\].*serving clnt.*/idmap" "$DM_LOG"; }
check "it found c1's and c2's mounts and serves their idmap pipes" wait_for 20 serves

srv_files nsid1
srv_files nsid2
for who in host $CS; do N1[$who]=$(owners "$who" nsid1); done
for who in $(echo $CS | tr ' ' '\n' | tac) host; do N2[$who]=$(owners "$who" nsid2); done
N1[chown]=$(chown_c1 nsid1)
for k in ${CS#c1 }; do N1[chown_$k]=$(chown_in "$k" nsid1); done
N1[chown_c1]=$(container_exec c1 stat -c %u:%g /mnt/nfs/nsid1/ch 2>>"$W/err")
for who in $CS host; do
  check_eq "nsid, host first: $who sees what rpc.idmapd in it gave" "${B[$who]}" "${N1[$who]}"
  check_eq "nsid, containers first: $who sees what rpc.idmapd in it gave" "${B[$who]}" "${N2[$who]}"
done
check_eq "nsid: c1 sees labalice's file as its userdb's labalice:labteam" 4011:4111 "${N1[c1]%% *}"
check "nsid: c1's labalice differs from the host's (${N1[host]%% *})" test "${N1[c1]%% *}" != "${N1[host]%% *}"
c2carol=$(echo "${N1[c2]}" | cut -d' ' -f2)
check_eq "nsid: c2 sees labcarol's file as its [Static] labstatic (uid 4222)" 4222 "${c2carol%%:*}"
check "nsid: c2's labcarol differs from the host's (${N1[host]#* })" test "$c2carol" != "${N1[host]#* }"
check_eq "nsid: c1's chown labalice:labteam is stored as the server's 1501:1601" 1501:1601 "${N1[chown]}"
check_eq "nsid: c1 sees the chowned file as its 4011:4111" 4011:4111 "${N1[chown_c1]}"
for k in ${CS#c1 }; do
  check_eq "nsid: $k's chown to its labalice:labteam is stored as the server's 1501:1601, as rpc.idmapd stored it" \
    "1501:1601 ${B[chown_$k]}" "${N1[chown_$k]} ${B[chown_$k]}"
done

st() { dm_ns_json "$1" "$2"; }
note "status c1: answered_by=$(st "$I1" answered_by) passwd_sources='$(st "$I1" passwd_sources)' group_sources='$(st "$I1" group_sources)' idmapd_conf_methods=$(st "$I1" idmapd_conf_methods) nss_error='$(st "$I1" nss_error)'"
note "status c2: answered_by=$(st "$I2" answered_by) passwd_sources='$(st "$I2" passwd_sources)' group_sources='$(st "$I2" group_sources)' idmapd_conf_methods=$(st "$I2" idmapd_conf_methods) nss_error='$(st "$I2" nss_error)'"
check_eq "status: c1 answered by its name service (passwd files systemd)" "nss files systemd" \
  "$(st "$I1" answered_by) $(st "$I1" passwd_sources)"
check_eq "status: c2 answered by its name service (its idmapd.conf's methods)" "nss True" \
  "$(st "$I2" answered_by) $(st "$I2" idmapd_conf_methods)"
if [ "$HAVE_LDAP" = 1 ]; then
  I3=$(netns_ino c3)
  check_eq "nsid: c3 sees alice and carol as its directory's (nslcd)" "4301:4311 4302:4302" "${N1[c3]}"
  check_eq "status: c3 answered by its name service (passwd files ldap)" "nss files ldap" \
    "$(st "$I3" answered_by) $(st "$I3" passwd_sources)"
fi
"$DM_BIN" --socket="$DM_SOCK" --status --json > "$LOGS/nsid-idmapd-status.json" 2>&1
grep -E "answered by its own name service|nsid-nss-query|name service" "$DM_LOG" | tail -n 8 |
  while read -r l; do note "daemon: $l"; done
check_eq "each container's context loaded once (one resolver per namespace found with its mounts)" "1 1" \
  "$(grep -c "netns:\[$I1\].*answered by its own name service" "$DM_LOG") $(grep -c "netns:\[$I2\].*answered by its own name service" "$DM_LOG")"
dm_stop
check_eq "nsid-idmapd exited cleanly on SIGTERM" 0 "$?"
check "no resolver thread left busy at exit (a leaked resolver never stops)" \
  sh -c "! grep -q 'still busy' '$DM_LOG'"

# ---- the table ----------------------------------------------------------------------------------
row() { printf '# %-5s %-6s %-10s %-12s %-12s %-10s %s\n' "$@"; }
note "uid:gid of alice (server 1501:1601) and carol (server 1502:1502) as stat shows them"
row who file expected rpc.idmapd "nsid(host1st)" "nsid(reverse)" ""
for who in host $CS; do
  case $who in host) e="1501:1601 1502:1502" ;; c1) e="4011:4111 4102:4102" ;; c2) e="4201:4211 4222:4222" ;; c3) e="4301:4311 4302:4302" ;; esac
  for i in 1 2; do
    f=$([ $i = 1 ] && echo alice || echo carol)
    b=$(echo "${B[$who]}" | cut -d' ' -f$i) n=$(echo "${N1[$who]}" | cut -d' ' -f$i) m=$(echo "${N2[$who]}" | cut -d' ' -f$i)
    row "$who" "$f" "$(echo "$e" | cut -d' ' -f$i)" "$b" "$n" "$m" "$([ "$b" = "$n" ] && [ "$n" = "$m" ] && echo same || echo DIFFERENT)"
  done
done
row c1 chown "1501:1601" "${B[chown]}" "${N1[chown]}" "-" "(on the server)"
for k in ${CS#c1 }; do row "$k" chown "1501:1601" "${B[chown_$k]}" "${N1[chown_$k]}" "-" "(on the server)"; done
[ -s "$W/err" ] && while read -r l; do note "stderr: $l"; done < <(tail -n 10 "$W/err")

umount "$HMNT" 2>/dev/null
rm -f "$NSID_RULE"
lab_done
