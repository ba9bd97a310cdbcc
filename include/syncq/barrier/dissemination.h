/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/barrier/dissemination.h — the dissemination barrier
 * ("dissemination"; Hensgen, Finkel & Manber 1988, as in Mellor-Crummey &
 * Scott 1991 §3.2, Figure 10): ceil(log2 P) rounds; in round k thread i
 * signals thread (i + 2^k) mod P and waits for its own flag. Flags are
 * allocated at init: not process-shared.
 */
#ifndef SYNCQ_BARRIER_DISSEMINATION_H
#define SYNCQ_BARRIER_DISSEMINATION_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/barrier.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_barrier_dissemination_flag syncq_barrier_dissemination_flag;
typedef struct syncq_barrier_dissemination_local syncq_barrier_dissemination_local;

typedef struct syncq_barrier_dissemination {
  SYNCQ_CACHELINE_ALIGNED syncq_barrier_dissemination_flag *flag; /* [threads][2][rounds] */
  syncq_barrier_dissemination_local *local;                       /* [threads]: parity, sense */
  uint32_t threads;
  uint32_t rounds;
  int wait;
  _Atomic(uint32_t) sleepers;
  _Atomic(uint32_t) broken; /* 1 after a timed wait ran out, until reset */
} syncq_barrier_dissemination;

/* cfg as syncq_barrier_create's (every discipline); allocates the flags.
 * SYNCQ_EINVAL: b or cfg is NULL, cfg->threads is 0, or cfg->wait is no
 * syncq_wait_discipline. SYNCQ_ELIMIT: cfg->threads is above
 * SYNCQ_BARRIER_MAX_THREADS. SYNCQ_ENOTSUP:
 * cfg->process_shared is set. SYNCQ_ENOMEM: the flags could not be
 * allocated. */
SYNCQ_API int syncq_barrier_dissemination_init(syncq_barrier_dissemination *b, const syncq_barrier_config *cfg);
/* Destroy the dissemination barrier, freeing its flags.
 * SYNCQ_EINVAL: b is NULL.
 */
SYNCQ_API int syncq_barrier_dissemination_destroy(syncq_barrier_dissemination *b);
/* Arrive as participant id and wait for the others.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or it was
 * never initialised (or was destroyed).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_dissemination_wait(syncq_barrier_dissemination *b, unsigned id);
/* Arrive as participant id and wait for the others, for at most timeout_ns
 * nanoseconds once it has to wait.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or
 * timeout_ns is 0, or it was never initialised (or was destroyed).
 * SYNCQ_ETIMEDOUT: timeout_ns passed before every participant arrived; the
 * barrier is now broken (the other waiters return SYNCQ_EBROKEN).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode); it stays broken until reset.
 */
SYNCQ_API int syncq_barrier_dissemination_wait_timed(syncq_barrier_dissemination *b, unsigned id, uint64_t timeout_ns);
/* Mend a broken barrier: back to the state after init. Only while no thread
 * is inside a wait.
 * SYNCQ_EINVAL: b is NULL, or it was never initialised (or was destroyed).
 */
SYNCQ_API int syncq_barrier_dissemination_reset(syncq_barrier_dissemination *b);

#ifdef __cplusplus
}
#endif
#endif
