#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_expect_skip.sh PATTERN COMMAND...
# Passes when COMMAND exits 77 (ctest's skip) and prints a line matching
# PATTERN (grep -E): the check that a test's skip path works where its
# own run cannot reach it (mpi_am_<impl>_failrings_skip).
set -u
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 77 ] || { echo "-> exit $rc, not 77 (a skip)"; exit 1; }
echo "$out" | grep -Eq "$pattern" || { echo "-> no line matches: $pattern"; exit 1; }
exit 0
