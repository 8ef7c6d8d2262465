#!/bin/bash
# The nsid-idmapd soak (bench/soak/idmapd-soak.sh, `make bench` runs it for 10 minutes) for
# 30 seconds: netns churn, control-socket lookups and the real request-key path through
# nsid-idmap's fast path at once; no wrong answer, fds and threads back where they were,
# RSS flat after warm-up, clean exit. See the script for what each check means.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
SOAK_SECONDS=${SOAK_SECONDS:-30} SOAK_SAMPLE=${SOAK_SAMPLE:-3} exec "$here/../../bench/soak/idmapd-soak.sh" "$build"
