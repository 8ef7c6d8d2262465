# slapd.sh: the configuration of a test directory served by Debian's slapd (bash; sourced by
# the lab scenarios idmapd-nss and bench-idmapd-sssd, and by tests/integration's
# itest-idmapd-sssd on the host).
#   slapd_conf DIR   write DIR/slapd.conf: the core, cosine and nis schemas, an mdb database
#                    in DIR/ldapdb (made, 0700) for dc=dir,dc=test, no size limit, indexes
#                    on the attributes NSS lookups use; its pid file DIR/slapd.pid
slapd_conf() {
  local d=$1
  mkdir -p -m 700 "$d/ldapdb" || return 1
  cat > "$d/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
pidfile $d/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
sizelimit unlimited
database mdb
maxsize 268435456
suffix "dc=dir,dc=test"
rootdn "cn=admin,dc=dir,dc=test"
directory $d/ldapdb
index objectClass eq
index uid,uidNumber,gidNumber,memberUid,cn eq
CONF
}
