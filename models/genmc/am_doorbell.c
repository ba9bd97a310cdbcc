/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_doorbell.c — GenMC driver for the active messages' doorbell
 * (src/am/am.c, "sleeping"): syncq_am_wait's way to sleep (am_sleep: a
 * first look at the queues, read bell, add itself to the count of
 * sleepers (am_waiters_add: the endpoint's count under its lock bit,
 * copied to the segment's asleep), seq_cst fence, a last look, futex
 * wait on bell) against a sender's commit and am_ring (seq_cst fence,
 * read asleep, bump bell, wake every waiter). models/spin/am_wait.pml
 * checks the count against the flag it replaced under sequential
 * consistency; this driver checks the fences and orders under C11's
 * model (rc11) and the hardware-level one (imm).
 *
 * am_sleep and am_ring live among the segment's queues, futexes and
 * clocks that GenMC cannot run, so their atomic statements are
 * transcribed here, on stand-ins for am_header and syncq_am_endpoint
 * (the fields these lines use, under the library's names). Every line
 * that ends in "from src/am/am.c" is the library's line, character for
 * character: models/genmc/run checks that each still appears in that
 * file before it runs GenMC.
 *
 * What stands for what:
 *   the queues     a count of committed messages: the sender adds its
 *                  message with a relaxed RMW, the looks (am_queue_idle)
 *                  read it relaxed: the weakest queue, so whatever order
 *                  the check needs comes from the doorbell's fences.
 *   futex_wait     one read of bell: if it still holds the value read
 *                  before the count, the waiter sleeps (its thread ends
 *                  there, counted). A later bump is a sender's, which
 *                  then calls futex_wake: the sleeper wakes. So a waiter
 *                  sleeps for good when it slept and bell never changed.
 *
 * Threads: W, a waiter that sleeps when it finds the queues idle; T, a
 * second thread of the receiving process whose wait counts itself, looks
 * and leaves without sleeping (its timeout: the case where a flag that
 * each waiter set and cleared lost W's wake-ups); S, a sender that
 * commits one message and rings. Property (no lost wake-up): S's message
 * is committed by the end, so W did not sleep for good.
 *
 * GENMC_SEED_BUG (the control): am_ring's seq_cst fence removed. The
 * commit and the sender's load of asleep are then a store buffering
 * pattern against the waiter's count and last look: both may miss the
 * other, and W sleeps with the message in its queue (the assertion
 * fails).
 * GENMC_SEED_FLAG (the second control): the count replaced by the flag
 * it replaced: T, leaving, clears the flag under W, and the sender that
 * reads it rings for no one.
 * GENMC_TSAN_FORM: the form a ThreadSanitizer build compiles (SYNCQ_TSAN):
 * no fences; the count's copy written by a seq_cst exchange, read by the
 * sender with a seq_cst RMW that adds 0. Its control (with
 * GENMC_SEED_BUG): the sender's read a plain seq_cst load.
 */
#include "genmc_shim.h"

#include <stdatomic.h>

/* The fields of src/am/am.c's am_header and syncq_am_endpoint that the
 * doorbell uses. */
typedef struct am_header {
  _Atomic(uint32_t) asleep;
  _Atomic(uint32_t) bell;
} am_header;

typedef struct syncq_am_endpoint {
  _Atomic(uint32_t) waiters;
  am_header *base;
} syncq_am_endpoint;

static am_header the_header;
static syncq_am_endpoint the_ep;
static _Atomic(uint32_t) committed; /* messages committed into the queues */
static int w_slept;                 /* W's futex wait slept */
static uint32_t w_slept_on;         /* ... on this value of bell */

/* am_idle: both queues hold nothing committed (relaxed, see above). */
static bool am_idle(syncq_am_endpoint *ep) {
  (void)ep;
  return atomic_load_explicit(&committed, memory_order_relaxed) == 0u;
}

/* clang-format off */
#define AM_WAITERS_LOCK 0x80000000u /* from src/am/am.c */

static void am_waiters_add(syncq_am_endpoint *ep, uint32_t delta) {
  uint32_t v;
  for (;;) {
    v = atomic_load_explicit(&ep->waiters, memory_order_relaxed); /* from src/am/am.c */
    if ((v & AM_WAITERS_LOCK) == 0u && /* from src/am/am.c */
        atomic_compare_exchange_weak_explicit(&ep->waiters, &v, v | AM_WAITERS_LOCK, memory_order_acquire, /* from src/am/am.c */
                                              memory_order_relaxed))
      break;
    /* sched_yield(): no memory effect */
  }
  uint32_t n = v + delta; /* from src/am/am.c */
#ifdef GENMC_SEED_FLAG
  n = delta == 1u ? 1u : 0u; /* the control: a flag each waiter sets and clears */
#endif
  am_header *h = ep->base; /* from src/am/am.c */
#ifdef GENMC_TSAN_FORM
  (void)atomic_exchange(&h->asleep, n); /* from src/am/am.c */
#else
  atomic_store_explicit(&h->asleep, n, memory_order_relaxed); /* from src/am/am.c */
#endif
  atomic_store_explicit(&ep->waiters, n, memory_order_release); /* from src/am/am.c */
}

static void am_ring(am_header *h) {
#ifdef GENMC_TSAN_FORM
#ifndef GENMC_SEED_BUG
  if (atomic_fetch_add(&h->asleep, 0u) == 0u) return; /* from src/am/am.c */
#else
  if (atomic_load(&h->asleep) == 0u) return; /* the control: a load that writes nothing */
#endif
#else
#ifndef GENMC_SEED_BUG
  atomic_thread_fence(memory_order_seq_cst); /* from src/am/am.c */
#endif
  if (atomic_load_explicit(&h->asleep, memory_order_relaxed) == 0u) return; /* from src/am/am.c */
#endif
  atomic_fetch_add_explicit(&h->bell, 1u, memory_order_release); /* from src/am/am.c */
  /* syncq_futex_wake(&h->bell, 0, true): a waiter in its futex wait wakes */
}

/* am_sleep; times_out: the futex wait returns at once (its timeout) */
static void am_sleep(syncq_am_endpoint *ep, bool times_out, bool record) {
  if (!am_idle(ep)) return; /* the first look: not idle, the wait yields */
  am_header *h = ep->base; /* from src/am/am.c */
  uint32_t seen = atomic_load_explicit(&h->bell, memory_order_acquire); /* from src/am/am.c */
  am_waiters_add(ep, 1u); /* from src/am/am.c */
#ifndef GENMC_TSAN_FORM
  atomic_thread_fence(memory_order_seq_cst); /* from src/am/am.c */
#endif
  if (am_idle(ep) && !times_out && atomic_load_explicit(&h->bell, memory_order_relaxed) == seen) {
    if (record) { /* futex_wait(&h->bell, seen): sleeps until a bump */
      w_slept = 1;
      w_slept_on = seen;
    }
    return;
  }
  am_waiters_add(ep, UINT32_MAX); /* from src/am/am.c */
}
/* clang-format on */

static void *waiter(void *arg) {
  (void)arg;
  am_sleep(&the_ep, false, true);
  return NULL;
}
static void *timing_out(void *arg) {
  (void)arg;
  am_sleep(&the_ep, true, false);
  return NULL;
}
static void *sender(void *arg) {
  (void)arg;
  atomic_fetch_add_explicit(&committed, 1u, memory_order_relaxed); /* the commit */
  am_ring(&the_header);
  return NULL;
}

int main(void) {
  atomic_init(&the_header.asleep, 0);
  atomic_init(&the_header.bell, 0);
  atomic_init(&the_ep.waiters, 0);
  the_ep.base = &the_header;
  atomic_init(&committed, 0);
  void *(*fn[])(void *) = {waiter, timing_out, sender};
  genmc_run(fn, 3);
  /* W did not sleep, or a bump woke it: it polls and finds the message. */
  assert(!w_slept || atomic_load(&the_header.bell) != w_slept_on); /* no lost wake-up */
  return 0;
}
