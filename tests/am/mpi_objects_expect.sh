#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_objects_expect.sh PATTERN COMMAND...
# Passes when COMMAND (an MPI job with tests/am/mpi_objects.c preloaded)
# fails and prints a line matching PATTERN (grep -E): the interposer's
# report of the objects a rank left at MPI_Finalize (mpi_objects_<impl>_*).
set -u
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || { echo "-> exit 0: the objects left were not reported as a failure"; exit 1; }
echo "$out" | grep -Eq "$pattern" || { echo "-> no line matches: $pattern"; exit 1; }
exit 0
