# lib.sh: shell helpers of the integration tests (bash; source it, it defines functions only).
#
#   wait_for SECONDS CMD...   run CMD (a shell function too) every 0.05 s until it succeeds:
#                             0, or 1 once SECONDS have passed without (CMD's output is
#                             dropped). The lab's wait_for (tests/vm/lib/lab.sh) is the same.
#   registry_problems         read `nsidctl --json doctor` on stdin; print what it finds wrong
#                             with the identity registry, one "severity check: message" line
#                             each, or "no registry finding" when it said nothing about it;
#                             nothing when the registry is ok.

wait_for() {
        local now=${EPOCHREALTIME/./} deadline
        deadline=$((now + $1 * 1000000))
        shift
        until "$@" >/dev/null 2>&1; do
                now=${EPOCHREALTIME/./}
                [ "$now" -ge "$deadline" ] && return 1
                sleep 0.05
        done
        return 0
}

registry_problems() {
        "$(command -v /usr/bin/python3 || command -v python3)" -c '
import json, sys
f = [f for f in json.load(sys.stdin)["findings"] if f["check"].startswith("registry")]
for x in f:
    if x["severity"] != "ok":
        print(x["severity"], x["check"] + ":", x["message"])
if not f:
    print("no registry finding")'
}
