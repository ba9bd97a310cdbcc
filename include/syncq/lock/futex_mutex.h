/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/futex_mutex.h — the three-state futex mutex ("futex-mutex";
 * Drepper, "Futexes are tricky", mutex 2): 0 free, 1 held, 2 held with
 * possible sleepers; unlock makes a system call only in state 2. One word,
 * no pointers: process-shared with a shared futex.
 */
#ifndef SYNCQ_LOCK_FUTEX_MUTEX_H
#define SYNCQ_LOCK_FUTEX_MUTEX_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_lock_futex_mutex {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) word; /* 0 free, 1 held, 2 held and contended */
  int wait;                                       /* BLOCK or COMPETITIVE */
  uint8_t process_shared; /* 0 or 1; a byte, not bool: other processes can write any value into it */
} syncq_lock_futex_mutex;

/* Disciplines: BLOCK (default: immediate blocking) and COMPETITIVE (spin
 * one context-switch time first); process_shared allowed. SYNCQ_EINVAL: l
 * is NULL, or cfg->wait is no syncq_wait_discipline. SYNCQ_ENOTSUP: cfg->wait is SPIN or
 * YIELD. */
SYNCQ_API int syncq_lock_futex_mutex_init(syncq_lock_futex_mutex *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held.
 */
SYNCQ_API int syncq_lock_futex_mutex_destroy(syncq_lock_futex_mutex *l);
/* Acquire the lock, waiting for it.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_futex_mutex_lock(syncq_lock_futex_mutex *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock; the caller holds nothing.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_futex_mutex_trylock(syncq_lock_futex_mutex *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held.
 */
SYNCQ_API int syncq_lock_futex_mutex_unlock(syncq_lock_futex_mutex *l);

#ifdef __cplusplus
}
#endif
#endif
