#!/bin/bash
# abi-symbols: libnsid's ABI is what its headers say and no more (issue 30).
#   - libnsid.sym lists, by name, exactly the functions include/nsid/*.h declares in node
#     LIBNSID_0.1, and exactly those include-private/nsid/*.h declares in NSID_PRIVATE;
#   - the built libnsid.so.0 exports each of them in that node, and nothing else;
#   - no installed header includes a private one.
# usage: check-symbols.sh SOURCE_DIR LIBNSID_SO
set -u
src=$1 so=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# a function declaration: a line that starts with its return type and names nsid_x( (the
# headers' style: one declaration starts on one line, comments start with " *")
declared() {
  cat "$@" | grep -E '^[A-Za-z_][^(]*[ *]nsid_[a-z0-9_]+\(' | grep -vE '^(typedef|#)' |
    grep -oE '\bnsid_[a-z0-9_]+\(' | tr -d '(' | sort -u
}
node() { # the names in version node $1 of libnsid.sym
  awk -v n="$1" '$1 == n && $2 == "{" {on = 1; next} on && /^}/ {on = 0} on' "$src/libnsid/libnsid.sym" |
    grep -oE '^[[:space:]]+nsid_[a-z0-9_]+;' | tr -d ' \t;' | sort -u
}
diffsets() { # label, want (file), have (file)
  local missing extra
  missing=$(comm -23 "$2" "$3" | xargs)
  extra=$(comm -13 "$2" "$3" | xargs)
  [ -z "$missing" ] || bad "$1: missing: $missing"
  [ -z "$extra" ] || bad "$1: not declared there: $extra"
}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

declared "$src"/libnsid/include/nsid/*.h > "$t/pub"
declared "$src"/libnsid/include-private/nsid/*.h > "$t/priv"
node LIBNSID_0.1 > "$t/sym-pub"
node NSID_PRIVATE > "$t/sym-priv"
[ -s "$t/pub" ] && [ -s "$t/priv" ] || bad "no declarations found in the headers"
diffsets "libnsid.sym LIBNSID_0.1 against include/nsid/" "$t/pub" "$t/sym-pub"
diffsets "libnsid.sym NSID_PRIVATE against include-private/nsid/" "$t/priv" "$t/sym-priv"
both=$(comm -12 "$t/pub" "$t/priv" | xargs)
[ -z "$both" ] || bad "declared public and private: $both"

# what the library exports, in which node
nm -D --defined-only --with-symbol-versions "$so" | awk '$2 ~ /^[TDBRWVi]$/ {print $3}' |
  grep -v -E '^(LIBNSID_0\.1|NSID_PRIVATE)@@' > "$t/exports"
grep -E '@@?LIBNSID_0\.1$' "$t/exports" | sed 's/@.*//' | sort -u > "$t/so-pub"
grep -E '@@?NSID_PRIVATE$' "$t/exports" | sed 's/@.*//' | sort -u > "$t/so-priv"
other=$(grep -v -E '@@?(LIBNSID_0\.1|NSID_PRIVATE)$' "$t/exports" | xargs)
[ -z "$other" ] || bad "exported outside both nodes: $other"
diffsets "libnsid.so.0 node LIBNSID_0.1" "$t/pub" "$t/so-pub"
diffsets "libnsid.so.0 node NSID_PRIVATE" "$t/priv" "$t/so-priv"

inc=$(grep -lE '#include <nsid/('"$(ls "$src"/libnsid/include-private/nsid | sed 's/\.h$//' | paste -sd'|')"')\.h>' \
        "$src"/libnsid/include/nsid/*.h | xargs)
[ -z "$inc" ] || bad "installed headers include private ones: $inc"

echo "libnsid.so.0: $(wc -l < "$t/so-pub") functions in LIBNSID_0.1 (include/nsid/), $(wc -l < "$t/so-priv") in NSID_PRIVATE (include-private/nsid/)"
exit $fail
