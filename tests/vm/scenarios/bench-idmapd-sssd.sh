#!/bin/bash
# bench-idmapd-sssd (issue 28's figure; a benchmark run by bench/lab/idmapd-sssd-bench-run,
# `make bench`, not a test: no lab-test line). What a user of a container whose users live in
# a directory waits for: a cold `ls -ln` of N files (default 1,000) owned by N distinct
# directory users, each file its owner's own group too (2N names to map), seen from inside a
# container that runs SSSD (LDAP provider, nsswitch.conf "files sss"), over NFSv4.2 with name
# mapping on both sides; then the same listing warm. In one boot, passes in the order given
# (default "rpc,nsid,nsid,rpc"), each on its own directory and its own N users (nothing
# cached from an earlier pass: SSSD's cache, knfsd's, the daemons', the kernel's keys):
#   rpc   no request-key rule for id_resolver (nfs-common's diverted away), rpc.idmapd -C in
#         the container on its own idmap pipes (its own libnfsidmap and NSS: SSSD)
#   nsid  nsid's default set-up as the package installs it (idmapd-nss does the same): nsid's
#         request-key rule (nsid-idmap.conf), nsid-idmapd with no configuration file
# Each pass: the daemon started, the container mounts the export (a new NFS client), the
# kernel's ID key cache emptied, then
#   cold    `ls -ln` of the pass's directory (what a user waits for)
#   warm    the same listing again at once, WARM times (default 1; the median is kept): what
#           a user waits for the second time. The cold listing takes minutes, so most files'
#           attributes have expired by then (acregmax 60 s) and their owners are mapped
#           again: from the kernel's key cache, or whatever each set-up does once its keys
#           have expired (with no request-key rule, request-key's negative id_resolver key
#           lives 60 s: after that each name costs an exec of /sbin/request-key again before
#           the pipe's cached id_legacy key answers; nsid's marker lives 600 s, and every
#           answer on the pipe is a round trip to nsid-idmapd, which invalidates the key)
#   remap   (EXTRAS "remap") one listing more after the NFS client's dentries and inodes are
#           dropped (drop_caches 2): every owner mapped again
# and every owner of the cold and warm listings is checked: the directory's (container's)
# uid 200000+i and gid 300000+i, not the server's 100000+i / 110000+i.
#
# The directory: Debian's slapd in the guest's initial netns (ldap://192.0.2.1:3890/, the lab
# bridge's address) with 10,000 posixAccount users lduser<i> (uid 200000+i, gid 300000+i) and
# 10,000 posixGroup groups ldgroup<i> (gid 300000+i: user private groups).
# The server side (the guest: knfsd in its initial netns) maps the same names to the
# server's ids: the guest's own /etc/passwd and /etc/group get lduser<i> 100000+i and
# ldgroup<i> 110000+i (only the users the passes use), files only, so a right answer in the
# container can only come from its own SSSD. knfsd's channels are answered as each set-up
# has it: in an rpc pass by rpc.idmapd -S (nfs-idmapd.service), in an nsid pass by
# nsid-idmapd alone (its unit conflicts with nfs-idmapd.service, which it stops), both from
# those files.
# Output: "# bench VARIANT PASS cold_ms warm_ms remap_ms right_cold right_warm N" per pass
# and "# figure: ..." lines (times per variant, mean over its passes, and the ratios
# nsid/rpc.idmapd cold and warm).
#   args: N ORDER WARM EXTRAS   e.g. NSID_LAB_ARGS="1000 rpc,nsid,nsid,rpc 1 -"
#   EXTRAS, comma separated: remap (above), trace (nsid-idmap logs each upcall to LAB_OUT)
# lab-needs: slapd slapadd ldapsearch sssd
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/idmapd-server.sh"
. "$LAB_LIB/demo-idmap.sh"

N=${1:-1000}
ORDER=${2:-rpc,nsid,nsid,rpc}
ORDER=${ORDER//,/ }
WARM=${3:-1}
EXTRAS=,${4:-},
USERS=10000
DM_SOCK=/run/nsid/idmapd.sock
W=/run/nsid-lab/bench-sssd
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
LS_TIMEOUT=1800
read -ra PASSES <<<"$ORDER"
NP=${#PASSES[@]}
for v in "${PASSES[@]}"; do case $v in rpc|nsid) ;; *) bail "unknown variant '$v' (rpc, nsid)" ;; esac; done
[ $((NP * N)) -le $((USERS - 20)) ] || bail "$NP passes of $N users need more than the directory's $USERS"
multiarch=/usr/lib/x86_64-linux-gnu
[ -e $multiarch/libnss_sss.so.2 ] || bail "libnss_sss missing (package libnss-sss)"
[ -e $multiarch/sssd/libsss_ldap.so ] || bail "SSSD's LDAP provider missing (package sssd-ldap)"
note "kernel $(uname -r); $N files a pass, passes: $ORDER; warm: median of $WARM; extras ${EXTRAS//,/ }"
note "nsid-idmapd $(stat -c '%y' "$DM_BIN" | cut -c1-19), nsid-idmap $(stat -c '%y' "$LAB_BUILD/idmap/nsid-idmap" | cut -c1-19)"

# ---- the directory: slapd with 10,000 users and 10,000 groups --------------------------------
. "$LAB_LIB/slapd.sh"
slapd_conf "$W"
python3 - "$USERS" > "$W/data.ldif" <<'PY'
import sys
n = int(sys.argv[1])
out = ["dn: dc=dir,dc=test\nobjectClass: dcObject\nobjectClass: organization\no: dir\ndc: dir\n",
       "dn: ou=people,dc=dir,dc=test\nobjectClass: organizationalUnit\nou: people\n",
       "dn: ou=groups,dc=dir,dc=test\nobjectClass: organizationalUnit\nou: groups\n"]
for i in range(1, n + 1):
    out.append(f"dn: uid=lduser{i},ou=people,dc=dir,dc=test\nobjectClass: account\n"
               f"objectClass: posixAccount\nuid: lduser{i}\ncn: LD User {i}\n"
               f"uidNumber: {200000 + i}\ngidNumber: {300000 + i}\n"
               f"homeDirectory: /home/lduser{i}\nloginShell: /bin/sh\n")
    out.append(f"dn: cn=ldgroup{i},ou=groups,dc=dir,dc=test\nobjectClass: posixGroup\n"
               f"cn: ldgroup{i}\ngidNumber: {300000 + i}\n")
print("\n".join(out))
PY
t0=$(lab_ms)
check "slapadd: $USERS users and $USERS groups" slapadd -q -f "$W/slapd.conf" -l "$W/data.ldif" ||
  bail "slapadd"
note "slapadd took $(( $(lab_ms) - t0 )) ms"

# ---- server: knfsd, name mapping on, the server's users in the guest's files ---------------------
K=$((NP * N))
cp /etc/passwd "$W/passwd-c1" && cp /etc/group "$W/group-c1" || bail "cannot keep the guest's files for c1"
python3 - "$K" <<'PY' || bail "cannot write the server's users"
import sys
k = int(sys.argv[1])
with open("/etc/passwd", "a") as f:
    f.write("".join(f"lduser{i}:x:{100000 + i}:{110000 + i}::/nonexistent:/usr/sbin/nologin\n" for i in range(1, k + 1)))
with open("/etc/group", "a") as f:
    f.write("".join(f"ldgroup{i}:x:{110000 + i}:\n" for i in range(1, k + 1)))
PY
sed -i -e 's/^passwd:.*/passwd: files/' -e 's/^group:.*/group: files/' /etc/nsswitch.conf
check "knfsd started" nfs_server_start off || bail "no server"
idmap_on() {
  echo N > /sys/module/nfs/parameters/nfs4_disable_idmapping &&
    echo N > /sys/module/nfsd/parameters/nfs4_disable_idmapping
}
check "name mapping on (client and knfsd)" idmap_on || bail "no name mapping"
check_eq "the server's (guest's) passwd and group: lduser$K, ldgroup$K" "$((100000 + K)) $((110000 + K))" \
  "$(getent passwd "lduser$K" | cut -d: -f3) $(getent group "ldgroup$K" | cut -d: -f3)"
check "nfs-common's id_resolver rule diverted away; no id_resolver rule at all" demo_rk_rule off
rm -f /etc/request-key.d/nsid-idmap.conf

slapd -d 0 -h "ldap://$LAB_SERVER_IP:3890/" -f "$W/slapd.conf" </dev/null >"$LOGS/slapd.out" 2>&1 &
SLAPD=$!
count() { ldapsearch -x -LLL -H "ldap://$LAB_SERVER_IP:3890/" -b dc=dir,dc=test "$1" dn 2>/dev/null | grep -c '^dn:'; }
check "slapd up on $LAB_SERVER_IP:3890" wait_for 60 ldapsearch -x -LLL -H "ldap://$LAB_SERVER_IP:3890/" -b dc=dir,dc=test uid=lduser1 dn ||
  bail "no slapd"
check_eq "slapd serves $USERS users and $USERS groups" "$USERS $USERS" \
  "$(count '(objectClass=posixAccount)') $(count '(objectClass=posixGroup)')"

# ---- the container: nsswitch "files sss", its own sssd.conf, SSSD's state on tmpfs ---------------
printf 'passwd: files sss\ngroup: files sss\nshadow: files\nhosts: files\n' > "$W/nsswitch-c1"
sssd_conf "$W/sssd" "ldap://$LAB_SERVER_IP:3890/" || bail "cannot write sssd.conf"
check "c1 created: nsswitch.conf files sss, its own /etc/sssd" \
  container_create c1 --passwd "$W/passwd-c1" --group "$W/group-c1" --bind "$W/nsswitch-c1:/etc/nsswitch.conf" --bind "$W/sssd:/etc/sssd" || bail "no c1"
check "c1: SSSD's state and logs on tmpfs of its own, rpc_pipefs mounted" container_exec c1 sh -ec '
  mount -t tmpfs -o mode=755 nsid-sss /var/lib/sss
  mkdir -p /var/lib/sss/db /var/lib/sss/pipes/private /var/lib/sss/mc /var/lib/sss/pubconf \
           /var/lib/sss/gpo_cache /var/lib/sss/secrets /var/lib/sss/deskprofile
  chmod 700 /var/lib/sss/db /var/lib/sss/pipes/private /var/lib/sss/secrets
  mkdir -p /var/log/sssd
  mount -t tmpfs -o mode=750 nsid-sss-log /var/log/sssd
  mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs' || bail "c1's mounts"
container_exec c1 sssd -i --logger=files -d 2 </dev/null >>"$LOGS/sssd.out" 2>&1 &
SSSD_NSENTER=$!   # (dies with the guest)
note "sssd started (nsenter pid $SSSD_NSENTER)"
t0=$(lab_ms)
check "sssd in c1 answers (getent passwd lduser$USERS)" wait_for 180 container_exec c1 getent passwd "lduser$USERS" ||
  { tail -n 20 "$LOGS/sssd.out" | sed 's/^/# /'; bail "no sssd"; }
note "sssd answered after $(( $(lab_ms) - t0 )) ms"
field() { cut -d: -f"$1"; }
check_eq "c1's own files know no lduser1 (the server's users are the guest's only)" "" \
  "$(container_exec c1 grep '^lduser1:' /etc/passwd)"
check_eq "c1: getent passwd lduser$USERS, group ldgroup$USERS (the directory's)" "$((200000 + USERS)):$((300000 + USERS)) $((300000 + USERS))" \
  "$(container_exec c1 getent passwd "lduser$USERS" | field 3-4) $(container_exec c1 getent group "ldgroup$USERS" | field 3)"
# warm SSSD's own code up on names no pass uses (its first lookups of each kind)
warmup=$(seq $((USERS - 19)) $((USERS - 1)))
check "SSSD warmed up on 19 other users and groups" container_exec c1 sh -c \
  "getent passwd $(printf 'lduser%s ' $warmup) >/dev/null && getent group $(printf 'ldgroup%s ' $warmup) >/dev/null"

# The guest's root is an overlay (tmpfs over the host's / by 9p): a lower directory's st_ino
# there is the overlay inode's, which is new each time the inode is evicted, so the
# drop_caches of the remap listing would look like a change of /etc/userdb to nsid-idmapd
# (it stats the container's userdb directories) and flush its cache. Not so on a real root;
# the directory is held open (its inode pinned) for the passes, and each nsid pass checks
# the daemon saw no change.
if [ -d /etc/userdb ]; then
  i0=$(stat -c %i /etc/userdb); echo 2 > /proc/sys/vm/drop_caches; i1=$(stat -c %i /etc/userdb)
  note "the guest's /etc/userdb (overlay, lower 9p): inode $i0, $i1 after drop_caches 2; held open from now on"
  exec 7</etc/userdb
  i2=$(stat -c %i /etc/userdb); echo 2 > /proc/sys/vm/drop_caches
  check_eq "held open, /etc/userdb keeps its inode across drop_caches" "$i2" "$(stat -c %i /etc/userdb)"
fi

# ---- the files: pass k has p<k>/f<i> owned by the server's lduser<i>:ldgroup<i> -----------------
check "files: $N a pass, $NP passes, each its own owner and group" python3 -c '
import os, sys
ex, n, np = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for k in range(1, np + 1):
    d = os.path.join(ex, "p%d" % k); os.mkdir(d)
    for i in range((k - 1) * n + 1, k * n + 1):
        f = os.path.join(d, "f%d" % i); open(f, "w").close()
        os.chown(f, 100000 + i, 110000 + i)' "$LAB_EXPORT" "$N" "$NP" || bail "no files"
check "the server's grace period is over" nfs_server_wait_grace

# ---- the passes -----------------------------------------------------------------------------------
NSID_RULE=/etc/request-key.d/nsid-idmap.conf
RPCPID='' DM_PID=''
SRVPID=''
flush_knfsd() { local c; for c in nfs4.idtoname nfs4.nametoid; do echo "$EPOCHSECONDS" > "/proc/net/rpc/$c/flush"; done; }
setup() { # variant pass
  flush_knfsd
  case "$1" in
    rpc)
      rpc.idmapd -f -S -p /var/lib/nfs/rpc_pipefs </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-S-p$2.log" &
      SRVPID=$!
      wait_for 10 sh -c "ls -l /proc/$SRVPID/fd 2>/dev/null | grep -q nfs4.nametoid" || return 1
      nsenter -t "$(container_pid c1)" -m -u -n rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs \
        </dev/null >/dev/null 2>>"$LOGS/rpc.idmapd-c1-p$2.log" &
      RPCPID=$!
      wait_for 10 sh -c "ls -l /proc/$RPCPID/fd 2>/dev/null | grep -q inotify" ;;
    nsid)
      local helper=$LAB_BUILD/idmap/nsid-idmap
      [[ $EXTRAS == *,trace,* ]] && helper+=" --log-file=$LOGS/nsid-idmap-p$2.log"
      sed "s|@NSID_IDMAP_PATH@|$helper|" "$LAB_SRC/idmap/nsid-idmap.conf.in" > "$NSID_RULE" &&
        test ! -e /etc/nsid.conf || return 1
      "$DM_BIN" -f </dev/null >/dev/null 2>>"$LOGS/nsid-idmapd-p$2.log" &
      DM_PID=$!
      dm_ready ;;
  esac
}
teardown() {
  container_exec c1 umount /mnt/nfs 2>/dev/null
  [ -n "$RPCPID" ] && { kill "$RPCPID"; wait "$RPCPID" 2>/dev/null; RPCPID=; }
  [ -n "$SRVPID" ] && { kill "$SRVPID"; wait "$SRVPID" 2>/dev/null; SRVPID=; }
  [ -n "$DM_PID" ] && dm_stop
  rm -f "$NSID_RULE"
  demo_keys_clear
  return 0
}
listing() { # dir out: ms
  local t0 t1
  t0=$(lab_ms)
  container_exec c1 timeout "$LS_TIMEOUT" ls -ln "/mnt/nfs/$1" > "$2" 2>>"$W/err"
  t1=$(lab_ms)
  echo $((t1 - t0))
}
right() { # listing: owners that are c1's own (the directory's uid and gid)
  awk 'NF >= 9 && $9 ~ /^f[0-9]+$/ { i = substr($9, 2); if ($3 == 200000 + i && $4 == 300000 + i) n++ } END { print n + 0 }' "$1"
}
median() { tr ' ' '\n' | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
I1=$(netns_ino c1)
counters() { # what: the ID keys in the kernel, and nsid-idmapd's counters for c1
  local c=""
  [ -n "$DM_PID" ] && c=$("$DM_BIN" --socket="$DM_SOCK" --status --json 2>/dev/null | python3 -c '
import json, sys
for n in json.load(sys.stdin)["namespaces"]:
    if str(n["netns"]) == sys.argv[1]:
        print("; nsid-idmapd for c1: " + " ".join("%s=%s" % (k, n.get(k)) for k in
              ("requests", "hits", "misses", "pipe_upcalls", "ctl_lookups", "keys_invalidated", "failures", "timeouts")))' "$I1")
  note "$1: $(awk '$8 == "id_resolv" { r++; if ($2 ~ /N/) n++ } $8 == "id_legacy" { l++ }
    END { printf "keys id_resolver %d (negative %d), id_legacy %d", r, n, l }' /proc/keys)$c"
}
declare -A COLD REMAP WARMMS
k=0
for var in "${PASSES[@]}"; do
  k=$((k + 1))
  check_eq "pass $k ($var): no ID mapping daemon left from before (rpc.idmapd, nsid-idmapd)" "" \
    "$(pgrep -x rpc.idmapd; pgrep -x nsid-idmapd)"
  # (not under check: its daemons' pids must reach this shell for teardown)
  setup "$var" "$k" 2>>"$W/err"
  check_eq "pass $k ($var): set up" 0 "$?" || { teardown; continue; }
  check "pass $k ($var): c1 mounts the export" container_mount c1 vers=4.2 || { teardown; continue; }
  check "pass $k ($var): the kernel's ID key cache emptied" demo_keys_clear
  cold=$(listing "p$k" "$W/ls-$k-cold")
  counters "pass $k ($var) after the cold listing"
  rc=$(right "$W/ls-$k-cold")
  ws=""
  for ((w = 1; w <= WARM; w++)); do ws+=" $(listing "p$k" "$W/ls-$k-warm$w")"; done
  warm=$(echo $ws | median)
  counters "pass $k ($var) after the warm listing"
  rw=$(right "$W/ls-$k-warm$WARM")
  remap=-
  if [[ $EXTRAS == *,remap,* ]]; then
    echo 2 > /proc/sys/vm/drop_caches
    container_exec c1 ls -ld / >/dev/null 2>&1   # (nsenter and ls back in the page cache)
    remap=$(listing "p$k" "$W/ls-$k-remap")
    counters "pass $k ($var) after the remap listing"
    check_eq "pass $k ($var): remap listing: every owner and group the directory's" "$N" "$(right "$W/ls-$k-remap")"
  fi
  note "bench $var $k $cold $warm $remap $rc $rw $N"
  note "pass $k ($var): cold $cold ms, warm$ws ms (median $warm), remap $remap ms"
  check_eq "pass $k ($var): cold listing: every owner and group the directory's (c1's SSSD)" "$N" "$rc"
  check_eq "pass $k ($var): warm listing: every owner and group the directory's" "$N" "$rw"
  if [ "$var" = nsid ]; then
    check_eq "pass $k (nsid): status says c1 is answered by its name service, passwd files sss" \
      "nss files sss" "$(dm_ns_json "$I1" answered_by) $(dm_ns_json "$I1" passwd_sources)"
    note "pass $k (nsid): nss_error='$(dm_ns_json "$I1" nss_error)' cache_entries=$(dm_ns_json "$I1" cache_entries)"
    "$DM_BIN" --socket="$DM_SOCK" --status --json > "$LOGS/nsid-idmapd-status-p$k.json" 2>&1
    check_eq "pass $k (nsid): the daemon dropped no cached answer meanwhile (no change seen)" 0 \
      "$(grep -c 'cached answers dropped' "$LOGS/nsid-idmapd-p$k.log")"
  fi
  if [ "$rc" != "$N" ] || [ "$rw" != "$N" ]; then cp "$W/ls-$k-cold" "$W/ls-$k-warm$WARM" "$LOGS/" 2>/dev/null; fi
  teardown
  COLD[$var]+=" $cold" WARMMS[$var]+=" $warm"
  [ "$remap" != - ] && REMAP[$var]+=" $remap"
done

# ---- the figures ----------------------------------------------------------------------------------
mean() { awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; if (NF) printf "%.0f", s / NF }' <<<"$1"; }
rc_=$(mean "${COLD[rpc]}") nc=$(mean "${COLD[nsid]}")
rw_=$(mean "${WARMMS[rpc]}") nw=$(mean "${WARMMS[nsid]}")
rr=$(mean "${REMAP[rpc]}") nr=$(mean "${REMAP[nsid]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'; }
secs() { awk -v a="$1" 'BEGIN { if (a != "") printf "%.2f s", a / 1000; else print "-" }'; }
load=$(cut -d' ' -f1-3 /proc/loadavg)
note "figure: $(uname -r), $N files owned by $N distinct directory users (LDAP via SSSD in c1), $((2 * N)) names, NFSv4.2, passes $ORDER (guest load $load)"
note "figure: cold ls -ln: rpc.idmapd in c1 $(secs "$rc_") (passes:${COLD[rpc]:- -} ms), nsid default set-up $(secs "$nc") (passes:${COLD[nsid]:- -} ms)"
note "figure: warm ls -ln (the same listing at once after the cold one, median of $WARM): rpc.idmapd $(secs "$rw_") (passes:${WARMMS[rpc]:- -} ms), nsid $(secs "$nw") (passes:${WARMMS[nsid]:- -} ms)"
[[ $EXTRAS == *,remap,* ]] &&
  note "figure: remap ls -ln (drop_caches 2 first): rpc.idmapd $(secs "$rr") (passes:${REMAP[rpc]:- -} ms), nsid $(secs "$nr") (passes:${REMAP[nsid]:- -} ms), nsid/rpc.idmapd $(ratio "$nr" "$rr")"
note "figure: nsid/rpc.idmapd cold $(ratio "$nc" "$rc_") (target <= 1.0x), warm $(ratio "$nw" "$rw_") (target <= 1.1x)"
for f in "$LOGS"/nsid-idmapd-p*.log; do
  [ -s "$f" ] || continue
  note "$(basename "$f"): $(wc -l < "$f") lines, $(grep -ciE 'error|fail|timed? ?out|refus' "$f") with error/fail/timeout/refused"
  grep -iE 'error|fail|timed? ?out|refus' "$f" | tail -n 5 | while read -r l; do note "  $l"; done
done
cp /proc/"$(container_pid c1)"/root/var/log/sssd/*.log "$LOGS/" 2>/dev/null
[ -s "$W/err" ] && while read -r l; do note "stderr: $l"; done < <(tail -n 10 "$W/err")
kill "$SLAPD" 2>/dev/null
lab_done
