/*
 * syncq/static/lock/ticket.h — the ticket lock as static inline bodies
 * (liburcu's model: see syncq/static/lock/tas.h). src/lock/ticket.c builds
 * the exported functions and the ops table from them; its contract block
 * applies. Storage: syncq_lock_ticket, initialised by syncq_lock_ticket_init.
 */
#ifndef SYNCQ_STATIC_LOCK_TICKET_H
#define SYNCQ_STATIC_LOCK_TICKET_H

#include "syncq/backoff.h"
#include "syncq/lock/ticket.h"
#include "syncq/static/stats.h"
#include "syncq/wait.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline int syncq_lock_ticket_lock_inline(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: taking a ticket orders nothing; the acquire load of
   * now_serving below (pairing with the release in unlock) does. */
  uint32_t my = atomic_fetch_add_explicit(&l->next_ticket, 1u, memory_order_relaxed);
  /* acquire: pairs with the release store of now_serving in unlock */
  uint32_t s = atomic_load_explicit(&l->now_serving, memory_order_acquire);
  if (s == my) return SYNCQ_OK;
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, SYNCQ_STATIC_SPIN_LIMIT(l->wait));
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

static inline int syncq_lock_ticket_trylock_inline(syncq_lock_ticket *l) {
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

static inline int syncq_lock_ticket_unlock_inline(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: now_serving is written only by holders; ours is ordered by
   * our acquire in lock(). next_ticket: a misuse check only. */
  uint32_t s = atomic_load_explicit(&l->now_serving, memory_order_relaxed);
  if (atomic_load_explicit(&l->next_ticket, memory_order_relaxed) == s) return SYNCQ_EINVAL;
  if (syncq_wait_may_sleep(l->wait)) {
    atomic_store(&l->now_serving, s + 1u); /* seq_cst: Dekker pair with sleepers */
    SYNCQ_RACE_POINT("lock.handover");
    syncq_wait_wake(l->wait, &l->now_serving, &l->sleepers, 0, l->process_shared);
  } else {
    /* release: pairs with the acquire loads of now_serving in lock() */
    atomic_store_explicit(&l->now_serving, s + 1u, memory_order_release);
    SYNCQ_RACE_POINT("lock.handover");
  }
  return SYNCQ_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATIC_LOCK_TICKET_H */
