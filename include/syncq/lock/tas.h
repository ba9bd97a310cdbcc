/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/tas.h — test-and-set ("tas") and test-and-test-and-set
 * ("ttas") locks with bounded exponential backoff (003 §3.1; 001 §4: every
 * lock of 001 is TTAS with backoff capped at 30 us; 000 §3 TAS and TTAS).
 * One word, no pointers: can live in memory shared between processes.
 */
#ifndef SYNCQ_LOCK_TAS_H
#define SYNCQ_LOCK_TAS_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Backoff of both locks after a failed test-and-set (SPIN discipline):
 * first wait and cap in ns (001: cap 30 us). */
#define SYNCQ_LOCK_TAS_BACKOFF_INITIAL_NS 100u
#define SYNCQ_LOCK_TAS_BACKOFF_CAP_NS 30000u

typedef struct syncq_lock_tas {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) word; /* 0 free, 1 held, 2 held and a waiter may sleep */
  int wait;                                       /* syncq_wait_discipline */
  uint8_t process_shared; /* 0 or 1; a byte, not bool: other processes can write any value into it */
} syncq_lock_tas;

/* cfg may be NULL (defaults: SPIN, private). Every discipline is
 * allowed; process_shared too. SYNCQ_EINVAL: l is NULL, or
 * cfg->wait is no syncq_wait_discipline. */
SYNCQ_API int syncq_lock_tas_init(syncq_lock_tas *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held.
 */
SYNCQ_API int syncq_lock_tas_destroy(syncq_lock_tas *l);
/* Acquire the lock, waiting for it.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_tas_lock(syncq_lock_tas *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock; the caller holds nothing.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_tas_trylock(syncq_lock_tas *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held.
 */
SYNCQ_API int syncq_lock_tas_unlock(syncq_lock_tas *l);
/* The same storage as a TTAS lock (spins on a plain load before each
 * TAS). cfg as for tas. SYNCQ_EINVAL: l is NULL, or cfg->wait is no syncq_wait_discipline. */
SYNCQ_API int syncq_lock_ttas_init(syncq_lock_tas *l, const syncq_lock_config *cfg);
/* Acquire the lock, waiting for it.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_ttas_lock(syncq_lock_tas *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock; the caller holds nothing.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_ttas_trylock(syncq_lock_tas *l);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held.
 */
SYNCQ_API int syncq_lock_ttas_destroy(syncq_lock_tas *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held.
 */
SYNCQ_API int syncq_lock_ttas_unlock(syncq_lock_tas *l);

#ifdef __cplusplus
}
#endif
#endif
