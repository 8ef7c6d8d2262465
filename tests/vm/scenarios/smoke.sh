#!/bin/bash
# smoke: the lab boots, sees the repo and build tree, and can load nfs/nfsd.
. "$LAB_LIB/lab.sh"
check "repo visible in the guest" test -f "$LAB_SRC/tests/vm/lab-run"
check "build tree visible in the guest" test -d "$LAB_BUILD"
check "root overlay is writable" touch /etc/lab-write-test
check "modprobe nfsd nfsv4 (unless already there or built in)" lab_modprobe nfsd nfsv4
check "result share writable" touch "$LAB_OUT/smoke-written"
note "kernel $(uname -r) uptime $(cut -d' ' -f1 /proc/uptime)"
lab_done
