/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fiber_sched.c — the postoffice's fiber backend: processes as user-level
 * contexts, multiplexed M:N onto one scheduler thread per processing unit.
 *
 * Contract
 *   Source:      002 §7 names the way past kernel threads (Erlang processes
 *                of a few hundred bytes; Capriccio's user-level threads).
 *                The scheduler follows the M:N runtimes that do this today:
 *                a run queue per scheduler, a "runnext" slot so a process
 *                woken by a message, or spawned by a fiber, runs next on
 *                the waker's (spawner's) scheduler (Go's runnext and
 *                newproc, BEAM's locality), the children a fiber's spawns
 *                displace kept on a work-stealing deque (Chase & Lev;
 *                spawn_deque.h) and run newest first, Cilk's work-first
 *                order (a tree of processes is walked depth first), the
 *                run queue's head first every PO_FAIR_TICK-th pick (Go's
 *                global-queue check), stealing (run queue, then the
 *                oldest spawned child) only by idle
 *                schedulers, idle schedulers spinning briefly and then
 *                sleeping on a futex (Go's spinning Ms), so a hop between
 *                busy processes never pays a futex wake-up.
 *   Structures:  run queues are NBLFQs (004; syncq/queue/nblfq.h) of
 *                capacity >= max_procs (and >= PO_RUNQ_MIN, for the tags'
 *                sake): a fiber sits in at most one queue, only while
 *                RUNNABLE, so they never fill. Context switches
 *                are Boost.Context fcontext jumps (fiber_context.h).
 *   Park/wake:   recv_blocking announces BLOCKING with an acq_rel exchange
 *                of the fiber's wstate and looks at its inbox once more; a
 *                sender enqueues and then reads wstate with an acq_rel
 *                read-modify-write. RMWs of one word are totally ordered:
 *                either the sender reads BLOCKING/PARKED (and wakes), or
 *                the receiver's exchange reads from the sender's RMW and its
 *                last look sees the message. The context is saved by the
 *                jump; the scheduler that lands next publishes PARKED only
 *                after storing it, so no one resumes a half-saved fiber.
 *                Every write of wstate after spawn is an acquire (or
 *                acq_rel) read-modify-write: it reads the latest state,
 *                so it synchronizes with the RMW of every sender before
 *                it, and the fiber's next look at its inbox sees their
 *                messages. A plain store there (claim's RUNNING, a
 *                yield's RUNNABLE, recv's return to RUNNING) reads
 *                nothing and ends the senders' release sequence: a sender
 *                that read RUNNABLE or WOKEN and went away, trusting the
 *                fiber to look again, could have its message missed by
 *                that look and the fiber park with it in its inbox (RC11
 *                and IMM allow it; models/genmc/fiber_park_wake.c finds
 *                it). Acquire, not relaxed: LLVM turns a relaxed exchange
 *                whose result is unused into a store.
 *   Sleep/wake of schedulers: a scheduler about to sleep counts itself in
 *                nsleeping, fences, and looks at every queue once more; a
 *                producer pushes, fences, and wakes a sleeper if any
 *                (Dekker through seq_cst fences: one sees the other;
 *                under TSan through seq_cst RMWs of the same words, see
 *                PO_FENCE).
 *   Timers:      a deadline heap per scheduler (timer.c), fired by
 *                take_local between fibers and bounding the idle futex
 *                sleep; a fiber's recv_timeout and sleep park on it.
 *                A pending deadline costs a switch a cycle-counter read;
 *                the clock is read when the calibrated counter says the
 *                earliest deadline may be near (po_due_gate, timer.h), so
 *                a deadline still fires at the first switch after it
 *                passes, or when the idle wait it bounds ends (the look
 *                after that wait reads the clock whatever the counter
 *                says: po_due_gate_expire). Each such clock read, and the
 *                monitor's each tick, also checks the counter's rate
 *                against the clock (po_drift_check): once it has drifted
 *                the monitor disarms every gate and every switch reads
 *                the clock.
 *   Start:       the schedulers wait at a gate until their number is
 *                final: one per processing unit, or as many as the kernel
 *                allowed (RLIMIT_NPROC, ...), at least one.
 *   Progress:    blocking (a process waits for messages); a parked fiber
 *                costs no CPU; an idle system's schedulers sleep.
 *   Atomics:     a hop between fibers on one scheduler: the mailbox's
 *                enqueue, 1 CAS on the recipient's wstate when it is
 *                parked (else 1 RMW, and 1 CAS if it is blocking), 1
 *                exchange of runnext, 1 exchange + 1 CAS on the parking
 *                side, 2 fcontext jumps at most (1 when a fiber hands over
 *                to the next directly). recv's yield before it parks
 *                (po_fiber_yield_local): 1 run-queue enqueue and dequeue,
 *                no wake-up of an idle scheduler.
 *   Memory:      the fiber lives in the process-table slot; its stack comes
 *                from the pool (fiber_stack.c).
 *   Blocking:    a monitor thread (futex wait of PO_MONITOR_TICK_NS) reads
 *                each scheduler's switch stamp (while every scheduler
 *                sleeps it sleeps too, until one wakes: an idle system
 *                costs no wake-ups); one that ran a fiber for
 *                PO_BLOCKED_NS (a system call, a long loop) or announced a
 *                blocking call (syncq_po_blocking_begin) is served by a
 *                spare scheduler thread (Go's sysmon hand-off; the stuck
 *                one keeps its identity and goes on when the call
 *                returns; the spare then retires). See "blocked
 *                schedulers" below.
 *   Limits:      one spare per scheduler: more schedulers blocked at once
 *                than that wait for a spare to retire. A blocked
 *                scheduler's deadlines fire once the monitor has seen the
 *                block (PO_BLOCKED_NS and up to a tick; at once after
 *                syncq_po_blocking_begin), its spare then waking for
 *                them; one that a plain thread arms there later
 *                (po_fiber_timer_add_remote wakes the blocked owner, not
 *                the spare) up to a tick late. A
 *                fiber that spins waiting for another fiber of the same
 *                scheduler without yielding never lets it run (unless the
 *                monitor hands the other to a spare).
 *   Signal-safe: no.  Process-shared: no.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fiber_internal.h"
#include "po_internal.h"
#include "spawn_deque.h"
#include "timer.h"

#if SYNCQ_HAVE_FIBERS
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

#if SYNCQ_HAVE_HWLOC
#include <hwloc.h>
#endif

/* An idle scheduler looks for work this long before it sleeps: about what
 * a futex wake-up costs (5-40 us), so a burst of work keeps a scheduler
 * awake instead of paying a wake-up per message. Only one scheduler spins
 * at a time (the others sleep at once), and the spinner yields the
 * processor between looks: on a machine with more threads than cores the
 * spin must not take the core from the thread that produces the work. */
#define PO_IDLE_SPIN_NS 20000u
/* Between two looks at the queues while spinning. */
#define PO_IDLE_RELAX 32
/* Most fibers one steal moves besides the one it runs. */
#define PO_STEAL_BATCH 64u
/* Runnext hand-offs in a row before the run queue gets a turn: two fibers
 * that keep waking each other must not starve the queued ones (Go gives
 * runnext the waker's time slice; BEAM counts reductions). */
#define PO_RUNNEXT_BUDGET 64u
/* Every this many fibers a scheduler takes from its own queues, the run
 * queue's head goes before the spawned children (spawn_deque.h): a fiber
 * that spawns without end must not starve the woken and yielding ones
 * (Go looks at its global queue every 61st schedule for the same reason). */
#define PO_FAIR_TICK 61u
/* Run queues never smaller than this: NBLFQ's 16-bit tags repeat after
 * capacity x 65,536 operations on the ring, which a preempted scheduler
 * must not sleep through (at 4,096: hundreds of millions). */
#define PO_RUNQ_MIN 4096u
/* A scheduler that has run the same fiber this long without a switch is
 * taken to be blocked (a system call, a long computation): the monitor
 * lets a spare scheduler take its queued fibers. Go's sysmon retakes a P
 * after 20 us to 10 ms in a system call; 10 ms keeps the monitor's scans
 * rare and is far below the seconds a blocking call may take. */
#define PO_BLOCKED_NS 10000000ull
/* The monitor looks at the schedulers every PO_MONITOR_TICK_NS (timer.h;
 * a futex wait: the bracket's syncq_po_blocking_begin and destroy end it
 * early). */

enum { PO_SW_NONE = 0, PO_SW_PARK, PO_SW_YIELD, PO_SW_YIELD_LOCAL, PO_SW_EXIT };

typedef struct po_sched {
  /* Exchanged by the owner (taking) and by wakers on this scheduler. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(po_fiber *) runnext;
  /* The owner's switch stamp: (switches << 1) | (a fiber runs now). A
   * thief or the monitor that sees it unchanged, odd, knows one fiber has
   * run (or blocked) all that while. */
  _Atomic(uint64_t) switches;
  /* 1 while the monitor takes this scheduler to be blocked (set and
   * cleared by the monitor under spare_lock; read by thieves and by the
   * spare covering it). */
  _Atomic(uint32_t) stuck;
  /* 1 between a fiber's syncq_po_blocking_begin and _end here. */
  _Atomic(uint32_t) blocked;
  /* The futex a sleeping scheduler waits on. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) sleeping;
  _Atomic(uint32_t) wake_word;
  /* The owner thread's alone. */
  SYNCQ_CACHELINE_ALIGNED po_fctx ctx; /* the scheduler loop, while a fiber runs */
  po_san san;
  po_fiber *sw_from; /* the switch in progress: who jumped ... */
  int sw_action;     /* ... and why */
  struct po_fiber_rt *rt;
  uint32_t index;
  uint64_t seed;           /* victim choice */
  uint32_t runnext_streak; /* runnext taken in a row (PO_RUNNEXT_BUDGET) */
  uint32_t fair_tick;      /* takes since the run queue last went first (PO_FAIR_TICK) */
  /* Message headers freed and made by the fibers running here (header.c):
   * touched with no atomics, by this thread only (a spare has its own). */
  po_header_cache hdrs;
  pthread_t tid;
  bool started;
  /* Spares (index >= nsched): started by the monitor when a scheduler is
   * blocked, retired when it runs again. Under rt->spare_lock: */
  bool spare;
  _Atomic(struct po_sched *) cover; /* spare: the blocked scheduler it serves (NULL: none; written under the lock) */
  struct po_sched *covered_by;      /* the spare serving this one (NULL: none) */
  _Atomic(uint32_t) active;         /* spare: 1 while it runs as a scheduler (written under the lock) */
  _Atomic(uint32_t) spare_word;     /* futex a retired spare sleeps on */
  syncq_queue_nblfq *runq;
  /* Children a fiber's spawns displaced from runnext: the owner runs the
   * newest first, others steal the oldest (spawn_deque.h). */
  po_deque spawned;
  /* Deadlines of the fibers that wait here, and send_after's (timer.c):
   * fired between fibers (take_local), bounding the idle sleep. */
  po_timers timers;
  /* When take_local must next read the clock for them (timer.h): the
   * owner thread's alone. */
  po_due_gate gate;
} po_sched;

struct po_fiber_rt {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) nspinning;
  _Atomic(uint32_t) nsleeping;
  _Atomic(uint32_t) stop;
  _Atomic(uint32_t) rr; /* round robin for fibers made runnable by plain threads */
  SYNCQ_CACHELINE_ALIGNED struct syncq_po_system *sys;
  uint32_t nsched; /* schedulers running (fixed before any passes the gate) */
  uint32_t nalloc; /* schedulers allocated: nsched, then the spares */
  /* Schedulers with a run queue (nsched, then each spare once it first
   * starts; they stay): what steal and wakep look at. */
  _Atomic(uint32_t) nvisible;
  /* The monitor (po_monitor_main): its thread, its futex, its view. */
  pthread_mutex_t spare_lock; /* the monitor's scan, spares' start and retirement */
  bool spare_lock_init;
  bool mon_started;
  pthread_t mon_tid;
  _Atomic(uint32_t) mon_word;
  /* 1 while the monitor sleeps without a deadline (every scheduler was
   * asleep): a scheduler that wakes takes it to 0 and wakes the monitor. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) mon_dozing;
  _Atomic(uint64_t) mon_wakeups; /* the monitor's passes (po_fiber_rt_monitor_wakeups) */
  size_t runq_bytes, runq_cap;
  uint64_t *mon_stamp; /* [nalloc] the stamp seen last, under spare_lock */
  uint64_t *mon_since; /* [nalloc] when it was first seen */
  /* The counter's rate checked at each scan's clock read (timer.h,
   * po_drift_check): the calibrated rate (set before the monitor starts)
   * and the last pair of scan(), which the monitor runs each tick and
   * syncq_po_blocking_begin runs too, under spare_lock. */
  double mon_rate;
  po_drift mon_drift;
  bool pin;
  const char *short_reason; /* the limit that kept nsched below what was asked, or NULL */
  _Atomic(uint32_t) gate;   /* 0 until nsched is final: a started scheduler waits for it */
  po_sched *sched;          /* [nalloc] */
  po_stack_pool pool;
#if SYNCQ_HAVE_HWLOC
  hwloc_topology_t topo;
  bool have_topo;
#endif
};

/* The fiber running on this thread: po_fiber_current and
 * po_fiber_set_current (fiber_current.c). */

static struct syncq_po_proc *proc_of(po_fiber *f) { return SYNCQ_FL_CONTAINER(f, struct syncq_po_proc, fiber); }

/* The order of an access that one of this file's seq_cst fences orders
 * (the Dekker pairs of a scheduler's sleep and wakep, and of a spare's
 * retirement and ready): relaxed in a normal build, where the fence does
 * the work. ThreadSanitizer draws no happens-before from a standalone
 * fence (its runtime executes it and records nothing), so under TSan the
 * access is seq_cst itself: a load of a pair then synchronizes with the
 * seq_cst write it reads, and a count that the fence before it releases
 * (C11's fence rule) is a release itself, both where TSan sees them. The
 * fences themselves go under TSan (PO_FENCE): they also order the pushes
 * before them (NBLFQ's, runnext's, the deque's), whose orders are the
 * queues' own, so there each pair's load is a read-modify-write instead
 * (PO_FENCED_LOAD, PO_FENCED_STORE). */
#define PO_FENCED(order) (PO_TSAN ? memory_order_seq_cst : (order))

/* The Dekker pairs themselves: a seq_cst fence between a side's writes
 * and its load of the other side's word in a normal build. TSan does not
 * model the fence (GCC warns -Wtsan), and no order on the load alone can
 * stand in for it: the writes before it are a queue's push, with the
 * queue's orders. So under TSan the fence goes, the load is a seq_cst
 * read-modify-write that writes back what it reads (adds 0), and the
 * other side's write of that word is a seq_cst read-modify-write too
 * (idle's counts already are; retire's store of active becomes an
 * exchange). Two RMWs of one word are ordered by its modification order:
 * the later one reads the earlier's value (or that of an RMW after it)
 * and so synchronizes with it, and the later side sees everything the
 * earlier wrote before its RMW: either the waker's load reads the
 * sleeper's announcement, or the sleeper's last look sees the push. In a
 * normal build the machine code is the fence and the relaxed load as
 * before. */
#if PO_TSAN
#define PO_FENCE() ((void)0)
#define PO_FENCED_LOAD(obj) atomic_fetch_add((obj), 0u)
#define PO_FENCED_STORE(obj, v) ((void)atomic_exchange((obj), (v)))
#else
#define PO_FENCE() atomic_thread_fence(memory_order_seq_cst)
/* relaxed: ordered by the PO_FENCE() before it (see above) */
#define PO_FENCED_LOAD(obj) atomic_load_explicit((obj), memory_order_relaxed)
#define PO_FENCED_STORE(obj, v) atomic_store((obj), (v))
#endif

/* ---- run queues ---- */

static void push_to(po_fiber_rt *rt, po_sched *s, po_fiber *f) {
  /* The queues hold every process of the system; FULL would mean a fiber
   * queued twice. Spread over the others all the same rather than lose it. */
  uint32_t i = s->index;
  while (syncq_queue_nblfq_enqueue(s->runq, f) != SYNCQ_OK) {
    i = (i + 1) % rt->nsched;
    s = &rt->sched[i];
  }
}

/* A sleeping scheduler, if any, is woken (none when one is spinning: it
 * will find the work). Call after making work visible. */
static void wakep(po_fiber_rt *rt) {
  /* seq_cst fence: orders the push before these loads, against the
   * sleeper's fence between its announcement and its last look. */
  PO_FENCE();
  /* PO_FENCED_LOAD (relaxed; a seq_cst RMW under TSan): ordered by the
   * fence; pairs with idle's seq_cst RMWs of nspinning and nsleeping
   * before its fence. */
  if (PO_FENCED_LOAD(&rt->nspinning) != 0) return;
  if (PO_FENCED_LOAD(&rt->nsleeping) == 0) return;
  /* acquire: pairs with start_spare's release: the spares' words exist. */
  uint32_t n = atomic_load_explicit(&rt->nvisible, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) {
    po_sched *s = &rt->sched[i];
    uint32_t one = 1;
    /* acq_rel: the winner of 1 -> 0 (waker or the sleeper itself) owns
     * the nsleeping decrement. */
    if (atomic_compare_exchange_strong_explicit(&s->sleeping, &one, 0, memory_order_acq_rel, memory_order_relaxed)) {
      /* PO_FENCED(relaxed): a count, read after fences (the fence above
       * releases it to idle's seq_cst RMWs of nsleeping). */
      atomic_fetch_sub_explicit(&rt->nsleeping, 1, PO_FENCED(memory_order_relaxed));
      /* release: the sleeper's futex_wait compares the word it read before
       * announcing itself; the change makes it return. */
      atomic_fetch_add_explicit(&s->wake_word, 1, memory_order_release);
      (void)syncq_futex_wake(&s->wake_word, 1, false);
      return;
    }
  }
}

static void drain_spare(po_fiber_rt *rt, po_sched *sp);

/* f (RUNNABLE) runs next on `here` when the waker is a fiber there;
 * otherwise it is queued where it ran last. */
static void ready(po_fiber_rt *rt, po_fiber *f, po_sched *here) {
  if (here != NULL) {
    /* acq_rel: release publishes f (its saved context, its RUNNABLE state)
     * to the owner's acquire exchange in take_local; acquire takes over
     * the fiber it displaces, published the same way. */
    po_fiber *old = atomic_exchange_explicit(&here->runnext, f, memory_order_acq_rel);
    if (old == NULL) return;
    push_to(rt, here, old); /* displaced: anyone may take it */
    wakep(rt);
    return;
  }
  po_sched *s = f->last;
  /* relaxed: rr only spreads fibers over the schedulers; it publishes nothing */
  if (s == NULL) s = &rt->sched[atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) % rt->nsched];
  push_to(rt, s, f);
  if (s->spare) {
    /* seq_cst fence: the push before the load of active, against
     * retire's seq_cst store of 0 before its drain (Dekker): either the
     * spare's drain sees the push, or we see it retired and drain. */
    PO_FENCE();
    /* PO_FENCED_LOAD (relaxed; a seq_cst RMW under TSan): ordered by the
     * fence; pairs with retire's seq_cst store of 0 (PO_FENCED_STORE). */
    if (PO_FENCED_LOAD(&s->active) == 0) drain_spare(rt, s);
  }
  wakep(rt);
}

static po_fiber *claim(po_fiber *f) {
  /* The fiber is ours (taken from a queue or runnext with acquire);
   * senders only act on BLOCKING and PARKED. acquire exchange, not a
   * store: pairs with the acq_rel RMW of a sender that read RUNNABLE and
   * left its message to the fiber's next look (see the contract). */
  (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire);
  return f;
}

static po_fiber *take_runnext(po_sched *s) {
  /* relaxed peek first: an exchange on an empty slot would dirty its line. */
  if (atomic_load_explicit(&s->runnext, memory_order_relaxed) == NULL) return NULL;
  /* acquire: pairs with the release exchange in ready(). */
  po_fiber *f = atomic_exchange_explicit(&s->runnext, NULL, memory_order_acquire);
  return f != NULL ? claim(f) : NULL;
}

/* A spare's duties to the scheduler it serves, between any two fibers
 * (take_local): fire v's due timers, and move what waits on v (its run
 * queue, its runnext) here, even while the spare has fibers of its own
 * (those woken by v's timers and by plain threads keep landing on v,
 * where they ran last). */
/* A spare no longer needed (what it served runs again, and no deadline
 * waits on its heap) takes no more fibers: its loop retires it. */
static bool spare_done(po_sched *sp) {
  po_sched *v = atomic_load_explicit(&sp->cover, memory_order_relaxed); /* a hint; retire's lock decides */
  /* relaxed: the monitor's verdict, a hint. */
  return (v == NULL || atomic_load_explicit(&v->stuck, memory_order_relaxed) == 0) &&
         po_timers_next(&sp->timers) == UINT64_MAX;
}

/* False: the spare is done (spare_done), take nothing. */
static bool take_over(po_sched *sp) {
  if (spare_done(sp)) return false;
  po_sched *v = atomic_load_explicit(&sp->cover, memory_order_relaxed); /* a hint: whom it serves */
  /* relaxed: as in spare_done. */
  if (v == NULL || atomic_load_explicit(&v->stuck, memory_order_relaxed) == 0) return true;
  if (po_timers_next(&v->timers) != UINT64_MAX) {
    uint64_t now = syncq_now_ns(); /* its heap is locked: fire them for it */
    if (po_timers_next(&v->timers) <= now) (void)po_timers_fire(&v->timers, now);
  }
  void *item;
  while (syncq_queue_nblfq_dequeue(v->runq, &item) == SYNCQ_OK) push_to(sp->rt, sp, item);
  while (po_deque_busy(&v->spawned))
    if ((item = po_deque_steal(&v->spawned)) != NULL) push_to(sp->rt, sp, item);
  if (atomic_load_explicit(&v->runnext, memory_order_relaxed) != NULL) { /* a peek, as take_runnext's */
    /* acquire: as take_runnext. */
    po_fiber *f = atomic_exchange_explicit(&v->runnext, NULL, memory_order_acquire);
    if (f != NULL) push_to(sp->rt, sp, f);
  }
  return true;
}

/* runnext first (locality: the fiber a message just woke), but after
 * PO_RUNNEXT_BUDGET of those in a row the queue's head goes first; then
 * the newest spawned child (depth first), except every PO_FAIR_TICK-th
 * take, when the run queue's head goes first; then the run queue. */
static po_fiber *take_local(po_sched *s) {
  void *item;
  /* a branch on a field of the owner's line: free for the others. A
   * spare that is done returns to its loop, which retires it. */
  if (s->spare && !take_over(s)) return NULL;
  uint64_t due = po_timers_next(&s->timers);
  /* An empty heap costs one load; a pending deadline a counter read, and
   * a clock read only when the counter says it may be near (timer.h). */
  if (due != UINT64_MAX && !po_due_gate_skip(&s->gate, due)) {
    uint64_t t0 = po_ticks(); /* before the clock: the gate errs early */
    uint64_t now = syncq_now_ns();
    po_due_gate_check(&s->gate, t0, now, po_ticks()); /* the rate, against the clock (timer.h) */
    if (due <= now) (void)po_timers_fire(&s->timers, now);
    po_due_gate_set(&s->gate, po_timers_next(&s->timers), t0, now);
  }
  if (s->runnext_streak < PO_RUNNEXT_BUDGET) {
    po_fiber *f = take_runnext(s);
    if (f != NULL) {
      s->runnext_streak++;
      return f;
    }
  }
  s->runnext_streak = 0;
  if (++s->fair_tick >= PO_FAIR_TICK) {
    s->fair_tick = 0;
    if (syncq_queue_nblfq_dequeue(s->runq, &item) == SYNCQ_OK) return claim(item);
  }
  if ((item = po_deque_take(&s->spawned)) != NULL) return claim(item);
  if (syncq_queue_nblfq_dequeue(s->runq, &item) == SYNCQ_OK) return claim(item);
  return take_runnext(s);
}

static uint64_t next_rand(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Another scheduler's queued fibers (one to run, and up to PO_STEAL_BATCH
 * more moved to our queue, so one steal halves a long imbalance instead
 * of moving a fiber at a time), or (seen != NULL) the runnext of a
 * scheduler whose switch count has not moved since `seen` was taken. */
static po_fiber *steal(po_sched *s, const uint64_t *seen) {
  po_fiber_rt *rt = s->rt;
  /* acquire: pairs with start_spare's release (the spare's queue exists). */
  uint32_t n = atomic_load_explicit(&rt->nvisible, memory_order_acquire);
  if (n < 2) return NULL;
  uint32_t start = (uint32_t)(next_rand(&s->seed) % n);
  for (uint32_t k = 0; k < n; k++) {
    po_sched *v = &rt->sched[(start + k) % n];
    if (v == s) continue;
    void *item;
    if (syncq_queue_nblfq_dequeue(v->runq, &item) == SYNCQ_OK) {
      /* Take about half of what is queued there (the hints' distance),
       * at most PO_STEAL_BATCH. relaxed: hints, an estimate only. */
      uint64_t h = atomic_load_explicit(&v->runq->head, memory_order_relaxed);
      uint64_t t = atomic_load_explicit(&v->runq->tail, memory_order_relaxed);
      uint64_t queued = (h - t) & v->runq->mask;
      uint64_t more = queued / 2 < PO_STEAL_BATCH ? queued / 2 : PO_STEAL_BATCH;
      void *extra;
      uint64_t moved = 0;
      for (; moved < more && syncq_queue_nblfq_dequeue(v->runq, &extra) == SYNCQ_OK; moved++) push_to(rt, s, extra);
      if (moved > 0) wakep(rt); /* more than we run now: another idle scheduler may share them */
      return claim(item);
    }
    /* Its oldest spawned child: in a tree, the root of the largest
     * subtree waiting there (Cilk's steal). */
    if ((item = po_deque_steal(&v->spawned)) != NULL) return claim(item);
    /* relaxed: hints; the exchange decides who takes the fiber. */
    bool blocked = atomic_load_explicit(&v->stuck, memory_order_relaxed) != 0;
    if (atomic_load_explicit(&v->runnext, memory_order_relaxed) != NULL &&
        (blocked || (seen != NULL && atomic_load_explicit(&v->switches, memory_order_relaxed) == seen[v->index]))) {
      /* acquire: as in take_local. */
      po_fiber *f = atomic_exchange_explicit(&v->runnext, NULL, memory_order_acquire);
      if (f != NULL) return claim(f);
    }
  }
  return NULL;
}

/* The last step of a process's life, once its fiber will never run again
 * and holds no stack: free a detached one's slot, or tell its joiners. */
static void buried(po_fiber *f) {
  /* Written at spawn before the fiber was queued (the queue's
   * acquire/release publish it); nobody joins a detached one. */
  struct syncq_po_proc *gone = proc_of(f);
  if (gone->detached) {
    /* Its stack is back: the slot may go to the next process now. */
    gone->sys->up->release_detached(gone); /* process.c: an upper layer */
    return;
  }
  /* seq_cst, with the joiner's seq_cst increment of join_waiters and
   * load of done: either it sees done, or we see it waiting. */
  atomic_store(&f->done, 1u);
  if (atomic_load(&f->join_waiters) != 0) (void)syncq_futex_wake(&f->done, -1, false);
  /* seq_cst, with the joining fiber's seq_cst store of join_fiber and
   * load of done: either it sees done, or we see it and wake it (a wake
   * before it parks is read by its exchange to BLOCKING, which then
   * sees done: po_fiber_join). */
  struct syncq_po_proc *joiner = atomic_load(&f->join_fiber);
  if (joiner != NULL) po_fiber_wake(NULL, joiner);
}

/* ---- switching ---- */

/* Right after a jump lands: save the context that jumped, and finish what
 * it asked for (park it, queue it, or bury it). Returns the scheduler of
 * the thread we now run on. */
static po_sched *after_switch(po_transfer t) {
  po_sched *s = t.data;
  po_fiber *me = po_fiber_current();
  po_san_finish(me != NULL ? &me->san : &s->san);
  if (me != NULL) {
    me->sched = s;
    me->last = s;
    me->hdrs = &s->hdrs;
  }
  po_fiber *from = s->sw_from;
  int action = s->sw_action;
  s->sw_from = NULL;
  s->sw_action = PO_SW_NONE;
  if (from == NULL) {
    s->ctx = t.fctx;
    return s;
  }
  from->ctx = t.fctx;
  switch (action) {
  case PO_SW_PARK: {
    uint32_t expect = PO_FIBER_BLOCKING;
    /* acq_rel: release publishes the saved context to the sender whose
     * CAS PARKED -> RUNNABLE (acquire) takes the fiber over; on failure
     * the read of WOKEN must acquire (pairs with that sender's acq_rel
     * CAS BLOCKING -> WOKEN, after its enqueue), or the fiber's next look
     * at its inbox may miss the message: a lost wake-up. C11 (7.17.7.4)
     * forbids a failure order stronger than the success order, so the
     * success order carries the acquire (release alone was: GenMC, which
     * reads a CAS with its success order, found the lost wake-up;
     * models/genmc/fiber_park_wake.c). */
    if (atomic_compare_exchange_strong_explicit(&from->wstate, &expect, PO_FIBER_PARKED, memory_order_acq_rel,
                                                memory_order_acquire))
      break;
    /* A sender woke it (WOKEN) while it was on its way out: queue it
     * here again, and let a sleeping scheduler know there is work. */
    (void)atomic_exchange_explicit(
      &from->wstate, PO_FIBER_RUNNABLE,
      memory_order_acquire); /* ours: no one else acts on WOKEN; acquire RMW: see the contract */
    push_to(s->rt, s, from);
    wakep(s->rt);
    break;
  }
  case PO_SW_YIELD:
    (void)atomic_exchange_explicit(&from->wstate, PO_FIBER_RUNNABLE,
                                   memory_order_acquire); /* ours until queued; acquire RMW: see the contract */
    push_to(s->rt, s, from);
    wakep(s->rt); /* it waits behind others: an idle scheduler may take it */
    break;
  case PO_SW_YIELD_LOCAL:
    /* A receiver's yield: it only wants another look at its inbox, so no
     * idle scheduler is woken for it (one would take it to another
     * processor for that look and park it there). */
    (void)atomic_exchange_explicit(&from->wstate, PO_FIBER_RUNNABLE,
                                   memory_order_acquire); /* ours until queued; acquire RMW: see the contract */
    push_to(s->rt, s, from);
    break;
  case PO_SW_EXIT:
    po_san_fiber_destroy(&from->san);
    po_stack_put(&s->rt->pool, from->stack);
    from->stack = NULL;
    buried(from);
    break;
  default:
    break;
  }
  return s;
}

static void fiber_entry(po_transfer t);

/* A fiber's stack is taken when a scheduler first runs it, not at spawn:
 * a process spawned and still queued holds none. A tree that spawns ahead
 * of what it runs (skynet: most of its live processes wait in run queues,
 * never run yet) then touches the stacks of the processes that have run
 * and not exited, which the pool's free list hands round warm (the last
 * freed first), rather than one per live process; and the guards are made
 * for that many stacks. The context is made here too, so the stack's
 * first page fault is the scheduler's. False: no stack could be had
 * (*why names the limit: memory). */
static bool give_stack(po_sched *s, po_fiber *f, const char **why) {
  po_stack *st;
  if (po_stack_get(&s->rt->pool, &st, why) != SYNCQ_OK) return false;
  f->stack = st;
  po_san_fiber_init(&f->san, st->lo, st->size);
  f->canary = po_stack_canary_set(st); /* after ASan forgot the stack's old redzones */
  f->ctx = make_fcontext(st->lo + st->size, st->size, fiber_entry);
  return true;
}

/* A process that cannot start (no memory for its stack) exits with
 * SYNCQ_PO_EXIT_NOMEM without running: its monitors and links learn it as
 * any exit, its joiner returns, and the system's limit reason names the
 * limit. It runs here, on the scheduler that took it (which may be in the
 * middle of parking or ending another fiber: nothing here switches). */
static void stillborn(po_fiber *f, const char *why) {
  struct syncq_po_proc *p = proc_of(f);
  /* release: pairs with syncq_po_limit_reason's acquire load (the string
   * is static). */
  atomic_store_explicit(&p->sys->limit_reason, why != NULL ? why : "memory", memory_order_release);
  p->exit_reason = SYNCQ_PO_EXIT_NOMEM;
  po_state_exit(p);           /* RUNNING -> EXITED, a joiner's claim kept (po_internal.h) */
  p->sys->up->exit_notify(p); /* process.c: an upper layer */
  buried(f);
}

/* `to`, given its first run's stack; or, if it cannot have one, the next
 * fiber that can run (NULL: none queued here) once `to` is buried. */
static po_fiber *first_run(po_sched *s, po_fiber *to) {
  const char *why = NULL;
  while (to != NULL && to->ctx == NULL && !give_stack(s, to, &why)) {
    stillborn(to, why);
    to = take_local(s);
  }
  return to;
}

/* Jump from the running context (fiber `from`, or s's own loop when NULL)
 * to `to` (a fiber, or s's loop when NULL). Returns, when `from` is
 * resumed, the scheduler it then runs on. */
static po_sched *switch_to(po_sched *s, po_fiber *from, int action, po_fiber *to) {
  if (from != NULL && from->canary != NULL && !po_stack_canary_ok(from->stack, from->canary)) {
    po_stack_canary_report((unsigned long long)proc_of(from)->pid, from->stack);
    abort(); /* its frames, and maybe a neighbour's, are gone: as a guard's fault, the program stops */
  }
  if (to != NULL && to->ctx == NULL) {
    to = first_run(s, to);
    if (to == NULL && from == NULL) return s; /* the loop had nothing else to run: no switch */
  }
  s->sw_from = from;
  s->sw_action = action;
  po_san *from_san = from != NULL ? &from->san : &s->san;
  po_san *to_san = to != NULL ? &to->san : &s->san;
  po_fctx target = to != NULL ? to->ctx : s->ctx;
  po_fiber_set_current(to);
  /* relaxed: a stamp that thieves and the monitor read as a hint (a late
   * view costs at most a needless spare or a later steal). */
  uint64_t stamp = atomic_load_explicit(&s->switches, memory_order_relaxed);
  atomic_store_explicit(&s->switches, (((stamp >> 1) + 1) << 1) | (to != NULL ? 1u : 0u), memory_order_relaxed);
  po_san_start(from_san, to_san, action == PO_SW_EXIT);
  po_transfer t = jump_fcontext(target, s);
  return after_switch(t);
}

static void fiber_entry(po_transfer t) {
  po_sched *s = after_switch(t);
  (void)s;
  po_fiber *f = po_fiber_current();
  struct syncq_po_proc *p = proc_of(f);
  p->fn(p, p->arg);
  po_state_exit(p);           /* RUNNING -> EXITED, a joiner's claim kept (po_internal.h) */
  p->sys->up->exit_notify(p); /* process.c: an upper layer */
  s = f->sched;
  switch_to(s, f, PO_SW_EXIT, take_local(s));
  /* never resumed */
}

void po_fiber_park(struct syncq_po_proc *self) {
  po_fiber *f = &self->fiber;
  po_sched *s = f->sched;
  switch_to(s, f, PO_SW_PARK, take_local(s));
}

void po_fiber_yield(struct syncq_po_proc *self) {
  po_fiber *f = &self->fiber;
  po_sched *s = f->sched;
  po_fiber *next = take_local(s);
  if (next == NULL) next = steal(s, NULL); /* nothing here: balance the load before spinning alone */
  if (next == NULL) return;                /* nobody else anywhere: go on */
  switch_to(s, f, PO_SW_YIELD, next);
}

bool po_fiber_yield_local(struct syncq_po_proc *self) {
  po_fiber *f = &self->fiber;
  po_sched *s = f->sched;
  po_fiber *next = take_local(s);
  if (next == NULL) return false;
  switch_to(s, f, PO_SW_YIELD_LOCAL, next);
  return true;
}

void po_fiber_wake(struct syncq_po_proc *waker, struct syncq_po_proc *dst) {
  (void)waker;
  po_fiber *f = &dst->fiber;
  /* The common case first: a parked receiver (a ring's next process). A
   * CAS that succeeds is the RMW the protocol needs (it read PARKED);
   * when the state is another, the RMW below reads it. The load is
   * relaxed: a hint that picks the path (the CAS or the RMW decides);
   * the CAS is acq_rel / acquire, as the PARKED case below. */
  uint32_t st = atomic_load_explicit(&f->wstate, memory_order_relaxed);
  if (st == PO_FIBER_PARKED && atomic_compare_exchange_strong_explicit(&f->wstate, &st, PO_FIBER_RUNNABLE,
                                                                       memory_order_acq_rel, memory_order_acquire)) {
    po_fiber_rt *rt = dst->sys->fiber_rt;
    po_fiber *cur = po_fiber_current();
    ready(rt, f, cur != NULL && cur->sched != NULL && cur->sched->rt == rt ? cur->sched : NULL);
    return;
  }
  /* acq_rel RMW: pairs with the receiver's acq_rel exchange to BLOCKING
   * (see the contract); reads the latest state. */
  st = atomic_fetch_add_explicit(&f->wstate, 0u, memory_order_acq_rel);
  for (;;) {
    if (st == PO_FIBER_BLOCKING) {
      /* acq_rel: the receiver's scheduler reads WOKEN with its failed CAS. */
      if (atomic_compare_exchange_weak_explicit(&f->wstate, &st, PO_FIBER_WOKEN, memory_order_acq_rel,
                                                memory_order_acquire))
        return;
    } else if (st == PO_FIBER_PARKED) {
      /* acquire: pairs with the parking CAS (release): the saved context
       * is ours to hand on. */
      if (atomic_compare_exchange_weak_explicit(&f->wstate, &st, PO_FIBER_RUNNABLE, memory_order_acq_rel,
                                                memory_order_acquire)) {
        po_fiber_rt *rt = dst->sys->fiber_rt;
        po_fiber *cur = po_fiber_current();
        ready(rt, f, cur != NULL && cur->sched != NULL && cur->sched->rt == rt ? cur->sched : NULL);
        return;
      }
    } else {
      return; /* RUNNING, WOKEN, RUNNABLE: it will look at its inbox */
    }
  }
}

/* ---- schedulers ---- */

static void run(po_sched *s, po_fiber *f) { (void)switch_to(s, NULL, PO_SW_NONE, f); }

static bool stopping(po_fiber_rt *rt) {
  /* acquire: pairs with destroy's release store (after every fiber is done). */
  return atomic_load_explicit(&rt->stop, memory_order_acquire) != 0;
}

static void monitor_wake(po_fiber_rt *rt);

/* Nothing to run: spin a while looking for work, then sleep. */
static void idle(po_sched *s) {
  po_fiber_rt *rt = s->rt;
  uint64_t seen[rt->nalloc];
  for (uint32_t i = 0; i < rt->nalloc; i++)
    seen[i] = atomic_load_explicit(&rt->sched[i].switches, memory_order_relaxed); /* hints */
  /* seq_cst: see wakep. One idle scheduler at a time spins (nspinning
   * 0 -> 1); the others go straight to sleep. nspinning counts only that
   * spinner, so wakep's "someone will find it" is true when it trusts it;
   * the spinner hands the search on with wakep when it finds work. */
  uint32_t zero = 0;
  bool spin = atomic_compare_exchange_strong(&rt->nspinning, &zero, 1u);
  uint64_t until = syncq_now_ns() + PO_IDLE_SPIN_NS;
  po_fiber *f = NULL;
  while (spin) {
    f = take_local(s);
    if (f == NULL) f = steal(s, NULL);
    if (f != NULL || stopping(rt)) break;
    if (syncq_now_ns() > until) {
      f = steal(s, seen); /* a runnext stuck behind a fiber that ran all this time */
      break;
    }
    for (int i = 0; i < PO_IDLE_RELAX; i++) syncq_pr_relax();
    syncq_yield();
  }
  if (f != NULL) {
    atomic_fetch_sub(&rt->nspinning, 1u); /* seq_cst: see wakep */
    wakep(rt);                            /* there may be more: the spinner hands the search on */
    run(s, f);
    return;
  }
  /* acquire: the value futex_wait compares; pairs with wakep's release
   * (and with po_fiber_timer_add_remote's: read before the heap's next
   * deadline below, so an earlier deadline added after it ends the wait). */
  uint32_t word = atomic_load_explicit(&s->wake_word, memory_order_acquire);
  atomic_store(&s->sleeping, 1u);
  atomic_fetch_add(&rt->nsleeping, 1u);
  if (spin) atomic_fetch_sub(&rt->nspinning, 1u); /* after counting ourselves asleep: wakep sees one or the other */
  /* seq_cst fence: the announcement before the last look (see wakep;
   * under TSan the RMWs above and wakep's PO_FENCED_LOAD order them). */
  PO_FENCE();
  f = take_local(s);
  if (f == NULL) f = steal(s, NULL);
  if (f == NULL && !stopping(rt)) {
    /* No longer than the earliest deadline here: the timer fires when the
     * loop next calls take_local. A spare also wakes for the earliest of
     * the blocked scheduler it serves (take_over fires those), instead of
     * at the monitor's next nudge, a tick later. */
    uint64_t due = po_timers_next(&s->timers);
    po_sched *v = s->spare ? atomic_load_explicit(&s->cover, memory_order_relaxed) : NULL; /* a hint, as in take_over */
    if (v != NULL && atomic_load_explicit(&v->stuck, memory_order_relaxed) != 0) { /* relaxed: as in spare_done */
      uint64_t vdue = po_timers_next(&v->timers);                                  /* its heap is locked */
      if (vdue < due) due = vdue;
    }
    uint64_t now = due == UINT64_MAX ? 0 : syncq_now_ns();
    int64_t wait = due == UINT64_MAX ? -1 : due <= now ? 0 : (int64_t)(due - now);
    /* The wait ends by the clock at the deadline (or it has passed): the
     * next look reads the clock, whatever the counter says (timer.h). */
    if (due != UINT64_MAX) po_due_gate_expire(&s->gate);
    if (wait != 0) (void)syncq_futex_wait(&s->wake_word, word, wait, false);
  }
  uint32_t one = 1;
  /* seq_cst (also when it fails, reading a waker's 0): as in wakep, and
   * if we win no waker counted us out; and ordered before the load of
   * mon_dozing below, against the monitor's store of it before its loads
   * of sleeping (see monitor_may_doze). */
  if (atomic_compare_exchange_strong(&s->sleeping, &one, 0))
    /* PO_FENCED(relaxed): a count, read after fences (the fence above
     * releases it to the next sleeper's seq_cst RMW of nsleeping). */
    atomic_fetch_sub_explicit(&rt->nsleeping, 1, PO_FENCED(memory_order_relaxed));
  monitor_wake(rt);
  if (f != NULL) {
    wakep(rt); /* found on the last look: a push may have trusted us to wake the others */
    run(s, f);
  }
}

/* The thread's own setup: pinning, the overflow handler's stack, the
 * sanitizers' view of its stack. */
static void thread_enter(po_sched *s, void **alt) {
  po_fiber_rt *rt = s->rt;
#if SYNCQ_HAVE_HWLOC
  if (rt->pin && rt->have_topo) {
    int npu = hwloc_get_nbobjs_by_type(rt->topo, HWLOC_OBJ_PU);
    hwloc_obj_t pu = npu > 0 ? hwloc_get_obj_by_type(rt->topo, HWLOC_OBJ_PU, s->index % (unsigned)npu) : NULL;
    if (pu != NULL) (void)hwloc_set_cpubind(rt->topo, pu->cpuset, HWLOC_CPUBIND_THREAD); /* best effort */
  }
#endif
  *alt = NULL;
  (void)po_altstack_enter(alt); /* without it an overflow dies unreported, as before */
  pthread_attr_t attr;
  void *lo = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    (void)pthread_attr_getstack(&attr, &lo, &size);
    pthread_attr_destroy(&attr);
  }
  po_san_thread_init(&s->san, lo, size);
  po_fiber_set_current(NULL);
}

static void *sched_main(void *arg) {
  po_sched *s = arg;
  po_fiber_rt *rt = s->rt;
  void *alt;
  thread_enter(s, &alt);
  /* acquire: pairs with open_gate's release: nsched is final from here on. */
  while (atomic_load_explicit(&rt->gate, memory_order_acquire) == 0) (void)syncq_futex_wait(&rt->gate, 0u, -1, false);
  while (!stopping(rt)) {
    po_fiber *f = take_local(s);
    if (f != NULL) run(s, f);
    else idle(s);
  }
  po_altstack_leave(alt);
  return NULL;
}

/* ---- blocked schedulers: the monitor and its spares ----
 *
 * A fiber that blocks its thread (a system call, a long loop) stops every
 * fiber queued behind it on that scheduler. The monitor thread looks at
 * each scheduler's switch stamp every PO_MONITOR_TICK_NS; one that has
 * run the same fiber for PO_BLOCKED_NS (or that a fiber announced with
 * syncq_po_blocking_begin) is marked stuck, and while it has work a spare
 * scheduler (index >= nsched) is started or woken to serve it: the spare
 * steals the stuck one's run queue and runnext (steal takes runnext from
 * a stuck scheduler), fires its timers, and otherwise runs as a normal
 * scheduler. Nothing of the stuck scheduler changes owner: its queue is
 * multi-consumer and its timer heap locked, so when the blocked fiber
 * returns, its thread goes on as before. The monitor then clears stuck;
 * the spare retires once it has no timers of its own, handing its queued
 * fibers back to the normal schedulers, and sleeps until needed again:
 * the number of running schedulers settles back to nsched. While every
 * scheduler sleeps in idle no fiber runs, so none can block: the monitor
 * then sleeps without a deadline until a scheduler wakes (monitor_wake). */

/* Queue sp's fibers (run queue, spawned children and runnext) on the normal schedulers
 * (round robin: rr is a relaxed counter, as in spawn; any spread will do). */
static void drain_spare(po_fiber_rt *rt, po_sched *sp) {
  void *item;
  bool any = false;
  while (syncq_queue_nblfq_dequeue(sp->runq, &item) == SYNCQ_OK) {
    push_to(rt, &rt->sched[atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) % rt->nsched], item);
    any = true;
  }
  while (po_deque_busy(&sp->spawned)) /* its own children: it spawns no more while retired */
    if ((item = po_deque_steal(&sp->spawned)) != NULL) {
      push_to(rt, &rt->sched[atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) % rt->nsched], item);
      any = true;
    }
  /* acquire: as take_runnext. */
  po_fiber *f = atomic_exchange_explicit(&sp->runnext, NULL, memory_order_acquire);
  if (f != NULL) {
    push_to(rt, &rt->sched[atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) % rt->nsched], f);
    any = true;
  }
  if (any) wakep(rt);
}

static void *spare_main(void *arg);

static bool has_work(po_sched *v) {
  /* relaxed: hints (a miss is seen at the next scan). */
  uint64_t h = atomic_load_explicit(&v->runq->head, memory_order_relaxed);
  uint64_t t = atomic_load_explicit(&v->runq->tail, memory_order_relaxed);
  return h != t || po_deque_busy(&v->spawned) || atomic_load_explicit(&v->runnext, memory_order_relaxed) != NULL ||
         po_timers_next(&v->timers) != UINT64_MAX;
}

/* Start or wake a spare for v (under spare_lock). False when every spare
 * serves another or the kernel refused the thread. */
static bool start_spare(po_fiber_rt *rt, po_sched *v) {
  po_sched *sp = NULL;
  for (uint32_t i = rt->nsched; i < rt->nalloc && sp == NULL; i++) /* the lowest idle one: nvisible stays dense */
    if (atomic_load_explicit(&rt->sched[i].active, memory_order_relaxed) == 0) sp = &rt->sched[i]; /* under the lock */
  if (sp == NULL) return false;
  uint32_t idx = (uint32_t)(sp - rt->sched);
  if (sp->runq == NULL) { /* its first use */
    if (po_timers_init(&sp->timers) != SYNCQ_OK) return false;
    sp->runq = syncq_alloc_aligned(rt->runq_bytes, _Alignof(syncq_queue_nblfq));
    if (sp->runq == NULL || syncq_queue_nblfq_init(sp->runq, rt->runq_cap) != SYNCQ_OK) {
      free(sp->runq);
      sp->runq = NULL;
      po_timers_destroy(&sp->timers, rt->sys);
      return false;
    }
  }
  if (atomic_load_explicit(&rt->nvisible, memory_order_relaxed) < idx + 1u) /* written under the lock */
    /* release: the queue before the count that lets thieves and wakep
     * look at it (their acquire loads of nvisible). */
    atomic_store_explicit(&rt->nvisible, idx + 1u, memory_order_release);
  atomic_store_explicit(&sp->cover, v,
                        memory_order_relaxed); /* the spare's thread reads it as a hint; the lock orders the rest */
  v->covered_by = sp;
  /* relaxed: the spare reads active after its futex wait returns or at
   * its start, both ordered after this by the lock it takes to retire. */
  atomic_store_explicit(&sp->active, 1u, memory_order_relaxed);
  if (!sp->started) {
    if (pthread_create(&sp->tid, NULL, spare_main, sp) != 0) {
      atomic_store_explicit(&sp->active, 0u, memory_order_relaxed);  /* under the lock */
      atomic_store_explicit(&sp->cover, NULL, memory_order_relaxed); /* under the lock */
      v->covered_by = NULL;
      return false;
    }
    sp->started = true;
  } else {
    /* release: pairs with the spare's acquire load of spare_word. */
    atomic_fetch_add_explicit(&sp->spare_word, 1u, memory_order_release);
    (void)syncq_futex_wake(&sp->spare_word, 1, false);
  }
  return true;
}

/* Wake v's spare out of an idle sleep: it looks at whether to retire. */
static void nudge(po_sched *sp) {
  /* release: as wakep's. */
  atomic_fetch_add_explicit(&sp->wake_word, 1u, memory_order_release);
  (void)syncq_futex_wake(&sp->wake_word, 1, false);
}

/* One look at every running scheduler (under spare_lock). */
static void scan(po_fiber_rt *rt) {
  uint64_t t0 = po_ticks(); /* a bracket round the clock read: the rate check (timer.h) */
  uint64_t now = syncq_now_ns();
  uint64_t t1 = po_ticks();
  /* Tripped (here or by a scheduler): every gate reads the clock at its
   * next look, whatever its counter says; repeated each tick until each
   * owner's next set has seen the trip (see po_due_gate's until). */
  bool drifted = rt->mon_rate > 0 && po_drift_check(&rt->mon_drift, rt->mon_rate, t0, now, t1);
  uint32_t n = atomic_load_explicit(&rt->nvisible, memory_order_relaxed); /* written under the lock */
  for (uint32_t i = 0; i < n; i++) {
    po_sched *v = &rt->sched[i];
    if (drifted) po_due_gate_disarm(&v->gate);
    if (v->spare && atomic_load_explicit(&v->active, memory_order_relaxed) == 0) continue; /* under the lock */
    /* relaxed: the owner's hint (see switches); a stale one delays the
     * verdict by a tick. */
    uint64_t stamp = atomic_load_explicit(&v->switches, memory_order_relaxed);
    if (stamp != rt->mon_stamp[i]) {
      rt->mon_stamp[i] = stamp;
      rt->mon_since[i] = now;
    }
    bool blocked = atomic_load_explicit(&v->blocked, memory_order_relaxed) != 0; /* written under the lock */
    bool stuck = blocked || ((stamp & 1u) != 0 && now - rt->mon_since[i] >= PO_BLOCKED_NS);
    /* relaxed: stuck is written only here and in blocking_end, under the lock. */
    if (stuck != (atomic_load_explicit(&v->stuck, memory_order_relaxed) != 0))
      atomic_store_explicit(&v->stuck, stuck ? 1u : 0u, memory_order_relaxed);
    if (stuck && v->covered_by == NULL && (blocked || has_work(v))) (void)start_spare(rt, v);
    /* stuck with work: the spare may sleep in idle past a new arrival or
     * a deadline of v's; not stuck: it retires */
    if (v->covered_by != NULL && (!stuck || has_work(v))) nudge(v->covered_by);
  }
}

/* May the monitor sleep until a scheduler wakes (under spare_lock, after
 * a scan)? Yes when every running scheduler (the normal ones, and the
 * spares started now) sleeps in idle: no fiber runs, so none can block
 * its thread, and an idle system's monitor costs no wake-ups. Announces
 * the doze first (mon_dozing = 1), then looks (Dekker with idle(): a
 * scheduler leaves its sleep by a seq_cst RMW of its `sleeping`, its own
 * or a waker's, and then loads mon_dozing; if we read its 1 here, that
 * RMW comes after our store, and its load sees the doze and wakes us). */
static bool monitor_may_doze(po_fiber_rt *rt) {
  /* seq_cst: before the loads of sleeping; an exchange, not a store, so
   * that qemu-user's AArch64 translation cannot let those loads pass it
   * (docs/reliability.md, "Where qemu shows a reordering...") */
  (void)atomic_exchange(&rt->mon_dozing, 1u);
  uint32_t n = atomic_load_explicit(&rt->nvisible, memory_order_relaxed); /* written under the lock */
  for (uint32_t i = 0; i < n; i++) {
    po_sched *v = &rt->sched[i];
    if (v->spare && atomic_load_explicit(&v->active, memory_order_relaxed) == 0) continue; /* under the lock */
    if (atomic_load(&v->sleeping) == 0) {                                                  /* seq_cst: see above */
      /* relaxed: no doze after all; a scheduler that still reads the 1
       * only wakes the monitor once for nothing. */
      atomic_store_explicit(&rt->mon_dozing, 0u, memory_order_relaxed);
      return false;
    }
  }
  return true;
}

/* A scheduler has left its idle sleep (idle(), after its seq_cst RMW of
 * sleeping): a dozing monitor looks again, and ticks while fibers run. */
static void monitor_wake(po_fiber_rt *rt) {
  /* seq_cst load: see monitor_may_doze. The exchange: one waker per doze. */
  if (atomic_load(&rt->mon_dozing) == 0 || atomic_exchange(&rt->mon_dozing, 0u) == 0) return;
  /* release: pairs with the monitor's acquire load of mon_word. */
  atomic_fetch_add_explicit(&rt->mon_word, 1u, memory_order_release);
  (void)syncq_futex_wake(&rt->mon_word, 1, false);
}

static void *monitor_main(void *arg) {
  po_fiber_rt *rt = arg;
  while (!stopping(rt)) {
    atomic_fetch_add_explicit(&rt->mon_wakeups, 1u, memory_order_relaxed); /* a count for tests */
    /* acquire: the futex's value, read before the scan and before the
     * doze's announcement; pairs with the release bumps of monitor_wake
     * and stop_all. */
    uint32_t word = atomic_load_explicit(&rt->mon_word, memory_order_acquire);
    pthread_mutex_lock(&rt->spare_lock);
    scan(rt);
    bool doze = monitor_may_doze(rt);
    pthread_mutex_unlock(&rt->spare_lock);
    if (stopping(rt)) break;
    (void)syncq_futex_wait(&rt->mon_word, word, doze ? -1 : PO_MONITOR_TICK_NS, false);
    if (doze) atomic_store_explicit(&rt->mon_dozing, 0u, memory_order_relaxed); /* awake: as in monitor_may_doze */
  }
  return NULL;
}

/* The spare's verdict (its own thread): no longer needed. Its queued
 * fibers go to the normal schedulers; then it sleeps until started again. */
static bool retire(po_sched *sp) {
  po_fiber_rt *rt = sp->rt;
  po_sched *v = atomic_load_explicit(&sp->cover, memory_order_relaxed); /* a hint; the lock decides */
  /* relaxed: the monitor's verdict, as a hint; the lock decides. */
  if (v != NULL && atomic_load_explicit(&v->stuck, memory_order_relaxed) != 0) return false;
  if (po_timers_next(&sp->timers) != UINT64_MAX) return false; /* its sleepers' deadlines fire here */
  pthread_mutex_lock(&rt->spare_lock);
  v = atomic_load_explicit(&sp->cover, memory_order_relaxed);                    /* under the lock */
  if (v != NULL && atomic_load_explicit(&v->stuck, memory_order_relaxed) != 0) { /* under the lock */
    pthread_mutex_unlock(&rt->spare_lock);
    return false;
  }
  if (v != NULL) v->covered_by = NULL;
  atomic_store_explicit(&sp->cover, NULL, memory_order_relaxed); /* under the lock */
  /* seq_cst: before the drain, against ready()'s fence after its push
   * here (see there); an exchange under TSan, for ready's RMW of active
   * to be ordered with (PO_FENCED_STORE). */
  PO_FENCED_STORE(&sp->active, 0u);
  pthread_mutex_unlock(&rt->spare_lock);
  drain_spare(rt, sp);
  return true;
}

static void *spare_main(void *arg) {
  po_sched *s = arg;
  po_fiber_rt *rt = s->rt;
  void *alt;
  thread_enter(s, &alt);
  while (!stopping(rt)) {
    /* relaxed: written under spare_lock; a start seen late is seen after
     * the futex wait below returns (the word changed). */
    if (atomic_load_explicit(&s->active, memory_order_relaxed) == 0) {
      /* acquire: pairs with start_spare's release bump. */
      uint32_t word = atomic_load_explicit(&s->spare_word, memory_order_acquire);
      pthread_mutex_lock(&rt->spare_lock);
      bool active = atomic_load_explicit(&s->active, memory_order_relaxed) != 0; /* under the lock */
      pthread_mutex_unlock(&rt->spare_lock);
      if (!active && !stopping(rt)) (void)syncq_futex_wait(&s->spare_word, word, -1, false);
      continue;
    }
    if (spare_done(s) && retire(s)) continue;
    po_fiber *f = take_local(s);
    if (f == NULL && !spare_done(s)) f = steal(s, NULL);
    if (f != NULL) {
      run(s, f);
      continue;
    }
    if (!spare_done(s)) idle(s);
  }
  po_altstack_leave(alt);
  return NULL;
}

static uint32_t count_pus(po_fiber_rt *rt) {
#if SYNCQ_HAVE_HWLOC
  if (hwloc_topology_init(&rt->topo) == 0) {
    if (hwloc_topology_load(rt->topo) == 0) {
      rt->have_topo = true;
      int n = hwloc_get_nbobjs_by_type(rt->topo, HWLOC_OBJ_PU);
      if (n > 0) return (uint32_t)n;
    } else {
      hwloc_topology_destroy(rt->topo);
    }
  }
#else
  (void)rt;
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint32_t)n : 1u;
}

/* Every scheduler that will run has started: nsched is final. */
static void open_gate(po_fiber_rt *rt) {
  /* release: publishes nsched to the schedulers' acquire loads. */
  atomic_store_explicit(&rt->gate, 1u, memory_order_release);
  (void)syncq_futex_wake(&rt->gate, -1, false);
}

static void stop_all(po_fiber_rt *rt) {
  /* release: pairs with stopping()'s acquire. */
  atomic_store_explicit(&rt->stop, 1u, memory_order_release);
  if (rt->mon_started) { /* first: it starts spares */
    /* release: pairs with the monitor's acquire load of mon_word. */
    atomic_fetch_add_explicit(&rt->mon_word, 1u, memory_order_release);
    (void)syncq_futex_wake(&rt->mon_word, -1, false);
    pthread_join(rt->mon_tid, NULL);
    rt->mon_started = false;
  }
  if (rt->spare_lock_init) pthread_mutex_lock(&rt->spare_lock); /* the spares' started flags */
  for (uint32_t i = 0; i < rt->nalloc; i++) {
    /* release: as in wakep, and start_spare's bump. */
    atomic_fetch_add_explicit(&rt->sched[i].wake_word, 1, memory_order_release);
    (void)syncq_futex_wake(&rt->sched[i].wake_word, -1, false);
    atomic_fetch_add_explicit(&rt->sched[i].spare_word, 1, memory_order_release);
    (void)syncq_futex_wake(&rt->sched[i].spare_word, -1, false);
  }
  if (rt->spare_lock_init) pthread_mutex_unlock(&rt->spare_lock);
  for (uint32_t i = 0; i < rt->nalloc; i++)
    if (rt->sched[i].started) pthread_join(rt->sched[i].tid, NULL);
}

static void free_rt(po_fiber_rt *rt) {
  for (uint32_t i = 0; i < rt->nalloc; i++) {
    if (rt->sched[i].runq != NULL) po_timers_destroy(&rt->sched[i].timers, rt->sys);
    free(rt->sched[i].runq);
  }
  free(rt->sched);
  free(rt->mon_stamp);
  free(rt->mon_since);
  if (rt->spare_lock_init) pthread_mutex_destroy(&rt->spare_lock);
  po_stack_pool_destroy(&rt->pool);
#if SYNCQ_HAVE_HWLOC
  if (rt->have_topo) hwloc_topology_destroy(rt->topo);
#endif
  free(rt);
}

int po_fiber_rt_create(struct syncq_po_system *sys, uint32_t nsched, bool pin, size_t stack_size, size_t guard_size,
                       po_fiber_rt **out) {
  int r = po_overflow_handler_install();
  if (r != SYNCQ_OK) return r;
  po_fiber_rt *rt = syncq_alloc_aligned(sizeof *rt, _Alignof(po_fiber_rt));
  if (rt == NULL) return SYNCQ_ENOMEM;
  memset(rt, 0, sizeof *rt);
  atomic_init(&rt->nspinning, 0);
  atomic_init(&rt->nsleeping, 0);
  atomic_init(&rt->stop, 0);
  atomic_init(&rt->rr, 0);
  rt->sys = sys;
  rt->pin = pin;
  uint32_t pus = count_pus(rt);
  rt->nsched = nsched != 0 ? nsched : pus;
  r = po_stack_pool_init(&rt->pool, stack_size, guard_size);
  if (r != SYNCQ_OK) {
#if SYNCQ_HAVE_HWLOC
    if (rt->have_topo) hwloc_topology_destroy(rt->topo);
#endif
    free(rt);
    return r;
  }
  /* One spare per scheduler: every scheduler can be served once while
   * blocked (more blocked at once wait for a spare to retire). */
  rt->nalloc = rt->nsched * 2u;
  atomic_init(&rt->gate, 0);
  atomic_init(&rt->nvisible, 0);
  atomic_init(&rt->mon_word, 0);
  atomic_init(&rt->mon_dozing, 0);
  atomic_init(&rt->mon_wakeups, 0);
  rt->sched = syncq_alloc_aligned(rt->nalloc * sizeof(po_sched), _Alignof(po_sched));
  rt->mon_stamp = calloc(rt->nalloc, sizeof *rt->mon_stamp);
  rt->mon_since = calloc(rt->nalloc, sizeof *rt->mon_since);
  if (rt->sched == NULL || rt->mon_stamp == NULL || rt->mon_since == NULL) {
    rt->nsched = rt->nalloc = 0;
    free_rt(rt);
    return SYNCQ_ENOMEM;
  }
  memset(rt->sched, 0, rt->nalloc * sizeof(po_sched));
  if (pthread_mutex_init(&rt->spare_lock, NULL) != 0) {
    rt->nsched = rt->nalloc = 0;
    free_rt(rt);
    return SYNCQ_ESYS;
  }
  rt->spare_lock_init = true;
  size_t cap = PO_RUNQ_MIN;
  while (cap < sys->nslots) cap <<= 1;
  size_t bytes = 0;
  (void)syncq_queue_nblfq_bytes(cap, &bytes);
  rt->runq_cap = cap;
  rt->runq_bytes = bytes;
  for (uint32_t i = 0; i < rt->nalloc; i++) {
    po_sched *s = &rt->sched[i];
    atomic_init(&s->runnext, NULL);
    atomic_init(&s->switches, 0);
    atomic_init(&s->stuck, 0);
    atomic_init(&s->blocked, 0);
    atomic_init(&s->sleeping, 0);
    atomic_init(&s->wake_word, 0);
    atomic_init(&s->active, 0);
    atomic_init(&s->spare_word, 0);
    atomic_init(&s->cover, NULL);
    po_deque_init(&s->spawned);
    uint64_t step;
    double rate = po_ticks_rate(&step);
    po_due_gate_init(&s->gate, rate, step);
    s->fair_tick = 0;
    s->rt = rt;
    s->index = i;
    s->seed = 0x9e3779b97f4a7c15ull * (i + 1);
    s->spare = i >= rt->nsched;
    if (s->spare) continue; /* its queue and timers come with its first start */
    if (po_timers_init(&s->timers) != SYNCQ_OK) {
      free_rt(rt);
      return SYNCQ_ESYS;
    }
    s->runq = syncq_alloc_aligned(bytes, _Alignof(syncq_queue_nblfq));
    if (s->runq == NULL || syncq_queue_nblfq_init(s->runq, cap) != SYNCQ_OK) {
      if (s->runq == NULL) po_timers_destroy(&s->timers, sys); /* free_rt destroys those with a queue */
      free_rt(rt);
      return SYNCQ_ENOMEM;
    }
  }
  /* The schedulers wait at the gate until their number is final: when the
   * kernel refuses a thread (RLIMIT_NPROC, threads-max, a cgroup's
   * pids.max), a default-sized system runs on those that started. */
  uint32_t started = 0;
  int err = 0;
  for (; started < rt->nsched; started++) {
    po_sched *s = &rt->sched[started];
    err = pthread_create(&s->tid, NULL, sched_main, s);
    if (err != 0) break;
    s->started = true;
  }
  if (started < rt->nsched) {
    if (nsched != 0 || started == 0) { /* asked for exactly nsched, or none at all */
      open_gate(rt);
      stop_all(rt);
      free_rt(rt);
      return SYNCQ_ELIMIT;
    }
    rt->short_reason = po_limit_of(err);
    for (uint32_t i = started; i < rt->nsched; i++) rt->sched[i].spare = true; /* unstarted: spares now */
    rt->nsched = started;
  }
  atomic_store_explicit(&rt->nvisible, rt->nsched, memory_order_relaxed); /* before the gate's release */
  open_gate(rt);
  /* The monitor: without it (the kernel refused one more thread) blocked
   * schedulers are served only inside syncq_po_blocking_begin/_end. */
  uint64_t step;
  rt->mon_rate = po_ticks_rate(&step);
  rt->mon_drift.have = false;
  rt->mon_started = pthread_create(&rt->mon_tid, NULL, monitor_main, rt) == 0;
  *out = rt;
  return SYNCQ_OK;
}

void po_fiber_rt_destroy(po_fiber_rt *rt) {
  if (rt == NULL) return;
  stop_all(rt);
  free_rt(rt);
}

uint32_t po_fiber_rt_schedulers(const po_fiber_rt *rt) { return rt != NULL ? rt->nsched : 0; }

uint64_t po_fiber_rt_monitor_wakeups(po_fiber_rt *rt) {
  /* relaxed: a count, read by tests. */
  return rt != NULL ? atomic_load_explicit(&rt->mon_wakeups, memory_order_relaxed) : 0;
}

const char *po_fiber_rt_short_reason(const po_fiber_rt *rt) { return rt != NULL ? rt->short_reason : NULL; }

po_timers *po_fiber_timers(struct syncq_po_proc *self) { return &self->fiber.sched->timers; }

int po_fiber_timer_add_remote(po_fiber_rt *rt, po_timer *t) {
  /* relaxed: rr only spreads the work (as in spawn); it pairs with no
   * other access and publishes nothing */
  po_sched *s = &rt->sched[atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) % rt->nsched];
  bool earliest = false;
  int r = po_timers_add(&s->timers, t, &earliest);
  if (r == SYNCQ_OK && earliest) {
    /* release: pairs with idle()'s acquire load of wake_word, taken before
     * it reads the earliest deadline: its wait then returns at once. */
    atomic_fetch_add_explicit(&s->wake_word, 1, memory_order_release);
    (void)syncq_futex_wake(&s->wake_word, 1, false);
  }
  return r;
}

void po_fiber_spawn(po_fiber_rt *rt, struct syncq_po_proc *p) {
  po_fiber *f = &p->fiber;
  f->stack = NULL; /* taken when a scheduler first runs it (give_stack) */
  f->canary = NULL;
  f->ctx = NULL; /* made then too */
  f->sched = NULL;
  f->last = NULL;
  atomic_store_explicit(&f->done, 0u, memory_order_relaxed);                  /* published by the push below */
  atomic_store_explicit(&f->join_waiters, 0u, memory_order_relaxed);          /* as above */
  atomic_store_explicit(&f->join_fiber, NULL, memory_order_relaxed);          /* as above */
  atomic_store_explicit(&f->wstate, PO_FIBER_RUNNABLE, memory_order_relaxed); /* as above */
  po_fiber *cur = po_fiber_current();
  if (cur != NULL && cur->sched != NULL && cur->sched->rt == rt) {
    /* A fiber's child runs next on its scheduler (Go's newproc): the
     * child it displaces goes on the scheduler's spawn deque, which it
     * runs newest first while idle schedulers steal the oldest (past the
     * deque's room, the run queue). A tree that spawns as it goes
     * (skynet) then runs depth first: few of its processes are live at
     * once (a FIFO run queue walked it breadth first: a third to a half of
     * 111,111 processes live), and the stacks freed last are the next ones
     * taken. acq_rel: as in ready(), whose first half this is (its
     * wake-up is po_fiber_spawned's). */
    po_sched *here = cur->sched;
    po_fiber *old = atomic_exchange_explicit(&here->runnext, f, memory_order_acq_rel);
    if (old != NULL && !po_deque_push(&here->spawned, old)) push_to(rt, here, old);
    return;
  }
  /* A plain thread's spawns: round robin over the schedulers, so a
   * controller that spawns many spreads them at once instead of waiting
   * for steals. */
  po_sched *s = &rt->sched[atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) % rt->nsched];
  push_to(rt, s, f);
}

void po_fiber_spawned(po_fiber_rt *rt) {
  /* Whether or not the spawn displaced a child: an idle scheduler looks
   * for work while the parent goes on running (it may take the child from
   * runnext once the parent has run on: steal). */
  wakep(rt);
}

bool po_fiber_done(struct syncq_po_proc *p) {
  return atomic_load(&p->fiber.done) != 0; /* seq_cst: with after_switch's PO_SW_EXIT store, as join's */
}

int po_fiber_join(struct syncq_po_proc *p) {
  po_fiber *f = &p->fiber;
  po_fiber *cur = po_fiber_current();
  if (cur != NULL) {
    /* A fiber must not sleep its scheduler: it parks, and the exit wakes
     * it (after_switch's PO_SW_EXIT). One joiner per process (join claims
     * it in the state word: PO_CLAIMED). */
    struct syncq_po_proc *me = proc_of(cur);
    atomic_store(&f->join_fiber, me); /* seq_cst: see after_switch */
    while (atomic_load(&f->done) == 0) {
      /* acq_rel: as recv's announcement (postoffice.c). */
      (void)atomic_exchange_explicit(&cur->wstate, PO_FIBER_BLOCKING, memory_order_acq_rel);
      if (atomic_load(&f->done) != 0) {
        (void)atomic_exchange_explicit(&cur->wstate, PO_FIBER_RUNNING, memory_order_acquire); /* as recv's */
        break;
      }
      po_fiber_park(me); /* a message may wake it too: it looks again */
    }
    atomic_store(&f->join_fiber, NULL); /* seq_cst: see after_switch */
    return SYNCQ_OK;
  }
  while (atomic_load(&f->done) == 0) { /* seq_cst: see after_switch's PO_SW_EXIT */
    atomic_fetch_add(&f->join_waiters, 1u);
    if (atomic_load(&f->done) == 0) (void)syncq_futex_wait(&f->done, 0u, -1, false);
    atomic_fetch_sub(&f->join_waiters, 1u);
  }
  return SYNCQ_OK;
}

/* ---- blocking calls announced ---- */

static bool is_running_fiber(syncq_po_proc *self) {
  /* relaxed: written at spawn, before the process ran (this is the process). */
  return atomic_load_explicit(&self->is_fiber, memory_order_relaxed) && po_fiber_current() == &self->fiber;
}

int syncq_po_blocking_begin(syncq_po_proc *self) {
  if (self == NULL) return SYNCQ_EINVAL;
  if (!is_running_fiber(self)) return SYNCQ_OK; /* a thread blocks only itself */
  po_fiber *f = &self->fiber;
  if (f->blocking_on != NULL) return SYNCQ_EINVAL; /* already announced */
  po_sched *s = f->sched;
  po_fiber_rt *rt = s->rt;
  f->blocking_on = s;
  pthread_mutex_lock(&rt->spare_lock);
  atomic_store_explicit(&s->blocked, 1u, memory_order_relaxed); /* read by scan, under the lock */
  scan(rt); /* at once: a spare takes the queue before the call blocks */
  pthread_mutex_unlock(&rt->spare_lock);
  return SYNCQ_OK;
}

int syncq_po_blocking_end(syncq_po_proc *self) {
  if (self == NULL) return SYNCQ_EINVAL;
  if (!is_running_fiber(self)) return SYNCQ_OK;
  po_fiber *f = &self->fiber;
  po_sched *s = f->blocking_on;
  if (s == NULL) return SYNCQ_EINVAL; /* no begin */
  po_fiber_rt *rt = s->rt;
  f->blocking_on = NULL;
  pthread_mutex_lock(&rt->spare_lock);
  atomic_store_explicit(&s->blocked, 0u, memory_order_relaxed); /* under the lock */
  /* A fresh start for the stamp's clock: the fiber goes on running here. */
  rt->mon_stamp[s->index] = atomic_load_explicit(&s->switches, memory_order_relaxed); /* the owner's: we are it */
  rt->mon_since[s->index] = syncq_now_ns();
  atomic_store_explicit(&s->stuck, 0u, memory_order_relaxed); /* under the lock */
  if (s->covered_by != NULL) nudge(s->covered_by);            /* it retires */
  pthread_mutex_unlock(&rt->spare_lock);
  return SYNCQ_OK;
}

#else /* built without Boost.Context: process.c never creates a fiber system */

int syncq_po_blocking_begin(syncq_po_proc *self) { return self == NULL ? SYNCQ_EINVAL : SYNCQ_OK; }
int syncq_po_blocking_end(syncq_po_proc *self) { return self == NULL ? SYNCQ_EINVAL : SYNCQ_OK; }

int po_fiber_rt_create(struct syncq_po_system *sys, uint32_t nsched, bool pin, size_t stack_size, size_t guard_size,
                       po_fiber_rt **out) {
  (void)sys, (void)nsched, (void)pin, (void)stack_size, (void)guard_size, (void)out;
  return SYNCQ_ENOTSUP;
}
void po_fiber_rt_destroy(po_fiber_rt *rt) { (void)rt; }
uint32_t po_fiber_rt_schedulers(const po_fiber_rt *rt) {
  (void)rt;
  return 0;
}
uint64_t po_fiber_rt_monitor_wakeups(po_fiber_rt *rt) {
  (void)rt;
  return 0;
}
const char *po_fiber_rt_short_reason(const po_fiber_rt *rt) {
  (void)rt;
  return NULL;
}
struct po_timers *po_fiber_timers(struct syncq_po_proc *self) {
  (void)self;
  return NULL;
}
int po_fiber_timer_add_remote(po_fiber_rt *rt, struct po_timer *t) {
  (void)rt, (void)t;
  return SYNCQ_ENOTSUP;
}
void po_fiber_spawn(po_fiber_rt *rt, struct syncq_po_proc *p) { (void)rt, (void)p; }
void po_fiber_spawned(po_fiber_rt *rt) { (void)rt; }
int po_fiber_join(struct syncq_po_proc *p) {
  (void)p;
  return SYNCQ_ENOTSUP;
}
bool po_fiber_done(struct syncq_po_proc *p) {
  (void)p;
  return false;
}
void po_fiber_park(struct syncq_po_proc *self) { (void)self; }
void po_fiber_yield(struct syncq_po_proc *self) { (void)self; }
bool po_fiber_yield_local(struct syncq_po_proc *self) {
  (void)self;
  return false;
}
void po_fiber_wake(struct syncq_po_proc *waker, struct syncq_po_proc *dst) { (void)waker, (void)dst; }

#endif
