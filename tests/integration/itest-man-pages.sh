#!/bin/bash
# The man pages (doc/*.[1-8]), as installed: each renders with no groff or man warning, and
# their footers agree (issue #32: "man page footers differ"): the title line names the
# page's own name and section and "nsid VERSION" of this tree (CMakeLists.txt's project()),
# with a date, and the manual's name that section's pages share.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v man >/dev/null || { echo "SKIP: man missing (apt install man-db)"; exit 77; }
version=$(sed -n 's/^project(nsid VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
n=0 failures=0
check() { local d=$1; shift; n=$((n + 1)); if "$@"; then echo "ok $n - $d"; else failures=$((failures + 1)); echo "not ok $n - $d"; fi; }
declare -A manual
for p in "$src"/doc/*.[1-8]; do
        b=$(basename "$p") sec=${p##*.} name=${b%.*}
        th=$(grep -m1 '^\.TH ' "$p")
        # .TH NAME SECTION "DATE" "SOURCE" "MANUAL"
        re="^\\.TH ([^ ]+) ([1-8]) \"([0-9]{4}-[0-9]{2}-[0-9]{2})\" \"nsid $version\" \"([^\"]+)\"\$"
        if [[ "$th" =~ $re ]] && [ "${BASH_REMATCH[1]}" = "$(echo "$name" | tr a-z A-Z)" ] &&
           [ "${BASH_REMATCH[2]}" = "$sec" ]; then
                m=${BASH_REMATCH[4]}
                check "$b: .TH names it, its section, a date and nsid $version" true
                if [ -z "${manual[$sec]:-}" ]; then manual[$sec]=$m; fi
                check "$b: the manual of section $sec is \"${manual[$sec]}\" as for the others" [ "$m" = "${manual[$sec]}" ]
        else
                check "$b: .TH '$th' is 'NAME SECTION \"DATE\" \"nsid $version\" \"MANUAL\"'" false
        fi
        w=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$p" 2>&1 >/dev/null)
        check "$b renders without warnings" [ -z "$w" ]
        [ -z "$w" ] || echo "$w" | head -5 | sed 's/^/# /'
done
echo "1..$n"
[ "$failures" = 0 ]
