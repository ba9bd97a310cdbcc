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
/* The typed API of the centralized barrier: destroy, and wait by participant id 0..n-1 with the count
 * updated by fetch-and-add (faa) or by a CAS loop (cas). Statuses and thread-safety: those of
 * syncq/barrier.h's generic calls. */
SYNCQ_API int syncq_barrier_central_destroy(syncq_barrier_central *b);
SYNCQ_API int syncq_barrier_central_faa_wait(syncq_barrier_central *b, unsigned id);
SYNCQ_API int syncq_barrier_central_cas_wait(syncq_barrier_central *b, unsigned id);
/* Timed waits and reset: the semantics of syncq/barrier.h. Every wait
 * answers SYNCQ_EINVAL for a participant count init cannot have written,
 * and breaks the barrier (SYNCQ_EBROKEN) when more threads arrive in one
 * episode than it has participants: another process wrote over the
 * shared barrier, or a participant came twice. */
SYNCQ_API int syncq_barrier_central_faa_wait_timed(syncq_barrier_central *b, unsigned id, uint64_t timeout_ns);
SYNCQ_API int syncq_barrier_central_cas_wait_timed(syncq_barrier_central *b, unsigned id, uint64_t timeout_ns);
SYNCQ_API int syncq_barrier_central_reset(syncq_barrier_central *b);

#ifdef __cplusplus
}
#endif
#endif
