/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/barrier/central.h — the sense-reversing centralized barrier, with
 * arrivals counted by a CAS loop ("central-cas", 003's LL-SC form) or one
 * fetch-and-add ("central-faa", 003's fetchop form). No pointers, no
 * per-thread state in the barrier: can live in memory shared between
 * processes.
 */
#ifndef SYNCQ_BARRIER_CENTRAL_H
#define SYNCQ_BARRIER_CENTRAL_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/barrier.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_barrier_central {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) count; /* arrivals this episode */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) sense; /* flipped by the last arrival */
  _Atomic(uint32_t) sleepers;
  _Atomic(uint32_t) broken; /* 1 after a timed wait ran out, until reset */
  uint32_t threads;
  int wait;               /* default SPIN */
  uint8_t process_shared; /* 0 or 1; a byte, not bool: other processes can write any value into it */
} syncq_barrier_central;

/* cfg as syncq_barrier_create's (every discipline; process_shared
 * allowed). SYNCQ_EINVAL: b or cfg is NULL, cfg->threads is 0, or cfg->wait is no
 * syncq_wait_discipline. SYNCQ_ELIMIT: cfg->threads is above
 * SYNCQ_BARRIER_MAX_THREADS. */
SYNCQ_API int syncq_barrier_central_init(syncq_barrier_central *b, const syncq_barrier_config *cfg);
/* Destroy the centralized barrier (it holds nothing to free).
 * SYNCQ_EINVAL: b is NULL.
 * SYNCQ_EBUSY: an episode is under way (some participant has arrived and
 * the others have not) and the barrier is not broken.
 */
SYNCQ_API int syncq_barrier_central_destroy(syncq_barrier_central *b);
/* Arrive as participant id and wait for the others, the count updated by
 * fetch-and-add.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or the
 * participant count is one init cannot have written (another process wrote
 * over the shared barrier).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode, or more threads arrived in one episode than it has
 * participants: another process wrote over the shared barrier, or a
 * participant came twice); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_central_faa_wait(syncq_barrier_central *b, unsigned id);
/* Arrive as participant id and wait for the others, the count updated by a
 * CAS loop.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or the
 * participant count is one init cannot have written (another process wrote
 * over the shared barrier).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode, or more threads arrived in one episode than it has
 * participants: another process wrote over the shared barrier, or a
 * participant came twice); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_central_cas_wait(syncq_barrier_central *b, unsigned id);
/* Arrive as participant id and wait for the others, the count updated by
 * fetch-and-add, for at most timeout_ns nanoseconds once it has to wait.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or
 * timeout_ns is 0, or the participant count is one init cannot have written
 * (another process wrote over the shared barrier).
 * SYNCQ_ETIMEDOUT: timeout_ns passed before every participant arrived; the
 * barrier is now broken (the other waiters return SYNCQ_EBROKEN).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode, or more threads arrived in one episode than it has
 * participants: another process wrote over the shared barrier, or a
 * participant came twice); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_central_faa_wait_timed(syncq_barrier_central *b, unsigned id, uint64_t timeout_ns);
/* Arrive as participant id and wait for the others, the count updated by a
 * CAS loop, for at most timeout_ns nanoseconds once it has to wait.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or
 * timeout_ns is 0, or the participant count is one init cannot have written
 * (another process wrote over the shared barrier).
 * SYNCQ_ETIMEDOUT: timeout_ns passed before every participant arrived; the
 * barrier is now broken (the other waiters return SYNCQ_EBROKEN).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode, or more threads arrived in one episode than it has
 * participants: another process wrote over the shared barrier, or a
 * participant came twice); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_central_cas_wait_timed(syncq_barrier_central *b, unsigned id, uint64_t timeout_ns);
/* Mend a broken barrier: back to the state after init. Only while no thread
 * is inside a wait.
 * SYNCQ_EINVAL: b is NULL.
 */
SYNCQ_API int syncq_barrier_central_reset(syncq_barrier_central *b);

#ifdef __cplusplus
}
#endif
#endif
