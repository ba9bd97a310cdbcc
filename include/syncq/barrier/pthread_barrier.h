/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/barrier/pthread_barrier.h — the POSIX barrier ("pthread-barrier"),
 * the baseline. Process-shared with PTHREAD_PROCESS_SHARED.
 */
#ifndef SYNCQ_BARRIER_PTHREAD_BARRIER_H
#define SYNCQ_BARRIER_PTHREAD_BARRIER_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/barrier.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes kept for the pthread_barrier_t (opaque here: strict C11 builds of
 * client code do not see pthread_barrier_t, an optional POSIX type;
 * pthread_barrier.c checks that it fits). */
#define SYNCQ_BARRIER_PTHREAD_STORAGE 128

typedef struct syncq_barrier_pthread {
  SYNCQ_CACHELINE_ALIGNED unsigned char storage[SYNCQ_BARRIER_PTHREAD_STORAGE]; /* a pthread_barrier_t */
  uint32_t threads;
} syncq_barrier_pthread;

/* Disciplines: DEFAULT and BLOCK (the C library's); process_shared
 * allowed. SYNCQ_EINVAL: b or cfg is NULL, cfg->threads is 0, or cfg->wait is no
 * syncq_wait_discipline. SYNCQ_ELIMIT: cfg->threads is above
 * SYNCQ_BARRIER_MAX_THREADS. SYNCQ_ENOTSUP:
 * cfg->wait is SPIN, YIELD or COMPETITIVE. SYNCQ_ESYS:
 * pthread_barrierattr_init, its pshared attribute or pthread_barrier_init
 * failed (errno says why). */
SYNCQ_API int syncq_barrier_pthread_init(syncq_barrier_pthread *b, const syncq_barrier_config *cfg);
/* Destroy the barrier.
 * SYNCQ_EINVAL: b is NULL.
 * SYNCQ_EBUSY: pthread_barrier_destroy refused (threads wait on it).
 */
SYNCQ_API int syncq_barrier_pthread_destroy(syncq_barrier_pthread *b);
/* Arrive as participant id and wait for the others.
 * SYNCQ_EINVAL: b is NULL, or id is not below its participant count.
 * SYNCQ_ESYS: pthread_barrier_wait failed; errno holds why.
 */
SYNCQ_API int syncq_barrier_pthread_wait(syncq_barrier_pthread *b, unsigned id);
/* The timed wait, which POSIX barriers lack (no timed wait, no way to leave
 * one): it never waits.
 * SYNCQ_EINVAL: b is NULL, id is not below its participant count, or
 * timeout_ns is 0.
 * SYNCQ_ENOTSUP: every other call: POSIX has no timed barrier wait.
 */
SYNCQ_API int syncq_barrier_pthread_wait_timed(syncq_barrier_pthread *b, unsigned id, uint64_t timeout_ns);
/* The reset, which POSIX barriers lack: it changes nothing.
 * SYNCQ_EINVAL: b is NULL.
 * SYNCQ_ENOTSUP: every other call: a POSIX barrier cannot be broken or
 * mended.
 */
SYNCQ_API int syncq_barrier_pthread_reset(syncq_barrier_pthread *b);

#ifdef __cplusplus
}
#endif
#endif
