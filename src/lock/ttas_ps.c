/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ttas_ps.c — the preemption-safe test-and-test-and-set lock ("ttas-ps").
 *
 * Contract
 *   Source:      001 §2 and §4: "to represent the preemption-safe approach
 *                in our experiments, we employ test-and-test_and_set locks
 *                with exponential backoff, based on the kernel interface of
 *                Edler et al." (Symunix: a process asks the kernel not to
 *                preempt it while it holds a lock, honoured up to a time
 *                limit). The request is syncq/mp/sched.h's
 *                syncq_mp_nopreempt_begin/_end. It is made before each
 *                test-and-set and dropped again when the attempt fails, so
 *                a waiter does not hold off preemption while it spins; it
 *                stands from a successful test-and-set to the release,
 *                after which a thread whose preemption was deferred gives
 *                up its processor. Backoff as "ttas": 100 ns doubling to
 *                30 us (001 §4).
 *   Progress:    blocking (deadlock-free, not starvation-free; no FIFO).
 *   Atomics:     uncontended lock: 1 load + 1 exchange + the request (a
 *                relaxed load and store of the thread's depth when
 *                registered with a scheduler); unlock: 1 release store
 *                (BLOCK/COMPETITIVE: 1 release exchange) + the depth's
 *                load and store and 1 load of the gate when registered.
 *                Nothing else beside "ttas": the request is
 *                src/mp/sched_internal.h's inline body (no call), the
 *                release is "ttas"'s inline body, and the waiting is out
 *                of line as "ttas"'s, with its backoff. A thread not
 *                registered with a scheduler pays one thread-local load
 *                (initial-exec: no __tls_get_addr call) and one branch each
 *                way (docs/lab.md, "Multiprogramming", has the counts).
 *   Memory:      caller's storage (syncq_lock_tas, one cache line).
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: yes (no pointers); the request is per thread.
 *   Waiting:     SPIN (default): backoff; YIELD via syncq/wait.h while the
 *                word is 1; BLOCK and COMPETITIVE as "ttas" (Drepper's
 *                mutex 2 on the word: tas.c), all without the request.
 *   Destroy:     the next holder may destroy and free the lock at once
 *                (the unlock is "ttas"'s; the request is per thread).
 *   Limits:      a critical section longer than the scheduler's bound
 *                (nopreempt_limit_ns) is preempted anyway.
 *   Stats:       retries (failed test-and-set), backoffs, yields, blocks.
 */
#include "syncq/lock/ttas_ps.h"

#include "../mp/sched_internal.h"
#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/backoff.h"
#include "syncq/static/lock/tas.h"

int syncq_lock_ttas_ps_init(syncq_lock_tas *l, const syncq_lock_config *cfg) { return syncq_lock_ttas_init(l, cfg); }

int syncq_lock_ttas_ps_destroy(syncq_lock_tas *l) { return syncq_lock_ttas_destroy(l); }

/* One attempt under a no-preemption request; the request stays only when
 * the lock was taken. The request is sched_internal.h's inline body: a
 * call into src/mp/sched.c each side would cost more than the request's
 * own load and store. */
static inline bool try_with_request(syncq_lock_tas *l) {
  syncq_mp_nopreempt_begin_inline();
  if (syncq_lock_tas_exchange_inline(l) == 0u) return true; /* acquire (in the exchange) */
  syncq_mp_nopreempt_end_inline();
  return false;
}

/* The sleeping disciplines' wait (syncq/static/lock/tas.h's, with the
 * request around each attempt). */
static void wait_sleeping(syncq_lock_tas *l) {
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, lock_spin_limit(l->wait));
  for (;;) {
    SYNCQ_STAT_INC(retries);
    if (!syncq_waiter_step(&w)) {
      /* relaxed: a hint; the CAS decides */
      if (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) continue;
      syncq_mp_nopreempt_begin_inline();
      if (syncq_lock_tas_take_free_inline(l)) return;
      syncq_mp_nopreempt_end_inline();
      continue;
    }
    syncq_mp_nopreempt_begin_inline();
    /* seq_cst: acquires when it returns 0 (pairs with unlock's exchange) */
    if (atomic_exchange(&l->word, SYNCQ_LOCK_TAS_MARKED) == 0u) return;
    syncq_mp_nopreempt_end_inline();
    syncq_waiter_sleep(&w, &l->word, SYNCQ_LOCK_TAS_MARKED);
  }
}

/* The waiting after a failed or skipped first attempt, out of line as
 * "ttas"'s (SYNCQ_LOCK_SLOW_PATH_): the uncontended lock then keeps no
 * stack frame and no callee-saved registers, as "ttas"'s does. */
SYNCQ_LOCK_SLOW_PATH_ int ttas_ps_wait(syncq_lock_tas *l, bool in_request) {
  /* the fast path's failed attempt leaves its request to be dropped here:
   * the fast path then makes no call but this tail call, and needs no
   * callee-saved register to keep l across one */
  if (in_request) syncq_mp_nopreempt_end_inline();
  if (syncq_wait_may_sleep(l->wait)) {
    wait_sleeping(l);
    return SYNCQ_OK;
  }
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, SYNCQ_LOCK_TAS_BACKOFF_INITIAL_NS, SYNCQ_LOCK_TAS_BACKOFF_CAP_NS);
  syncq_waiter w;
  /* SPIN and YIELD have no spinning phase to bound: 0, as "ttas" */
  syncq_waiter_init(&w, l->wait, l->process_shared, 0);
  for (;;) {
    /* relaxed: the test before the test-and-set is only a hint */
    while (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) {
      if (l->wait == SYNCQ_WAIT_SPIN) syncq_pr_relax();
      else (void)syncq_waiter_step(&w); /* YIELD: yields */
    }
    SYNCQ_RACE_POINT("lock.ttas_ps.tested");
    if (try_with_request(l)) return SYNCQ_OK;
    SYNCQ_STAT_INC(retries);
    if (l->wait == SYNCQ_WAIT_SPIN) (void)syncq_backoff_exp_wait(&b);
  }
}

/* The bodies, one for the exported function and the ops table each (an
 * exported function is not inlined into the table's wrapper: the wrapper
 * would be one more jump per call). */
static inline int ttas_ps_lock(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: the test is a hint; the acquire exchange decides */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) return ttas_ps_wait(l, false);
  syncq_mp_nopreempt_begin_inline();
  if (syncq_lock_tas_exchange_inline(l) == 0u) return SYNCQ_OK; /* acquire (in the exchange) */
  return ttas_ps_wait(l, true);
}

static inline int ttas_ps_trylock(syncq_lock_tas *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: a hint; the acquire exchange decides */
  if (atomic_load_explicit(&l->word, memory_order_relaxed) != 0u) return SYNCQ_EBUSY;
  return try_with_request(l) ? SYNCQ_OK : SYNCQ_EBUSY;
}

/* "ttas"'s release, inline (not the exported syncq_lock_ttas_unlock: one
 * call less), then the end of the request. */
static inline int ttas_ps_unlock(syncq_lock_tas *l) {
  int r = syncq_lock_ttas_unlock_inline(l);
  if (r == SYNCQ_OK) syncq_mp_nopreempt_end_inline(); /* may give up the processor now */
  return r;
}

int syncq_lock_ttas_ps_lock(syncq_lock_tas *l) { return ttas_ps_lock(l); }
int syncq_lock_ttas_ps_trylock(syncq_lock_tas *l) { return ttas_ps_trylock(l); }
int syncq_lock_ttas_ps_unlock(syncq_lock_tas *l) { return ttas_ps_unlock(l); }

/* The ops tables call the bodies, not the exported functions. */
SYNCQ_LOCK_REGISTER_NODELESS_FNS(ttas_ps, "ttas-ps",
                                 "preemption-safe TTAS lock (no-preemption request, backoff cap 30 us)",
                                 "001 §2, §4 (Symunix interface)", BLOCKING,
                                 SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, syncq_lock_tas,
                                 syncq_lock_ttas_ps_init, syncq_lock_ttas_ps_destroy, ttas_ps_lock, ttas_ps_trylock,
                                 ttas_ps_unlock);
