#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# usage: symbols_test.sh LIBSYNCQ_SO LIBSYNCQ_A SOURCE_DIR CC [EXTRA_LIBS [TRANSPORT_A...]]
# 1. every symbol libsyncq.so exports is named syncq_*;
# 2. every SYNCQ_API declaration of the public headers is exported;
# 2b. no public header declares a function the library hides;
# 3. libsyncq.a's global symbols are syncq_* too (internals renamed
#    syncq__*, cmake/syncq_archive.sh);
# 3b. so are those of each installed MPI transport archive
#    (libsyncq_am_mpi_<impl>.a), and every internal name it shares with
#    libsyncq.a is renamed alike;
# 4. a program defining am_map, po_mailbox_mpsc, am_claim_locked links
#    statically with libsyncq.a and keeps its own.
set -euo pipefail
so=$1 a=$2 src=$3 cc=$4 extra=${5:-}
shift 4; [ $# -gt 0 ] && shift
transports=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

nm -D --defined-only "$so" | awk '{print $NF}' | sort -u >"$tmp/exported"
echo "libsyncq.so exports $(wc -l <"$tmp/exported") symbols"
if grep -v '^syncq_' "$tmp/exported" >"$tmp/bad"; then
  echo "FAIL: exported without the syncq_ prefix:"; cat "$tmp/bad"; fail=1
fi

# public declarations: SYNCQ_API ... syncq_name( or SYNCQ_API extern ... syncq_name;
grep -rhoE 'SYNCQ_API [^;(]*\b(syncq_[A-Za-z0-9_]+) *[(;]' "$src/include/syncq" |
  sed -E 's/.*\b(syncq_[A-Za-z0-9_]+) *[(;]$/\1/' | sort -u >"$tmp/declared"
echo "public headers declare $(wc -l <"$tmp/declared") SYNCQ_API names"
if comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/missing" && [ -s "$tmp/missing" ]; then
  echo "FAIL: declared SYNCQ_API but not exported:"; cat "$tmp/missing"; fail=1
fi
if comm -13 "$tmp/declared" "$tmp/exported" >"$tmp/undeclared" && [ -s "$tmp/undeclared" ]; then
  echo "FAIL: exported but declared in no public header:"; cat "$tmp/undeclared"; fail=1
fi

# hidden syncq_* functions of the library that a public header declares:
# a declaration without SYNCQ_API (a program linking libsyncq.so would miss it)
nm --defined-only "$so" 2>/dev/null | awk '$2 ~ /^[tdrb]$/ && $3 ~ /^syncq_/ {print $3}' | sort -u >"$tmp/hidden"
while read -r sym; do
  if grep -rqE "^[^ /*#].*\b$sym *\(" --include='*.h' --exclude-dir=static "$src/include/syncq"; then
    echo "FAIL: $sym is declared in a public header but not exported (SYNCQ_API missing)"; fail=1
  fi
done <"$tmp/hidden"

nm -g --defined-only "$a" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/archive"
if grep -v '^syncq_' "$tmp/archive" >"$tmp/bad_a"; then
  echo "FAIL: libsyncq.a has global symbols without the syncq_ prefix:"; cat "$tmp/bad_a"; fail=1
fi

nm --defined-only "$a" 2>/dev/null | awk 'NF == 3 && $3 ~ /^syncq__/ {print $3}' | sort -u >"$tmp/internal"
for t in "${transports[@]}"; do
  nm -g --defined-only "$t" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/t_archive"
  if grep -v '^syncq_' "$tmp/t_archive" >"$tmp/bad_t"; then
    echo "FAIL: $(basename "$t") has global symbols without the syncq_ prefix:"; cat "$tmp/bad_t"; fail=1
  fi
  # every internal symbol the transport references resolves inside it
  nm -u "$t" 2>/dev/null | awk '$2 ~ /^syncq__/ {print $2}' | sort -u >"$tmp/t_undef"
  nm --defined-only "$t" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$tmp/t_def"
  if comm -23 "$tmp/t_undef" "$tmp/t_def" >"$tmp/t_missing" && [ -s "$tmp/t_missing" ]; then
    echo "FAIL: $(basename "$t") references internal names it does not define:"; cat "$tmp/t_missing"; fail=1
  fi
  if [ -n "$(comm -23 "$tmp/internal" "$tmp/t_def" | head -1)" ]; then
    echo "FAIL: $(basename "$t") lacks some of libsyncq.a's internal names:"; comm -23 "$tmp/internal" "$tmp/t_def" | head; fail=1
  fi
  echo "$(basename "$t"): $(wc -l <"$tmp/t_def") symbols, internals agree with libsyncq.a"
done

if "$cc" -std=c11 -o "$tmp/clash" "$src/tests/symbols/clash.c" -I"$src/include" "$a" -pthread -lrt $extra 2>"$tmp/link.log"; then
  "$tmp/clash" || fail=1
else
  echo "FAIL: a program with its own am_map does not link statically:"; cat "$tmp/link.log"; fail=1
fi
[ "$fail" = 0 ] && echo "symbols: all exported names are syncq_*, every public declaration is exported"
exit "$fail"
