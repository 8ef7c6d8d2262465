# slapd.sh: the configuration of a test directory served by Debian's slapd (bash; sourced by
# the lab scenarios idmapd-nss and bench-idmapd-sssd, and by tests/integration's
# itest-idmapd-sssd on the host).
#   slapd_conf DIR   write DIR/slapd.conf: the core, cosine and nis schemas, an mdb database
#                    in DIR/ldapdb (made, 0700) for dc=dir,dc=test, no size limit, indexes
#                    on the attributes NSS lookups use; its pid file DIR/slapd.pid
#   sssd_conf DIR URI  write DIR/sssd.conf (0600; DIR/conf.d made): SSSD's NSS responder with
#                    one LDAP domain "dir" (rfc2307) at URI for dc=dir,dc=test
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

sssd_conf() {
  local d=$1 uri=$2
  mkdir -p "$d/conf.d" || return 1
  cat > "$d/sssd.conf" <<CONF
[sssd]
services = nss
domains = dir

[nss]
# (the defaults; stated: the figures of the tests depend on them)
memcache_timeout = 300

[domain/dir]
id_provider = ldap
auth_provider = none
ldap_uri = $uri
ldap_search_base = dc=dir,dc=test
ldap_schema = rfc2307
cache_credentials = false
enumerate = false
CONF
  chmod 600 "$d/sssd.conf"
}
