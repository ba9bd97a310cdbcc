/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fiber_sleep_wake.c — GenMC driver for the postoffice schedulers'
 * sleep/wake handshake (src/po/fiber_sched.c's contract, "Sleep/wake of
 * schedulers"): idle()'s path to sleep (win or not the one spinner's
 * place, announce itself in sleeping and nsleeping, give the spinner's
 * place back, seq_cst fence, a last look at the run queues, futex wait on
 * wake_word) against a producer's push and wakep() (seq_cst fence, trust
 * a spinner, else wake a sleeper with a CAS of its sleeping word and a
 * bump of its wake_word).
 *
 * Those functions live among run queues, futexes and timers that GenMC
 * cannot run, so their atomic statements are transcribed here, on
 * stand-ins for po_sched and po_fiber_rt (the fields these lines use,
 * under the library's names). Every line that ends in "from src/po/<file>"
 * is the library's line, character for character: models/genmc/run checks
 * that each still appears in that file before it runs GenMC.
 *
 * What stands for what:
 *   the run queue  a counter the producers increment with relaxed RMWs,
 *                  read relaxed by the scheduler's looks: the weakest
 *                  queue, so whatever ordering the check needs comes from
 *                  the handshake's fences.
 *   futex_wait     one read of wake_word: if it still holds the value read
 *                  before the announcement, the scheduler sleeps (its
 *                  thread ends there). A later bump is a wakep's, which
 *                  then calls futex_wake: the sleeper wakes. So the
 *                  scheduler sleeps for good when it slept and wake_word
 *                  never changed.
 *
 * Threads: S, an idle scheduler (NSCHED 1, the default; with 2, S2 idles
 * too and wakep looks through both); P1 and P2 each push one fiber and
 * call wakep. Property (no lost wake-up): when every thread has finished,
 * unless a scheduler is awake (it did not sleep, or was woken, and goes
 * on looking) no fiber is left in the run queues.
 *
 * GENMC_SEED_BUG (the control): wakep's seq_cst fence removed. The push
 * and the producer's loads of nspinning and nsleeping are then a store
 * buffering pattern against the sleeper's announcement and last look:
 * both may miss the other, and a fiber waits with every scheduler asleep
 * (main's assertion fails).
 */
#include "genmc_shim.h"

#include <stdatomic.h>

/* src/po/fiber_sched.c's fences and the orders of the accesses they
 * order, as in a build without ThreadSanitizer; with -DGENMC_TSAN_FORM,
 * as under TSan: no fence, the pair's loads seq_cst RMWs that add 0, the
 * counts seq_cst (its control, with GENMC_SEED_BUG: the loads plain
 * seq_cst loads, the form before the RMWs). */
#ifdef GENMC_TSAN_FORM
#define PO_FENCED(order) memory_order_seq_cst
#define PO_FENCE() ((void)0)
#ifdef GENMC_SEED_BUG
#define PO_FENCED_LOAD(obj) atomic_load(obj)
#else
#define PO_FENCED_LOAD(obj) atomic_fetch_add((obj), 0u)
#endif
#else
#define PO_FENCED(order) (order)
#define PO_FENCE() atomic_thread_fence(memory_order_seq_cst)
#define PO_FENCED_LOAD(obj) atomic_load_explicit((obj), memory_order_relaxed)
#endif

#ifndef NSCHED
#define NSCHED 1 /* 1 or 2: two take 5.2 million executions (docs/reliability.md) */
#endif

/* The fields of src/po/fiber_sched.c's po_sched and po_fiber_rt that the
 * handshake uses. */
typedef struct po_sched {
  _Atomic(uint32_t) sleeping;
  _Atomic(uint32_t) wake_word;
  struct po_fiber_rt *rt;
  uint32_t index;
} po_sched;

typedef struct po_fiber_rt {
  _Atomic(uint32_t) nspinning;
  _Atomic(uint32_t) nsleeping;
  _Atomic(uint32_t) nvisible;
  po_sched sched[NSCHED];
} po_fiber_rt;

static po_fiber_rt the_rt;
static _Atomic(uint32_t) runq;    /* fibers pushed */
static _Atomic(uint32_t) taken;   /* fibers taken by the schedulers */
static int slept[NSCHED];         /* a scheduler's futex wait slept */
static uint32_t slept_on[NSCHED]; /* ... on this value of its wake_word */

/* take_local/steal: a fiber if the run queues hold one not yet taken
 * (relaxed: the weakest queue, see above). */
static bool look(void) {
  uint32_t t = atomic_load_explicit(&taken, memory_order_relaxed);
  return atomic_load_explicit(&runq, memory_order_relaxed) > t &&
         atomic_compare_exchange_strong_explicit(&taken, &t, t + 1, memory_order_relaxed, memory_order_relaxed);
}

static void wakep(po_fiber_rt *rt) {
#ifndef GENMC_SEED_BUG
  PO_FENCE(); /* from src/po/fiber_sched.c */
#endif
  if (PO_FENCED_LOAD(&rt->nspinning) != 0) return;                        /* from src/po/fiber_sched.c */
  if (PO_FENCED_LOAD(&rt->nsleeping) == 0) return;                        /* from src/po/fiber_sched.c */
  uint32_t n = atomic_load_explicit(&rt->nvisible, memory_order_acquire); /* from src/po/fiber_sched.c */
  for (uint32_t i = 0; i < n; i++) {
    po_sched *s = &rt->sched[i]; /* from src/po/fiber_sched.c */
    uint32_t one = 1;            /* from src/po/fiber_sched.c */

    /* clang-format off */
    if (atomic_compare_exchange_strong_explicit(&s->sleeping, &one, 0, memory_order_acq_rel, memory_order_relaxed)) { /* from src/po/fiber_sched.c */
      /* clang-format on */
      atomic_fetch_sub_explicit(&rt->nsleeping, 1, PO_FENCED(memory_order_relaxed)); /* from src/po/fiber_sched.c */
      atomic_fetch_add_explicit(&s->wake_word, 1, memory_order_release);             /* from src/po/fiber_sched.c */
      return;                                                                        /* futex_wake: it wakes */
    }
  }
}

/* idle(): nothing to run; the spin loop's looks found nothing. */
static void idle(po_sched *s) {
  po_fiber_rt *rt = s->rt;
  uint32_t zero = 0;                                                     /* from src/po/fiber_sched.c */
  bool spin = atomic_compare_exchange_strong(&rt->nspinning, &zero, 1u); /* from src/po/fiber_sched.c */
  bool f = look();                                                       /* the spin loop (spinner) */
  if (f) {
    atomic_fetch_sub(&rt->nspinning, 1u); /* from src/po/fiber_sched.c */
    wakep(rt);
    return; /* run(s, f) */
  }
  uint32_t word = atomic_load_explicit(&s->wake_word, memory_order_acquire); /* from src/po/fiber_sched.c */
  atomic_store(&s->sleeping, 1u);                                            /* from src/po/fiber_sched.c */
  atomic_fetch_add(&rt->nsleeping, 1u);                                      /* from src/po/fiber_sched.c */
  if (spin) atomic_fetch_sub(&rt->nspinning, 1u);                            /* from src/po/fiber_sched.c */
  PO_FENCE();                                                                /* from src/po/fiber_sched.c */
  f = look();                                                                /* take_local, steal */
  if (!f && atomic_load_explicit(&s->wake_word, memory_order_acquire) == word) {
    slept[s->index] = 1; /* futex_wait(&s->wake_word, word): sleeps until a bump */
    slept_on[s->index] = word;
    return;
  }
  uint32_t one = 1;                                                                /* from src/po/fiber_sched.c */
  if (atomic_compare_exchange_strong(&s->sleeping, &one, 0))                       /* from src/po/fiber_sched.c */
    atomic_fetch_sub_explicit(&rt->nsleeping, 1, PO_FENCED(memory_order_relaxed)); /* from src/po/fiber_sched.c */
  if (f) wakep(rt);                                                                /* run(s, f) */
}

static void *scheduler0(void *arg) {
  (void)arg;
  idle(&the_rt.sched[0]);
  return NULL;
}
static void *scheduler1(void *arg) {
  (void)arg;
  idle(&the_rt.sched[NSCHED - 1]);
  return NULL;
}
static void *producer(void *arg) {
  (void)arg;
  atomic_fetch_add_explicit(&runq, 1u, memory_order_relaxed); /* push_to */
  wakep(&the_rt);
  return NULL;
}

int main(void) {
  atomic_init(&the_rt.nspinning, 0);
  atomic_init(&the_rt.nsleeping, 0);
  atomic_init(&the_rt.nvisible, NSCHED);
  for (uint32_t i = 0; i < NSCHED; i++) {
    atomic_init(&the_rt.sched[i].sleeping, 0);
    atomic_init(&the_rt.sched[i].wake_word, 0);
    the_rt.sched[i].rt = &the_rt;
    the_rt.sched[i].index = i;
  }
  atomic_init(&runq, 0);
  atomic_init(&taken, 0);
#if NSCHED == 1
  void *(*fn[])(void *) = {scheduler0, producer, producer};
  (void)scheduler1;
#else
  void *(*fn[])(void *) = {scheduler0, scheduler1, producer, producer};
#endif
  genmc_run(fn, NSCHED + 2);
  /* A scheduler that did not sleep, or was woken, goes on looking. */
  bool all_asleep = true;
  for (uint32_t i = 0; i < NSCHED; i++)
    if (!slept[i] || atomic_load(&the_rt.sched[i].wake_word) != slept_on[i]) all_asleep = false;
  assert(!all_asleep || atomic_load(&taken) == atomic_load(&runq)); /* no lost wake-up */
  return 0;
}
