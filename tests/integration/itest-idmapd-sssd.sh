#!/bin/bash
# nsid-idmapd answers a container whose users live in a real directory (issue 28): Debian's
# slapd with 10,000 posixAccount users and 2,000 posixGroup groups, and SSSD's LDAP provider
# running inside the container (its own mount, network and pid namespaces; nsswitch.conf
# "files sss", its own sssd.conf, SSSD's state on tmpfs so the host's is untouched), asked
# over the daemon's control socket. No mock: slapd, sssd, libnss_sss and the container's
# libnfsidmap are the installed packages (scripts/install-deps all).
#
# slapd runs in a network namespace of its own, joined to the container's by a veth pair
# (192.0.2.1 and .2, TEST-NET-1: nothing of the host's network is touched); SSSD cannot use
# ldapi:// (its failover resolves the socket path as a host name); the test's own ldapsearch
# uses slapd's ldapi socket under the test's directory.
#
# Checks:
#  - 200 users spread over the directory and 50 groups: nsid's uid/gid for NAME@dir.test is
#    what `getent` in the container gives, and the id maps back to NAME@dir.test;
#  - an unknown name (and an unknown id) is negative; status says the container is
#    answered by its name service with the sources "files sss";
#  - figures: 1,000 cold lookups through the control socket (one connection, pipelined),
#    the same 1,000 again (the daemon's cache), and getent in the container for the same
#    1,000 names (SSSD warm) and for 1,000 others (SSSD cold), in one call each;
#  - sssd hung (SIGSTOP): a new name fails (an error, not negative) at the request timeout
#    while the host and a cached name answer within 1 s; sssd stopped: a new name or id
#    fails (or is negative) within the timeout, the same meanwhile; sssd restarted: the name
#    that failed is answered (a failure is not cached);
#  - one nsid-nss-query, in the container's pid namespace, and none once the daemon stops;
#  - a second container whose name service is nslcd (nss-pam-ldapd: nsswitch.conf "files
#    ldap", its own nslcd.conf, nslcd running inside it) against the same slapd: 100 users
#    and 20 groups, both directions, agree with getent there (when nslcd and libnss-ldapd
#    are installed: scripts/install-deps all; else those checks are skipped, said so).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
bin=$(realpath "$build/idmapd/nsid-idmapd")
src=$(cd "$(dirname "$0")" && pwd)
. "$src/lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: nsid-idmapd, namespaces, slapd, sssd (run as root)"
[ -x "$build/idmapd/nsid-nss-query" ] || { echo "FAIL: $build/idmapd/nsid-nss-query not built"; exit 1; }
for t in slapd:slapd slapadd:slapd ldapsearch:ldap-utils sssd:sssd-common python3:python3 \
         nsenter:util-linux unshare:util-linux ip:iproute2; do
        command -v "${t%%:*}" >/dev/null || skip "${t%%:*} missing (package ${t#*:}; scripts/install-deps all)"
done
multiarch=/usr/lib/x86_64-linux-gnu
[ -e $multiarch/libnss_sss.so.2 ] || skip "libnss_sss missing (package libnss-sss; scripts/install-deps all)"
[ -e $multiarch/sssd/libsss_ldap.so ] || skip "SSSD's LDAP provider missing (package sssd-ldap; scripts/install-deps all)"
[ -e /etc/ldap/schema/nis.schema ] || skip "slapd's schema missing (package slapd)"
[ -e /etc/idmapd.conf ] || skip "/etc/idmapd.conf missing (package nfs-common)"

T=$(mktemp -d /tmp/nsid-itest-sssd.XXXXXX)
chmod 755 "$T"
S="$T/idmapd.sock"
LDAPI="$T/ldapi"
ldapi_uri="ldapi://$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$LDAPI")"
SLAPD='' LNS='' CONT='' CPID='' SSSD_NSENTER='' DPID='' NCONT='' NPID=''
have_nslcd=0
command -v nslcd >/dev/null && [ -e $multiarch/libnss_ldap.so.2 ] && getent passwd nslcd >/dev/null && have_nslcd=1
sssd_procs() { # sssd's live processes (monitor, sssd_be, sssd_nss) in the container's pid ns
        local p ns
        ns=$(readlink "/proc/$CPID/ns/pid")
        for p in $(pgrep '^sssd' || true); do
                [ "$(readlink "/proc/$p/ns/pid" 2>/dev/null)" = "$ns" ] &&
                        [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ] && echo "$p"
        done
}
cleanup() {
        set +e
        exec 2>/dev/null # (bash's "Killed" notices)
        [ -n "$DPID" ] && kill -9 "$DPID"
        # sssd first, reaped by its nsenter (no zombie left to the host's init)
        if [ -n "$SSSD_NSENTER" ]; then
                for p in $(sssd_procs); do kill -9 "$p"; done
                kill -CONT "$SSSD_NSENTER"
                for _ in $(seq 50); do kill -0 "$SSSD_NSENTER" || break; sleep 0.1; done
                kill -9 "$SSSD_NSENTER"
        fi
        # the container's pid 1 (its sleep): its death kills everything left in it; unshare,
        # its parent, reaps it and exits
        [ -n "$CPID" ] && kill -9 "$CPID"
        [ -n "$NPID" ] && kill -9 "$NPID"
        [ -n "$NCONT" ] && { for _ in $(seq 50); do kill -0 "$NCONT" || break; sleep 0.1; done; kill -9 "$NCONT"; }
        if [ -n "$CONT" ]; then
                for _ in $(seq 50); do kill -0 "$CONT" || break; sleep 0.1; done
                kill -9 "$CONT"
        fi
        [ -n "$SLAPD" ] && kill -9 "$SLAPD"
        [ -s "$T/slapd.pid" ] && kill -9 "$(cat "$T/slapd.pid")"
        [ -n "$LNS" ] && kill -9 "$LNS" # slapd's netns (and the veth pair) with it
        wait
        rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
ctl() { "$bin" --socket="$S" --ctl="$1" || true; }
expect() { # expect "request" "reply prefix"
        local got
        got=$(ctl "$1")
        case "$got" in "$2"*) pass "$1 -> $got" ;; *) fail "$1 -> '$got', expected '$2...'" ;; esac
}
ms_since() { echo $(( (${EPOCHREALTIME/./} - $1) / 1000 )); }
in_container() { nsenter -t "$CPID" -m -p -n -- "$@"; }
# diagnostics of a failed check: SSSD's logs in the container and the daemon's log
diag() {
        echo "--- sssd logs (tail)"; tail -n 20 "/proc/$CPID/root/var/log/sssd/"*.log 2>/dev/null || true
        echo "--- daemon log (tail)"; tail -n 30 "$T/daemon.log" 2>/dev/null || true
}

# a client of the control socket: requests on stdin, one a line, all written on one
# connection (pipelined; the daemon answers a connection's lines in order), one reply a line
# on stdout; the wall time in ms on fd 3
cat >"$T/ctl.py" <<'PY'
import os, socket, sys, threading, time
reqs = [l.rstrip("\n") for l in sys.stdin if l.strip()]
s = socket.socket(socket.AF_UNIX)
s.settimeout(120)
s.connect(sys.argv[1])
t0 = time.monotonic()
w = threading.Thread(target=lambda: s.sendall("".join(r + "\n" for r in reqs).encode()))
w.start()
f = s.makefile("rb")
out = [f.readline().decode().rstrip("\n") for _ in reqs]
ms = (time.monotonic() - t0) * 1000
w.join()
sys.stdout.write("".join(o + "\n" for o in out))
os.write(3, b"%d\n" % round(ms))
PY
# pipelined REQUESTS-FILE REPLIES-FILE: returns the wall time in ms in $ms
pipelined() { ms=$(python3 "$T/ctl.py" "$S" <"$1" 3>&1 >"$2"); }

# --- the directory: slapd with its own configuration and database under $T ---
. "$src/../vm/lib/slapd.sh"
slapd_conf "$T"
python3 - >"$T/data.ldif" <<'PY'
out = ["dn: dc=dir,dc=test\nobjectClass: dcObject\nobjectClass: organization\no: dir\ndc: dir\n",
       "dn: ou=people,dc=dir,dc=test\nobjectClass: organizationalUnit\nou: people\n",
       "dn: ou=groups,dc=dir,dc=test\nobjectClass: organizationalUnit\nou: groups\n"]
for n in range(1, 10001):
    out.append(f"dn: uid=lduser{n},ou=people,dc=dir,dc=test\nobjectClass: account\n"
               f"objectClass: posixAccount\nuid: lduser{n}\ncn: LD User {n}\n"
               f"uidNumber: {200000 + n}\ngidNumber: {300001 + (n - 1) % 2000}\n"
               f"homeDirectory: /home/lduser{n}\nloginShell: /bin/sh\n")
for m in range(1, 2001):
    out.append(f"dn: cn=ldgroup{m},ou=groups,dc=dir,dc=test\nobjectClass: posixGroup\n"
               f"cn: ldgroup{m}\ngidNumber: {300000 + m}\nmemberUid: lduser{m}\n"
               f"memberUid: lduser{m + 2000}\n")
print("\n".join(out))
PY
t0=${EPOCHREALTIME/./}
slapadd -q -f "$T/slapd.conf" -l "$T/data.ldif" >"$T/slapadd.out" 2>&1 ||
        { cat "$T/slapadd.out"; echo "FAIL: slapadd"; exit 1; }
# slapd's network namespace, with a veth pair made inside it (nothing in the host's
# netns): ldap-l stays there (192.0.2.1), ldap-c goes to the container once it exists
unshare -n sleep 1000 </dev/null >/dev/null 2>&1 &
LNS=$!
wait_for 5 eval '[ "$(readlink /proc/$LNS/ns/net)" != "$(readlink /proc/self/ns/net)" ]' ||
        { echo "FAIL: slapd's netns"; exit 1; }
in_ldapns() { nsenter -t "$LNS" -n -- "$@"; }
in_ldapns ip link set lo up
in_ldapns ip link add ldap-l type veth peer name ldap-c
in_ldapns ip addr add 192.0.2.1/24 dev ldap-l
in_ldapns ip link set ldap-l up
# the nslcd container's link to slapd (198.51.100.0/24, TEST-NET-2)
in_ldapns ip link add ldap-l2 type veth peer name ldap-n
in_ldapns ip addr add 198.51.100.1/24 dev ldap-l2
in_ldapns ip link set ldap-l2 up
# (nsenter -n execs slapd without a fork, and -d keeps it in the foreground: $! is slapd)
nsenter -t "$LNS" -n -- slapd -d 0 -h "$ldapi_uri ldap://192.0.2.1:3890/ ldap://198.51.100.1:3890/" -f "$T/slapd.conf" \
        </dev/null >"$T/slapd.out" 2>&1 &
SLAPD=$!
count() { ldapsearch -x -LLL -H "$ldapi_uri" -b dc=dir,dc=test "$1" dn 2>/dev/null | grep -c '^dn:' || true; }
wait_for 20 test -S "$LDAPI" || { cat "$T/slapd.out"; echo "FAIL: slapd did not start"; exit 1; }
nu=$(count '(objectClass=posixAccount)'); ng=$(count '(objectClass=posixGroup)')
[ "$nu" = 10000 ] && [ "$ng" = 2000 ] && pass "slapd (pid $SLAPD) serves $nu users and $ng groups, loaded in $(ms_since "$t0") ms" ||
        { echo "FAIL: slapd serves $nu users and $ng groups, not 10000 and 2000"; exit 1; }

# --- the container: its own mount, network and pid namespaces; nsswitch.conf "files sss",
#     idmapd.conf Domain = dir.test, its own sssd.conf; SSSD's state (/var/lib/sss, its
#     logs, /run with its pid file) on tmpfs mounts of its own ---
C="$T/c"
mkdir -p "$C"
printf 'passwd: files sss\ngroup: files sss\nshadow: files\nhosts: files\n' >"$C/nsswitch.conf"
printf '[General]\nDomain = dir.test\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' >"$C/idmapd.conf"
sssd_conf "$C/sssd" ldap://192.0.2.1:3890/
mkdir -m 1777 "$T/ready"
# (as an engine makes it: the pid namespace first, its pid 1 makes the others; so the only
# process in the container's network namespace is inside its pid namespace — with
# "unshare -m -n -p -f", unshare itself would be in the container's network and mount
# namespaces but the host's pid namespace, and the daemon, taking the first process it
# finds in a netns, would run the container's nsid-nss-query in the host's pid namespace)
unshare -p -f --kill-child -- unshare -m -n --propagation private sh -c "
        mount --bind '$C/nsswitch.conf' /etc/nsswitch.conf &&
        mount --bind '$C/idmapd.conf' /etc/idmapd.conf &&
        mkdir -p /etc/sssd && mount --bind '$C/sssd' /etc/sssd &&
        mount -t tmpfs -o mode=755 nsid-sss /var/lib/sss &&
        mkdir -p /var/lib/sss/db /var/lib/sss/pipes/private /var/lib/sss/mc /var/lib/sss/pubconf \
                 /var/lib/sss/gpo_cache /var/lib/sss/secrets /var/lib/sss/deskprofile &&
        chmod 700 /var/lib/sss/db /var/lib/sss/pipes/private /var/lib/sss/secrets &&
        mkdir -p /var/log/sssd && mount -t tmpfs -o mode=750 nsid-sss-log /var/log/sssd &&
        mount -t tmpfs -o mode=755 nsid-run /run &&
        echo \$\$ >'$T/ready/c' && exec sleep 1000" </dev/null >"$T/c.out" 2>&1 &
CONT=$!
wait_for 10 test -s "$T/ready/c" || { cat "$T/c.out"; echo "FAIL: the container did not start"; exit 1; }
wait_for 5 pgrep -P "$CONT" -x sleep || { echo "FAIL: no sleep under $CONT"; exit 1; }
CPID=$(pgrep -P "$CONT" -x sleep)
[ "$(readlink /proc/$CPID/ns/net)" != "$(readlink /proc/self/ns/net)" ] || { echo "FAIL: the container shares the host's netns"; exit 1; }
# the network between the container and slapd: a veth pair, one end in each namespace
in_ldapns ip link set ldap-c netns "$CPID"
in_container ip link set lo up
in_container ip addr add 192.0.2.2/24 dev ldap-c
in_container ip link set ldap-c up
wait_for 10 in_container ldapsearch -x -LLL -H ldap://192.0.2.1:3890/ -b dc=dir,dc=test uid=lduser1 dn &&
        pass "the container reaches slapd at 192.0.2.1:3890" ||
        { in_ldapns ip addr; in_container ip addr; echo "FAIL: the container does not reach slapd"; exit 1; }
# its sssd, inside it (the host's /var/lib/sss, /var/log/sssd and /run are not its)
nsenter -t "$CPID" -m -p -n -- sssd -i --logger=files -d 3 </dev/null >"$T/sssd.out" 2>&1 &
SSSD_NSENTER=$!
t0=${EPOCHREALTIME/./}
if wait_for 60 in_container getent passwd lduser1; then
        pass "sssd in the container answers (getent passwd lduser1 after $(ms_since "$t0") ms)"
else
        cat "$T/sssd.out"; diag; echo "FAIL: sssd in the container does not answer lduser1"; exit 1
fi
SSSD=$(pgrep -P "$SSSD_NSENTER" -x sssd) || { echo "FAIL: no sssd under nsenter $SSSD_NSENTER"; exit 1; }
[ ! -e /var/lib/sss/pipes/nss ] && pass "the host's /var/lib/sss has no nss pipe (the container's sssd is its own)" ||
        fail "the host's /var/lib/sss/pipes/nss exists"
[ -z "$(getent passwd lduser1 || true)" ] && pass "the host does not know lduser1" || fail "the host knows lduser1"

# --- nsid-idmapd ---
cat >"$T/nsid.conf" <<CONF
[idmapd]
cache-ttl = 600
negative-ttl = 30
request-timeout-ms = 3000
rescan-interval = 1
refresh-interval = 1
set-identifier = no
state-dir = $T/state
CONF
printf '[General]\nDomain = host.test\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n' >"$T/host-idmapd.conf"
"$bin" -f --config="$T/nsid.conf" --idmapd-conf="$T/host-idmapd.conf" --socket="$S" \
        2>"$T/daemon.log" &
DPID=$!
for _ in $(seq 100); do [ -S "$S" ] && ctl status >/dev/null && break; sleep 0.05; done
[ -S "$S" ] || { cat "$T/daemon.log"; echo "FAIL: daemon did not start"; exit 1; }
pass "daemon started (pid $DPID)"
P=$CPID

# --- 200 users and 50 groups spread over the directory, against getent in the container ---
users=$(seq 1 50 10000 | sed 's/^/lduser/')     # lduser1, lduser51, ... lduser9951
groups=$(seq 1 40 2000 | sed 's/^/ldgroup/')    # ldgroup1, ldgroup41, ... ldgroup1961
# shellcheck disable=SC2086
in_container getent passwd $users >"$T/base.passwd" || true
# shellcheck disable=SC2086
in_container getent group $groups >"$T/base.group" || true
nb=$(wc -l <"$T/base.passwd"); ngb=$(wc -l <"$T/base.group")
[ "$nb" = 200 ] && [ "$ngb" = 50 ] && pass "baseline: getent in the container knows the 200 users and 50 groups" ||
        fail "baseline: getent in the container gave $nb of 200 users, $ngb of 50 groups"
# (and the baseline is the directory's: uidNumber 200000+N, gidNumber 300000+M)
awk -F: '{ n = substr($1, 7); if ($3 != 200000 + n) bad++ } END { exit bad > 0 }' "$T/base.passwd" &&
        awk -F: '{ m = substr($1, 8); if ($3 != 300000 + m) bad++ } END { exit bad > 0 }' "$T/base.group" &&
        pass "baseline ids are the directory's" || fail "baseline ids differ from the directory's"
awk -F: -v p="$P" '{ print "lookup pid:" p " uid " $1 "@dir.test"; print "lookup pid:" p " user " $3 }' \
        "$T/base.passwd" >"$T/sample.req"
awk -F: -v p="$P" '{ print "lookup pid:" p " gid " $1 "@dir.test"; print "lookup pid:" p " group " $3 }' \
        "$T/base.group" >>"$T/sample.req"
# expected replies, in the same order
awk -F: '{ print "ok " $3 " "; print "ok " $1 "@dir.test " }' "$T/base.passwd" "$T/base.group" >"$T/sample.want"
pipelined "$T/sample.req" "$T/sample.got"
bad=$(python3 - "$T/sample.req" "$T/sample.want" "$T/sample.got" <<'PY'
import sys
req, want, got = (open(f).read().splitlines() for f in sys.argv[1:])
bad = [f"{r} -> '{g}', expected '{w}...'" for r, w, g in zip(req, want, got) if not g.startswith(w)]
bad += ["%d replies for %d requests" % (len(got), len(req))] if len(got) != len(req) else []
print("\n".join(bad[:10]))
PY
)
[ -z "$bad" ] && pass "$(wc -l <"$T/sample.req") lookups of 200 users and 50 groups, both directions, agree with getent in the container ($ms ms)" ||
        { fail "lookups differ from getent in the container:"; echo "$bad" >&2; diag; }
head -2 "$T/sample.got" | sed 's/^/  e.g. /'
expect "lookup pid:$P uid nosuchuser@dir.test" "negative"
expect "lookup pid:$P gid nosuchgroup@dir.test" "negative"
expect "lookup pid:$P user 299999" "negative"
expect "lookup pid:$P uid lduser1@other.test" "negative" # another domain: not this container's
expect "lookup host uid lduser1@host.test" "ok 65534 "   # the host knows no lduser1: its nobody
st=$(ctl status)
python3 - "${st#ok }" <<'PY' && pass "status: the container is answered by its name service, sources 'files sss'" || { fail "status: $st"; }
import json, sys
s = json.loads(sys.argv[1])
c = [n for n in s["namespaces"] if n["domain"] == "dir.test"]
assert len(c) == 1, c
c = c[0]
assert c["answered_by"] == "nss" and c["passwd_sources"] == "files sss" and c["group_sources"] == "files sss", c
assert not c.get("nss_error"), c
PY

# --- figures: 1,000 cold lookups, the same warm, getent for comparison ---
seq 7 10 10000 | sed "s/^/lookup pid:$P uid lduser/; s/\$/@dir.test/" >"$T/k.req"  # lduser7, 17, ... 9997
pipelined "$T/k.req" "$T/k.cold"
cold=$ms
pipelined "$T/k.req" "$T/k.warm"
warm=$ms
paste -d' ' <(seq 7 10 10000) "$T/k.cold" "$T/k.warm" >"$T/k.all"
nbad=$(awk '$2 != "ok" || $3 != 200000 + $1 || $5 != "resolved" ||
            $6 != "ok" || $7 != 200000 + $1 || $9 != "cache" { bad++ } END { print bad + 0 }' "$T/k.all")
[ "$nbad" = 0 ] && pass "1,000 cold lookups resolved and the same 1,000 answered from the cache, uid 200000+N each" ||
        { fail "$nbad of the 1,000 lookups wrong; e.g. $(awk '$2 != "ok" || $5 != "resolved" || $9 != "cache"' "$T/k.all" | head -3)"; diag; }
names=$(seq 7 10 10000 | sed 's/^/lduser/')
t0=${EPOCHREALTIME/./}
# shellcheck disable=SC2086
n=$(in_container getent passwd $names | wc -l) || true
gw=$(ms_since "$t0")
others=$(seq 3 10 10000 | sed 's/^/lduser/')
t0=${EPOCHREALTIME/./}
# shellcheck disable=SC2086
n2=$(in_container getent passwd $others | wc -l) || true
gc=$(ms_since "$t0")
[ "$n" = 1000 ] && [ "$n2" = 1000 ] || fail "getent in the container found $n and $n2 of 1,000 names"
# the daemon's own cost: 1,000 names it has not seen, which SSSD has just answered
seq 3 10 10000 | sed "s/^/lookup pid:$P uid lduser/; s/\$/@dir.test/" >"$T/o.req"
pipelined "$T/o.req" "$T/o.got"
ow=$ms
nbad=$(paste -d' ' <(seq 3 10 10000) "$T/o.got" | awk '$2 != "ok" || $3 != 200000 + $1 || $5 != "resolved" { bad++ } END { print bad + 0 }')
[ "$nbad" = 0 ] && pass "1,000 lookups of names SSSD has cached and the daemon has not: resolved, uid 200000+N each" ||
        fail "$nbad of 1,000 lookups (SSSD warm) wrong"
echo "figure: 1000 cold lookups (name->uid, one connection, pipelined; daemon and SSSD cold): $cold ms"
echo "figure: the same 1000 lookups warm (the daemon's cache): $warm ms"
echo "figure: getent passwd of the same 1000 names in the container, one call (SSSD warm): $gw ms"
echo "figure: getent passwd of 1000 other names in the container, one call (SSSD cold): $gc ms"
echo "figure: those 1000 other names through the daemon (daemon cold, SSSD warm): $ow ms"

# --- sssd hung, then stopped: new names fail within the request timeout, names already
#     cached are answered, the host keeps answering meanwhile; sssd back: answers again ---
# down_check WHAT REQUEST: REQUEST must fail (not "ok") within the request timeout (3 s, and
# 1 s of slack) while the host and a cached name answer within 1 s meanwhile
down_check() {
        local what=$1 req=$2 np r rms h hms c
        ( t=${EPOCHREALTIME/./}; r=$(ctl "$req"); echo "$r|$(ms_since "$t")" >"$T/down.new" ) &
        np=$!
        sleep 0.2
        t0=${EPOCHREALTIME/./}
        h=$(ctl "lookup host uid root@host.test")
        c=$(ctl "lookup pid:$P uid lduser7@dir.test")
        hms=$(ms_since "$t0")
        if [[ "$h" == "ok 0 "* && "$c" =~ ^ok\ 200007\ [0-9]+\ cache$ ]]; then
                [ "$hms" -lt 1000 ] && pass "$what: the host and a cached name answered in $hms ms meanwhile ('$h', '$c')" ||
                        fail "$what: the host and a cached name took $hms ms"
        else
                fail "$what: the host '$h', cached lduser7 '$c'"
        fi
        wait $np
        IFS='|' read -r r rms <"$T/down.new"
        case "$r" in
        ok*) fail "$what: '$req' answered: '$r'" ;;
        *) [ "$rms" -le 4000 ] && pass "$what: '$req' failed within the request timeout ($rms ms: '$r')" ||
                fail "$what: '$req' took $rms ms ('$r'; request timeout 3000 ms)" ;;
        esac
        DOWN_REPLY=$r
}
# hung: every sssd process stopped (SIGSTOP): libnss_sss's request waits (its own timeout
# is minutes); the daemon's deadline ends it
procs=$(sssd_procs)
[ "$(echo "$procs" | wc -w)" -ge 3 ] || fail "sssd's processes in the container: '$procs'"
# shellcheck disable=SC2086
kill -STOP $procs
down_check "sssd hung" "lookup pid:$P uid lduser9991@dir.test"
case "$DOWN_REPLY" in error*) pass "sssd hung: an error, not a negative answer ($DOWN_REPLY)" ;;
*) fail "sssd hung: '$DOWN_REPLY', expected an error" ;; esac
# shellcheck disable=SC2086
kill -CONT $procs
# (nsenter, sssd's parent, stops itself when it sees its child stopped: wake it too)
kill -CONT "$SSSD_NSENTER"
wait_for 10 in_container getent passwd lduser9981 || fail "sssd did not come back after SIGCONT"
expect "lookup pid:$P uid lduser9991@dir.test" "ok 209991 " # (the timeout was not cached)
# stopped
kill -TERM "$SSSD"
stopped() { ! kill -0 "$SSSD_NSENTER" 2>/dev/null && [ -z "$(sssd_procs)" ]; }
if wait_for 15 stopped; then
        pass "sssd stopped"
        wait "$SSSD_NSENTER" 2>/dev/null || true
        SSSD_NSENTER=
else
        fail "sssd still running: $(sssd_procs) (nsenter $SSSD_NSENTER: $(ps -o stat= -p "$SSSD_NSENTER"))"
fi
down_check "sssd stopped" "lookup pid:$P uid lduser9999@dir.test"
down_check "sssd stopped" "lookup pid:$P user 209998"
DOWN_UID=$DOWN_REPLY
st=$(ctl status)
echo "  status with sssd stopped: $(python3 -c '
import json, sys
s = json.loads(sys.argv[1][3:])
c = [n for n in s["namespaces"] if n["domain"] == "dir.test"][0]
print({k: c.get(k) for k in ("answered_by", "passwd_sources", "nss_error", "cache_entries")})' "$st")"
# sssd back: the name that failed is answered (a failure is not cached); the uid whose
# lookup came back "negative" stays so until negative-ttl (libnfsidmap's nss_uid_to_name()
# turns every getpwuid_r() failure into -ENOENT: rpc.idmapd there answers the same)
nsenter -t "$CPID" -m -p -n -- sssd -i --logger=files -d 3 </dev/null >>"$T/sssd.out" 2>&1 &
SSSD_NSENTER=$!
wait_for 30 in_container getent passwd lduser9989 && pass "sssd restarted" || fail "sssd did not restart"
expect "lookup pid:$P uid lduser9999@dir.test" "ok 209999 "
r=$(ctl "lookup pid:$P user 209998")
echo "  note: uid 209998 after sssd's restart: '$r' (during the outage: '$DOWN_UID')"
st=$(ctl status)
echo "  status after sssd's restart: nss_error $(python3 -c '
import json, sys
s = json.loads(sys.argv[1][3:])
print(repr([n for n in s["namespaces"] if n["domain"] == "dir.test"][0].get("nss_error")))' "$st")"
kill -0 "$DPID" && pass "the daemon is up" || fail "the daemon died"
agents() { # nsid-nss-query processes in the container's pid namespace (where the daemon runs them)
        local p n=0 ns
        ns=$(readlink "/proc/$CPID/ns/pid")
        for p in $(pgrep -x nsid-nss-query || true); do
                # (a killed agent stays a zombie here: the container's pid 1 is a sleep
                # that reaps nothing, where a real init would)
                [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
                [ "$(readlink "/proc/$p/ns/pid" 2>/dev/null)" = "$ns" ] && n=$((n + 1))
        done
        echo $n
}
a=$(agents)
agents_diag() {
        echo "  container: pid ns $(readlink "/proc/$CPID/ns/pid"), net ns $(readlink "/proc/$CPID/ns/net")"
        for p in $(pgrep -x nsid-nss-query || true); do
                echo "  $(ps -o pid=,ppid=,user=,lstart=,args= -p "$p") $(readlink "/proc/$p/ns/pid") $(readlink "/proc/$p/ns/net")"
        done
}
[ "$a" = 1 ] && pass "one nsid-nss-query in the container (in its pid namespace)" || { fail "$a nsid-nss-query in the container"; agents_diag; }
# --- a second container answered by nslcd (nss-pam-ldapd) ---
if [ "$have_nslcd" = 1 ]; then
        N="$T/n"
        mkdir -p "$N"
        printf 'passwd: files ldap\ngroup: files ldap\nshadow: files\nhosts: files\n' >"$N/nsswitch.conf"
        cp "$C/idmapd.conf" "$N/idmapd.conf"
        printf 'uid nslcd\ngid nslcd\nuri ldap://198.51.100.1:3890/\nbase dc=dir,dc=test\n' >"$N/nslcd.conf"
        chmod 640 "$N/nslcd.conf"; chgrp nslcd "$N/nslcd.conf"
        unshare -p -f --kill-child -- unshare -m -n --propagation private sh -c "
                mount --bind '$N/nsswitch.conf' /etc/nsswitch.conf &&
                mount --bind '$N/idmapd.conf' /etc/idmapd.conf &&
                { [ -e /etc/nslcd.conf ] || : > /etc/nslcd.conf; } && mount --bind '$N/nslcd.conf' /etc/nslcd.conf &&
                mount -t tmpfs -o mode=755 nsid-run /run &&
                mkdir -p /run/nslcd && chown nslcd:nslcd /run/nslcd &&
                echo \$\$ >'$T/ready/n' && exec sleep 1000" </dev/null >"$T/n.out" 2>&1 &
        NCONT=$!
        wait_for 10 test -s "$T/ready/n" || { cat "$T/n.out"; echo "FAIL: the nslcd container did not start"; exit 1; }
        wait_for 5 pgrep -P "$NCONT" -x sleep || { echo "FAIL: no sleep under $NCONT"; exit 1; }
        NPID=$(pgrep -P "$NCONT" -x sleep)
        in_n() { nsenter -t "$NPID" -m -p -n -- "$@"; }
        in_ldapns ip link set ldap-n netns "$NPID"
        in_n ip link set lo up
        in_n ip addr add 198.51.100.2/24 dev ldap-n
        in_n ip link set ldap-n up
        # (-d: in the foreground, its debug messages; killed with the container's pid 1)
        nsenter -t "$NPID" -m -p -n -- nslcd -d </dev/null >"$T/nslcd.out" 2>&1 &
        if wait_for 60 in_n getent passwd lduser2; then
                pass "nslcd in the second container answers (getent passwd lduser2)"
                nusers=$(seq 2 100 10000 | sed 's/^/lduser/')   # 100 users
                ngroups=$(seq 2 100 2000 | sed 's/^/ldgroup/')  # 20 groups
                # shellcheck disable=SC2086
                in_n getent passwd $nusers >"$T/n.passwd" || true
                # shellcheck disable=SC2086
                in_n getent group $ngroups >"$T/n.group" || true
                if [ "$(wc -l <"$T/n.passwd")" = 100 ] && [ "$(wc -l <"$T/n.group")" = 20 ]; then
                        awk -F: -v p="$NPID" '{ print "lookup pid:" p " uid " $1 "@dir.test"; print "lookup pid:" p " user " $3 }' \
                                "$T/n.passwd" >"$T/n.req"
                        awk -F: -v p="$NPID" '{ print "lookup pid:" p " gid " $1 "@dir.test"; print "lookup pid:" p " group " $3 }' \
                                "$T/n.group" >>"$T/n.req"
                        awk -F: '{ print "ok " $3 " "; print "ok " $1 "@dir.test " }' "$T/n.passwd" "$T/n.group" >"$T/n.want"
                        pipelined "$T/n.req" "$T/n.got"
                        nbad=$(paste -d'|' "$T/n.want" "$T/n.got" | awk -F'|' 'index($2, $1) != 1' | wc -l)
                        [ "$nbad" = 0 ] && [ "$(wc -l <"$T/n.got")" = 240 ] &&
                                pass "nslcd container: 240 lookups of 100 users and 20 groups, both directions, agree with its getent ($ms ms)" ||
                                { fail "nslcd container: $nbad of $(wc -l <"$T/n.got") replies differ from getent"; paste -d'|' "$T/n.req" "$T/n.want" "$T/n.got" | head -5; }
                        nst=$(ctl status)
                        python3 -c '
import json, sys
s = json.loads(sys.argv[1][3:])
n = [x for x in s["namespaces"] if x.get("netns") == int(sys.argv[2])]
sys.exit(0 if n and n[0].get("answered_by") == "nss" and n[0].get("passwd_sources") == "files ldap" else 1)' \
                                "$nst" "$(readlink /proc/$NPID/ns/net | tr -dc 0-9)" &&
                                pass "status: the nslcd container is answered by its name service, sources \"files ldap\"" ||
                                fail "status does not say the nslcd container is answered by nss with files ldap"
                else
                        fail "getent in the nslcd container knows $(wc -l <"$T/n.passwd") of 100 users, $(wc -l <"$T/n.group") of 20 groups"
                fi
        else
                tail -20 "$T/nslcd.out"; fail "nslcd in the second container does not answer lduser2"
        fi
else
        echo "skip: nslcd or libnss-ldapd not installed (scripts/install-deps all): no nslcd container"
fi

echo "--- daemon log lines about the container's name service:"
grep -E "netns:\[$(readlink /proc/$CPID/ns/net | tr -dc 0-9)\]" "$T/daemon.log" | tail -n 15 || true
kill -TERM "$DPID"; wait "$DPID" || true
DPID=
# (the agent dies with its middle process, which dies with the daemon: a moment later)
for _ in $(seq 50); do a=$(agents); [ "$a" = 0 ] && break; sleep 0.1; done
[ "$a" = 0 ] && pass "no nsid-nss-query left in the container once the daemon stopped" ||
        { fail "$a nsid-nss-query left in the container"; agents_diag; }
echo "$fails failure(s)"
[ $fails = 0 ]
