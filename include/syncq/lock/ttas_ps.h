/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/ttas_ps.h — 001's preemption-safe lock ("ttas-ps"): the TTAS
 * lock with bounded exponential backoff (cap 30 us) whose holder asks the
 * scheduler not to preempt it (syncq/mp/sched.h, Symunix-style, 001 §2). Same
 * storage as the TTAS lock. Outside a pseudo-scheduler the request is a
 * no-op and the lock behaves as "ttas".
 */
#ifndef SYNCQ_LOCK_TTAS_PS_H
#define SYNCQ_LOCK_TTAS_PS_H

#include "syncq/export.h"

#include "syncq/lock.h"
#include "syncq/lock/tas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The registry entry (syncq/registry.h) of the preemption-safe TTAS lock: "ttas-ps" by name with
 * syncq_lock_create. */
SYNCQ_API extern const syncq_algo syncq_lock_ttas_ps_algo;

/* cfg may be NULL (SPIN, private). Every discipline; process_shared too
 * (the request concerns the calling thread only). SYNCQ_EINVAL: l is
 * NULL, or cfg->wait is no syncq_wait_discipline. */
SYNCQ_API int syncq_lock_ttas_ps_init(syncq_lock_tas *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held.
 */
SYNCQ_API int syncq_lock_ttas_ps_destroy(syncq_lock_tas *l);
/* Acquire the lock, waiting for it.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_ttas_ps_lock(syncq_lock_tas *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock; the caller holds nothing.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_ttas_ps_trylock(syncq_lock_tas *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held.
 */
SYNCQ_API int syncq_lock_ttas_ps_unlock(syncq_lock_tas *l);

#ifdef __cplusplus
}
#endif
#endif
