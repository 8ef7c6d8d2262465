# demo-idmap.sh: fixtures for the ID mapping half of `make demo` (tests/vm/demo-guest.sh)
# (bash, in the guest, as root; source lab.sh, nfs.sh, container.sh and idmapd-server.sh
# first; the knfsd of nfs.sh must be running).
#
#   demo_users_file FILE BASE 'name=id ...'   FILE (passwd or group) is BASE with each name's
#                                  line replaced (or appended) so that it has that id
#   demo_idmap_on SRV_PASSWD SRV_GROUP
#                                  name mapping on for the NFS client and knfsd (the nfsd
#                                  parameter is read per request, the client's at mount
#                                  time); knfsd's channels answered by rpc.idmapd -S running
#                                  in a private mount namespace where SRV_PASSWD/SRV_GROUP
#                                  are /etc/passwd and /etc/group: the server's user
#                                  database, which differs from the guest's (the client host's)
#   demo_rk_rule on|off            nfs-common's request-key rule for id_resolver present
#                                  (/usr/sbin/nfsidmap, as Debian ships it) or removed
#   demo_keys_clear                empty the kernel's global .id_resolver key cache
#   demo_client_rpcidmapd KEY PASSWD GROUP LOG
#                                  a container with its own passwd/group and nfs-utils'
#                                  rpc.idmapd -f -C (stderr to LOG) answering the idmap pipes of
#                                  its netns (rpc_pipefs mounted inside; the daemon reads the
#                                  container's passwd); mount after it (container_mount): the
#                                  lab saw it not answer for a client created before it ran;
#                                  pid in $LAB_CROOT/KEY/rpc.idmapd.pid
#   demo_rpcidmapd_stop KEY        SIGTERM it and wait until it is gone
#   demo_owners KEY FILE...        "uid:gid" of each file under /mnt/nfs, as stat shows it
#                                  inside the container (space separated; "?" if stat failed)
#   demo_nsidd_start CONF_DIR LOG  nsid-idmapd (one daemon, dm_start: DM_PID) with
#                                  isolate-keys = yes, leaving the initial netns (knfsd,
#                                  rpc.idmapd -S) alone; then dm_ready
#   demo_nsidd_register KEY LOG    tell it about the container's netns at once (it also finds
#                                  it by its scans); waits until its LOG says it serves an
#                                  idmap pipe there
DEMO_RK_RULE=/etc/request-key.d/id_resolver.conf
DEMO_RK_SAVED=/run/nsid-lab/id_resolver.conf.demo

demo_users_file() { # file base 'name=id ...'
  # one awk for the whole spec (a grep per name was a fork per user: seconds under TCG for
  # kernel-keyns's 55 users x 6 files)
  local out=$1 base=$2 spec=$3 text
  text=$(awk -v spec="$spec" -v grp="$([[ $out == *group* ]] && echo 1)" '
    BEGIN { n = split(spec, kv, " ")
            for (i = 1; i <= n; i++) { split(kv[i], p, "="); name[i] = p[1]; id[i] = p[2]; drop[p[1]] = 1 } }
    { split($0, f, ":"); if (!(f[1] in drop)) print }
    END { for (i = 1; i <= n; i++)
            if (grp) print name[i] ":x:" id[i] ":"
            else print name[i] ":x:" id[i] ":" id[i] "::/nonexistent:/usr/sbin/nologin" }' "$base") || return 1
  printf '%s\n' "$text" > "$out"   # (base may be out itself: read whole before the write)
}

# demo_users_setup DIR SPEC_SERVER SPEC_C1 [SPEC_C2...]: the guest's /etc/passwd and
# /etc/group take the server's users (SPEC_SERVER; kept as DIR/passwd-server, group-server),
# and DIR/passwd-K, DIR/group-K are container K's (its SPEC over the same files).
demo_users_setup() {
  local d=$1 srv=$2 k=0 spec
  shift 2
  demo_users_file /etc/passwd /etc/passwd "$srv" && demo_users_file /etc/group /etc/group "$srv" &&
    cp /etc/passwd "$d/passwd-server" && cp /etc/group "$d/group-server" || return 1
  for spec in "$@"; do
    k=$((k + 1))
    demo_users_file "$d/passwd-$k" /etc/passwd "$spec" &&
      demo_users_file "$d/group-$k" /etc/group "$spec" || return 1
  done
}

demo_idmap_on() { # server passwd, server group
  unshare -m --propagation private sh -ec "
    mount --bind '$1' /etc/passwd
    mount --bind '$2' /etc/group
    exec rpc.idmapd -S -p /var/lib/nfs/rpc_pipefs" || return 1
  echo N > /sys/module/nfs/parameters/nfs4_disable_idmapping || return 1
  echo N > /sys/module/nfsd/parameters/nfs4_disable_idmapping || return 1
  local c now=$EPOCHSECONDS
  for c in nfs4.idtoname nfs4.nametoid; do echo "$now" > "/proc/net/rpc/$c/flush"; done
  return 0
}

demo_rk_rule() {
  mkdir -p "${DEMO_RK_SAVED%/*}"
  case "$1" in
    on) [ -f "$DEMO_RK_RULE" ] || cp "$DEMO_RK_SAVED" "$DEMO_RK_RULE" || return 1
        grep -q '^create[[:space:]]*id_resolver.*nfsidmap' "$DEMO_RK_RULE" ;;
    off) [ -f "$DEMO_RK_RULE" ] && { cp "$DEMO_RK_RULE" "$DEMO_RK_SAVED"; rm -f "$DEMO_RK_RULE"; }
         ! grep -qs id_resolver /etc/request-key.conf /etc/request-key.d/* ;;
  esac
}

demo_keys_clear() { # (unlinked keys leave /proc/keys when the key GC has run)
  nfsidmap -c 2>/dev/null
  wait_for 5 sh -c "! grep -qE ' id_(resolv|legacy) ' /proc/keys"
}

demo_client_rpcidmapd() { # key passwd group log
  local key=$1 pid
  container_create "$key" --passwd "$2" --group "$3" || return 1
  container_exec "$key" mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs || return 1
  # nsenter execs the daemon: $! is rpc.idmapd itself (its stdout and stderr are not ours,
  # so check's $(...) returns at once)
  nsenter -t "$(container_pid "$key")" -m -u -n rpc.idmapd -f -C -p /var/lib/nfs/rpc_pipefs \
    </dev/null >/dev/null 2>>"$4" &
  pid=$!
  echo "$pid" > "$LAB_CROOT/$key/rpc.idmapd.pid"
  # up once it watches the pipe directory (inotify) for the client a mount creates
  wait_for 10 sh -c "ls -l /proc/$pid/fd 2>/dev/null | grep -q inotify"
}

demo_rpcidmapd_stop() {
  local f="$LAB_CROOT/$1/rpc.idmapd.pid" pid
  [ -f "$f" ] || return 0
  pid=$(<"$f")
  kill "$pid" 2>/dev/null
  wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || return 1
  rm -f "$f"
}

demo_owners() {
  local key=$1 f o out=""; shift
  for f in "$@"; do
    o=$(container_exec "$key" timeout 20 stat -c %u:%g "/mnt/nfs/$f" 2>/dev/null) || o="?"
    out="$out${out:+ }$o"
  done
  echo "$out"
}

demo_nsidd_start() { # dir log (not under check: dm_start sets DM_PID in this shell)
  cat > "$1/nsid.conf" <<CONF
[idmapd]
host-pipes = no
set-identifier = no
isolate-keys = yes
rescan-interval = 2
state-dir = $1/state
CONF
  dm_start "$1/nsid.conf" "$2"
}

demo_nsidd_register() { # key daemon-log
  local key=$1 ino i
  "$DM_BIN" --socket="$DM_SOCK" --ctl="register $(container_pid "$key")" >/dev/null || return 1
  ino=$(netns_ino "$key")
  # (it may have found the netns already by its startup scan)
  for i in {1..50}; do
    grep -q "netns:\[$ino\].*serving clnt.*/idmap" "$2" && return 0
    sleep 0.2
  done
  echo "nsid-idmapd serves no idmap pipe in netns $ino" >&2
  return 1
}
