#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_apps_run.sh IMPL MPIRUN OPTIONS NP HELPER
# lc98's applications (3-D FFT, connected components, sample sort) on NP
# ranks under IMPL's mpirun, launched as syncq-lab launches them:
# "MPIRUN OPTIONS -n NP HELPER ...", OPTIONS the launcher's options the lab
# was built with (lab/exp/lc98_mpi_options.cmake, given by
# tests/am/CMakeLists.txt), split into words by the shell as the lab's
# popen splits them. Small sizes, with the lock-free and ticket
# claims over shared memory and with every peer forced through MPI. The
# helper checks each result (FFTW, a sequential union-find, sorted and a
# permutation) and prints FAIL and exits non-zero on a wrong one. Then:
# every rank runs in a session of its own, and the timed runs of cc and
# cc-sparse over shared memory take no page faults.
# SYNCQ_MPI_RANK_PRELOAD (tests/am/mpi_objects.c's library) is preloaded
# into each rank of the applications' runs (not into mpirun, nor into the
# page-fault run, whose count its bookkeeping would change), and each of
# those runs must then show every rank's tally: objects made, none left.
set -u
impl=$1 mpirun=$2 opts=$3 np=$4 helper=$5
[ -x "$mpirun" ] || { echo "SKIP: $mpirun not found"; exit 77; }
# Open MPI runs as root when the lab does (lab/exp/lc98_mpi_run.c).
[ "$impl" = openmpi ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "launch: $mpirun $opts -n $np $helper ..."
preload=""
if [ -n "${SYNCQ_MPI_RANK_PRELOAD:-}" ]; then
  preload="env LD_PRELOAD=$SYNCQ_MPI_RANK_PRELOAD"
  tally=$(mktemp -d /tmp/syncq-mpi-apps.XXXXXX)
  trap 'rm -rf "$tally"' EXIT
fi
rc=0
for spec in "fft 16" "cc 64" "cc-sparse 64" "sort 4096"; do
  [ -n "$preload" ] && rm -f "$tally"/mpi_objects.*
  out=$(SYNCQ_MPI_OBJECTS_OUT=${tally:-} timeout -k 5 120 "$mpirun" $opts -n "$np" $preload "$helper" app $spec \
    lock-free ticket mpi-forced 2>&1)
  st=$?
  echo "$spec on $np ranks ($impl):"
  echo "$out" | sed 's/^/  /'
  if [ $st -ne 0 ] || echo "$out" | grep -q FAIL || [ "$(echo "$out" | grep -c ' ok$')" -ne 3 ]; then
    echo "  -> failed (exit $st)"; rc=1
  elif [ -n "$preload" ]; then
    i=0
    while [ $i -lt "$np" ]; do
      case $(cat "$tally/mpi_objects.$i" 2>/dev/null) in
      "made 0 "* | "") echo "  -> rank $i: the MPI object check did not run, or saw no object made"; rc=1 ;;
      *) [ $i = 0 ] && echo "  MPI objects: every rank freed what it made ($(cat "$tally/mpi_objects.0"), rank 0)" ;;
      esac
      i=$((i + 1))
    done
  fi
done
# Every rank runs in a session of its own (the helper's own_session): under
# Open MPI, whose ranks share mpirun's otherwise, and under MPICH.
out=$(SYNCQ_LC98_SAY_SESSIONS=1 SYNCQ_LC98_SAY_FAULTS=0 timeout -k 5 120 "$mpirun" $opts -n "$np" "$helper" app cc 64 lock-free 2>&1)
echo "sessions on $np ranks ($impl):"
echo "$out" | sed 's/^/  /'
if ! echo "$out" | grep -q "^sessions $np of $np\$"; then
  echo "  -> a rank shares its session"; rc=1
fi
# The timed runs of cc and cc-sparse over shared memory take no page faults
# (the helper maps the applications' blocks first), but for a few that the
# kernel may add. The lab's launch at the quick size (two claims, fft first)
# reproduces the allocator's history that gave cc-sparse 157 on a rank.
out=$(SYNCQ_LC98_SAY_SESSIONS=0 SYNCQ_LC98_SAY_FAULTS=1 timeout -k 5 120 "$mpirun" $opts -n "$np" "$helper" \
  app fft,cc,cc-sparse 32,256,256 tas lock-free 2>&1)
st=$?
echo "page faults of the timed runs on $np ranks ($impl):"
echo "$out" | grep '^faults ' | sed 's/^/  /'
many=$(echo "$out" | awk '$1 == "faults" && $2 !~ /^fft/ && $3 > 8')
if [ $st -ne 0 ] || [ "$(echo "$out" | grep -c '^faults ')" -ne 6 ] || [ -n "$many" ]; then
  echo "  -> failed (exit $st)"; echo "$out" | grep -v '^faults ' | sed 's/^/  /'; rc=1
fi
exit $rc
