/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tas.c — test-and-set ("tas") and test-and-test-and-set ("ttas") locks.
 *
 * Contract
 *   Source:      003 §3.1 (test-and-set with polling and bounded exponential
 *                backoff); 001 §4 (TTAS with bounded exponential backoff,
 *                cap 30 us, the lock of all of 001's lock-based objects);
 *                000 §3.1 (TAS and TTAS packet claim). Backoff after each
 *                failed test-and-set: 100 ns doubling to 30 us
 *                (SYNCQ_LOCK_TAS_BACKOFF_*).
 *   Progress:    blocking (deadlock-free, not starvation-free; no FIFO).
 *   Atomics:     uncontended lock: 1 exchange (TTAS: 1 load + 1 exchange);
 *                unlock: 1 load + 1 release store (BLOCK/COMPETITIVE: 1
 *                load + 1 release exchange, which reads the sleep mark).
 *                On x86 the exchange is the one locked instruction, as
 *                Concurrency Kit's CAS; the waiting is out of line (the
 *                uncontended path keeps no stack frame).
 *   Memory:      caller's storage, one cache line; never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes (a
 *                handler that waits for a lock its thread holds deadlocks).
 *   Process-shared: yes (no pointers; shared futex when blocking).
 *   Waiting:     SPIN (default): backoff; YIELD through syncq/wait.h while
 *                the word is 1. BLOCK and COMPETITIVE: Drepper's mutex 2
 *                ("Futexes Are Tricky"): the word is 2 while held with a
 *                waiter that may sleep; a waiter marks it by exchange and
 *                sleeps on it, the release exchanges 0 in and wakes one
 *                only when it read 2; COMPETITIVE first spins one context
 *                switch, taking a free lock by CAS 0 -> 1. A test-and-set
 *                that wrote 1 over a 2 writes the 2 back at once.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after its releasing store or exchange an
 *                unlock touches nothing of the lock but a futex wake on
 *                the word's address.
 *   Limits:      none. unlock of a free lock: SYNCQ_EINVAL.
 *   Stats:       retries (failed test-and-set), backoffs, yields, blocks.
 *   Inline:      lock, trylock and unlock of both are static inline in
 *                syncq/static/lock/tas.h; this file exports them and
 *                builds the ops tables from them (SYNCQ_LOCK_REGISTER_NODELESS_FNS).
 */
#include "syncq/lock/tas.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/backoff.h"
#include "syncq/static/lock/tas.h"

static int init_common(syncq_lock_tas *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->word, 0u);
  l->wait = wait;
  l->process_shared = ps != 0;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate(); /* not on the first lock() */
  return SYNCQ_OK;
}

int syncq_lock_tas_init(syncq_lock_tas *l, const syncq_lock_config *cfg) { return init_common(l, cfg); }
int syncq_lock_ttas_init(syncq_lock_tas *l, const syncq_lock_config *cfg) { return init_common(l, cfg); }

int syncq_lock_tas_destroy(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->word) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}
int syncq_lock_ttas_destroy(syncq_lock_tas *l) { return syncq_lock_tas_destroy(l); }

/* The exported functions and the ops tables are the static inline bodies
 * of syncq/static/lock/tas.h (the algorithms are there). */
int syncq_lock_tas_lock(syncq_lock_tas *l) { return syncq_lock_tas_lock_inline(l); }
int syncq_lock_ttas_lock(syncq_lock_tas *l) { return syncq_lock_ttas_lock_inline(l); }
int syncq_lock_tas_trylock(syncq_lock_tas *l) { return syncq_lock_tas_trylock_inline(l); }
int syncq_lock_ttas_trylock(syncq_lock_tas *l) { return syncq_lock_ttas_trylock_inline(l); }
int syncq_lock_tas_unlock(syncq_lock_tas *l) { return syncq_lock_tas_unlock_inline(l); }
int syncq_lock_ttas_unlock(syncq_lock_tas *l) { return syncq_lock_ttas_unlock_inline(l); }

SYNCQ_LOCK_REGISTER_NODELESS_FNS(tas, "tas", "test-and-set lock, bounded exponential backoff", "003 §3.1; 000 §3.1",
                                 BLOCKING, SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, syncq_lock_tas,
                                 syncq_lock_tas_init, syncq_lock_tas_destroy, syncq_lock_tas_lock_inline,
                                 syncq_lock_tas_trylock_inline, syncq_lock_tas_unlock_inline);
SYNCQ_LOCK_REGISTER_NODELESS_FNS(ttas, "ttas", "test-and-test-and-set lock, bounded exponential backoff (cap 30 us)",
                                 "001 §4; 003 §3.1; 000 §3.1", BLOCKING,
                                 SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, syncq_lock_tas,
                                 syncq_lock_ttas_init, syncq_lock_ttas_destroy, syncq_lock_ttas_lock_inline,
                                 syncq_lock_ttas_trylock_inline, syncq_lock_ttas_unlock_inline);
