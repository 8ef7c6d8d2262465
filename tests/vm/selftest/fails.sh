#!/bin/bash
# lab-run self-test: a scenario with one failing check.
. "$LAB_LIB/lab.sh"
check "this check passes" true
check "this check fails on purpose" false
lab_done
