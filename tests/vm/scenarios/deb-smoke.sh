#!/bin/bash
# lab-test: 6.12
# deb-smoke: the Debian packages built by the deb-build test (BUILD/deb, tests/vm/deb.cmake)
# installed with dpkg in the guest (its root is the host's / under a tmpfs overlay, so only
# the overlay changes), then the identity and idmap paths run against the INSTALLED files:
#   - the OCI hook as hooks.d/nsid-uniquifier.json says to run it, and the LXC hook, give two
#     containers with the same hostname their identities; knfsd sees two clients;
#   - with NFSv4 name mapping on, the kernel's id_resolver upcall goes through the installed
#     request-key.d rule to /usr/sbin/nsid-idmap (nfs-common's rule is diverted aside by the
#     package); a dns_resolver key goes to nsid-idmap dns; the helper's syslog lines prove it;
#   - dpkg -r removes the programs, keeps only the configuration files; dpkg -P removes those,
#     the state directory and the diversion.
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/deb.sh"
mkdir -p /run/nsid-lab
W=/run/nsid-lab
RK=/etc/request-key.d

debs=$(deb_files "$LAB_BUILD/deb") || bail "no packages in $LAB_BUILD/deb (run: ctest --test-dir BUILD -R deb-build)"
for f in $debs; do note "package: ${f##*/}"; done
check "no nsid file on the guest before installing" test ! -e /usr/sbin/nsid-uniquifier -a ! -e $RK/nsid-idmap.conf

# ---- install --------------------------------------------------------------------------------
# dpkg reads every installed package's file list (~1000 on the host, over 9p under TCG: minutes)
# for each install and removal: the guest's database keeps only what the packages depend on,
# libc-bin (its ldconfig trigger runs as on a real install) and nfs-common (whose
# id_resolver.conf the package diverts). deb-build checked on the host that no file of the
# packages belongs to an installed package.
# shellcheck disable=SC2086
deb_guest_prune_db $debs -- libc-bin nfs-common keyutils init-system-helpers ||
  bail "could not limit dpkg's database"
note "dpkg database: $(grep -c '^Package:' /var/lib/dpkg/status) packages"
t0=$(lab_ms)
# shellcheck disable=SC2086
dpkg -i $debs > $W/dpkg-i.log 2>&1; rc=$?
note "dpkg -i: exit $rc in $(( $(lab_ms) - t0 )) ms"
grep -E ' (status (unpacked|installed)|trigproc) ' /var/log/dpkg.log | tail -n 8 | while read -r l; do note "dpkg.log: $l"; done
check_eq "dpkg -i libnsid0 libnsid-dev nsid: exit 0" 0 "$rc" || { sed 's/^/#   /' $W/dpkg-i.log | tail -20; bail "install failed"; }
for p in libnsid0 libnsid-dev nsid; do
  check_eq "$p: install ok installed" "install ok installed" "$(dpkg-query -W -f='${Status}' "$p" 2>&1)"
done
UNIQ=/usr/sbin/nsid-uniquifier IDMAP=/usr/sbin/nsid-idmap
nsid_files=$(dpkg-query -L nsid 2>&1)
miss=""
for f in $UNIQ $IDMAP /usr/sbin/nsid-idmapd $RK/nsid-idmap.conf $RK/nsid-dns.conf \
         /usr/share/containers/oci/hooks.d/nsid-uniquifier.json /usr/share/lxc/hooks/nsid-uniquifier \
         /lib/udev/rules.d/90-nsid-uniquifier.rules /lib/systemd/system/nsid-idmapd.service \
         /lib/systemd/system/nsid-uniquifier-reconcile.timer /usr/share/man/man8/nsid-uniquifier.8.gz; do
  [ -e "$f" ] && grep -qxF "$f" <<<"$nsid_files" || miss="$miss $f"
done
check_eq "programs, request-key rules, hooks, udev rule, units, man page installed by nsid" "" "${miss:-}"
check "libnsid.so.0 and its target belong to libnsid0" sh -c \
  "dpkg-query -L libnsid0 | grep -qxF /usr/lib/x86_64-linux-gnu/libnsid.so.0 &&
   dpkg-query -L libnsid0 | grep -qxF $(readlink -f /usr/lib/x86_64-linux-gnu/libnsid.so.0)"
check "nsid-uniquifier runs against the packaged libnsid.so.0" \
  sh -c "ldd $UNIQ | grep -E 'libnsid\.so\.0 => (/usr)?/lib/x86_64-linux-gnu/libnsid\.so\.0 '"
check_eq "libnsid-dev: pkg-config libnsid --libs" "-lnsid" "$(pkg-config --libs libnsid 2>&1 | xargs)"
# (no systemd as PID 1 here: enabled by deb-systemd-helper's links, nothing started;
# systemd-host runs them)
wants=$(cd /etc/systemd/system && ls -d *.wants/nsid* 2>/dev/null | xargs)
check_eq "the installation enables nsid-idmapd, the boot reconcile and its timer, the metrics timer, the server watch (with nfs-server)" \
  "multi-user.target.wants/nsid-idmapd.service nfs-server.service.wants/nsid-server-watch.service remote-fs.target.wants/nsid-uniquifier-reconcile.service timers.target.wants/nsid-metrics.timer timers.target.wants/nsid-uniquifier-reconcile.timer" \
  "$wants"
check "nfs-idmapd.service gets nsid's drop-in (rpc.idmapd skipped while nsid-idmapd is installed)" \
  grep -qx 'ConditionPathExists=!/usr/sbin/nsid-idmapd' /lib/systemd/system/nfs-idmapd.service.d/nsid.conf
check "nfs-common's id_resolver.conf diverted aside" \
  sh -c "dpkg-divert --list /etc/request-key.d/id_resolver.conf | grep -q 'by nsid' && test ! -e $RK/id_resolver.conf"
rules=$(grep -lE '^create[[:space:]]+id_resolver[[:space:]]' $RK/*.conf 2>/dev/null | xargs)
check_eq "exactly one id_resolver rule in $RK: nsid's" "$RK/nsid-idmap.conf" "$rules"

# ---- identity: two containers, hostname app, through the installed hooks ----------------------
# syslog: the installed helpers log there when their stderr is not a terminal
busybox syslogd -n -S -O $W/syslog </dev/null >/dev/null 2>&1 &
check "knfsd started (idmapping on)" nfs_server_start on || bail "no server"
check "container c1 (hostname app)" container_create c1 --hostname app || bail "no container"
check "container c2 (hostname app)" container_create c2 --hostname app || bail "no container"
# c1: as an OCI runtime runs the hook: path and args from the hooks.d file, state JSON on stdin
mapfile -d '' hook < <(python3 -c 'import json,sys
h=json.load(open(sys.argv[1]))["hook"]
sys.stdout.write("\0".join([h["path"]]+h["args"])+"\0")' /usr/share/containers/oci/hooks.d/nsid-uniquifier.json)
note "hooks.d: path ${hook[0]}, args ${hook[*]:1}"
printf '{"ociVersion":"1.0.2","id":"deb-c1","status":"creating","pid":%s,"bundle":"/run/ctr/deb-c1"}' \
  "$(container_pid c1)" | (exec -a "${hook[1]}" "${hook[0]}" "${hook[@]:2}") > $W/hook.out 2>&1
check_eq "OCI hook (installed hooks.d entry) for c1: exit 0" 0 "$?" || note "$(cat $W/hook.out)"
LXC_NAME=deb-c2 LXC_PID=$(container_pid c2) /usr/share/lxc/hooks/nsid-uniquifier deb-c2 lxc start-host > $W/lxc.out 2>&1
check_eq "LXC hook (installed) for c2: exit 0" 0 "$?" || note "$(cat $W/lxc.out)"
id1=$(container_identifier c1) id2=$(container_identifier c2)
note "identifiers: c1 $id1, c2 $id2"
check "c1 and c2 have distinct 32-hex identifiers" \
  sh -c "[ '$id1' != '$id2' ] && echo '$id1' | grep -qx '[0-9a-f]\{32\}' && echo '$id2' | grep -qx '[0-9a-f]\{32\}'"
check "the registry is in the packaged default state dir (/var/lib/nsid)" test -s /var/lib/nsid/registry.db
listed=$($UNIQ --json list 2>/dev/null | grep -c '"source": "container-id"')
check_eq "nsid-uniquifier list: two netns with a container-id identity" 2 "$listed"

# ---- idmap: a user the server and the host know as 1500 ---------------------------------------
echo "labalice:x:1500:1500::/nonexistent:/usr/sbin/nologin" >> /etc/passwd
echo "labalice:x:1500:" >> /etc/group
echo data > "$LAB_EXPORT/f-alice" && chown 1500:1500 "$LAB_EXPORT/f-alice"
check "c1 mounts" container_mount c1 vers=4.2,soft,timeo=50,retrans=2
check "c2 mounts" container_mount c2 vers=4.2,soft,timeo=50,retrans=2
nfs_server_wait_grace
for c in c1 c2; do container_exec $c timeout 20 sh -c "echo $c > /mnt/nfs/$c" >/dev/null 2>&1; done
nfs_server_clients | grep '/app"' | while read -r l; do note "$l"; done
check_eq "knfsd: two confirmed clients named after the two identifiers" 2 \
  "$(nfs_server_confirmed "\"Linux NFSv4\.2 ($id1|$id2)/app\"")"
check_eq "knfsd: no client named by the bare hostname" 0 "$(nfs_server_confirmed '"Linux NFSv4\.2 app"')"

owner_ids=$(container_exec c1 stat -c %u:%g /mnt/nfs/f-alice 2>&1)
check_eq "c1 sees f-alice as 1500:1500 (owner labalice@$LAB_DOMAIN mapped)" 1500:1500 "$owner_ids"
container_exec c1 timeout 20 sh -c 'echo x > /mnt/nfs/f-new && chown 1500:1500 /mnt/nfs/f-new'
check_eq "chown 1500 in c1 reaches the server as labalice (uid 1500 there)" 1500:1500 \
  "$(stat -c %u:%g "$LAB_EXPORT/f-new" 2>&1)"
keys=$($IDMAP -l 2>&1)
note "nsid-idmap -l: $(echo $keys)"
check "the .id_resolver keyring holds uid:labalice@$LAB_DOMAIN" grep -q "uid:labalice@$LAB_DOMAIN" <<<"$keys"
# (the syslog listener writes a moment after the helper logged)
check "syslog: nsid-idmap answered uid:labalice@$LAB_DOMAIN -> 1500" \
  wait_for 10 grep -qE "nsid-idmap.*uid:labalice@$LAB_DOMAIN -> 1500" $W/syslog
check "syslog: nsid-idmap answered user:1500 -> labalice@$LAB_DOMAIN" \
  wait_for 10 grep -qE "nsid-idmap.*user:1500 -> \"?labalice@$LAB_DOMAIN" $W/syslog

# dns_resolver through the installed nsid-dns.conf (answered from the requester's hosts file)
echo "192.0.2.77 labsrv.lab.example" >> /etc/hosts
lab_modprobe dns_resolver 2>/dev/null
# (in a session keyring of its own, so that the requester possesses the key and may read it)
dv=$(keyctl session - sh -c 'k=$(keyctl request2 dns_resolver "$1" "" @s) && keyctl pipe "$k"' _ labsrv.lab.example 2>&1 |
     grep -v '^Joined' | tr -d '\0')
check_eq "dns_resolver key labsrv.lab.example answered 192.0.2.77" 192.0.2.77 "$dv"
check "syslog: nsid-idmap dns answered it" grep -qE "nsid-idmap.*labsrv\.lab\.example" $W/syslog
grep -E 'nsid-idmap' $W/syslog | tail -n 4 | while read -r l; do note "syslog: $l"; done

# ---- remove, purge ----------------------------------------------------------------------------
containers_destroy_all >/dev/null 2>&1 &
dpkg -r nsid libnsid-dev libnsid0 > $W/dpkg-r.log 2>&1; rc=$?
check_eq "dpkg -r nsid libnsid-dev libnsid0: exit 0" 0 "$rc" || sed 's/^/#   /' $W/dpkg-r.log | tail -20
# (dpkg warns that shared directories such as /usr/include are not empty: the limited database
# no longer knows the other packages that own them; on a full system they stay silently)
check "dpkg -r printed no warning or error (but shared directories left)" \
  sh -c "! grep -v 'not empty so not removed' $W/dpkg-r.log | grep -iE 'warning|error'"
left=""
for f in $UNIQ $IDMAP /usr/sbin/nsid-idmapd /usr/lib/x86_64-linux-gnu/libnsid.so.0 /usr/include/nsid \
         /usr/share/containers/oci/hooks.d/nsid-uniquifier.json /usr/share/lxc/hooks/nsid-uniquifier \
         /lib/udev/rules.d/90-nsid-uniquifier.rules /lib/systemd/system/nsid-idmapd.service; do
  [ -e "$f" ] && left="$left $f"
done
check_eq "after dpkg -r: programs, library, headers, hooks, rules, units gone" "" "$left"
check_eq "after dpkg -r: nsid keeps only its configuration files (rc)" "deinstall ok config-files" \
  "$(dpkg-query -W -f='${Status}' nsid 2>&1)"
check_eq "after dpkg -r: no request-key rule names a removed program (set aside as *.nsid-removed)" \
  "" "$(grep -l nsid-idmap $RK/*.conf 2>/dev/null | xargs)"
check "after dpkg -r: nfs-common's id_resolver.conf back" \
  sh -c "grep -q nfsidmap $RK/id_resolver.conf && ! dpkg-divert --list | grep -q nsid"
dpkg -P nsid libnsid-dev libnsid0 > $W/dpkg-p.log 2>&1; rc=$?
check_eq "dpkg -P: exit 0" 0 "$rc" || sed 's/^/#   /' $W/dpkg-p.log | tail -20
check "after dpkg -P: request-key rules and /var/lib/nsid gone" \
  sh -c "! ls $RK | grep -q nsid && test ! -e /var/lib/nsid"
check "after dpkg -P: the generated host secret kept in /var/backups/nsid" \
  test -s /var/backups/nsid/host-secret -a -s /var/backups/nsid/host-secret.fingerprint
check "after dpkg -P: nfs-common's id_resolver.conf back, diversion gone" \
  sh -c "test -f $RK/id_resolver.conf && ! dpkg-divert --list | grep -q nsid"
check_eq "no nsid package known to dpkg" "" "$(dpkg-query -W -f='${Package} ' libnsid0 libnsid-dev nsid 2>/dev/null)"
lab_done
