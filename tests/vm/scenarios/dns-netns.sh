#!/bin/bash
# dns-netns: the dns_resolver upcall answered in the requester's network namespace, through
# the kernel's real request-key path and nsid's rule (nsid-dns.conf, as the package installs
# it). The host, c1 and c2 each have their own /etc/hosts naming svc.lab.example; c1 runs a
# DNS server on its own loopback (127.0.0.1:53, a stub that answers one name) and its
# resolv.conf points there; c2's resolv.conf points to its own loopback, where nothing
# listens; the host's to an address nothing answers.
#   - each of host, c1, c2 gets its own hosts file's address for svc.lab.example;
#   - only.dns.example: c1 gets the stub's answer (the query went out from c1's netns: the
#     stub saw it); c2 and the host get no answer, and the stub saw no query of theirs.
# lab-test: 6.1 6.12
. "$LAB_LIB/lab.sh"
. "$LAB_LIB/nfs.sh"
. "$LAB_LIB/container.sh"
W=/run/nsid-lab/dns
mkdir -p "$W"
LOGS=$LAB_OUT; [ -d "$LOGS" ] && [ -w "$LOGS" ] || LOGS=$W

check "bridge, veth, dns_resolver loaded" lab_modprobe bridge veth dns_resolver
lab_bridge_up
RULE=/etc/request-key.d/nsid-dns.conf
sed "s|@NSID_IDMAP_PATH@|$LAB_BUILD/idmap/nsid-idmap --log-file=$LOGS/nsid-idmap.log|" \
  "$LAB_SRC/idmap/nsid-dns.conf.in" > "$RULE"
check "nsid's dns_resolver rule installed (the package's nsid-dns.conf)" \
  grep -q "^create[[:space:]]*dns_resolver[[:space:]]*\*[[:space:]]*\*[[:space:]]*$LAB_BUILD/idmap/nsid-idmap .*dns %k" "$RULE"
check "no other dns_resolver rule matches first" \
  sh -c "! grep -lE '^create[[:space:]]+dns_resolver' /etc/request-key.d/*.conf | grep -v nsid-dns.conf"
# keyutils' own line in /etc/request-key.conf (key.dns_resolver) is less specific than none:
# request-key takes the best match over request-key.d and request-key.conf alike; both are
# "* *", and request-key.d is read first, so nsid's wins (the helper's log proves it below).

# the host's files (the guest's root is an overlay: only the guest sees this)
echo "192.0.2.10 svc.lab.example" >> /etc/hosts
printf 'nameserver 192.0.2.53\noptions timeout:1 attempts:1\n' > "$W/resolv-host"
mount --bind "$W/resolv-host" /etc/resolv.conf

for k in 1 2; do
  check "c$k created" container_create "c$k" || bail "no c$k"
  { cat /etc/hosts; echo "192.0.2.1$k svc.lab.example"; } | grep -v '192.0.2.10 svc' > "$W/hosts-c$k"
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' > "$W/resolv-c$k"
  check "c$k: its own /etc/hosts and /etc/resolv.conf" container_exec "c$k" sh -c \
    "mount --bind '$W/hosts-c$k' /etc/hosts && mount --bind '$W/resolv-c$k' /etc/resolv.conf"
done

cat > "$W/stub.py" <<'EOF'
# A DNS server that answers one A record (only.dns.example -> 198.51.100.7) and logs each
# query's name; anything else gets NXDOMAIN.
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
open(sys.argv[1] + ".ready", "w").close()
while True:
    q, peer = s.recvfrom(512)
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace")); i += 1 + q[i]
    name, qtype = ".".join(labels).lower(), struct.unpack(">H", q[i + 1:i + 3])[0]
    with open(sys.argv[1], "a") as f:
        f.write("%s %d\n" % (name, qtype))
    question = q[12:i + 5]
    if name == "only.dns.example" and qtype == 1:
        hdr = struct.pack(">HHHHHH", struct.unpack(">H", q[:2])[0], 0x8180, 1, 1, 0, 0)
        ans = struct.pack(">HHHIH", 0xC00C, 1, 1, 60, 4) + socket.inet_aton("198.51.100.7")
    else:
        hdr = struct.pack(">HHHHHH", struct.unpack(">H", q[:2])[0], 0x8183, 1, 0, 0, 0)
        ans = b""
    s.sendto(hdr + question + ans, peer)
EOF
container_exec c1 python3 "$W/stub.py" "$W/queries" </dev/null >/dev/null 2>"$W/stub.err" &
STUB=$!
check "c1: its DNS server listens on its own loopback" wait_for 10 test -e "$W/queries.ready"

resolve() { # where(host|c1|c2) name: the dns_resolver key's payload, or "-" with the error
  local out
  local cmd='k=$(keyctl request2 dns_resolver "$1" "" @s) && keyctl pipe "$k"'
  if [ "$1" = host ]; then
    out=$(timeout 30 keyctl session - sh -c "$cmd" _ "$2" 2>&1)
  else
    out=$(container_exec "$1" timeout 30 keyctl session - sh -c "$cmd" _ "$2" 2>&1)
  fi
  out=$(printf '%s\n' "$out" | grep -v '^Joined' | tr -d '\0')
  case "$out" in [0-9]*.[0-9]*.[0-9]*.[0-9]*) echo "$out" ;; *) echo "- ${out//$'\n'/ }" ;; esac
}

h=$(resolve host svc.lab.example); a=$(resolve c1 svc.lab.example); b=$(resolve c2 svc.lab.example)
check_eq "svc.lab.example: host, c1, c2 each their own hosts file's address" \
  "192.0.2.10 192.0.2.11 192.0.2.12" "$h $a $b"
a=$(resolve c1 only.dns.example)
check_eq "only.dns.example from c1: its DNS server's answer" 198.51.100.7 "$a"
check "c1's DNS server saw the query (sent from c1's netns)" grep -q '^only.dns.example 1$' "$W/queries"
nq=$(grep -c '^only.dns.example' "$W/queries")
b=$(resolve c2 only.dns.example); h=$(resolve host only.dns.example)
check "only.dns.example from c2: no answer (nothing listens in its netns) [$b]" test "${b%% *}" = "-"
check "only.dns.example from the host: no answer [$h]" test "${h%% *}" = "-"
check_eq "c1's DNS server saw no query of c2's or the host's" "$nq" "$(grep -c '^only.dns.example' "$W/queries")"
check "nsid-idmap answered the upcalls (its log)" grep -q "svc.lab.example" "$LOGS/nsid-idmap.log"

kill "$STUB" 2>/dev/null
containers_destroy_all
umount /etc/resolv.conf
rm -f "$RULE"
lab_done
