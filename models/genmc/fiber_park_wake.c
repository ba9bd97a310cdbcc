/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fiber_park_wake.c — GenMC driver for the postoffice's fiber park/wake
 * protocol (src/po/fiber_sched.c's contract, "Park/wake"): the
 * receiver's fiber_recv_blocking (src/po/postoffice.c), the scheduler's
 * parking CAS after the context switch (after_switch, PO_SW_PARK), the
 * sender's po_fiber_wake, and claim.
 *
 * Those functions live among Boost.Context jumps, run queues and timers
 * that GenMC cannot run, so their atomic statements are transcribed here
 * on the real po_fiber (src/po/fiber_internal.h). Every line that ends in
 * "from src/po/<file>" is the library's line, character for character:
 * models/genmc/run checks that each still appears in that file before it
 * runs GenMC, so a change of an order there fails the check until this
 * driver follows it.
 *
 * What stands for what:
 *   the inbox      a counter the senders increment with relaxed RMWs and
 *                  the receiver reads relaxed: the weakest mailbox, so
 *                  whatever ordering the check needs must come from the
 *                  wake protocol itself.
 *   the fiber's    `ctx` (the saved context, a plain field of po_fiber)
 *   memory         and `got`/`taken` (the fiber's stack: plain globals).
 *                  The fiber runs on the receiver's thread, parks there,
 *                  and a sender that takes it over (PARKED -> RUNNABLE)
 *                  runs it on: GenMC's race detection checks that every
 *                  plain access of the fiber is ordered across that
 *                  hand-over (the parking CAS's release, the waker's
 *                  acquire), and the waker checks it reads the saved ctx.
 *
 * Threads: R receives 2 messages; S1 and S2 send one each.
 * Property (no lost wake-up): when every thread has finished, the fiber
 * has received both messages (a fiber left PARKED with a message in its
 * inbox, nobody to wake it, fails main's assertion).
 *
 * GENMC_SEED_BUG: the parking CAS's release weakened to relaxed
 * (acq_rel -> acquire; the control: GenMC must report the race on the
 * saved context).
 * GENMC_BEFORE_FIX: the library's orders before GenMC's findings
 * (docs/reliability.md): the parking CAS release/acquire, and the fiber
 * side's other writes of wstate relaxed stores. A wake-up is lost
 * (main's assertion fails).
 */
#include "genmc_shim.h"

#include "po/fiber_internal.h"

#define MSGS 2
#define CTX_SAVED ((po_fctx)(uintptr_t)0x5a5a0)

static po_fiber fiber;
static _Atomic(uint32_t) inbox; /* messages sent */
static uint32_t taken;          /* messages taken: the fiber's own */
static uint32_t got;            /* messages received: the fiber's own */

/* po_take: a message if the inbox holds one not yet taken. */
static int po_take(void) {
  if (atomic_load_explicit(&inbox, memory_order_relaxed) > taken) {
    taken++;
    return SYNCQ_OK;
  }
  return SYNCQ_EMPTY;
}

/* Run the fiber until it has its messages (returns true) or parks
 * (false): it then belongs to whoever turns PARKED into RUNNABLE. */
static bool fiber_run(void) {
  po_fiber *f = &fiber;
  while (got < MSGS) {
    /* fiber_recv_blocking: its first look, then fiber_wait */
    if (po_take() == SYNCQ_OK) {
      got++;
      continue;
    }
    (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_BLOCKING, memory_order_acq_rel); /* from src/po/postoffice.c */
#ifdef GENMC_BEFORE_FIX
/* the library before the fix: every other write of wstate a relaxed store */
#define atomic_exchange_explicit(p, v, o) atomic_store_explicit(p, v, memory_order_relaxed)
#endif
    if (po_take() == SYNCQ_OK) {
      (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire); /* from src/po/postoffice.c */
      got++;
      continue;
    }
    /* po_fiber_park: the jump to the scheduler, whose after_switch saves
     * the context and parks the fiber */
    po_fiber *from = f;
    po_transfer t = {CTX_SAVED, NULL};
    from->ctx = t.fctx;                  /* from src/po/fiber_sched.c */
    uint32_t expect = PO_FIBER_BLOCKING; /* from src/po/fiber_sched.c */
#ifdef GENMC_BEFORE_FIX
    /* the library before the fix: release */
    if (atomic_compare_exchange_strong_explicit(&from->wstate, &expect, PO_FIBER_PARKED, memory_order_release,
#elif !defined(GENMC_SEED_BUG)
    if (atomic_compare_exchange_strong_explicit(&from->wstate, &expect, PO_FIBER_PARKED,
                                                memory_order_acq_rel, /* from src/po/fiber_sched.c */
#else
    /* the control: the release half gone (acq_rel -> acquire) */
    if (atomic_compare_exchange_strong_explicit(&from->wstate, &expect, PO_FIBER_PARKED, memory_order_acquire,
#endif
                                                memory_order_acquire)) /* from src/po/fiber_sched.c */
      return false;
    /* woken on its way out: queued again, and taken by this scheduler */
    (void)atomic_exchange_explicit(&from->wstate, PO_FIBER_RUNNABLE,
                                   memory_order_acquire);                               /* from src/po/fiber_sched.c */
    (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire); /* from src/po/fiber_sched.c */
  }
  return true;
}

/* The fiber taken over from PARKED: a scheduler claims it and jumps to
 * its context; it runs on here. */
static void resume_taken(po_fiber *f) {
  /* ready(), then a scheduler takes it (claim) and jumps to ctx */
  assert(f->ctx == CTX_SAVED);
  (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire); /* from src/po/fiber_sched.c */
  (void)fiber_run();
}

/* po_fiber_wake: the parked receiver's CAS first (a relaxed hint picks
 * the path), then the RMW that reads any state. */
static void wake(void) {
  po_fiber *f = &fiber;
  uint32_t st = atomic_load_explicit(&f->wstate, memory_order_relaxed); /* from src/po/fiber_sched.c */
  if (st == PO_FIBER_PARKED && atomic_compare_exchange_strong_explicit(&f->wstate, &st, PO_FIBER_RUNNABLE,
                                                                       memory_order_acq_rel, memory_order_acquire)) {
    resume_taken(f);
    return;
  }
  st = atomic_fetch_add_explicit(&f->wstate, 0u, memory_order_acq_rel); /* from src/po/fiber_sched.c */
  for (;;) {
    if (st == PO_FIBER_BLOCKING) {
      if (atomic_compare_exchange_weak_explicit(&f->wstate, &st, PO_FIBER_WOKEN,
                                                memory_order_acq_rel,  /* from src/po/fiber_sched.c */
                                                memory_order_acquire)) /* from src/po/fiber_sched.c */
        return;
    } else if (st == PO_FIBER_PARKED) {
      if (atomic_compare_exchange_weak_explicit(&f->wstate, &st, PO_FIBER_RUNNABLE,
                                                memory_order_acq_rel,    /* from src/po/fiber_sched.c */
                                                memory_order_acquire)) { /* from src/po/fiber_sched.c */
        resume_taken(f);
        return;
      }
    } else {
      return; /* RUNNING, WOKEN, RUNNABLE: it will look at its inbox */
    }
  }
}

static void *receiver(void *arg) {
  (void)arg;
  (void)fiber_run();
  return NULL;
}
static void *sender(void *arg) {
  (void)arg;
  atomic_fetch_add_explicit(&inbox, 1u, memory_order_relaxed); /* the mailbox's enqueue */
  wake();
  return NULL;
}

int main(void) {
  atomic_init(&fiber.wstate, PO_FIBER_RUNNING);
  atomic_init(&inbox, 0);
  void *(*fn[])(void *) = {receiver, sender, sender};
  genmc_run(fn, 3);
  assert(got == MSGS); /* no lost wake-up */
  return 0;
}
