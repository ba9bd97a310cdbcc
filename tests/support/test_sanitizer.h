/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_sanitizer.h — which sanitizer a test is built under, for tests
 * that plan less work there (a sanitizer keeps state per thread and per
 * fiber, and needs deeper stacks): TSAN, ASAN and SANITIZED, each 0 or 1.
 * GCC says so with __SANITIZE_THREAD__ / __SANITIZE_ADDRESS__, Clang
 * with __has_feature.
 */
#ifndef SYNCQ_TEST_SANITIZER_H
#define SYNCQ_TEST_SANITIZER_H

#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif
#ifndef TSAN
#define TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifndef ASAN
#define ASAN 0
#endif

#define SANITIZED (TSAN || ASAN)

#endif
