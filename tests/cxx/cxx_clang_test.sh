#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# With clang: every public header as C11 (-Wall -Wextra -Werror), and the
# C++ headers test as C++17, C++20 and C++2b, built against libsyncq.a and run.
# usage: cxx_clang_test.sh SOURCE_DIR LIBSYNCQ_A [EXTRA_LIBS]
set -euo pipefail
src=$1 lib=$2 extra=${3:-}
if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
  echo "SKIP: clang/clang++ not installed (Debian package clang)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc="-I$src/include"
# every public header alone, as C11
# am_mpi.h needs an MPI's mpi.h: the first MPI pkg-config knows, else it is
# left out with the reason.
mpi_cflags=$(pkg-config --cflags ompi-c 2>/dev/null || pkg-config --cflags mpich 2>/dev/null || echo none)
find "$src/include/syncq" -name '*.h' | sort | while read -r h; do
  rel=${h#"$src/include/"}
  extra_inc=
  if [ "$rel" = syncq/am_mpi.h ]; then
    if [ "$mpi_cflags" = none ]; then echo "clang: $rel left out: no MPI found by pkg-config"; continue; fi
    extra_inc=$mpi_cflags
  fi
  printf '#include "%s"\n' "$rel" >"$tmp/one.c"
  # shellcheck disable=SC2086
  clang -std=c11 -Wall -Wextra -Werror -fsyntax-only $inc $extra_inc "$tmp/one.c" || { echo "FAIL: clang C11: $rel"; exit 1; }
done
echo "clang: every public header compiles alone as C11"
clang -std=c11 -O2 -c $inc "$src/tests/cxx/layout.c" -o "$tmp/layout.o"
for std in c++17 c++20 c++2b; do
  clang++ -std=$std -O2 -Wall -Wextra -Werror $inc -I"$src/tests/cxx" "$src/tests/cxx/headers_test.cpp" "$tmp/layout.o" \
    "$lib" -pthread $extra -o "$tmp/cxx_$std"
  "$tmp/cxx_$std"
done
echo "clang++: C++17, C++20 and C++2b consumers build and run"
