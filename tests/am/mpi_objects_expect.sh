#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_objects_expect.sh PATTERN... -- COMMAND...
# Passes when COMMAND (an MPI job with tests/am/mpi_objects.c preloaded)
# fails and prints, for each PATTERN (grep -E), a line matching it: the
# interposer's report of the objects a rank left at MPI_Finalize
# (mpi_objects_<impl>_*). A COMMAND that exits 77 (skipped, said) exits
# 77 here too.
set -u
patterns=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  patterns="$patterns$1
"
  shift
done
[ $# -gt 1 ] || { echo "usage: mpi_objects_expect.sh PATTERN... -- COMMAND..."; exit 2; }
shift
out=$("$@" 2>&1)
rc=$?
echo "$out"
[ $rc -ne 77 ] || exit 77
[ $rc -ne 0 ] || { echo "-> exit 0: the objects left were not reported as a failure"; exit 1; }
bad=0
while IFS= read -r p; do
  [ -z "$p" ] && continue
  echo "$out" | grep -Eq "$p" || { echo "-> no line matches: $p"; bad=1; }
done <<END
$patterns
END
exit $bad
