/*
 * ticket.c — the ticket lock with proportional backoff.
 *
 * Contract
 *   Source:      003 §3.1 (ticket lock, fetch-and-increment, proportional
 *                backoff [16]); Mellor-Crummey & Scott 1991, Algorithm 2
 *                (ticket lock with proportional backoff); 000 §3.1 (both
 *                counters on one cache line).
 *   Progress:    blocking; starvation-free (FIFO by ticket).
 *   Atomics:     uncontended lock: 1 fetch-and-add + 1 load; unlock: 1
 *                release store (BLOCK/COMPETITIVE: seq_cst store + load of
 *                the sleeper count). trylock: 2 loads + 1 CAS.
 *   Memory:      caller's storage, one cache line; never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: yes (no pointers; shared futex when blocking).
 *   Waiting:     SPIN (default): proportional backoff, 100 ns per holder
 *                ahead, cap 30 us; YIELD/BLOCK/COMPETITIVE via syncq/wait.h
 *                (blocking wakes all: the next ticket's owner is not known).
 *   Limits:      2^32 - 1 threads waiting at once.
 *   Stats:       backoffs, yields, blocks.
 */
#include "syncq/lock/ticket.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/backoff.h"

int syncq_lock_ticket_init(syncq_lock_ticket *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->next_ticket, 0u);
  atomic_init(&l->now_serving, 0u);
  atomic_init(&l->sleepers, 0u);
  l->wait = wait;
  l->process_shared = ps != 0;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_ticket_destroy(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->next_ticket) != atomic_load(&l->now_serving) ? SYNCQ_EBUSY : SYNCQ_OK;
}

int syncq_lock_ticket_lock(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: taking a ticket orders nothing; the acquire load of
   * now_serving below (pairing with the release in unlock) does. */
  uint32_t my = atomic_fetch_add_explicit(&l->next_ticket, 1u, memory_order_relaxed);
  /* acquire: pairs with the release store of now_serving in unlock */
  uint32_t s = atomic_load_explicit(&l->now_serving, memory_order_acquire);
  if (s == my) return SYNCQ_OK;
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, lock_spin_limit(l->wait));
  do {
    if (l->wait == SYNCQ_WAIT_SPIN)
      (void)syncq_backoff_prop_wait(SYNCQ_LOCK_TICKET_BACKOFF_UNIT_NS, (uint32_t)(my - s),
                                    SYNCQ_LOCK_TICKET_BACKOFF_CAP_NS);
    else
      syncq_waiter_pause(&w, &l->now_serving, s, &l->sleepers);
    s = atomic_load_explicit(&l->now_serving, memory_order_acquire); /* pairs with unlock's release */
  } while (s != my);
  return SYNCQ_OK;
}

int syncq_lock_ticket_trylock(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: a guess that the CAS below validates */
  uint32_t n = atomic_load_explicit(&l->next_ticket, memory_order_relaxed);
  /* acquire: pairs with unlock's release, as in lock() */
  if (atomic_load_explicit(&l->now_serving, memory_order_acquire) != n) return SYNCQ_EBUSY;
  SYNCQ_STAT_INC(cas_attempts);
  /* seq_cst CAS: only succeeds while nobody holds or awaits the lock */
  if (atomic_compare_exchange_strong(&l->next_ticket, &n, n + 1u)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_EBUSY;
}

int syncq_lock_ticket_unlock(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: now_serving is written only by holders; ours is ordered by
   * our acquire in lock(). next_ticket: a misuse check only. */
  uint32_t s = atomic_load_explicit(&l->now_serving, memory_order_relaxed);
  if (atomic_load_explicit(&l->next_ticket, memory_order_relaxed) == s) return SYNCQ_EINVAL;
  if (syncq_wait_may_sleep(l->wait)) {
    atomic_store(&l->now_serving, s + 1u); /* seq_cst: Dekker pair with sleepers */
    syncq_wait_wake(l->wait, &l->now_serving, &l->sleepers, 0, l->process_shared);
  } else {
    /* release: pairs with the acquire loads of now_serving in lock() */
    atomic_store_explicit(&l->now_serving, s + 1u, memory_order_release);
  }
  return SYNCQ_OK;
}

static int o_init(void *l, const syncq_lock_config *c) { return syncq_lock_ticket_init(l, c); }
static int o_destroy(void *l) { return syncq_lock_ticket_destroy(l); }
static int o_lock(void *l, syncq_lock_node *n) { return n == NULL ? SYNCQ_EINVAL : syncq_lock_ticket_lock(l); }
static int o_try(void *l, syncq_lock_node *n) { return n == NULL ? SYNCQ_EINVAL : syncq_lock_ticket_trylock(l); }
static int o_unlock(void *l, syncq_lock_node *n) { return n == NULL ? SYNCQ_EINVAL : syncq_lock_ticket_unlock(l); }

static const syncq_lock_ops ops = {
  sizeof(syncq_lock_ticket), _Alignof(syncq_lock_ticket), o_init, o_destroy, o_lock, o_try, o_unlock,
};

const syncq_algo syncq_lock_ticket_algo = {
  SYNCQ_FAMILY_LOCK, "ticket", "ticket lock, proportional backoff", "003 §3.1; 000 §3.1; MCS91 Alg. 2",
  SYNCQ_PROGRESS_BLOCKING, SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED, &ops,
};
