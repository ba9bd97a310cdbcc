#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The portable folder, as a machine where nothing can be installed sees it:
#  1. packed (a few of CTest's tests, so it stays short; the packing and the
#     run script are the real ones) as a tarball, unpacked under another
#     name, the packed folder deleted;
#  2. run with env -i and a minimal PATH: the summary names each test with
#     pass/skip, the Python test is skipped with its reason, the lab writes
#     results.jsonl in two launches (it starts itself again), and no library comes from outside the folder (the run's
#     own LD_DEBUG check, and again here on a test program);
#  3. moved again: the run points the interpreters at the new place, and a
#     failing test is counted as failed; copied into a root with no system
#     library and busybox's tools, where it runs a test and the lab (when
#     root may make a mount namespace; the test says when it could not);
#  4. refusals, each one line and no loader error: another ISA (a uname
#     shim), a kernel older than the carried glibc's floor, a CPU flag the
#     CPU lacks, a deleted library named with the programs that need it;
#  5. --profile: where perf can sample here, the carried perf samples an
#     LCRQ run (one producer, one consumer) into profile/dg25-prodcons.perf.data
#     and scripts/profile-report, given it and the build, names LCRQ's
#     functions by thread kind and their instructions with source lines;
#     where it cannot (said), the run says why and goes on. Then, with a
#     carried perf that fails as perf does where the kernel forbids
#     sampling, the run names the reason and still measures.
# usage: portable_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
tests='^(counter_test|status_test|registry_test|am_fuzz_corpus|lab_cli_test)$'
# A clean environment, but for a library path that would load the build
# machine's own libraries first: the run must not let it through.
clean_env=(env -i PATH=/usr/bin:/bin HOME="$tmp" LC_ALL=C LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu)

# 1. pack, carry as a tarball, unpack elsewhere
"$src/scripts/portable" --build "$build" --dest "$tmp/pack" --tests "$tests" >"$tmp/pack.log"
tarball=$(ls "$tmp"/pack/syncq-portable-*-x86_64.tar.gz)
mkdir "$tmp/node"
tar -C "$tmp/node" -xzf "$tarball"
mv "$tmp"/node/syncq-portable-*-x86_64 "$tmp/node/syncq"
rm -rf "$tmp/pack"
top=$tmp/node/syncq
for f in run manifest plan.sh bin/syncq-lab lib/ld-linux-x86-64.so.2 lib/libc.so.6 build/tests/counter/counter_test \
         src/fuzz/corpus; do
  [ -e "$top/$f" ] || fail "the folder lacks $f"
done
[[ $(readelf -d "$top/bin/syncq-lab") == *'(RUNPATH)'*'[$ORIGIN/../lib]'* ]] || fail "syncq-lab's RUNPATH is not \$ORIGIN/../lib"

# 2. run it where the build's libraries cannot be found
cd "$tmp"
set +e
"${clean_env[@]}" "$top/run" --out "$tmp/res" --tests "$tests" --lab np99-counter --size smoke --threads 1,2 \
  --algos faa,cas --launches 2 \
  >"$tmp/run.log" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { cat "$tmp/run.log"; fail "run exited $rc"; }
grep -q "libraries all from $top/lib\$" "$tmp/run.log" || { cat "$tmp/run.log"; fail "the run did not find every library in the folder"; }
summary=$tmp/res/tests-summary.txt
for t in counter_test status_test registry_test am_fuzz_corpus; do
  grep -Eq "^pass +$t +[0-9]+\.[0-9]+ s\$" "$summary" || { cat "$summary"; fail "$t did not pass"; }
done
grep -Eq '^skip +lab_cli_test .*Python test' "$summary" || { cat "$summary"; fail "lab_cli_test not skipped with its reason"; }
[ "$(tail -n 1 "$summary")" = "4 passed, 0 failed, 1 skipped" ] || { cat "$summary"; fail "wrong closing line"; }
# Two launches: syncq-lab starts itself again through /proc/self/exe.
for l in 1 2; do
  # (counted, not grep -q: an early exit would fail the pipe under pipefail)
  n=$(grep '"experiment": *"np99-counter"' "$tmp/res/lab/results.jsonl" | grep -c "\"launch\": *$l[,}]" || true)
  [ "$n" -gt 0 ] ||
    { grep -o '"launch": *[0-9]*' "$tmp/res/lab/results.jsonl" | sort | uniq -c; tail -n 20 "$tmp/run.log"
      fail "no np99-counter record of launch $l in results.jsonl"; }
done
# --algos reaches syncq-lab: the points are faa's and cas's only.
algos=$(grep '"type": *"point"' "$tmp/res/lab/results.jsonl" | sed -n 's/.*"algorithm": *"\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')
[ "$algos" = "cas faa " ] || fail "--algos faa,cas measured: $algos"
grep -q 'syncq-lab report' "$tmp/run.log" || fail "the run did not say how to make the report"
[ "$(readelf -l "$top/bin/syncq-lab" | sed -n 's/.*interpreter: \(.*\)]/\1/p')" = "$top/lib/ld-linux-x86-64.so.2" ] ||
  fail "syncq-lab's interpreter is not the folder's loader"
# A test program, started directly: every library initialized is the folder's.
prog=$(sed -n 's/^t status_test .* "\$TOP"\/\([^ ]*\).*/\1/p' "$top/plan.sh")
[ -n "$prog" ] || fail "status_test not in the plan"
env -i PATH=/usr/bin:/bin LD_DEBUG=libs "$top/$prog" 2>"$tmp/ld.log" >/dev/null || fail "$prog failed when started directly"
inits=$(sed -n 's/.*calling init: //p' "$tmp/ld.log")
[ -n "$inits" ] || fail "LD_DEBUG named no library"
if printf '%s\n' "$inits" | grep -v "^$top/"; then fail "$prog loaded libraries from outside the folder"; fi

# 2b. --profile: the lab once more at N = 1 under the carried perf
# (--size default: about a second, a few hundred samples a thread)
set +e
"${clean_env[@]}" "$top/run" --out "$tmp/resp" --no-tests --lab dg25-prodcons --size default --threads 1 --algos lcrq \
  --launches 1 --profile --profile-threads 1 >"$tmp/runp.log" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || { cat "$tmp/runp.log"; fail "run --profile exited $rc"; }
[ -s "$tmp/resp/lab/results.jsonl" ] || fail "run --profile: no lab results"
# Whether perf can sample here, asked of this machine's perf as the run asks
# its own: user-space cpu-clock samples of a child.
can_sample=0
if command -v perf >/dev/null 2>&1 &&
   perf record -q -e cpu-clock:u --no-buildid-cache -o "$tmp/probe.data" -- true >/dev/null 2>&1 && [ -s "$tmp/probe.data" ]; then
  can_sample=1
fi
pdata=$tmp/resp/profile/dg25-prodcons.perf.data
if [ $can_sample = 1 ]; then
  [ -s "$pdata" ] || { cat "$tmp/runp.log"; fail "run --profile left no $pdata"; }
  grep -q "profile: dg25-prodcons: $pdata\$" "$tmp/runp.log" || { cat "$tmp/runp.log"; fail "run --profile did not name $pdata"; }
  grep -Eq 'profile: [0-9]+ s; back where syncq was built: scripts/profile-report' "$tmp/runp.log" ||
    { cat "$tmp/runp.log"; fail "run --profile did not say its time and how to read it"; }
  "$src/scripts/profile-report" --build "$build" --min 0 --functions 40 --instructions 3 "$tmp/resp/profile" >"$tmp/prof.txt" 2>&1 ||
    { cat "$tmp/prof.txt"; fail "profile-report failed"; }
  # Each side's functions (all of them: on a loaded machine a side may get
  # few samples), then LCRQ's hot instructions with source lines.
  # (each section to a file: grep -q on a pipe would fail it under pipefail)
  sed -n '/^-- producers (N = 1): /,/^-- /p' "$tmp/prof.txt" >"$tmp/prof-p.txt"
  sed -n '/^-- consumers (N = 1): /,/^-- other/p' "$tmp/prof.txt" >"$tmp/prof-c.txt"
  grep -Eq '^ +[0-9.]+% +syncq-lab +syncq_queue_lcrq_enqueue$' "$tmp/prof-p.txt" ||
    { cat "$tmp/prof.txt"; fail "profile-report: no producers' line for syncq_queue_lcrq_enqueue"; }
  grep -Eq '^ +[0-9.]+% +syncq-lab +(crq_dequeue|syncq_queue_lcrq_dequeue)$' "$tmp/prof-c.txt" ||
    { cat "$tmp/prof.txt"; fail "profile-report: no consumers' line for LCRQ's dequeue"; }
  grep -Eq '^ +at src/queue/lcrq\.c:[0-9]+ \(crq_(enqueue|dequeue)\) ' "$tmp/prof.txt" ||
    { cat "$tmp/prof.txt"; fail "profile-report: no LCRQ instruction with its source line"; }
  profile="profile taken and read back"
else
  grep -q 'profile: not taken: ' "$tmp/runp.log" || { cat "$tmp/runp.log"; fail "perf cannot sample here, yet the run did not say so"; }
  profile="profile not checked: perf cannot sample here ($(grep -o 'profile: not taken: .*' "$tmp/runp.log"))"
  echo "SKIP: $profile"
fi

# 3. moved again: re-pointed; a failing test counts as failed
mv "$top" "$tmp/node/moved"
top=$tmp/node/moved
printf '%s\n' "t fake_fail 30 '' . -- \"\$TOP\"/bin/syncq-lab no-such-command" >>"$top/plan.sh"
set +e
"${clean_env[@]}" "$top/run" --out "$tmp/res2" --tests '^(status_test|fake_fail)$' --lab none >"$tmp/run2.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$tmp/run2.log"; fail "a failing test: run exited $rc, want 1"; }
grep -q "pointed at this folder's loader ($top/lib/ld-linux-x86-64.so.2)" "$tmp/run2.log" || fail "not re-pointed after the move"
grep -Eq '^FAIL +fake_fail .*\(exit [0-9]+; see tests/fake_fail.log\)' "$tmp/res2/tests-summary.txt" || fail "fake_fail not failed"
[ "$(tail -n 1 "$tmp/res2/tests-summary.txt")" = "1 passed, 1 failed, 0 skipped" ] || fail "wrong closing line after a failure"

# 3b. a root with no system library at all and busybox's tools (another
# distribution, at its barest): the folder alone must do. Needs root, a
# private mount namespace (for /proc) and busybox; said when not there.
busybox=$(command -v busybox || true)
root=$tmp/root
if [ "$(id -u)" = 0 ] && [ -n "$busybox" ] && mkdir -p "$root/proc" &&
   unshare -m sh -c 'mount -t proc proc "$1/proc"' _ "$root" 2>/dev/null; then
  mkdir -p "$root/bin" "$root/tmp" "$root/dev"
  cp "$busybox" "$root/bin/busybox"
  for a in $("$busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"; done
  mknod -m 666 "$root/dev/null" c 1 3
  cp -a "$top" "$root/syncq"
  [ ! -e "$root/lib" ] && [ ! -e "$root/usr" ] || fail "the bare root has a library folder"
  set +e
  unshare -m sh -c 'mount -t proc proc "$1/proc" && exec chroot "$1" /bin/sh -c \
    "cd /tmp && PATH=/bin /syncq/run --out /tmp/res --tests ^status_test\$ --lab np99-counter --size smoke --threads 1 --launches 2"' \
    _ "$root" >"$tmp/bare.log" 2>&1
  rc=$?
  set -e
  [ $rc -eq 0 ] || { cat "$tmp/bare.log"; fail "the run in a bare root exited $rc"; }
  grep -q 'libraries all from /syncq/lib$' "$tmp/bare.log" || { cat "$tmp/bare.log"; fail "bare root: a library from elsewhere"; }
  [ "$(tail -n 1 "$root/tmp/res/tests-summary.txt")" = "1 passed, 0 failed, 0 skipped" ] ||
    { cat "$root/tmp/res/tests-summary.txt"; fail "bare root: wrong summary"; }
  n=$(grep -c '"launch": *2[,}]' "$root/tmp/res/lab/results.jsonl" || true)
  [ "$n" -gt 0 ] || fail "bare root: no record of the lab's second launch"
  bare="run in a bare root"
else
  bare="bare-root run not checked (needs root, busybox and a private mount namespace)"
fi

# 4. refusals: one line each, before any carried program (no loader error)
refused() { # WANT_TEXT COMMAND...
  local want=$1; shift
  set +e
  "$@" >"$tmp/refuse.log" 2>&1
  local rc=$?
  set -e
  [ $rc -eq 2 ] || { cat "$tmp/refuse.log"; fail "want a refusal (exit 2) for '$want', got $rc"; }
  grep -q -- "$want" "$tmp/refuse.log" || { cat "$tmp/refuse.log"; fail "the refusal does not say '$want'"; }
  if grep -Eq 'ld-linux|error while loading|FATAL' "$tmp/refuse.log"; then cat "$tmp/refuse.log"; fail "a loader error"; fi
}
mkdir -p "$tmp/shim-isa" "$tmp/shim-kernel"
uname=$(command -v uname)
printf '#!/bin/sh\n[ "$1" = -m ] && { echo aarch64; exit 0; }\nexec %s "$@"\n' "$uname" >"$tmp/shim-isa/uname"
printf '#!/bin/sh\n[ "$1" = -r ] && { echo 3.1.10-old; exit 0; }\nexec %s "$@"\n' "$uname" >"$tmp/shim-kernel/uname"
chmod +x "$tmp/shim-isa/uname" "$tmp/shim-kernel/uname"
refused "this machine is aarch64" env -i PATH="$tmp/shim-isa:/usr/bin:/bin" "$top/run" --check
[ "$(wc -l <"$tmp/refuse.log")" -eq 1 ] || fail "the ISA refusal is not one line"
refused "kernel 3.1.10-old is older than" env -i PATH="$tmp/shim-kernel:/usr/bin:/bin" "$top/run" --check
[ "$(wc -l <"$tmp/refuse.log")" -eq 1 ] || fail "the kernel refusal is not one line"
# A CPU flag the folder's programs would need that no CPU has.
sed -i 's/^cpuflags \(.*\)$/cpuflags \1 syncq_no_such_flag/' "$top/manifest"
refused "this CPU lacks syncq_no_such_flag (from /proc/cpuinfo)" "${clean_env[@]}" "$top/run" --check
sed -i 's/ syncq_no_such_flag$//' "$top/manifest"

# 5. a perf that cannot sample (as where perf_event_paranoid is 3): the run
# names the reason, measures all the same and leaves no profile. (After
# the move: the run re-points programs only when the folder moved, and
# this perf is a script.)
if [ -e "$top/bin/perf" ]; then
  printf '#!/bin/sh\necho "Error: No permission to enable cpu-clock:u event." >&2\nexit 255\n' >"$top/bin/perf"
  "${clean_env[@]}" "$top/run" --out "$tmp/res3" --no-tests --lab np99-counter --size smoke --threads 1 --algos faa \
    --launches 1 --profile >"$tmp/run3.log" 2>&1 || { cat "$tmp/run3.log"; fail "run --profile with a failing perf exited non-zero"; }
  grep -q 'profile: not taken: perf cannot sample here (kernel.perf_event_paranoid [0-9-]*; perf: Error: No permission to enable cpu-clock:u event.); the run goes on without it$' \
    "$tmp/run3.log" || { cat "$tmp/run3.log"; fail "a failing perf: the run did not say why it took no profile"; }
  [ -s "$tmp/res3/lab/results.jsonl" ] || fail "a failing perf: no lab results"
  [ ! -e "$tmp/res3/profile/np99-counter.perf.data" ] || fail "a failing perf left a profile"
fi
refused "profile samples the lab's experiments: give it --lab" "${clean_env[@]}" "$top/run" --lab none --profile --check
rm "$top/lib/libhwloc.so.15"
refused "missing library lib/libhwloc.so.15 (needed by bin/syncq-lab" "${clean_env[@]}" "$top/run" --check
echo "portable: packed, carried, run clean ($(tail -n 1 "$summary")), re-pointed after a move, $bare, refusals checked, $profile"
