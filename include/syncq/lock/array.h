/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/array.h — 003's array queue lock, in the two forms 003 §3.1
 * compares: the place in the array taken by a CAS loop ("array-cas", the
 * LL-SC form) or by one fetch-and-add ("array-faa", the fetchop form).
 * FIFO. Each slot holds the ticket that may enter next at that place, so a
 * slot shared by more waiters than slots stays correct (no thread limit:
 * max_threads only sizes the array). No pointers: process-shared capable.
 */
#ifndef SYNCQ_LOCK_ARRAY_H
#define SYNCQ_LOCK_ARRAY_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/lock/anderson.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_lock_array {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) next_ticket; /* the only read-modify-write target */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) served;      /* the holder's ticket; holder writes */
  uint32_t mask;                                         /* slots - 1 */
  int wait;
  uint8_t process_shared; /* 0 or 1; a byte, not bool: other processes can write any value into it */
  /* slot[t & mask] == t << 1: ticket t may enter (tickets modulo 2^31);
   * bit 0: a waiter may sleep on the slot */
  syncq_lock_array_slot slot[SYNCQ_LOCK_ARRAY_MAX_SLOTS];
} syncq_lock_array;

/* cfg->max_threads sizes the array (rounded up to a power of two; 0 means
 * SYNCQ_LOCK_ARRAY_MAX_SLOTS). Every discipline; process_shared allowed.
 * SYNCQ_EINVAL: l is NULL, or cfg->wait is no syncq_wait_discipline. SYNCQ_ELIMIT:
 * cfg->max_threads is above SYNCQ_LOCK_ARRAY_MAX_SLOTS. */
SYNCQ_API int syncq_lock_array_cas_init(syncq_lock_array *l, const syncq_lock_config *cfg);
SYNCQ_API int syncq_lock_array_faa_init(syncq_lock_array *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_array_destroy(syncq_lock_array *l);
/* Acquire the lock, waiting for it (the ticket taken by a CAS loop).
 * SYNCQ_EINVAL: l is NULL, or its mask is one init cannot have written
 * (another process wrote over the shared lock).
 */
SYNCQ_API int syncq_lock_array_cas_lock(syncq_lock_array *l);
/* Acquire the lock, waiting for it (the ticket taken by fetch-and-add).
 * SYNCQ_EINVAL: l is NULL, or its mask is one init cannot have written
 * (another process wrote over the shared lock).
 */
SYNCQ_API int syncq_lock_array_faa_lock(syncq_lock_array *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock or waits for it; the caller
 * holds nothing.
 * SYNCQ_EINVAL: l is NULL, or its mask is one init cannot have written
 * (another process wrote over the shared lock).
 */
SYNCQ_API int syncq_lock_array_trylock(syncq_lock_array *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held, or its mask is one init
 * cannot have written.
 */
SYNCQ_API int syncq_lock_array_unlock(syncq_lock_array *l);

#ifdef __cplusplus
}
#endif
#endif
