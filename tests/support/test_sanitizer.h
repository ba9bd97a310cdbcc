/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_sanitizer.h — which sanitizer a test is built under, for tests
 * that plan less work there (a sanitizer keeps state per thread and per
 * fiber, and needs deeper stacks): TSAN, ASAN and SANITIZED, each 0 or 1.
 * They are the library's detection (SYNCQ_TSAN / SYNCQ_ASAN of
 * syncq/export.h, which GCC and Clang both answer), so a test and the
 * code it tests never disagree on it.
 */
#ifndef SYNCQ_TEST_SANITIZER_H
#define SYNCQ_TEST_SANITIZER_H

#include "syncq/export.h" /* SYNCQ_TSAN, SYNCQ_ASAN */

#define TSAN SYNCQ_TSAN
#define ASAN SYNCQ_ASAN
#define SANITIZED (TSAN || ASAN)

#endif
