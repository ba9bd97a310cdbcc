/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sanitizer.h — which sanitizer the postoffice is built under, in one
 * place, for everything that must agree on it: the fiber switch's hooks
 * (fiber_context.h), the schedulers' orders that ThreadSanitizer must see
 * (PO_FENCED in fiber_sched.c) and the spawn deque's form
 * (PO_DEQUE_FENCES in spawn_deque.h). Were they to disagree, TSan would
 * run fibers it was not told of, or miss the orders it cannot draw from
 * a fence. The active messages' doorbell (src/am/am.c) takes its TSan
 * form from PO_TSAN too.
 *
 * GCC says so with __SANITIZE_THREAD__ / __SANITIZE_ADDRESS__; Clang (14
 * defines neither) with __has_feature. PO_TSAN and PO_ASAN: 0 or 1.
 */
#ifndef SYNCQ_PO_SANITIZER_H
#define SYNCQ_PO_SANITIZER_H

#if defined(__SANITIZE_THREAD__)
#define PO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PO_TSAN 1
#endif
#endif
#ifndef PO_TSAN
#define PO_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define PO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PO_ASAN 1
#endif
#endif
#ifndef PO_ASAN
#define PO_ASAN 0
#endif

#endif
