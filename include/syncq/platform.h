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
 * Returns SYNCQ_OK when woken, when *word != expected, or on a spurious
 * return (a signal).
 * SYNCQ_ETIMEDOUT: timeout_ns passed first.
 * SYNCQ_EINVAL: word is NULL.
 * SYNCQ_ENOTSUP: this system has no futex.
 * Thread safety: any thread, concurrently with waits and wakes on the same
 * word; from several processes on a word in shared memory when
 * process_shared is true (both sides must pass the same process_shared);
 * from a signal handler too (one futex system call, which may change
 * errno). From a postoffice fiber: it blocks the fiber's scheduler thread
 * (syncq/po.h, "Blocking calls").
 * Progress: blocking: it sleeps until woken, a timeout or a spurious
 * return. */
SYNCQ_API int syncq_futex_wait(_Atomic(uint32_t) *word, uint32_t expected, int64_t timeout_ns, bool process_shared);

/* Wake up to n sleepers on word (n <= 0 wakes all). Returns the number woken
 * (0 or more).
 * SYNCQ_EINVAL: word is NULL.
 * SYNCQ_ESYS: the futex system call failed; errno holds why.
 * SYNCQ_ENOTSUP: this system has no futex.
 * Thread safety: any thread or process (process_shared as the waiters'),
 * concurrently with waits and wakes on the same word; from a signal handler
 * too (one system call). From a postoffice fiber: yes.
 * Progress: wait-free as far as syncq goes: one futex system call, which
 * does not wait for the woken threads. */
SYNCQ_API int syncq_futex_wake(_Atomic(uint32_t) *word, int n, bool process_shared);

/* Allocate size bytes aligned to align (rounded up to a power of two no
 * smaller than a pointer), for a structure's storage from its ops table.
 * NULL when size is 0, align is not a power of two, or memory is short.
 * Free with free().
 * Thread safety: any thread (aligned_alloc is thread-safe); not from a
 * signal handler.
 * Progress: that of the C library's aligned_alloc (it may take the
 * allocator's locks). */
SYNCQ_API void *syncq_alloc_aligned(size_t size, size_t align);

/* Give the processor to another runnable thread (sched_yield).
 * Thread safety: any thread; from a signal handler too on Linux (a plain
 * system call). From a postoffice fiber it yields the scheduler
 * thread to the kernel, not to the other fibers (syncq_po_yield does that).
 * Progress: wait-free: one system call (the kernel decides when the caller
 * runs again). */
SYNCQ_API void syncq_yield(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_PLATFORM_H */
