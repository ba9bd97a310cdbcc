/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ticket.c — the ticket lock with proportional backoff.
 *
 * Contract
 *   Source:      003 §3.1 (ticket lock, fetch-and-increment, proportional
 *                backoff [16]); Mellor-Crummey & Scott 1991, Algorithm 2
 *                (ticket lock with proportional backoff); 000 §3.1 (both
 *                counters on one cache line).
 *   Progress:    blocking; starvation-free (FIFO by ticket).
 *   Atomics:     uncontended lock: 1 fetch-and-add + 1 load; unlock: 2
 *                loads + 1 release store (BLOCK/COMPETITIVE: 2 loads + 1
 *                release exchange, which reads the sleep mark). trylock:
 *                2 loads + 1 CAS. On x86 the fetch-and-add is the one
 *                locked instruction of a pair; the waiting is out of line
 *                (the uncontended path keeps no stack frame).
 *   Memory:      caller's storage, one cache line; never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: yes (no pointers; shared futex when blocking).
 *   Waiting:     SPIN (default): proportional backoff, 100 ns per holder
 *                ahead, cap 30 us; YIELD/BLOCK/COMPETITIVE via syncq/wait.h.
 *                now_serving holds the served ticket << 1 and, in bit 0,
 *                the sleep mark: a waiter that will sleep sets it by CAS
 *                and sleeps on the word; the release exchanges the next
 *                ticket in and wakes all (the next ticket's owner is not
 *                known) only when it read the mark.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after its releasing store or exchange an
 *                unlock touches nothing of the lock but a futex wake on
 *                now_serving's address.
 *   Limits:      2^31 - 1 threads waiting at once (tickets compare modulo
 *                2^31 in now_serving).
 *   Stats:       backoffs, yields, blocks.
 *   Inline:      lock, trylock and unlock are static inline in
 *                syncq/static/lock/ticket.h; this file exports them and
 *                builds the ops table from them (SYNCQ_LOCK_REGISTER_NODELESS_FNS).
 */
#include "syncq/lock/ticket.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/backoff.h"
#include "syncq/static/lock/ticket.h"

int syncq_lock_ticket_init(syncq_lock_ticket *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->next_ticket, 0u);
  atomic_init(&l->now_serving, 0u);
  l->wait = wait;
  l->process_shared = ps != 0;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_ticket_destroy(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->next_ticket) << 1 != (atomic_load(&l->now_serving) & ~SYNCQ_LOCK_TICKET_MARK) ? SYNCQ_EBUSY
                                                                                                       : SYNCQ_OK;
}

/* The exported functions and the ops table are the static inline bodies
 * of syncq/static/lock/ticket.h (the algorithm is there). */
int syncq_lock_ticket_lock(syncq_lock_ticket *l) { return syncq_lock_ticket_lock_inline(l); }
int syncq_lock_ticket_trylock(syncq_lock_ticket *l) { return syncq_lock_ticket_trylock_inline(l); }
int syncq_lock_ticket_unlock(syncq_lock_ticket *l) { return syncq_lock_ticket_unlock_inline(l); }

SYNCQ_LOCK_REGISTER_NODELESS_FNS(ticket, "ticket", "ticket lock, proportional backoff",
                                 "003 §3.1; 000 §3.1; MCS91 Alg. 2", BLOCKING,
                                 SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED,
                                 syncq_lock_ticket, syncq_lock_ticket_init, syncq_lock_ticket_destroy,
                                 syncq_lock_ticket_lock_inline, syncq_lock_ticket_trylock_inline,
                                 syncq_lock_ticket_unlock_inline);
