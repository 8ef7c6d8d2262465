#!/bin/bash
# lab-run self-test: wedge the guest. Stopping our parent (the guest-side `timeout`) means the
# guest never reaches its own end; only the host-side timeout can end the run.
. "$LAB_LIB/lab.sh"
check "about to hang" true
kill -STOP "$PPID"
sleep 100000
