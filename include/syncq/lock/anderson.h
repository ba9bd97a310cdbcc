/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/anderson.h — Anderson's array-based queue lock ("anderson";
 * Anderson 1990, the array queue lock of 003 §3.1 and 000 §3.1). FIFO.
 * Each waiter spins on its own cache-line slot. The slot array is inside
 * the lock object (no pointers), so it can live in memory shared between
 * processes. At most max_threads threads may hold or await it at once:
 * one more gets SYNCQ_ELIMIT instead of overrunning the array.
 */
#ifndef SYNCQ_LOCK_ANDERSON_H
#define SYNCQ_LOCK_ANDERSON_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slots in the lock object: the most threads (holder and waiters) at once.
 * Also the default of syncq_lock_config.max_threads for the array locks. */
#define SYNCQ_LOCK_ARRAY_MAX_SLOTS 64u

typedef struct syncq_lock_array_slot {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) word;
} syncq_lock_array_slot;

typedef struct syncq_lock_anderson {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) next_slot; /* fetch-and-increment: the next place */
  _Atomic(uint32_t) inside;                            /* holder + waiters, at most max_threads */
  SYNCQ_CACHELINE_ALIGNED uint32_t holder_place;       /* written by the holder only */
  uint32_t max_threads;                                /* <= slots */
  uint32_t mask;                                       /* slots - 1 (slots: a power of two) */
  int wait;
  uint8_t process_shared; /* 0 or 1; a byte, not bool: other processes can write any value into it */
  /* 1 HAS_LOCK, 0 MUST_WAIT, 2 MUST_WAIT and its waiter may sleep on it */
  syncq_lock_array_slot slot[SYNCQ_LOCK_ARRAY_MAX_SLOTS];
} syncq_lock_anderson;

/* cfg->max_threads: 0 means SYNCQ_LOCK_ARRAY_MAX_SLOTS. Every discipline;
 * process_shared allowed. syncq_lock_anderson_lock and _trylock refuse
 * a thread past max_threads holding or awaiting the lock. SYNCQ_EINVAL: l is
 * NULL, or cfg->wait is no syncq_wait_discipline. SYNCQ_ELIMIT: cfg->max_threads is
 * above SYNCQ_LOCK_ARRAY_MAX_SLOTS. */
SYNCQ_API int syncq_lock_anderson_init(syncq_lock_anderson *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_anderson_destroy(syncq_lock_anderson *l);
/* Acquire the lock, waiting for it.
 * SYNCQ_EINVAL: l is NULL, or its mask or max_threads is one init cannot
 * have written (another process wrote over the shared lock).
 * SYNCQ_ELIMIT: max_threads threads hold the lock or wait for it; the
 * caller holds nothing.
 */
SYNCQ_API int syncq_lock_anderson_lock(syncq_lock_anderson *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock or waits for it; the caller
 * holds nothing.
 * SYNCQ_EINVAL: l is NULL, or its mask or max_threads is one init cannot
 * have written (another process wrote over the shared lock).
 * SYNCQ_ELIMIT: max_threads threads hold the lock or wait for it.
 */
SYNCQ_API int syncq_lock_anderson_trylock(syncq_lock_anderson *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held, its mask or max_threads
 * is one init cannot have written, or the holder's place is past the slots
 * (written by something other than the holder).
 */
SYNCQ_API int syncq_lock_anderson_unlock(syncq_lock_anderson *l);

#ifdef __cplusplus
}
#endif
#endif
