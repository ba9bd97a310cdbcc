/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/platform.h — the operating-system services syncq builds on, behind
 * one interface: futex wait and wake, yielding the processor, and CPU
 * feature checks. Linux only for now; other systems return SYNCQ_ENOTSUP.
 */
#ifndef SYNCQ_PLATFORM_H
#define SYNCQ_PLATFORM_H

#include "syncq/export.h"

#include "syncq/atomic.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sleep while *word == expected, until woken or timeout_ns passes
 * (timeout_ns < 0: no timeout). Spurious returns are allowed: callers
 * re-check their condition in a loop. process_shared selects a futex that
 * works across processes mapping the same memory.
 * Returns SYNCQ_OK (woken, or *word != expected), SYNCQ_ETIMEDOUT,
 * SYNCQ_EINVAL (word NULL), SYNCQ_ENOTSUP (no futex on this system). */
SYNCQ_API int syncq_futex_wait(_Atomic(uint32_t) *word, uint32_t expected, int64_t timeout_ns,
                     bool process_shared);

/* Wake up to n sleepers on word (n <= 0 wakes all). Returns the number woken
 * (>= 0), SYNCQ_EINVAL or SYNCQ_ENOTSUP. */
SYNCQ_API int syncq_futex_wake(_Atomic(uint32_t) *word, int n, bool process_shared);

/* Allocate size bytes aligned to align (rounded up to a power of two no
 * smaller than a pointer), for a structure's storage from its ops table.
 * NULL when size is 0, align is not a power of two, or memory is short.
 * Free with free(). */
SYNCQ_API void *syncq_alloc_aligned(size_t size, size_t align);

/* Give the processor to another runnable thread (sched_yield). */
SYNCQ_API void syncq_yield(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_PLATFORM_H */
