# SPDX-License-Identifier: BSD-2-Clause
# Cross-compile syncq for 64-bit Arm (AArch64) with Debian's
# gcc-aarch64-linux-gnu, and run its tests under qemu-user.
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#
# Libraries for the target (cmocka) come from Debian's arm64 multiarch
# packages (dpkg --add-architecture arm64; libcmocka-dev:arm64), found by
# pkg-config in /usr/lib/aarch64-linux-gnu/pkgconfig; so does hwloc
# (libhwloc-dev:arm64), and find_library finds the postoffice fiber
# backend's libboost_context there (libboost-context-dev:arm64; its
# headers are the architecture-independent /usr/include/boost). CTest runs every test
# executable through qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR); the
# loader and C library at run time are Debian's libc6:arm64 (multiarch,
# /lib/ld-linux-aarch64.so.1). Not qemu's -L /usr/aarch64-linux-gnu: with
# that prefix qemu 7.2 hangs in a forked child, and the AM tests fork.
# SYNCQ_QEMU_CPU picks the emulated CPU: "max" (default: Armv8.x with LSE,
# so the double-width CAS is CASP) or e.g. "cortex-a53" (Armv8.0, no LSE:
# libatomic falls back to an LDAXP/STLXP loop).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(SYNCQ_CROSS_TRIPLE aarch64-linux-gnu)

find_program(SYNCQ_CROSS_CC ${SYNCQ_CROSS_TRIPLE}-gcc)
if(NOT SYNCQ_CROSS_CC)
  message(FATAL_ERROR "${SYNCQ_CROSS_TRIPLE}-gcc not found (Debian package gcc-aarch64-linux-gnu)")
endif()
set(CMAKE_C_COMPILER ${SYNCQ_CROSS_CC})
find_program(SYNCQ_CROSS_CXX ${SYNCQ_CROSS_TRIPLE}-g++)
if(SYNCQ_CROSS_CXX)
  set(CMAKE_CXX_COMPILER ${SYNCQ_CROSS_CXX})
endif()

# Target libraries: the cross sysroot, then Debian's multiarch directories.
set(CMAKE_FIND_ROOT_PATH /usr/${SYNCQ_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_LIBRARY_ARCHITECTURE ${SYNCQ_CROSS_TRIPLE})
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${SYNCQ_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

find_program(SYNCQ_QEMU qemu-aarch64)
if(SYNCQ_QEMU)
  if(NOT DEFINED SYNCQ_QEMU_CPU)
    set(SYNCQ_QEMU_CPU max)
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR ${SYNCQ_QEMU};-cpu;${SYNCQ_QEMU_CPU})
endif()
