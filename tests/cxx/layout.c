/* SPDX-License-Identifier: BSD-2-Clause */
/* layout.c — the sizes and alignments C gives the public structures, for
 * headers_test.cpp to compare with C++'s (std::atomic<T> for _Atomic(T)
 * below C++23 must not change a layout the library relies on). */
#include "layout.h"

#include "syncq/syncq.h"

#define ENTRY(T) {#T, sizeof(T), _Alignof(T)},
const syncq_layout syncq_c_layouts[] = {SYNCQ_LAYOUT_TYPES(ENTRY)};
const int syncq_c_nlayouts = sizeof syncq_c_layouts / sizeof syncq_c_layouts[0];
