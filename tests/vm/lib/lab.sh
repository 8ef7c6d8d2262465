# lab.sh: the check helpers every scenario sources first (bash, in the guest).
#   check "description" cmd args...   runs cmd; prints "ok N - description" or "not ok N - ..."
#   check_eq "description" EXPECTED ACTUAL
#   note "text"                        a "# text" line (TAP diagnostic), also for findings
#   finding KEY "text"                 "# finding KEY: text", collected in /lab-out/findings.txt
#   lab_done                           prints "N passed, N failed" and exits 0/1
#   lab_modprobe MODULE...             modprobe -a the modules that are not there yet
#   lab_reboot                         reboot the guest for real (a scenario with "# lab-boots:"
#                                      and systemd): the scenario runs again from its top with
#                                      LAB_BOOT one higher, its counts carried over
# Output goes to stdout (the runner captures it as result.tap).
LAB_N=0 LAB_PASS=0 LAB_FAIL=0
LAB_BOOT=${LAB_BOOT:-1}
# after lab_reboot: the counts of the boots before
if [ "$LAB_BOOT" -gt 1 ] && [ -r "${LAB_OUT:-/lab-out}/lab-counts" ]; then
  . "${LAB_OUT:-/lab-out}/lab-counts"
fi
LAB_KVER=$(uname -r)
LAB_KMAJ=$(uname -r | cut -d. -f1) LAB_KMIN=$(uname -r | cut -d. -f2)
# kernel_at_least 6 5 -> true on 6.5 and later
kernel_at_least() { [ "$LAB_KMAJ" -gt "$1" ] || { [ "$LAB_KMAJ" -eq "$1" ] && [ "$LAB_KMIN" -ge "$2" ]; }; }

# milliseconds since the epoch, without forking (bash 5 $EPOCHREALTIME)
lab_ms() { local t=${EPOCHREALTIME/./}; echo $(( t / 1000 )); }

note() { printf '# %s\n' "$*"; }
finding() {
  local key=$1; shift
  printf '# finding %s: %s\n' "$key" "$*"
  [ -n "${LAB_OUT:-}" ] && printf '%s %s: %s\n' "$LAB_KVER" "$key" "$*" >> "$LAB_OUT/findings.txt"
}
_lab_report() {
  LAB_N=$((LAB_N + 1))
  if [ "$1" = 0 ]; then LAB_PASS=$((LAB_PASS + 1)); printf 'ok %d - %s\n' "$LAB_N" "$2"
  else LAB_FAIL=$((LAB_FAIL + 1)); printf 'not ok %d - %s\n' "$LAB_N" "$2"; fi
}
check() {
  local desc=$1; shift
  local outp rc t0 ms
  t0=$(lab_ms)
  outp=$("$@" 2>&1); rc=$?
  ms=$(( $(lab_ms) - t0 ))
  _lab_report "$rc" "$desc"
  [ "$ms" -ge 3000 ] && printf '#   took %d ms\n' "$ms"
  if [ "$rc" != 0 ]; then
    printf '#   command: %s\n#   exit %d\n' "$*" "$rc"
    [ -n "$outp" ] && printf '%s\n' "$outp" | head -n 20 | sed 's/^/#   /'
  fi
  return "$rc"
}
check_eq() {
  local desc=$1 want=$2 got=$3
  if [ "$want" = "$got" ]; then _lab_report 0 "$desc"; return 0; fi
  _lab_report 1 "$desc"
  printf '#   expected: %s\n#   got:      %s\n' "$want" "$got"
  return 1
}
lab_done() {
  printf '%d passed, %d failed\n' "$LAB_PASS" "$LAB_FAIL"
  [ "$LAB_FAIL" = 0 ] && [ "$LAB_PASS" -gt 0 ]
  exit $?
}
# wait_for SECONDS cmd...: poll every 0.1 s until cmd succeeds; 1 on timeout.
wait_for() {
  local deadline=$(( ${EPOCHSECONDS} + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "${EPOCHSECONDS}" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
# lab_modprobe MODULE...: modprobe -a, skipping each module already there (loaded, or built
# in with a /sys/module entry: modprobe would do nothing for it either). A kernel without
# module support (no /proc/modules: the whole-kernel build of kernel/build-kernel, which has
# no /lib/modules/RELEASE for modprobe to read) can load nothing: what is left is built in
# without a /sys/module entry, or missing, and the caller's next step finds that out.
lab_modprobe() {
  local m want=()
  for m in "$@"; do
    [ -d "/sys/module/${m//-/_}" ] || want+=("$m")
  done
  [ ${#want[@]} -gt 0 ] || return 0
  [ -e /proc/modules ] || return 0
  modprobe -a "${want[@]}"
}
# bail "why": stop the scenario now (a fixture failed), counting one failure.
bail() {
  LAB_N=$((LAB_N + 1)); LAB_FAIL=$((LAB_FAIL + 1))
  printf 'not ok %d - bail out: %s\n' "$LAB_N" "$*"
  lab_done
}
lab_reboot() {
  [ "${LAB_BOOT:-1}" -lt "${LAB_BOOTS:-1}" ] || bail "lab_reboot: boot $LAB_BOOT of ${LAB_BOOTS:-1} (raise '# lab-boots:')"
  [ "$(cat /proc/1/comm)" = systemd ] || bail "lab_reboot needs systemd as PID 1 ('# lab-init: systemd')"
  printf 'LAB_N=%d LAB_PASS=%d LAB_FAIL=%d\n' "$LAB_N" "$LAB_PASS" "$LAB_FAIL" > "$LAB_OUT/lab-counts"
  : > "$LAB_OUT/reboot-requested"
  note "rebooting (boot $LAB_BOOT of $LAB_BOOTS ends)"
  sync -f "$LAB_OUT/lab-counts" 2>/dev/null
  # the root's own file system (the overlay on the guest's disk): what the scenario wrote
  # last is on the disk before the reboot (a fresh-clone run once found a file written just
  # before it empty after it). syncfs, not sync: a global sync would wait on NFS mounts.
  sync -f / 2>/dev/null
  systemctl reboot
  sleep 600
  exit 0
}
