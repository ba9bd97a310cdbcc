/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * central.c — the sense-reversing centralized barrier, CAS and FAA forms.
 *
 * Contract
 *   Source:      003 §3.3 (each arrival increments a shared counter
 *                atomically and spins on a sense variable; the last one
 *                resets the counter and toggles the sense), with LL-SC (here
 *                a CAS loop: "central-cas") or a fetchop (here one
 *                fetch-and-add: "central-faa"); Mellor-Crummey & Scott 1991
 *                §3.1. The thread reads the sense before it arrives, so the
 *                barrier keeps no per-thread local sense.
 *   Progress:    blocking.
 *   Atomics:     per arrival: 1 load + 1 fetch-and-add (or 1 load + CAS
 *                loop); the last also 2 stores.
 *   Memory:      caller's storage, two cache lines; never allocates.
 *   Signal-safe: no (a barrier waits for other threads).
 *   Process-shared: yes (no pointers; shared futex when blocking). A
 *                wait reads the participant count once and checks it (1
 *                .. SYNCQ_BARRIER_MAX_THREADS), else SYNCQ_EINVAL; an
 *                arrival count above it (written by another process, or a
 *                participant arriving twice) breaks the barrier
 *                (SYNCQ_EBROKEN to every waiter) instead of leaving all
 *                of them to wait for a last arrival that never comes.
 *   Waiting:     SPIN (default) pauses on the sense; YIELD, BLOCK,
 *                COMPETITIVE (spin limit x threads not yet arrived) via
 *                syncq/wait.h.
 *   Timeout:     wait_timed: the waiters' deadline is checked while they
 *                wait on the sense (futex sleeps bounded by the time
 *                left); on a timeout the waiter sets `broken` and or's
 *                BAR_BROKEN_BIT into the sense (the only word anyone
 *                waits on) and wakes the sleepers: all waiters return
 *                SYNCQ_EBROKEN, so do later arrivals (checked before they
 *                arrive) until reset. Per arrival one more load (broken).
 *   Limits:      threads <= SYNCQ_BARRIER_MAX_THREADS.
 *   Stats:       cas_attempts, cas_failures (central-cas), yields, blocks.
 */
#include "syncq/barrier/central.h"

#include "../stats_internal.h"
#include "barrier_internal.h"
#include "../read_once_internal.h"

int syncq_barrier_central_init(syncq_barrier_central *b, const syncq_barrier_config *cfg) {
  if (b == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = barrier_parse_config(cfg, SYNCQ_WAIT_SPIN, BAR_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&b->count, 0u);
  atomic_init(&b->sense, 0u);
  atomic_init(&b->sleepers, 0u);
  atomic_init(&b->broken, 0u);
  b->threads = cfg->threads;
  b->wait = wait;
  b->process_shared = ps != 0;
  return SYNCQ_OK;
}

int syncq_barrier_central_destroy(syncq_barrier_central *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  /* a broken barrier keeps the count of its last episode: not busy */
  return atomic_load(&b->count) != 0u && atomic_load(&b->broken) == 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

int syncq_barrier_central_reset(syncq_barrier_central *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  /* relaxed: no thread waits (the caller's precondition); the caller's
   * own synchronization with the next waiters publishes these */
  atomic_store_explicit(&b->count, 0u, memory_order_relaxed);
  uint32_t s = atomic_load_explicit(&b->sense, memory_order_relaxed);
  atomic_store_explicit(&b->sense, s & ~BAR_BROKEN_BIT, memory_order_relaxed);
  /* a waiter killed in its sleep (a process) never took itself off */
  atomic_store_explicit(&b->sleepers, 0u, memory_order_relaxed);
  atomic_store_explicit(&b->broken, 0u, memory_order_relaxed);
  return SYNCQ_OK;
}

/* A timed-out waiter breaks the barrier (see the contract). */
static void central_break(syncq_barrier_central *b) {
  if (!barrier_break_begin(&b->broken)) return;
  barrier_break_word(&b->sense);
  if (barrier_break_must_wake(b->wait, &b->sleepers)) syncq_wait_futex_wake(&b->sense, 0, b->process_shared);
}

/* Read the episode's sense before arriving; SYNCQ_EBROKEN if broken. */
static int enter(syncq_barrier_central *b, uint32_t *s) {
  if (barrier_is_broken(&b->broken)) return SYNCQ_EBROKEN;
  /* acquire: pairs with the last arrival's sense store of the previous
   * episode; read before arriving, so it is this episode's sense */
  *s = atomic_load_explicit(&b->sense, memory_order_acquire);
  return (*s & BAR_BROKEN_BIT) != 0u ? SYNCQ_EBROKEN : SYNCQ_OK;
}

/* The participant count, read once and checked (1 ..
 * SYNCQ_BARRIER_MAX_THREADS, as init writes it); 0 otherwise. Another
 * process may write the shared barrier, and the count decides who is the
 * last arrival, so a wait uses only this copy. */
static inline uint32_t checked_threads(const syncq_barrier_central *b) {
  const uint32_t threads = SYNCQ_READ_ONCE(b->threads); /* one load: the copy checked is the copy used */
  return threads - 1u < SYNCQ_BARRIER_MAX_THREADS ? threads : 0u;
}

/* After arriving as the `arrived`-th thread of the episode whose sense
 * was `s`, in a barrier of `threads` participants. */
static int finish(syncq_barrier_central *b, uint32_t s, uint32_t arrived, uint32_t threads, bar_deadline *deadline) {
  if (arrived > threads) {
    /* More arrivals than participants: the count was written by someone
     * else (another process) or a participant came twice. No arrival of
     * this episode would ever be the last and every waiter would wait for
     * good: break the barrier instead (reset repairs it). */
    central_break(b);
    return SYNCQ_EBROKEN;
  }
  if (arrived == threads) {
    /* relaxed: the next episode's arrivals read it only after they see the
     * new sense (the release/seq_cst store below) */
    atomic_store_explicit(&b->count, 0u, memory_order_relaxed);
    barrier_signal(&b->sense, s ^ 1u, b->wait, b->process_shared, &b->sleepers);
    return SYNCQ_OK;
  }
  int r = barrier_await_change(&b->sense, s, b->wait, b->process_shared, barrier_spin_limit(b->wait, threads - arrived),
                               &b->sleepers, &b->broken, deadline);
  if (r != SYNCQ_OK) BAR_FAIL(r, central_break, b);
  return SYNCQ_OK;
}

static int faa_wait(syncq_barrier_central *b, unsigned id, uint32_t threads, bar_deadline *deadline) {
  (void)id;
  uint32_t s;
  int r = enter(b, &s);
  if (r != SYNCQ_OK) return r;
  /* acq_rel: release publishes our work before the barrier to the last
   * arrival; acquire gives the last arrival everyone's (it then releases
   * it to all through the sense) */
  uint32_t arrived = atomic_fetch_add_explicit(&b->count, 1u, memory_order_acq_rel) + 1u;
  return finish(b, s, arrived, threads, deadline);
}

static int cas_wait(syncq_barrier_central *b, unsigned id, uint32_t threads, bar_deadline *deadline) {
  (void)id;
  uint32_t s;
  int r = enter(b, &s); /* as in the FAA form */
  if (r != SYNCQ_OK) return r;
  /* relaxed: a guess that the CAS validates */
  uint32_t c = atomic_load_explicit(&b->count, memory_order_relaxed);
  SYNCQ_STAT_INC(cas_attempts);
  /* acq_rel on success: as the FAA form; relaxed on failure (retry) */
  while (!atomic_compare_exchange_weak_explicit(&b->count, &c, c + 1u, memory_order_acq_rel, memory_order_relaxed)) {
    SYNCQ_STAT_INC(cas_failures);
    SYNCQ_STAT_INC(cas_attempts);
  }
  return finish(b, s, c + 1u, threads, deadline);
}

int syncq_barrier_central_faa_wait(syncq_barrier_central *b, unsigned id) {
  const uint32_t threads = b == NULL ? 0u : checked_threads(b);
  if (id >= threads) return SYNCQ_EINVAL; /* also NULL, and a count init cannot have written */
  return faa_wait(b, id, threads, &(bar_deadline){SYNCQ_BARRIER_NO_TIMEOUT, 0});
}

int syncq_barrier_central_cas_wait(syncq_barrier_central *b, unsigned id) {
  const uint32_t threads = b == NULL ? 0u : checked_threads(b);
  if (id >= threads) return SYNCQ_EINVAL; /* also NULL, and a count init cannot have written */
  return cas_wait(b, id, threads, &(bar_deadline){SYNCQ_BARRIER_NO_TIMEOUT, 0});
}

int syncq_barrier_central_faa_wait_timed(syncq_barrier_central *b, unsigned id, uint64_t timeout_ns) {
  const uint32_t threads = b == NULL ? 0u : checked_threads(b);
  if (id >= threads || timeout_ns == 0) return SYNCQ_EINVAL; /* also NULL, and a bad count */
  return faa_wait(b, id, threads, &(bar_deadline){timeout_ns, 0});
}

int syncq_barrier_central_cas_wait_timed(syncq_barrier_central *b, unsigned id, uint64_t timeout_ns) {
  const uint32_t threads = b == NULL ? 0u : checked_threads(b);
  if (id >= threads || timeout_ns == 0) return SYNCQ_EINVAL; /* also NULL, and a bad count */
  return cas_wait(b, id, threads, &(bar_deadline){timeout_ns, 0});
}

SYNCQ_BARRIER_REGISTER_FNS(central_faa, "central-faa", "sense-reversing centralized barrier, fetch-and-add arrival",
                           "003 §3.3; MCS91 §3.1", BLOCKING, SYNCQ_PROP_PROCESS_SHARED, syncq_barrier_central,
                           syncq_barrier_central_init, syncq_barrier_central_destroy, syncq_barrier_central_faa_wait,
                           syncq_barrier_central_faa_wait_timed, syncq_barrier_central_reset);
SYNCQ_BARRIER_REGISTER_FNS(central_cas, "central-cas", "sense-reversing centralized barrier, CAS-loop arrival",
                           "003 §3.3; MCS91 §3.1", BLOCKING, SYNCQ_PROP_PROCESS_SHARED, syncq_barrier_central,
                           syncq_barrier_central_init, syncq_barrier_central_destroy, syncq_barrier_central_cas_wait,
                           syncq_barrier_central_cas_wait_timed, syncq_barrier_central_reset);
