/* SPDX-License-Identifier: BSD-2-Clause */
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

/* now_serving holds the ticket being served shifted left by one (tickets
 * compare modulo 2^31), and in bit 0 the sleep mark: a waiter of BLOCK or
 * COMPETITIVE sets it before it sleeps on the word (syncq/wait.h). The
 * release exchange reads the mark, so the releaser touches nothing of the
 * lock after its hand-over but a futex wake on the word's address. */
#define SYNCQ_LOCK_TICKET_MARK 1u

/* The wait for ticket `turn` after the first read of now_serving (s) did
 * not show it: out of line, so the uncontended path keeps no frame. */
SYNCQ_LOCK_SLOW_PATH_ int syncq_lock_ticket_wait_inline_(syncq_lock_ticket *l, uint32_t turn, uint32_t s) {
  syncq_waiter w;
  syncq_waiter_init(&w, l->wait, l->process_shared, SYNCQ_STATIC_SPIN_LIMIT(l->wait));
  do {
    if (l->wait == SYNCQ_WAIT_SPIN) {
      (void)syncq_backoff_prop_wait(SYNCQ_LOCK_TICKET_BACKOFF_UNIT_NS, (turn - (s & ~SYNCQ_LOCK_TICKET_MARK)) >> 1,
                                    SYNCQ_LOCK_TICKET_BACKOFF_CAP_NS);
    } else if (syncq_waiter_step(&w)) {
      /* mark, then sleep while the word holds the marked value. seq_cst
       * CAS: a read-modify-write of the word, so either the releaser's
       * exchange reads our mark or our CAS fails on its new value */
      if ((s & SYNCQ_LOCK_TICKET_MARK) != 0u ||
          atomic_compare_exchange_strong(&l->now_serving, &s, s | SYNCQ_LOCK_TICKET_MARK))
        syncq_waiter_sleep(&w, &l->now_serving, s | SYNCQ_LOCK_TICKET_MARK);
    }
    s = atomic_load_explicit(&l->now_serving, memory_order_acquire); /* pairs with unlock's release */
  } while ((s & ~SYNCQ_LOCK_TICKET_MARK) != turn);
  return SYNCQ_OK;
}

static inline int syncq_lock_ticket_lock_inline(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: taking a ticket orders nothing; the acquire load of
   * now_serving below (pairing with the release in unlock) does. */
  uint32_t turn = atomic_fetch_add_explicit(&l->next_ticket, 1u, memory_order_relaxed) << 1;
  /* acquire: pairs with the release store or exchange of now_serving in unlock */
  uint32_t s = atomic_load_explicit(&l->now_serving, memory_order_acquire);
  if ((s & ~SYNCQ_LOCK_TICKET_MARK) == turn) return SYNCQ_OK;
  return syncq_lock_ticket_wait_inline_(l, turn, s);
}

static inline int syncq_lock_ticket_trylock_inline(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: a guess that the CAS below validates */
  uint32_t n = atomic_load_explicit(&l->next_ticket, memory_order_relaxed);
  /* acquire: pairs with unlock's release, as in lock() */
  if ((atomic_load_explicit(&l->now_serving, memory_order_acquire) & ~SYNCQ_LOCK_TICKET_MARK) != n << 1)
    return SYNCQ_EBUSY;
  SYNCQ_STAT_INC(cas_attempts);
  /* seq_cst CAS: only succeeds while nobody holds or awaits the lock */
  if (atomic_compare_exchange_strong(&l->next_ticket, &n, n + 1u)) return SYNCQ_OK;
  SYNCQ_STAT_INC(cas_failures);
  return SYNCQ_EBUSY;
}

/* After the releasing store or exchange the next holder may destroy and
 * free the lock: only locals are used from there on. */
static inline int syncq_lock_ticket_unlock_inline(syncq_lock_ticket *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  /* relaxed: now_serving's ticket is written only by holders; ours is
   * ordered by our acquire in lock() (a waiter's mark may be missing
   * here: the exchange below reads it). next_ticket: a misuse check only. */
  uint32_t s = atomic_load_explicit(&l->now_serving, memory_order_relaxed) & ~SYNCQ_LOCK_TICKET_MARK;
  if (atomic_load_explicit(&l->next_ticket, memory_order_relaxed) << 1 == s) return SYNCQ_EINVAL;
  if (syncq_wait_may_sleep(l->wait)) {
    bool pshared = l->process_shared;
    _Atomic(uint32_t) *word = &l->now_serving;
    /* release: pairs with the acquire loads of now_serving in lock(); a
     * read-modify-write, so it reads a mark set before it */
    uint32_t old = atomic_exchange_explicit(word, s + 2u, memory_order_release);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("lock.handover");
#endif
    /* all: the next ticket's owner is not known */
    if ((old & SYNCQ_LOCK_TICKET_MARK) != 0u) syncq_wait_futex_wake(word, 0, pshared);
  } else {
    /* release: pairs with the acquire loads of now_serving in lock() */
    atomic_store_explicit(&l->now_serving, s + 2u, memory_order_release);
#ifdef SYNCQ_RACE_POINT
    SYNCQ_RACE_POINT("lock.handover");
#endif
  }
  return SYNCQ_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATIC_LOCK_TICKET_H */
