/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sanitizer.h — which sanitizer the postoffice is built under, in one
 * place, for everything that must agree on it: the fiber switch's hooks
 * (fiber_context.h), the schedulers' orders that ThreadSanitizer must see
 * (PO_FENCED in fiber_sched.c), the spawn deque's form (PO_DEQUE_FENCES
 * in spawn_deque.h) and the stack pool's shadow (fiber_stack.c). Were they
 * to disagree, TSan would run fibers it was not told of, or miss the
 * orders it cannot draw from a fence.
 *
 * PO_TSAN and PO_ASAN (0 or 1) are the project's detection,
 * SYNCQ_TSAN / SYNCQ_ASAN of syncq/export.h, which GCC and Clang both
 * answer, under the postoffice's names.
 */
#ifndef SYNCQ_PO_SANITIZER_H
#define SYNCQ_PO_SANITIZER_H

#include "syncq/export.h" /* SYNCQ_TSAN, SYNCQ_ASAN */

#define PO_TSAN SYNCQ_TSAN
#define PO_ASAN SYNCQ_ASAN

#endif
