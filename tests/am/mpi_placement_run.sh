#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_placement_run.sh NP OPENMPI_MPIRUN OPENMPI_OPTIONS OPENMPI_HELPER \
#                        MPICH_MPIRUN MPICH_OPTIONS MPICH_HELPER
# lc98-apps compares variants measured in Open MPI's launch with variants
# measured in MPICH's, so both launchers must place the ranks alike. Each
# launches the lab's helper on NP ranks with the lab's own launch line,
# "MPIRUN OPTIONS -n NP HELPER ..." (lab/exp/lc98_mpi_run.c,
# lc98_mpi_command), OPTIONS the ones syncq-lab was built with
# (lab/exp/lc98_mpi_options.cmake, given by tests/am/CMakeLists.txt), and
# every rank reports the processors it may run on (Cpus_allowed_list).
# Checked: rank r is allowed the same processors under both launchers, and
# where this machine has more than one core in reach, no rank is left
# free to run anywhere (each is bound). Exit 77 without both MPIs.
set -u
np=$1 ompi_run=$2 ompi_opts=$3 ompi_helper=$4 mpich_run=$5 mpich_opts=$6 mpich_helper=$7
for x in "$ompi_run" "$ompi_helper" "$mpich_run" "$mpich_helper"; do
  [ -x "$x" ] || { echo "SKIP: $x not found (the placement is compared across both MPIs)"; exit 77; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SYNCQ_LC98_SAY_PLACEMENT=1
echo "launch: $ompi_run $ompi_opts -n $np $ompi_helper ..."
out_o=$(timeout -k 5 120 "$ompi_run" $ompi_opts -n "$np" "$ompi_helper" app cc 64 lock-free 2>&1)
st_o=$?
echo "launch: $mpich_run $mpich_opts -n $np $mpich_helper ..."
out_m=$(timeout -k 5 120 "$mpich_run" $mpich_opts -n "$np" "$mpich_helper" app cc 64 lock-free 2>&1)
st_m=$?
pl_o=$(echo "$out_o" | grep '^placement ' | sort -k2n)
pl_m=$(echo "$out_m" | grep '^placement ' | sort -k2n)
echo "Open MPI (exit $st_o):"; echo "$pl_o" | sed 's/^/  /'
echo "MPICH (exit $st_m):"; echo "$pl_m" | sed 's/^/  /'
rc=0
if [ $st_o -ne 0 ] || [ $st_m -ne 0 ]; then
  echo "a launch failed:"; echo "$out_o"; echo "$out_m"; rc=1
fi
if [ "$(echo "$pl_o" | grep -c .)" -ne "$np" ] || [ "$(echo "$pl_m" | grep -c .)" -ne "$np" ]; then
  echo "-> not every rank reported its processors"; rc=1
elif [ "$pl_o" != "$pl_m" ]; then
  echo "-> the launchers placed the ranks differently"; rc=1
fi
# Bound: with more than one core in reach, a rank allowed every processor
# in reach was not bound to a core. (One core, perhaps with several
# hardware threads: every rank is allowed all of them, bound or not.)
reach=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
first=$(echo "$reach" | sed 's/[-,].*//')
core=$(cat "/sys/devices/system/cpu/cpu$first/topology/core_cpus_list" 2>/dev/null ||
  cat "/sys/devices/system/cpu/cpu$first/topology/thread_siblings_list" 2>/dev/null)
if [ -n "$core" ] && [ "$core" != "$reach" ]; then
  if printf "%s\n%s\n" "$pl_o" "$pl_m" | awk -v r="$reach" '$1 == "placement" && $3 == r { bad = 1 } END { exit !bad }'; then
    echo "-> a rank is allowed every processor in reach ($reach): not bound"; rc=1
  fi
fi
exit $rc
