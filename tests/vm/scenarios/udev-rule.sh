#!/bin/bash
# udev-rule: the installed udev rule (90-nsid-uniquifier.rules, as `cmake --install` puts it
# where the package does) run by a real systemd-udevd on the kernel's real uevents.
#   - positive control: the nfs module loads with no container netns: the initial netns's
#     nfs_client "add" uevent reaches udevd, the rule fires;
#   - a container netns is made after that (owned by the initial user namespace): on 6.12
#     its nfs_client "add" uevent reaches the host's udevd, the rule starts
#     `nsid-uniquifier reconcile`, which gives the new netns its identifier; on 6.1 the
#     kernel does not deliver it to the host (doc/kernel-findings.md): no event, and the
#     "no event" is asserted against a uevent made after the container (a dummy link), which
#     udevd did see: uevents are handled in order.
# The guest has no systemd as PID 1, so the rule's /usr/bin/systemd-run is replaced (bind
# mount) by a shim that logs its arguments and runs the unit's command in the foreground:
# the rule, its match and its RUN line are udevd's, unchanged (tests/vm/lib/udevd.sh).
# lab-test: 6.1 6.12
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
. "$LAB_LIB/udevd.sh"
W=/run/nsid-lab/udev
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W
RULE=/lib/udev/rules.d/90-nsid-uniquifier.rules

check "nfs not loaded yet" sh -c '! grep -q "^nfs " /proc/modules'
check "nsid installed from the build (cmake --install, prefix /usr)" \
  sh -c "cmake --install '$LAB_BUILD' --prefix /usr > '$W/install.log' 2>&1"
check "the installed rule is the built one" cmp "$RULE" "$LAB_BUILD/udev-rules/90-nsid-uniquifier.rules"
check "it runs nsid-uniquifier reconcile through systemd-run" \
  grep -q 'RUN+="/usr/bin/systemd-run .*/usr/sbin/nsid-uniquifier --quiet reconcile"' "$RULE"

udevd_start "$W" "$LOGS/udevd.log"   # (not under check: it sets UDEVD_PID in this shell)
check_eq "systemd-udevd running, the systemd-run shim bound over /usr/bin/systemd-run" 0 $?
fired() { udevd_fired; }
fired_more_than() { [ "$(fired)" -gt "$1" ]; }
nfs_events() { grep -c "nfs_client.*add\|add.*nfs_client\|/fs/nfs/net/nfs_client" "$LOGS/udevd.log"; }

# ---- positive control: the initial netns's nfs_client --------------------------------------
check "bridge, veth loaded" lab_modprobe bridge veth
lab_bridge_up
check "nfs loaded" lab_modprobe nfs nfsv4
check "udevd handled the events" udevadm settle --timeout=30
check "the rule fired for the initial netns's nfs_client (positive control)" wait_for 20 fired_more_than 0
check "nsid-uniquifier reconcile exited 0" wait_for 20 grep -q '^exit 0 ' "$W/systemd-run.log"
n0=$(fired)
note "after the module load: the rule fired $n0 time(s); udevd log lines about nfs_client: $(nfs_events)"

# ---- a container netns made afterwards ------------------------------------------------------
check "container c1 created" container_create c1 || bail "no container"
check "a dummy link made after it (a uevent udevd must see after c1's)" ip link add nsid-ue0 type dummy
check "udevd handled the events" udevadm settle --timeout=30
check "udevd saw the dummy link's uevent" wait_for 10 grep -q "nsid-ue0" "$LOGS/udevd.log"
if kernel_at_least 6 12; then
  check "6.12: the rule fired again for c1's netns" wait_for 20 fired_more_than "$n0"
  # (an unset identifier reads "(null)" on 6.1, empty on 6.12: a set one is nsid's 32 hex)
  has_identifier() { container_identifier c1 | grep -qE '^[0-9a-f]{32}$'; }
  check "6.12: reconcile gave c1's netns an identifier" wait_for 20 has_identifier
  note "c1 identifier: $(container_identifier c1)"
else
  check_eq "6.1: no nfs_client event of c1's netns reached the host (the dummy's did)" "$n0" "$(fired)"
  id=$(container_identifier c1)
  check "6.1: c1's netns has no identifier from udev ($id)" sh -c "! echo '$id' | grep -qE '^[0-9a-f]{32}\$'"
fi

ip link del nsid-ue0 2>/dev/null
containers_destroy_all
udevd_stop
lab_done
