# lib.sh: shell helpers of the integration tests (bash; source it, it defines functions only).
#
#   registry_problems         read `nsidctl --json doctor` on stdin; print what it finds wrong
#                             with the identity registry, one "severity check: message" line
#                             each, or "no registry finding" when it said nothing about it;
#                             nothing when the registry is ok.

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
