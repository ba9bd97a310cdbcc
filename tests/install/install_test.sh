#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The installed package, as a downstream project sees it:
#  1. the "library" component alone: libsyncq.a, libsyncq.so with the
#     soname of the version policy (libsyncq.so.MAJOR.MINOR), headers, the
#     CMake package and syncq.pc, nothing of the lab, and nothing test-only
#     in the headers, each of which compiles alone (C11, C++17); the
#     consumer also counts in the inline bodies
#     and every file of examples/ in share/doc/syncq/examples, with
#     LICENSE, README.md and every docs/*.md the README names; the man
#     pages, when doxygen made them: a syncq_* page per name in man3 and
#     the overview syncq(7) in man7
#  2. a consumer and every example (the installed examples/) built with find_package(syncq)
#     (syncq::syncq, static) and run (po_run and po_spawn, which measure,
#     with small arguments; am_mpi in step 5); the consumer also against
#     syncq::syncq_shared, whose link line names libsyncq.so alone (the
#     library's Boost.Context and hwloc are not in its interface); a
#     required component the install lacks fails find_package with a
#     message that names it and the components there are;
#  3. the same examples built with pkg-config against the shared library,
#     with an rpath, and run (po_run, po_spawn as in step 2); and against the archive (syncq-static.pc),
#     checked to need no libsyncq.so;
#     README's link lines (between "<!-- link:" and "<!-- link: end -->")
#     as they stand (with -o and an rpath added): its CMake lines in a project of their own (step 2c),
#     its cc lines (3a) with the consumer as prog.c, its mpicc lines
#     (step 5) with examples/am_mpi.c;
#  4. the "lab" component: syncq-lab finds its report builder relative to
#     its install prefix, also after the prefix is moved;
#  5. per MPI built here, the installed transport (libsyncq_am_mpi_<impl>.a,
#     syncq-am-mpi-<impl>.pc, syncq::am_mpi_<impl>): examples/am_mpi.c
#     built with that MPI's compiler through pkg-config, with the ordinary
#     compiler through find_package (examples/CMakeLists.txt in step 2,
#     the transport a required component), and
#     with that MPI's compiler and a plain -l line (the transport before
#     -lsyncq), each run on 2 ranks (the latter two with every peer through
#     MPI, SYNCQ_AM_FORCE_MPI=1).
# usage: install_test.sh BUILD_DIR SOURCE_DIR [IMPL=MPIRUN ...]
set -euo pipefail
build=$1
src=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
examples="signal_nblfq lock_counter work_queue postoffice po_server am_reqreply po_run po_spawn"
# example BINARY: run an example; the two that measure with small arguments
example() {
  case $(basename "$1") in
  *po_run) "$1" fiber 2 1000 1 ;;
  *po_spawn) "$1" fiber 100 1 ;;
  *) "$1" ;;
  esac
}
# README's link lines: its sh and cmake blocks between the link markers
readme_block() { sed -n '/^<!-- link: /,/^<!-- link: end -->/p' "$src/README.md" | sed -n "/^\`\`\`$1\$/,/^\`\`\`\$/p" | grep -v '^```'; }
readme_sh=$(readme_block sh)
readme_cmake=$(readme_block cmake)
if ! grep -q '^cc ' <<<"$readme_sh" || ! grep -q '^mpicc' <<<"$readme_sh" || ! grep -q 'find_package(syncq' <<<"$readme_cmake"; then
  echo "FAIL: README's link lines (cc, mpicc, find_package between <!-- link: --> markers) are not there"; exit 1
fi
# run_readme_line DIR LINE: the line, its comment dropped, in DIR (which holds prog.c), writing DIR/prog
run_readme_line() { (cd "$1" && eval "${2%% #*} -o prog -Wl,-rpath,$libdir"); }

# 1. library component
cmake --install "$build" --prefix "$tmp/prefix" --component library >/dev/null
test -f "$tmp/prefix/include/syncq/syncq.h"
test -f "$tmp/prefix/include/syncq/static/queue/nblfq.h"
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -1)
libdir=${libdir%/}
test -f "$libdir/libsyncq.a"
version=$(sed -n 's/^Version: //p' "$libdir/pkgconfig/syncq.pc")
soname=$(readelf -d "$libdir/libsyncq.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
want="libsyncq.so.$(echo "$version" | cut -d. -f1,2)"
if [ "$soname" != "$want" ]; then echo "FAIL: soname $soname, want $want (version $version)"; exit 1; fi
test -e "$libdir/$soname"
if [ -e "$tmp/prefix/bin/syncq-lab" ] || [ -e "$tmp/prefix/share/syncq" ]; then
  echo "FAIL: the library component installed the lab"; exit 1
fi
if [ -d "$build/docs/api/man/man3" ]; then
  man3=$(ls -d "$tmp"/prefix/share/man/man3 2>/dev/null || true)
  if [ -z "$man3" ] || [ ! -f "$man3/syncq_queue_create.3" ]; then echo "FAIL: man pages not installed"; exit 1; fi
  if ls "$man3" | grep -qv '^syncq_'; then echo "FAIL: a man page not named syncq_*: $(ls "$man3" | grep -v '^syncq_' | head -3)"; exit 1; fi
  # the overview a first "man syncq" opens, naming the families' entry points
  if ! grep -q 'syncq_queue_create(3)' "$tmp/prefix/share/man/man7/syncq.7" 2>/dev/null; then
    echo "FAIL: syncq(7), the overview, is not installed in share/man/man7"; exit 1
  fi
  echo "man pages: $(ls "$man3" | wc -l) in share/man/man3, syncq(7) in share/man/man7"
fi
# nothing test-only in the installed headers (invariant checkers, hooks and
# stand-in primitives live in tests/support)
if grep -rlE '_HOOK\b|OVERRIDE|check_invariant|define[[:space:]]+SYNCQ_RACE|syncq_race' "$tmp/prefix/include"; then
  echo "FAIL: test-only names in the installed headers (above)"; exit 1
fi
# each installed header compiles alone from the prefix, as C11 and C++17:
# a header that includes one the install leaves out (or leans on another
# being included first) fails here, where tests/cxx, which compiles from
# the source tree, cannot see it (syncq/am_mpi.h needs mpi.h: step 5)
nheaders=0
for h in $(cd "$tmp/prefix/include" && find syncq -name '*.h' ! -name am_mpi.h | sort); do
  printf '#include <%s>\n' "$h" >"$tmp/header.c"
  if ! cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$tmp/prefix/include" "$tmp/header.c" ||
    ! c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$tmp/prefix/include" "$tmp/header.c"; then
    echo "FAIL: the installed $h does not compile on its own"; exit 1
  fi
  nheaders=$((nheaders + 1))
done
echo "installed headers: $nheaders compile alone as C11 and C++17"
echo "library component: libsyncq $version, soname $soname, no lab"
# the examples, installed beside the docs: every file of examples/, so the
# steps below build them from the install, as a user without a checkout does
ex="$tmp/prefix/share/doc/syncq/examples"
for f in $(cd "$src/examples" && ls); do
  if ! cmp -s "$src/examples/$f" "$ex/$f"; then echo "FAIL: examples/$f is not installed as $ex/$f"; exit 1; fi
done
echo "examples: $(ls "$ex" | wc -l) files in share/doc/syncq/examples"
# the licence, and the README with every document it names, under the
# tree's names (docs/library.md is share/doc/syncq/docs/library.md)
doc="$tmp/prefix/share/doc/syncq"
cmp -s "$src/LICENSE" "$doc/LICENSE" || { echo "FAIL: LICENSE is not installed in share/doc/syncq"; exit 1; }
cmp -s "$src/README.md" "$doc/README.md" || { echo "FAIL: README.md is not installed in share/doc/syncq"; exit 1; }
for d in $(grep -o 'docs/[A-Za-z0-9_-]*\.md' "$doc/README.md" | sort -u); do
  cmp -s "$src/$d" "$doc/$d" || { echo "FAIL: the installed README names $d, not installed as share/doc/syncq/$d"; exit 1; }
done
echo "docs: LICENSE, README.md and the $(ls "$doc/docs" | wc -l) documents of docs/ in share/doc/syncq"

# 2. find_package: the consumer and the examples (static syncq::syncq)
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer"
# 2b. the shared library's user links libsyncq.so and nothing else: the
# library's own dependencies (Boost.Context, hwloc: its DT_NEEDED) are not
# in syncq::syncq_shared's interface; the archive's user links them
"$tmp/consumer/consumer_shared"
targets="$libdir/cmake/syncq/syncqTargets.cmake"
iface() { sed -n "/^set_target_properties($1 PROPERTIES/,/^)/s/.*INTERFACE_LINK_LIBRARIES \"\(.*\)\"/\1/p" "$targets"; }
shared_iface=$(iface syncq::syncq_shared)
case "$shared_iface" in
*boost* | *hwloc*) echo "FAIL: syncq::syncq_shared exports its private dependencies: $shared_iface"; exit 1 ;;
esac
link="$tmp/consumer/CMakeFiles/consumer_shared.dir/link.txt"
if [ -f "$link" ]; then
  libs=$(grep -oE -- '(^| )-l[A-Za-z0-9_+-]+|lib[A-Za-z0-9_+-]+\.(so|a)[.0-9]*' "$link" | tr -d ' ' | sort -u | tr '\n' ' ')
  if [ "$libs" != "$(basename "$(readlink -f "$libdir/libsyncq.so")") " ]; then
    echo "FAIL: a syncq::syncq_shared user links $libs(want libsyncq.so alone)"; exit 1
  fi
  echo "find_package, shared: links ${libs}alone (syncq::syncq_shared: ${shared_iface:-no interface libraries}); static: $(iface syncq::syncq_static)"
fi
# the MPI transports built here are required components (step 5 runs am_mpi_<impl>)
mpis=""
for pair in "$@"; do mpis="$mpis${mpis:+;}${pair%%=*}"; done
cmake -S "$ex" -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DSYNCQ_EXAMPLES_MPI="$mpis" >/dev/null
cmake --build "$tmp/examples" >/dev/null
for e in $examples; do
  echo "-- example $e (find_package, static)"
  example "$tmp/examples/$e"
done

# 2b'. a required component this install lacks: find_package fails and says
# which one, and what the install has instead
mkdir -p "$tmp/no-component"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(p C)\nfind_package(syncq 0.1 REQUIRED COMPONENTS am_mpi_nosuch)\n' \
  >"$tmp/no-component/CMakeLists.txt"
if out=$(cmake -S "$tmp/no-component" -B "$tmp/no-component/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" 2>&1); then
  echo "FAIL: find_package(syncq COMPONENTS am_mpi_nosuch) succeeded"; exit 1
fi
out=$(tr -s ' \n' ' ' <<<"$out")
if ! grep -q 'There is no component am_mpi_nosuch; this install has' <<<"$out"; then
  echo "FAIL: find_package of a missing component does not say which is missing and what there is: $out"; exit 1
fi
out=${out#*Reason given by package: }
echo "find_package, a missing component: ${out%% -- Configuring*}"

# 2c. README's CMake lines, in a project of their own
mkdir -p "$tmp/readme-cmake"
cp "$src/tests/install/consumer/main.c" "$tmp/readme-cmake/prog.c"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(prog C)\nadd_executable(prog prog.c)\n%s\n' "$readme_cmake" \
  >"$tmp/readme-cmake/CMakeLists.txt"
echo "-- README's CMake lines"
cmake -S "$tmp/readme-cmake" -B "$tmp/readme-cmake/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/readme-cmake/build" >/dev/null
"$tmp/readme-cmake/build/prog"

# 3. pkg-config: the shared library, found through an rpath
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -o "$tmp/pc-consumer" "$src/tests/install/consumer/main.c" $(pkg-config --cflags --libs syncq) -pthread \
  -Wl,-rpath,"$libdir"
"$tmp/pc-consumer"
for e in $examples; do
  echo "-- example $e (pkg-config, shared)"
  cc -std=c11 -Wall -Wextra -Werror -o "$tmp/pc-$e" "$ex/$e.c" $(pkg-config --cflags --libs syncq) -pthread \
    -Wl,-rpath,"$libdir"
  example "$tmp/pc-$e"
done

# 3a. README's cc lines
mkdir -p "$tmp/readme-cc"
cp "$src/tests/install/consumer/main.c" "$tmp/readme-cc/prog.c"
while IFS= read -r line; do
  echo "-- README: $(sed 's/ *#.*//' <<<"$line")"
  run_readme_line "$tmp/readme-cc" "$line"
  "$tmp/readme-cc/prog"
done < <(grep '^cc ' <<<"$readme_sh")

# 3b. pkg-config, static: syncq-static.pc links the archive by its path
for e in $examples; do
  echo "-- example $e (pkg-config syncq-static)"
  cc -std=c11 -Wall -Wextra -Werror -o "$tmp/st-$e" "$ex/$e.c" $(pkg-config --cflags --libs syncq-static)
  if readelf -d "$tmp/st-$e" | grep -q 'NEEDED.*libsyncq'; then echo "FAIL: st-$e needs the shared libsyncq"; exit 1; fi
  example "$tmp/st-$e"
done

# 4. the lab component, in a prefix that is then moved
if cmake --install "$build" --prefix "$tmp/lab" --component lab >/dev/null 2>&1 && [ -x "$tmp/lab/bin/syncq-lab" ]; then
  mv "$tmp/lab" "$tmp/lab-moved"
  # SYNCQ_PYTHON=echo: syncq-lab runs "echo <report script> <dir>", which shows the script it found
  found=$(SYNCQ_PYTHON=echo "$tmp/lab-moved/bin/syncq-lab" report "$tmp/results" | cut -d' ' -f1)
  if [ "$(readlink -f "$found")" != "$(readlink -f "$tmp/lab-moved/share/syncq/report/build.py")" ]; then
    echo "FAIL: the installed lab's report builder is $found"; exit 1
  fi
  test -f "$tmp/lab-moved/share/syncq/report/syncq_report/cli.py"
  echo "lab component: syncq-lab finds $found"
else
  echo "lab component not built here (SYNCQ_BUILD_LAB=OFF): not checked"
fi

# 5. the MPI transports, from the installed prefix
mpi_checked=""
for pair in "$@"; do
  impl=${pair%%=*} mpirun=${pair#*=}
  mpicc=$(command -v "mpicc.$impl" || true)
  if [ -z "$mpicc" ]; then echo "MPI transport $impl: mpicc.$impl not found: not checked"; continue; fi
  test -f "$libdir/libsyncq_am_mpi_$impl.a"
  test -f "$libdir/pkgconfig/syncq-am-mpi-$impl.pc"
  case $impl in
  openmpi) run() { OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 120 "$mpirun" --oversubscribe \
                     --mca btl_vader_single_copy_mechanism none -n 2 "$@"; } ;;
  *) run() { timeout -k 5 120 "$mpirun" -n 2 "$@"; } ;;
  esac
  m="$tmp/mpi-$impl"
  mkdir -p "$m"
  printf '#include <syncq/am_mpi.h>\n' >"$m/header.c"
  "$mpicc" -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$tmp/prefix/include" "$m/header.c" # alone, as above
  echo "-- MPI transport $impl (pkg-config)"
  "$mpicc" -std=c11 -Wall -Wextra -Werror -o "$m/pc" "$ex/am_mpi.c" \
    $(pkg-config --cflags --libs "syncq-am-mpi-$impl")
  run "$m/pc"
  echo "-- MPI transport $impl (find_package, syncq::am_mpi_$impl: examples/CMakeLists.txt)"
  # with the ordinary compiler: the target brings the MPI's flags (docs/am-mpi.md)
  if [ ! -x "$tmp/examples/am_mpi_$impl" ]; then
    echo "FAIL: find_package(syncq) did not find the installed transport $impl (no am_mpi_$impl example)"; exit 1
  fi
  SYNCQ_AM_FORCE_MPI=1 run "$tmp/examples/am_mpi_$impl" # every peer through MPI
  echo "-- MPI transport $impl (-lsyncq_am_mpi_$impl -lsyncq, the shared library beside it)"
  "$mpicc" -std=c11 -o "$m/plain" "$ex/am_mpi.c" -I"$tmp/prefix/include" -L"$libdir" \
    "-lsyncq_am_mpi_$impl" -lsyncq -Wl,-rpath,"$libdir"
  SYNCQ_AM_FORCE_MPI=1 run "$m/plain"
  while IFS= read -r line; do
    echo "-- README: $(sed 's/ *#.*//' <<<"$line")"
    mkdir -p "$m/readme"
    cp "$ex/am_mpi.c" "$m/readme/prog.c"
    run_readme_line "$m/readme" "$line"
    run "$m/readme/prog"
  done < <(grep "^mpicc.$impl " <<<"$readme_sh" || true)
  mpi_checked="$mpi_checked $impl"
done
[ $# -gt 0 ] || echo "MPI transport: no MPI built here: not checked"
echo "install test: library and lab components, find_package and pkg-config consumers, every example${mpi_checked:+, the MPI transport from the prefix with:$mpi_checked}"
