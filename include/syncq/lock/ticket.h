/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock/ticket.h — the ticket lock with proportional backoff
 * ("ticket"; Mellor-Crummey & Scott 1991, 003 §3.1, 000 §3.1). FIFO. Both
 * counters on one cache line, which 000 reports faster than separate
 * lines. No pointers: can live in memory shared between processes.
 */
#ifndef SYNCQ_LOCK_TICKET_H
#define SYNCQ_LOCK_TICKET_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/lock.h"
#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Proportional backoff (SPIN discipline): wait this many ns per holder
 * ahead of us, at most the cap, between polls of now_serving. */
#define SYNCQ_LOCK_TICKET_BACKOFF_UNIT_NS 100u
#define SYNCQ_LOCK_TICKET_BACKOFF_CAP_NS 30000u

typedef struct syncq_lock_ticket {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) next_ticket; /* fetch-and-increment to take a ticket */
  /* the holder's ticket << 1; bit 0: a waiter may sleep on the word */
  _Atomic(uint32_t) now_serving;
  int wait;
  uint8_t process_shared; /* 0 or 1; a byte, not bool: other processes can write any value into it */
} syncq_lock_ticket;

/* cfg NULL: SPIN, private. Every discipline; process_shared allowed.
 * SYNCQ_EINVAL: l is NULL, or cfg->wait is no syncq_wait_discipline. */
SYNCQ_API int syncq_lock_ticket_init(syncq_lock_ticket *l, const syncq_lock_config *cfg);
/* Check that the lock is free before its storage is reused (it holds
 * nothing to release).
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the lock is held or awaited.
 */
SYNCQ_API int syncq_lock_ticket_destroy(syncq_lock_ticket *l);
/* Acquire the lock, waiting for it.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_ticket_lock(syncq_lock_ticket *l);
/* Acquire the lock only if it is free, without waiting.
 * SYNCQ_EBUSY: another thread holds the lock or waits for it; the caller
 * holds nothing.
 * SYNCQ_EINVAL: l is NULL.
 */
SYNCQ_API int syncq_lock_ticket_trylock(syncq_lock_ticket *l);
/* Release the lock.
 * SYNCQ_EINVAL: l is NULL, or the lock is not held.
 */
SYNCQ_API int syncq_lock_ticket_unlock(syncq_lock_ticket *l);

#ifdef __cplusplus
}
#endif
#endif
