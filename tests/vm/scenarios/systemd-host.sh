#!/bin/bash
# systemd-host: the packages on a host booted with systemd as PID 1 (issue #32), installed
# with dpkg as an administrator would, nothing else done. The guest runs nfs-utils' own units
# (nfs-server.service, nfs-idmapd.service with rpc.idmapd) before nsid is installed, as an NFS
# server host does. labalice is 1500 on the server and the host, 4001 in container c1 (its
# own passwd); labbob 1501 and 4002.
# Boot 1:
#   - before: c1 sees the host's answer (1500), as nfs-utils gives it;
#   - dpkg -i: (when the deb-build-prev test built the previous commit's packages: those
#     first, then this tree's over them, the upgrade an administrator makes) nsid-idmapd
#     enabled and running from its installed unit, rpc.idmapd stopped
#     and nfs-idmapd.service skipped, the reconcile timer enabled and fired; c1 sees 4001, the
#     host 1500; a chown in c1 reaches the server as the server's user;
#   - `systemctl restart nfs-server`: the same nsid-idmapd keeps serving; both start orders
#     (nfs-server alone, which pulls nsid-idmapd in; nsid-idmapd first) end the same way;
#   - a container made after the install gets its identifier from the installed udev rule,
#     through the real systemd-run;
#   - a real reboot (the root's changes are kept on a disk, lab-run's "# lab-boots:").
# Boot 2, the same host after the reboot (systemd starts what multi-user.target wants of the
# NFS stack and nsid, as enabled):
#   - nsid-idmapd started at boot, before nfs-server; rpc.idmapd never ran; the boot's
#     reconcile ran; the same host secret and identity; a new c1 gets its own answers;
#   - dpkg -r: no request-key rule names a program that is gone, nfs-common's rule is back,
#     rpc.idmapd serves knfsd again; dpkg -i again: all of nsid's back, the same host secret;
#   - a roll back to the previous commit's packages and forward again (the upgrade path of
#     the maintainer scripts; without them, dpkg -i over itself): the daemon restarted, the
#     same secret, identity and answers both ways; dpkg -P keeps the secret in
#     /var/backups/nsid, and a new install restores it: the same identity for the same key.
# The export is a tmpfs in /etc/fstab and the NFS settings (lease and grace 10 s, idmapping
# on) are in /etc/nfs.conf.d and /etc/modprobe.d, so that the server comes up by itself at
# boot as a configured host's does.
# lab-test: 6.12 6.1
# lab-init: systemd
# lab-boots: 2
# lab-timeout: 1500
# lab-cost: 330
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/deb.sh"
. "$LAB_LIB/demo-idmap.sh"
# (kept across the reboot: on the root's disk, not in /run)
W=/var/lib/nsid-lab/systemd-host
mkdir -p "$W"
RK=/etc/request-key.d

check_eq "systemd is PID 1" systemd "$(cat /proc/1/comm)" || bail "PID 1 is $(cat /proc/1/comm)"
note "systemd $(systemctl --version | head -n1 | cut -d' ' -f2), state $(systemctl is-system-running 2>&1)"
debs=$(deb_files "$LAB_BUILD/deb") || bail "no packages in $LAB_BUILD/deb (run: ctest --test-dir BUILD -R deb-build)"
NSID_DEB=$(grep '/nsid_' <<<"$debs")
active() { systemctl is-active "$1" 2>&1; }
main_pid() { systemctl show -p MainPID --value "$1"; }
rpcidmapd_running() { pgrep -x rpc.idmapd >/dev/null; }

new_file() { # uid: a new file on the export owned by uid; its name (called in $(...): the
              # name cannot come from a counter of this shell)
  local n="f${EPOCHREALTIME/./}"
  echo x > "$LAB_EXPORT/$n" && chown "$1:$1" "$LAB_EXPORT/$n" && echo "$n"
}
c1_owner() { container_exec c1 timeout 20 stat -c %u "/mnt/nfs/$1" 2>&1; }
c1_remount() { container_exec c1 umount -f /mnt/nfs 2>/dev/null; container_mount c1 vers=4.2,soft,timeo=50,retrans=3; }
serving() { # what: c1 sees 4001 for a new file of the server's 1500, the host 1500, and a
            # chown to c1's labbob (4002) stores the server's 1501
  local f o h
  c1_remount || { echo "c1 cannot mount" >&2; return 1; }
  f=$(new_file 1500)
  o=$(c1_owner "$f")
  h=$(timeout 20 stat -c %u "$HMNT/$f" 2>&1)
  container_exec c1 timeout 20 chown 4002 "/mnt/nfs/$f" 2>&1
  echo "c1=$o host=$h server-after-chown=$(stat -c %u "$LAB_EXPORT/$f")"
}
if [ "$LAB_BOOT" = 1 ]; then
  # shellcheck disable=SC2086
  deb_guest_prune_db $debs -- libc-bin nfs-common keyutils init-system-helpers systemd udev ||
    bail "could not limit dpkg's database"

  # A Docker-built image (this machine's) has /usr/sbin/policy-rc.d refusing every service
  # start and stop from maintainer scripts (exit 101); a host booted with systemd has none.
  if [ -e /usr/sbin/policy-rc.d ]; then
    note "the host image's /usr/sbin/policy-rc.d removed in the guest (it refuses every service action)"
    rm -f /usr/sbin/policy-rc.d
  fi

  # ---- the server host before nsid: nfs-utils' units ---------------------------------------------
  demo_users_setup "$W" "labalice=1500 labbob=1501" "labalice=4001 labbob=4002" ||
    bail "cannot write the users' files"
  nfs_modules on || bail "no NFS modules"
  lab_bridge_up || bail "no bridge"
  # the export, the lease and grace times and idmapping as a configured server keeps them: in
  # /etc/fstab, /etc/nfs.conf.d and /etc/modprobe.d (the reboot below comes up with them)
  mkdir -p "$LAB_EXPORT" /etc/nfs.conf.d
  echo "nsid-lab-export $LAB_EXPORT tmpfs mode=0777 0 0" >> /etc/fstab
  systemctl daemon-reload
  mount "$LAB_EXPORT"
  printf '[nfsd]\nlease-time = 10\ngrace-time = 10\n' > /etc/nfs.conf.d/nsid-lab.conf
  printf 'options nfs nfs4_disable_idmapping=0\noptions nfsd nfs4_disable_idmapping=0\n' > /etc/modprobe.d/nsid-lab.conf
  echo "$LAB_EXPORT $LAB_NET_PREFIX.0/24(rw,no_root_squash,fsid=0,no_subtree_check,insecure,sync)" > /etc/exports
  printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' "$LAB_DOMAIN" > /etc/idmapd.conf
  # 10 s lease and grace, set before knfsd starts (proc-fs-nfsd.mount is what the unit mounts)
  systemctl start proc-fs-nfsd.mount
  echo 10 > /proc/fs/nfsd/nfsv4leasetime; echo 10 > /proc/fs/nfsd/nfsv4gracetime
  check "systemctl start nfs-server" timeout 120 systemctl start nfs-server.service ||
    { systemctl status nfs-server.service --no-pager 2>&1 | sed 's/^/#   /'; bail "no server"; }
  check_eq "nfs-idmapd.service active (rpc.idmapd, pulled in by nfs-server)" active "$(active nfs-idmapd.service)"
  check "rpc.idmapd runs" rpcidmapd_running

  check "container c1 with its own passwd" \
    container_create c1 --passwd "$W/passwd-1" --group "$W/group-1" || bail "no container"
  check "c1 mounts the export" c1_remount || bail "no mount"
  nfs_server_wait_grace
  f=$(new_file 1500)
  check_eq "before nsid: c1 sees labalice as the host's 1500 (nfs-utils answers every namespace alike)" \
    1500 "$(c1_owner "$f")"

  # ---- install (an upgrade from the previous commit's packages when they were built) -------------
  prev=$(deb_files "$LAB_BUILD/deb-prev" 2>/dev/null) || prev=""
  if [ -n "$prev" ]; then
    # shellcheck disable=SC2086
    dpkg -i $prev > "$W/dpkg-i-prev.log" 2>&1; rc=$?
    check_eq "the previous commit's packages installed ($(dpkg-query -W -f='${Version}' nsid))" 0 "$rc" ||
      sed 's/^/#   /' "$W/dpkg-i-prev.log" | tail -20
    note "with them: nsid-idmapd $(active nsid-idmapd.service), nfs-idmapd $(active nfs-idmapd.service)"
    secret_prev=$(sha256sum < /var/lib/nsid/host-secret 2>/dev/null | cut -d' ' -f1)
  else
    note "no packages of the previous commit (BUILD/deb-prev: the deb-build-prev test): a fresh install only"
  fi
  t0=$(lab_ms)
  # shellcheck disable=SC2086
  dpkg -i $debs > "$W/dpkg-i.log" 2>&1; rc=$?
  note "dpkg -i: exit $rc in $(( $(lab_ms) - t0 )) ms"
  grep '^nsid:' "$W/dpkg-i.log" | while read -r l; do note "dpkg -i said: $l"; done
  check_eq "dpkg -i: exit 0" 0 "$rc" || { sed 's/^/#   /' "$W/dpkg-i.log" | tail -20; bail "install failed"; }
  check_eq "nsid-idmapd.service active after the install, nothing else done" active "$(active nsid-idmapd.service)"
  check_eq "nsid-idmapd.service enabled" enabled "$(systemctl is-enabled nsid-idmapd.service 2>&1)"
  check_eq "nsid-server-watch started by the install (knfsd runs here)" active \
    "$(active nsid-server-watch.service)"
  check_eq "the running daemon is the installed /usr/sbin/nsid-idmapd" /usr/sbin/nsid-idmapd \
    "$(readlink "/proc/$(main_pid nsid-idmapd.service)/exe")"
  check "nfs-idmapd.service no longer active" sh -c "! systemctl is-active -q nfs-idmapd.service"
  check "rpc.idmapd stopped" sh -c "! pgrep -x rpc.idmapd"
  check_eq "the reconcile timer enabled and active" "enabled active" \
    "$(systemctl is-enabled nsid-uniquifier-reconcile.timer) $(active nsid-uniquifier-reconcile.timer)"
  check_eq "the boot reconcile enabled" enabled "$(systemctl is-enabled nsid-uniquifier-reconcile.service 2>&1)"
  secret0=$(sha256sum < /var/lib/nsid/host-secret 2>/dev/null | cut -d' ' -f1)
  if [ -z "$prev" ]; then
    check "a host secret generated (/var/lib/nsid/host-secret)" test -n "$secret0" -a -s /var/lib/nsid/host-secret.fingerprint
  else
    # (an upgrade generates nothing: what the previous package made, or did not, stays)
    check_eq "the upgrade kept the previous package's host secret (${secret_prev:-none})" "$secret_prev" "$secret0"
  fi

  # namespace-local answers, knfsd's answers from nsid-idmapd
  # a lookup whose requester is seen in the host's netns (a kernel thread, or a process gone
  # since) while the host has no NFS client of its own is a container client's: the daemon
  # tells the helper to hand it to the pipes it serves (bench-idmapd-sssd: one owner of 1,000
  # had the host's answer when it said 0)
  rh=$(nsid-idmapd --ctl="route host" 2>&1)
  check "no NFS client on the host yet: 'route host' names the container's pipes (ok N, N > 0)" \
    bash -c "[[ '$rh' =~ ^ok\ [1-9] ]]"
  HMNT=/mnt/host-nfs
  mkdir -p $HMNT && timeout 30 mount -t nfs4 -o vers=4.2,soft,timeo=50,retrans=3 "$LAB_SERVER_IP:/" $HMNT
  WANT="c1=4001 host=1500 server-after-chown=1501"
  check_eq "after the install: c1 its own, the host its own, knfsd maps c1's chown" "$WANT" "$(serving)"

  # ---- nfs-server restarts and start orders -----------------------------------------------------
  pid=$(main_pid nsid-idmapd.service)
  check "systemctl restart nfs-server" timeout 120 systemctl restart nfs-server.service
  nfs_server_wait_grace
  check_eq "nsid-idmapd still active, the same process" "active $pid" \
    "$(active nsid-idmapd.service) $(main_pid nsid-idmapd.service)"
  check "rpc.idmapd not started by the restart" sh -c "! pgrep -x rpc.idmapd"
  # the package enables nsid-server-watch as part of nfs-server.service: the restart starts it
  check_eq "nsid-server-watch started with nfs-server (enabled by the package)" active \
    "$(active nsid-server-watch.service)"
  check_eq "nfs-idmapd.service skipped by its condition" "no" \
    "$(systemctl show -p ConditionResult --value nfs-idmapd.service)"
  check_eq "after the restart: the same answers" "$WANT" "$(serving)"
  journalctl -u nfs-idmapd.service --no-pager -o cat 2>/dev/null | tail -n 2 | while read -r l; do note "nfs-idmapd: $l"; done
  pid=$(main_pid nsid-idmapd.service)
  check "systemctl restart nfs-client.target" timeout 120 systemctl restart nfs-client.target
  check_eq "nsid-idmapd still active, the same process, after nfs-client.target" "active $pid" \
    "$(active nsid-idmapd.service) $(main_pid nsid-idmapd.service)"

  systemctl stop nfs-server.service nsid-idmapd.service
  check "both stopped; then systemctl start nfs-server alone" timeout 120 systemctl start nfs-server.service
  nfs_server_wait_grace
  check_eq "nsid-idmapd started with it (wanted through nfs-idmapd.service)" active "$(active nsid-idmapd.service)"
  check_eq "order nfs-server first: the same answers" "$WANT" "$(serving)"
  systemctl stop nfs-server.service nsid-idmapd.service
  check "both stopped; nsid-idmapd first, then nfs-server" \
    sh -c "timeout 60 systemctl start nsid-idmapd.service && timeout 120 systemctl start nfs-server.service"
  nfs_server_wait_grace
  check "rpc.idmapd never started" sh -c "! pgrep -x rpc.idmapd"
  check_eq "order nsid-idmapd first: the same answers" "$WANT" "$(serving)"
  check_eq "nsid-server-watch follows the server's restarts" active "$(active nsid-server-watch.service)"
  journalctl -u nsid-server-watch.service --no-pager -o cat 2>/dev/null | tail -n 3 | while read -r l; do note "server-watch: $l"; done
  tk=$(nsidctl --json doctor --server --window=0 | jq -c '[.findings[] | select(.check == "nfsd-takeovers")]')
  note "doctor --server, takeover findings: $tk"
  check_eq "doctor --server reads the watcher's history: no owner string taken over" ok \
    "$(printf '%s' "$tk" | jq -r '[.[] | select(.severity == "ok" or .severity == "error")][0].severity')"

  # ---- the timer and the udev rule, through real systemd -------------------------------------
  # the timer's run (OnBootSec passed: at once when started by the install) reconciles the
  # namespaces of that moment; on a loaded machine one of them may fail under it (a
  # container's machine-id not read in time), and the next run is 5 min away: then the
  # earlier result is reported and the unit is run once more, which must succeed
  check "the reconcile timer fired (its service ran)" wait_for 120 sh -c \
    "[ -n \"\$(systemctl show -p ExecMainExitTimestamp --value nsid-uniquifier-reconcile.service)\" ]"
  rec=$(systemctl show -p Result --value nsid-uniquifier-reconcile.service)
  if [ "$rec" != success ]; then
    note "the timer's reconcile ended: $rec (status $(systemctl show -p ExecMainStatus --value nsid-uniquifier-reconcile.service)); run again"
    journalctl -u nsid-uniquifier-reconcile.service --no-pager -o cat 2>/dev/null | tail -n 5 | sed 's/^/#   /'
    timeout 120 systemctl start nsid-uniquifier-reconcile.service
  fi
  check_eq "the reconcile under its unit succeeded" success \
    "$(systemctl show -p Result --value nsid-uniquifier-reconcile.service)"
  check "container c2 made after the install" container_create c2 || bail "no c2"
  c2_identified() { container_identifier c2 | grep -qx '[0-9a-f]\{32\}'; }
  transient() { journalctl --no-pager -o short-monotonic 2>/dev/null | grep -E 'run-[^ ]*\.service' | grep -m1 -i 'nsid-uniquifier'; }
  if kernel_at_least 6 5; then
    check "c2's identifier set by the udev rule's transient unit (systemd-run)" wait_for 90 c2_identified
    check "the journal shows nsid-uniquifier run as a transient unit" transient
    note "journal: $(transient)"
  else
    # (before 6.5 the host's udevd gets no uevent for a container's NFS client:
    # doc/kernel-findings.md; the timer and the hooks serve such containers)
    note "Linux $(uname -r): no uevent for a container's NFS client before 6.5; the udev rule's path is not checked here"
  fi


  # ---- a real reboot -------------------------------------------------------------------------------
  printf 'secret0=%q\nident_boot1=%q\npid_boot1=%q\n' "$secret0" \
    "$(nsidctl --json identity --key systemd-host-probe 2>/dev/null | sed -n 's/.*"identity": *"\([0-9a-f]*\)".*/\1/p')" \
    "$(main_pid nsid-idmapd.service)" > "$W/boot1.env"
  # (no NFS mount left for the shutdown to wait on)
  container_exec c1 umount -f /mnt/nfs 2>/dev/null
  umount -f "$HMNT" 2>/dev/null
  lab_reboot
fi

# ---- boot 2: the same host after a real reboot ---------------------------------------------------
pid_boot1='' ident_boot1=''
. "$W/boot1.env"
prev=$(deb_files "$LAB_BUILD/deb-prev" 2>/dev/null) || prev=""
HMNT=/mnt/host-nfs
WANT="c1=4001 host=1500 server-after-chown=1501"
note "boot 2: systemd $(systemctl is-system-running 2>&1), up $(cut -d' ' -f1 /proc/uptime) s"
check_eq "after the reboot: nsid-idmapd and nfs-server active, started at boot" "active active" \
  "$(active nsid-idmapd.service) $(active nfs-server.service)"
check "after the reboot: a new nsid-idmapd process (not boot 1's $pid_boot1)" \
  test "$(main_pid nsid-idmapd.service)" != "$pid_boot1"
started() { systemctl show -p ActiveEnterTimestampMonotonic --value "$1"; }
check "at boot nsid-idmapd was up before nfs-server ($(started nsid-idmapd.service) < $(started nfs-server.service) us)" \
  test "$(started nsid-idmapd.service)" -lt "$(started nfs-server.service)"
check "rpc.idmapd never ran in this boot" sh -c "! journalctl -b --no-pager -o cat _COMM=rpc.idmapd | grep -q . && ! pgrep -x rpc.idmapd"
check_eq "nfs-idmapd.service skipped by its condition at boot" "no" \
  "$(systemctl show -p ConditionResult --value nfs-idmapd.service)"
check "the boot's reconcile ran and succeeded" wait_for 120 sh -c \
  "[ \"\$(systemctl show -p Result --value nsid-uniquifier-reconcile.service)\" = success ] &&
   [ -n \"\$(systemctl show -p ExecMainExitTimestamp --value nsid-uniquifier-reconcile.service)\" ]"
# the metrics timer (enabled by the package; this image has prometheus-node-exporter's
# directory): its first run 30 s after boot, under its unit's sandbox
if [ -d /var/lib/prometheus/node-exporter ] && command -v promtool >/dev/null; then
  check "nsid-metrics.timer wrote node_exporter's textfile, promtool clean" wait_for 120 sh -c \
    "[ -s /var/lib/prometheus/node-exporter/nsid.prom ] && promtool check metrics < /var/lib/prometheus/node-exporter/nsid.prom"
  check_eq "... with nsid-idmapd up, as its unit saw it" "nsid_idmapd_up 1" \
    "$(grep '^nsid_idmapd_up ' /var/lib/prometheus/node-exporter/nsid.prom 2>&1)"
  note "nsid-metrics.service: $(systemctl show -p Result --value nsid-metrics.service), $(grep -vc '^#' /var/lib/prometheus/node-exporter/nsid.prom 2>/dev/null) series"
else
  note "no /var/lib/prometheus/node-exporter or promtool in this image: the metrics timer not checked"
fi
check_eq "after the reboot: the same host secret" "$secret0" \
  "$(sha256sum < /var/lib/nsid/host-secret 2>/dev/null | cut -d' ' -f1)"
check_eq "after the reboot: the same identity for the same key" "$ident_boot1" \
  "$(nsidctl --json identity --key systemd-host-probe 2>/dev/null | sed -n 's/.*"identity": *"\([0-9a-f]*\)".*/\1/p')"
lab_bridge_up || bail "no bridge"
check "a new c1 with its own passwd" \
  container_create c1 --passwd "$W/passwd-1" --group "$W/group-1" || bail "no container"
nfs_server_wait_grace
mkdir -p $HMNT && timeout 30 mount -t nfs4 -o vers=4.2,soft,timeo=50,retrans=3 "$LAB_SERVER_IP:/" $HMNT
check_eq "after the reboot: c1 its own, the host its own, knfsd maps c1's chown" "$WANT" "$(serving)"

# ---- remove, reinstall ------------------------------------------------------------------------
ident0=$(nsidctl --json identity --key systemd-host-probe 2>/dev/null | sed -n 's/.*"identity": *"\([0-9a-f]*\)".*/\1/p')
check "nsidctl identity for a fixed key" test -n "$ident0"
dpkg -r nsid > "$W/dpkg-r.log" 2>&1; rc=$?
grep '^nsid:' "$W/dpkg-r.log" | while read -r l; do note "dpkg -r said: $l"; done
check_eq "dpkg -r nsid: exit 0" 0 "$rc" || sed 's/^/#   /' "$W/dpkg-r.log" | tail -20
check_eq "no request-key rule names /usr/sbin/nsid-idmap any more" "" \
  "$(grep -l nsid-idmap $RK/*.conf /etc/request-key.conf 2>/dev/null | xargs)"
check "nfs-common's id_resolver.conf back (nfsidmap)" grep -q '^create.*id_resolver.*/usr/sbin/nfsidmap' $RK/id_resolver.conf
check_eq "nsid-idmapd gone; rpc.idmapd serves knfsd again" "inactive active" \
  "$(active nsid-idmapd.service) $(active nfs-idmapd.service)"
check "rpc.idmapd runs" rpcidmapd_running
# (the host's answers everywhere again: c1's chown of its 4002 is the host's 4002, unknown)
check "after the removal: knfsd maps a host chown through rpc.idmapd" sh -c "
  f=\$(echo x > $HMNT/removed && echo removed) && chown 1501 $HMNT/removed && [ \"\$(stat -c %u $LAB_EXPORT/removed)\" = 1501 ]"
dpkg -i "$NSID_DEB" > "$W/dpkg-i2.log" 2>&1; rc=$?
check_eq "dpkg -i nsid again: exit 0" 0 "$rc" || sed 's/^/#   /' "$W/dpkg-i2.log" | tail -20
check "its request-key rules are back, and nfs-common's diverted" \
  sh -c "grep -q nsid-idmap $RK/nsid-idmap.conf && grep -q 'nsid-idmap dns' $RK/nsid-dns.conf &&
         test ! -e $RK/id_resolver.conf -a ! -e $RK/nsid-idmap.conf.nsid-removed"
check_eq "nsid-idmapd active again, rpc.idmapd stopped" "active inactive" \
  "$(active nsid-idmapd.service) $(active nfs-idmapd.service)"
check_eq "the same host secret" "$secret0" "$(sha256sum < /var/lib/nsid/host-secret 2>/dev/null | cut -d' ' -f1)"
check_eq "after the reinstall: the same answers" "$WANT" "$(serving)"

# ---- the upgrade path: roll back to the previous commit's packages and forward again
# (doc/operations.md), or, without them, the package over itself ------------------------------
# (one of the two: forward again is an upgrade too, and each dpkg -i costs this guest about
# 30 s; boot 1 already upgraded from the previous packages)
if [ -n "$prev" ]; then
  pid=$(main_pid nsid-idmapd.service)
  # shellcheck disable=SC2086
  dpkg -i $prev > "$W/dpkg-down.log" 2>&1; rc=$?
  grep -i 'downgrad' "$W/dpkg-down.log" | head -n1 | while read -r l; do note "dpkg said: $l"; done
  check_eq "roll back: dpkg -i the previous packages over these: exit 0 ($(dpkg-query -W -f='${Version}' nsid))" 0 "$rc" ||
    sed 's/^/#   /' "$W/dpkg-down.log" | tail -20
  check "roll back: the previous nsid-idmapd runs (a new process), rpc.idmapd stopped" \
    sh -c "[ \"\$(systemctl is-active nsid-idmapd.service)\" = active ] && [ \"\$(systemctl show -p MainPID --value nsid-idmapd.service)\" != $pid ] && ! pgrep -x rpc.idmapd"
  check_eq "roll back: the same host secret" "$secret0" "$(sha256sum < /var/lib/nsid/host-secret 2>/dev/null | cut -d' ' -f1)"
  check_eq "roll back: the same identity for the same key" "$ident0" \
    "$(nsidctl --json identity --key systemd-host-probe 2>/dev/null | sed -n 's/.*"identity": *"\([0-9a-f]*\)".*/\1/p')"
  check_eq "roll back: the same answers" "$WANT" "$(serving)"
  check "roll back: the request-key rules name nsid-idmap, nfs-common's diverted" \
    sh -c "grep -q nsid-idmap $RK/nsid-idmap.conf && test ! -e $RK/id_resolver.conf"
  pid=$(main_pid nsid-idmapd.service)
  # shellcheck disable=SC2086
  dpkg -i $debs > "$W/dpkg-fwd.log" 2>&1; rc=$?
  check_eq "forward again: dpkg -i this tree's packages: exit 0 ($(dpkg-query -W -f='${Version}' nsid))" 0 "$rc" ||
    sed 's/^/#   /' "$W/dpkg-fwd.log" | tail -20
  check "forward again: nsid-idmapd restarted (a new process) and active" \
    sh -c "[ \"\$(systemctl is-active nsid-idmapd.service)\" = active ] && [ \"\$(systemctl show -p MainPID --value nsid-idmapd.service)\" != $pid ]"
  check_eq "forward again: the same answers" "$WANT" "$(serving)"
else
  note "no packages of the previous commit: the roll back is not checked; the package over itself instead"
  pid=$(main_pid nsid-idmapd.service)
  dpkg -i "$NSID_DEB" > "$W/dpkg-up.log" 2>&1; rc=$?
  check_eq "dpkg -i over the installed package: exit 0" 0 "$rc" || sed 's/^/#   /' "$W/dpkg-up.log" | tail -20
  check "nsid-idmapd restarted (a new process) and active" \
    sh -c "[ \"\$(systemctl is-active nsid-idmapd.service)\" = active ] && [ \"\$(systemctl show -p MainPID --value nsid-idmapd.service)\" != $pid ]"
  check_eq "after the upgrade: the same answers" "$WANT" "$(serving)"
fi

# ---- purge, install again -----------------------------------------------------------------------
container_exec c1 umount -f /mnt/nfs 2>/dev/null
dpkg -P nsid > "$W/dpkg-p.log" 2>&1; rc=$?
grep '^nsid:' "$W/dpkg-p.log" | while read -r l; do note "dpkg -P said: $l"; done
check_eq "dpkg -P nsid: exit 0" 0 "$rc" || sed 's/^/#   /' "$W/dpkg-p.log" | tail -20
check "after the purge: /var/lib/nsid gone, no nsid request-key file left" \
  sh -c "test ! -e /var/lib/nsid && ! ls $RK | grep -q nsid"
if [ -n "$secret0" ]; then
  check_eq "the host secret kept in /var/backups/nsid" "$secret0" \
    "$(sha256sum < /var/backups/nsid/host-secret 2>/dev/null | cut -d' ' -f1)"
else
  note "no generated host secret before the purge (the previous package made none): nothing to keep"
fi
dpkg -i "$NSID_DEB" > "$W/dpkg-i3.log" 2>&1; rc=$?
grep '^nsid:' "$W/dpkg-i3.log" | while read -r l; do note "dpkg -i said: $l"; done
check_eq "dpkg -i after the purge: exit 0" 0 "$rc" || sed 's/^/#   /' "$W/dpkg-i3.log" | tail -20
if [ -n "$secret0" ]; then
  check_eq "the host secret restored" "$secret0" "$(sha256sum < /var/lib/nsid/host-secret | cut -d' ' -f1)"
  check_eq "the same identity for the same key" "$ident0" \
    "$(nsidctl --json identity --key systemd-host-probe 2>/dev/null | sed -n 's/.*"identity": *"\([0-9a-f]*\)".*/\1/p')"
else
  check "a fresh install: a host secret generated" test -s /var/lib/nsid/host-secret -a -s /var/lib/nsid/host-secret.fingerprint
fi
check_eq "after purge and install: the same answers" "$WANT" "$(serving)"
journalctl -u nsid-idmapd.service --no-pager -o cat > "$LAB_OUT/nsid-idmapd.journal" 2>&1
lab_done
