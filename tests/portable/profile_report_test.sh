#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# scripts/profile-report on a small program perf samples here, standing in
# for the lab (BUILD/lab/syncq-lab of a build folder of its own):
#  1. two files' static functions of one name, both hot: two lines, each
#     with its source file, and two instruction lists, each with the source
#     lines of its own file (not one function of both files' samples);
#  2. the same program linked with build-ids other than SHA-1's 40 hex
#     digits (--build-id=md5: 32, --build-id=0x...: 16): found here by
#     build-id, its instructions shown with their source lines.
# Skipped (77) with the reason where perf cannot sample here or a tool is
# missing.
# usage: profile_report_test.sh SOURCE_DIR C_COMPILER
set -euo pipefail
src=$1
cc=$2
for tool in perf objdump addr2line readelf nm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool not found here"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export HOME=$tmp # perf's build-id cache: this test's own
if ! perf record -q -e cpu-clock:u --no-buildid-cache -o "$tmp/probe.data" -- true >"$tmp/probe.log" 2>&1 ||
   [ ! -s "$tmp/probe.data" ]; then
  echo "SKIP: perf cannot sample here ($(tail -n 1 "$tmp/probe.log"); kernel.perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
  exit 77
fi

# perf samples this machine's own programs: a cross build's compiler (the
# AArch64 build under qemu-user) makes programs of another machine.
echo 'int main(void) { return 0; }' >"$tmp/native.c"
"$cc" -o "$tmp/native" "$tmp/native.c"
machine() { readelf -h "$1" | sed -n 's/^ *Machine: *//p'; }
if [ "$(machine "$tmp/native")" != "$(machine "$(command -v readelf)")" ]; then
  echo "SKIP: $cc makes programs for $(machine "$tmp/native"), not for this machine ($(machine "$(command -v readelf)")): a cross build"
  exit 77
fi

# Each side spins for 40 ms of its thread's CPU time, four times: samples
# land in both whatever the machine's speed and load.
cat >"$tmp/left.c" <<'EOF'
#include <time.h>
volatile unsigned long sink;
unsigned long cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (unsigned long)t.tv_sec * 1000000000ul + (unsigned long)t.tv_nsec;
}
static __attribute__((noinline)) void enqueue(unsigned long ns) {
  unsigned long end = cpu_ns() + ns, s = 0;
  do {
    for (unsigned long i = 0; i < 10000; i++) s += i * i;
  } while (cpu_ns() < end);
  sink = s;
}
void left(unsigned long ns) { enqueue(ns); }
EOF
cat >"$tmp/right.c" <<'EOF'
extern volatile unsigned long sink;
unsigned long cpu_ns(void);
static __attribute__((noinline)) void enqueue(unsigned long ns) {
  unsigned long end = cpu_ns() + ns, s = 1;
  do {
    for (unsigned long i = 0; i < 10000; i++) s ^= i * 3 + (s >> 1);
  } while (cpu_ns() < end);
  sink = s;
}
void left(unsigned long ns);
int main(void) {
  for (int k = 0; k < 4; k++) {
    left(40000000);
    enqueue(40000000);
  }
  return 0;
}
EOF

check() { # build-id option: build, sample, read back
  local id=$1 build=$tmp/build-$1
  mkdir -p "$build/lab"
  "$cc" -O1 -g -fno-inline "-Wl,--build-id=$id" -o "$build/lab/syncq-lab" "$tmp/left.c" "$tmp/right.c"
  readelf -n "$build/lab/syncq-lab" | grep -q 'Build ID' || fail "$id: the linker wrote no build-id"
  perf record -q -e cpu-clock:u -o "$tmp/$id.perf.data" -- "$build/lab/syncq-lab" >"$tmp/$id.rec" 2>&1 ||
    { cat "$tmp/$id.rec"; fail "$id: perf record failed"; }
  "$src/scripts/profile-report" --build "$build" --min 0 --instructions 2 "$tmp/$id.perf.data" >"$tmp/$id.txt" 2>&1 ||
    { cat "$tmp/$id.txt"; fail "$id: profile-report failed"; }
  local r=$tmp/$id.txt
  if grep -q "matches no program here" "$r"; then cat "$r"; fail "$id: the program was not found by its build-id"; fi
  for side in left right; do
    [ "$(grep -Ec "^ +[0-9.]+% +syncq-lab +enqueue \(.*/$side\.c\)\$" "$r")" = 1 ] ||
      { cat "$r"; fail "$id: no one line for $side.c's enqueue"; }
    # its instruction list: its header to the next blank line, every source line in its file
    sed -n "/^  enqueue (.*\/$side\.c): /,/^\$/p" "$r" >"$tmp/$id-$side.txt"
    grep -Eq "^ +at .*/$side\.c:[0-9]+ \(enqueue\) " "$tmp/$id-$side.txt" ||
      { cat "$r"; fail "$id: no instruction of $side.c's enqueue with its source line"; }
    if grep -Eq "^ +at .*\.c:" "$tmp/$id-$side.txt" && grep -E "^ +at .*\.c:" "$tmp/$id-$side.txt" | grep -vq "/$side\.c:"; then
      cat "$r"
      fail "$id: $side.c's enqueue lists another file's instructions"
    fi
  done
}

check sha1
check md5
check 0x0123456789abcdef
echo "profile-report: two static functions of one name apart, each with its file; build-ids of 40, 32 and 16 hex digits found"
