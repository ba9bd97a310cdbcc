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
/* The typed API of the dissemination barrier: destroy, and wait by participant id 0..n-1. Statuses and
 * thread-safety: those of syncq/barrier.h's generic calls. */
SYNCQ_API int syncq_barrier_dissemination_destroy(syncq_barrier_dissemination *b);
SYNCQ_API int syncq_barrier_dissemination_wait(syncq_barrier_dissemination *b, unsigned id);
/* Timed wait and reset: the semantics of syncq/barrier.h. */
SYNCQ_API int syncq_barrier_dissemination_wait_timed(syncq_barrier_dissemination *b, unsigned id, uint64_t timeout_ns);
SYNCQ_API int syncq_barrier_dissemination_reset(syncq_barrier_dissemination *b);

#ifdef __cplusplus
}
#endif
#endif
