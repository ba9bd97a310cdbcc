#!/usr/bin/env bash
# Install the build into a temporary prefix, then build a consumer against it
# twice: with CMake's find_package(syncq), and with pkg-config.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/syncq/syncq.h"
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -1)
test -f "$libdir/libsyncq.a"
ls "$libdir"/libsyncq.so* >/dev/null

cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -o "$tmp/pc-consumer" "$src/tests/install/consumer/main.c" $(pkg-config --cflags --libs syncq) -pthread
LD_LIBRARY_PATH="$libdir" "$tmp/pc-consumer"
echo "install test: find_package and pkg-config consumers both work"
