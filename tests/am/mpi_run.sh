#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_run.sh IMPL MPIRUN NP EXE SCENARIO [force]
# Start mpi_am_test under the project's own mpirun line for IMPL (openmpi
# or mpich): --oversubscribe on small machines, root allowed, and for the
# fault scenarios the launcher options that keep the survivors alive when
# one rank dies. "force" sets SYNCQ_AM_FORCE_MPI=1 (every peer via MPI).
# Exit 77 (ctest skip) with the reason printed when a scenario cannot run.
# SYNCQ_MPI_RANK_PRELOAD (tests/am/mpi_objects.c's library) is preloaded
# into each rank, not into mpirun; a run that passes must then show that
# every rank ran the check and saw MPI objects made. Endpoint names the
# ranks recorded ($SYNCQ_TEST_OUT/shm.<rank>) must be gone after the run.
set -u
impl=$1 mpirun=$2 np=$3 exe=$4 scenario=$5 force=${6:-}
[ -x "$mpirun" ] || { echo "SKIP: $mpirun not found"; exit 77; }
out=$(mktemp -d /tmp/syncq-mpi-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
export SYNCQ_TEST_OUT=$out
[ "$force" = force ] && export SYNCQ_AM_FORCE_MPI=1
rankwrap=""
case $impl in
openmpi)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # vader's single-copy (CMA) needs ptrace rights containers often lack
  opts="--oversubscribe --mca btl_vader_single_copy_mechanism none"
  [ "$scenario" = killed ] && opts="$opts --enable-recovery"
  ;;
mpich)
  opts=""
  # Hydra's proxy kills every rank once one ends by a signal, even with
  # -disable-auto-cleanup: each rank runs under mpi_hydra_rank.sh, which
  # ends normally with the rank's status (its header says why)
  if [ "$scenario" = killed ]; then
    opts="-disable-auto-cleanup"
    rankwrap="$(dirname "$0")/mpi_hydra_rank.sh"
  fi
  ;;
*) echo "unknown MPI $impl"; exit 2 ;;
esac
# A bound on the whole run: a hang fails the test instead of stalling CI.
# waiter, slowpoll, stopped, crowded, backlog: a run in which the rank found silent had been kept
# off its processor (or away from its polls) for half the dead timeout at
# once judged nothing (the other rank then writes $out/inconclusive, see
# mpi_am_test.c): it runs again, three times at most. A failed check ends
# the whole job at once (MPI_Abort), so a failure takes no longer than the
# check that found it.
preload=""
if [ -n "${SYNCQ_MPI_RANK_PRELOAD:-}" ]; then
  preload="env LD_PRELOAD=$SYNCQ_MPI_RANK_PRELOAD"
  export SYNCQ_MPI_OBJECTS_OUT=$out
fi
attempt=1
while :; do
  timeout -k 5 120 "$mpirun" $opts -n "$np" $rankwrap $preload "$exe" "$scenario"
  rc=$?
  [ $rc -ne 0 ] && [ -e "$out/inconclusive" ] || break
  echo "$scenario: run $attempt judged nothing: $(cat "$out/inconclusive")"
  rm -f "$out/inconclusive"
  if [ $attempt -ge 3 ]; then
    echo "SKIP: $scenario: a rank was kept off its processor in every run: the machine is too busy to judge"
    exit 77
  fi
  attempt=$((attempt + 1))
done
# A scenario that cannot run here (failrings on a kernel that does not
# enforce RLIMIT_DATA on anonymous mappings) ended every rank cleanly and
# left its reason.
if [ $rc -eq 0 ] && [ -e "$out/skip" ]; then
  echo "SKIP: $(cat "$out/skip")"
  exit 77
fi
if [ -n "$preload" ] && [ $rc -eq 0 ]; then
  i=0
  while [ $i -lt "$np" ]; do
    case $(cat "$out/mpi_objects.$i" 2>/dev/null) in
    "made 0 "* | "") echo "rank $i: the MPI object check did not run, or saw no object made"; exit 1 ;;
    esac
    i=$((i + 1))
  done
  echo "MPI objects: every rank freed what it made ($(cat "$out/mpi_objects.0"), rank 0)"
fi
# Every endpoint name the ranks recorded ($out/shm.<rank>, mpi_am_test.c's
# check_unnamed) must be gone from /dev/shm, whichever rank was killed.
leaked=""
for f in "$out"/shm.*; do
  [ -e "$f" ] || continue
  name=$(cat "$f")
  [ -e "/dev/shm/$name" ] && leaked="$leaked $name" && rm -f "/dev/shm/$name"
done
if [ -n "$leaked" ]; then
  echo "left in /dev/shm after the run (removed now):$leaked"
  exit 1
fi
if [ "$scenario" = killed ]; then
  # mpirun reports the killed rank (non-zero): judge by the survivors' files
  last=$((np - 1)); i=0; bad=0
  while [ $i -lt $last ]; do
    if [ "$(cat "$out/rank.$i" 2>/dev/null)" != ok ]; then echo "rank $i did not survive the kill correctly"; bad=1; fi
    i=$((i + 1))
  done
  [ $bad = 0 ] && echo "killed: $last survivors got SYNCQ_EDEAD and carried on (mpirun exit $rc: it reports the killed rank)"
  exit $bad
fi
exit $rc
