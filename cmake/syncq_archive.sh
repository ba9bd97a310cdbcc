#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# syncq_archive.sh OUT.a NM OBJCOPY AR OBJECT...
# An installed static library: the objects with every internal global
# symbol (defined by these objects, not named syncq_*) renamed to
# syncq__<name>, in definitions and references alike, so a program that
# links libsyncq.a may define its own am_map or po_mailbox_mpsc. The same
# library objects always get the same names, so libsyncq.a and an archive
# of a component together with the library (libsyncq_am_mpi_<impl>.a: the
# MPI transport's objects and the library's) agree on every one. The
# archive keeps one member per object: a program pulls in only what it uses.
set -eu
out=$1 nm=$2 objcopy=$3 ar=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$nm" -g --defined-only "$@" 2>/dev/null |
  awk 'NF == 3 && $3 !~ /^syncq_/ && $3 !~ /^_/ {print $3 " syncq__" $3}' | sort -u >"$dir/map"
i=0
for o in "$@"; do
  i=$((i + 1))
  # a numbered copy: two sources may share a base name (src/a/x.c, src/b/x.c)
  "$objcopy" --redefine-syms="$dir/map" "$o" "$dir/$i-$(basename "$o")"
done
rm -f "$out"
"$ar" rcs "$out" "$dir"/*.o
