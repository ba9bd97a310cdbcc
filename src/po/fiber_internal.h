/* SPDX-License-Identifier: BSD-2-Clause */
/* fiber_internal.h — the postoffice's fiber backend: user-level contexts
 * multiplexed M:N onto one scheduler thread per processing unit.
 *
 *   fiber_context.h   fcontext jumps and the sanitizers' fiber hooks
 *   sanitizer.h       PO_TSAN, PO_ASAN: which sanitizer, GCC's and Clang's spellings
 *   spawn_deque.h     each scheduler's deque of spawned fibers (Chase-Lev)
 *   fiber_stack.c     pooled stacks with guard pages; the overflow report
 *   fiber_sched.c     schedulers, run queues, park and wake, spawn and join
 *
 * A process of a fiber system is a po_fiber embedded in its process-table
 * slot; processes attached with syncq_po_attach stay threads (they sleep on
 * a futex, as in the thread backend).
 */
#ifndef SYNCQ_PO_FIBER_INTERNAL_H
#define SYNCQ_PO_FIBER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fiber_context.h"
#include "syncq/queue/nblfq.h"
#include "syncq/reclaim.h"

struct syncq_po_system;
struct syncq_po_proc;
struct po_sched;
struct po_header_cache;

/* ---- stacks ---- */

/* One stack of the pool: [guard][stack], the guard below (stacks grow
 * down). The descriptor lives outside the stack's memory. */
typedef struct po_stack {
  syncq_fl_link fl; /* on the pool's free list while unused */
  char *lo;         /* lowest usable byte (just above the guard) */
  size_t size;      /* usable bytes */
  char *guard;      /* the guard's first byte (NULL: no guard) */
  size_t guard_size;
} po_stack;

typedef struct po_stack_chunk po_stack_chunk;

typedef struct po_stack_pool {
  size_t stack_size;      /* usable bytes, a whole number of pages */
  size_t guard_size;      /* 0: no guard pages */
  syncq_freelist free;    /* released stacks (lock-free: released on scheduler threads) */
  pthread_mutex_t grow;   /* serialises mapping new chunks */
  po_stack_chunk *chunks; /* every chunk, for destroy; the newest first */
  uint32_t next_count;    /* slots in the next chunk mapped (doubles up to a limit; under grow) */
  uint32_t stacks;        /* stacks carved so far, guards made (under grow): sizes the next batch */
} po_stack_pool;

int po_stack_pool_init(po_stack_pool *pool, size_t stack_size, size_t guard_size);
void po_stack_pool_destroy(po_stack_pool *pool);
/* A stack in *out: SYNCQ_OK; SYNCQ_ELIMIT with *why ("vm.max_map_count",
 * "memory") when no mapping could be had. */
int po_stack_get(po_stack_pool *pool, po_stack **out, const char **why);
void po_stack_put(po_stack_pool *pool, po_stack *s);
/* The stack cache of destroyed systems' chunks (fiber_stack.c, "the
 * stack cache"): bytes of stacks kept now, the bound in force, and the
 * chunks the program has mapped so far (for tests and measurements). */
void po_stack_cache_stats(size_t *bytes, size_t *limit, size_t *mapped);
/* Whether guards are page-table markers (chunks mapped whole, guards made
 * a batch at a time) rather than mprotect'ed (chunks of PO_CHUNK_MIN
 * stacks): known once a guarded stack has been handed out (for tests:
 * qemu-user and kernels before 6.13 have no markers). */
bool po_stack_guards_are_markers(void);
/* A stack without a guard (the pool's, or past the mapping budget) gets
 * a canary word at its lowest usable address, written at spawn (returned;
 * NULL for a guarded stack) and checked at every switch out of its fiber.
 * A failed check is reported (by pid, on stderr) before the program is
 * stopped (abort): the overrun may have written into a neighbour stack. */
uint64_t *po_stack_canary_set(po_stack *s);
bool po_stack_canary_ok(const po_stack *s, const uint64_t *w);
void po_stack_canary_report(unsigned long long pid, const po_stack *s);

/* Install (once per program) the SIGSEGV/SIGBUS handler that names a fiber
 * whose stack ran into its guard page; and give the calling scheduler
 * thread the alternate signal stack it runs on. */
int po_overflow_handler_install(void);
int po_altstack_enter(void **mem);
void po_altstack_leave(void *mem);

/* ---- fibers ---- */

/* wstate: a fiber's life between runs. Transitions:
 *   RUNNING  -> BLOCKING  the fiber, in recv_blocking, about to look at its
 *                         inbox a last time before parking
 *   BLOCKING -> RUNNING   it found a message after all
 *   BLOCKING -> WOKEN     a sender saw it blocking (do not park)
 *   BLOCKING -> PARKED    the scheduler, once its context is saved
 *   WOKEN    -> RUNNABLE  the scheduler, instead of parking it
 *   PARKED   -> RUNNABLE  a sender, which then queues it
 *   RUNNING  -> RUNNABLE  the fiber yields (queued behind the others)
 *   RUNNABLE -> RUNNING   a scheduler takes it from a run queue
 * A fiber is in at most one run queue (or runnext slot), and only while
 * RUNNABLE. */
enum { PO_FIBER_RUNNING = 0, PO_FIBER_BLOCKING, PO_FIBER_WOKEN, PO_FIBER_PARKED, PO_FIBER_RUNNABLE };

/* Hot fields first: the process keeps them in its first cache line. */
typedef struct po_fiber {
  _Atomic(uint32_t) wstate;     /* written by senders and schedulers */
  po_fctx ctx;                  /* the saved context while not running */
  struct po_sched *sched;       /* the scheduler it runs on (valid while running) */
  struct po_sched *last;        /* where it ran last (a plain thread's wake-up queues it there) */
  struct po_header_cache *hdrs; /* its scheduler's header cache (valid while running) */
  po_stack *stack;              /* from its first run to its exit (NULL before: fiber_sched.c, give_stack) */
  uint64_t *canary;             /* the stack's canary word (NULL: it has a guard) */
  po_san san;
  _Atomic(uint32_t) done;                     /* 1 once it has exited and its stack is back in the pool */
  _Atomic(uint32_t) join_waiters;             /* threads sleeping on done */
  _Atomic(struct syncq_po_proc *) join_fiber; /* a fiber parked in join, woken at exit */
  struct po_sched *blocking_on;               /* the fiber's own: its scheduler between blocking_begin and _end */
} po_fiber;

/* The fiber running on the calling thread, or NULL (a plain thread)
 * (fiber_current.c). Never inlined, as its writer: see there. */
__attribute__((noinline)) po_fiber *po_fiber_current(void);
/* The scheduler's, at each switch: f runs on this thread now (NULL: the
 * scheduler's own context). */
__attribute__((noinline)) void po_fiber_set_current(po_fiber *f);

/* ---- the runtime of one system ---- */

typedef struct po_fiber_rt po_fiber_rt;

/* Start the schedulers of sys (nsched: 0 = one per processing unit, or as
 * many of those as the kernel lets start, at least one; SYNCQ_ELIMIT when
 * an explicit nsched, or not even one, could be started). */
int po_fiber_rt_create(struct syncq_po_system *sys, uint32_t nsched, bool pin, size_t stack_size, size_t guard_size,
                       po_fiber_rt **out);
/* Stop and free them: every fiber must have exited (po_fiber_all_done). */
void po_fiber_rt_destroy(po_fiber_rt *rt);
uint32_t po_fiber_rt_schedulers(const po_fiber_rt *rt);
/* The monitor thread's passes so far (each wake-up: a tick, a scheduler
 * leaving its idle sleep, destroy): an idle system's monitor sleeps. */
uint64_t po_fiber_rt_monitor_wakeups(po_fiber_rt *rt);
/* The limit that kept a default-sized runtime below one scheduler per
 * processing unit (po_limit_of's names), or NULL. */
const char *po_fiber_rt_short_reason(const po_fiber_rt *rt);

/* Queue p (its fn/arg set, state RUNNING published) as a fiber. It has
 * no stack yet: the scheduler that first runs it takes one from the pool;
 * if none can be had (no memory), p exits there without running, with
 * reason SYNCQ_PO_EXIT_NOMEM (fiber_sched.c, first_run). */
void po_fiber_spawn(po_fiber_rt *rt, struct syncq_po_proc *p);
/* After po_fiber_spawn (and once the process is joinable): wake an
 * idle scheduler for it if one sleeps (a futex wake-up). */
void po_fiber_spawned(po_fiber_rt *rt);
/* Wait until p's fiber has exited (a fiber caller yields; a thread sleeps). */
int po_fiber_join(struct syncq_po_proc *p);
/* Has p's fiber exited, its stack back in the pool (po_fiber_join would
 * return at once)? Synchronizes with the exit when true. */
bool po_fiber_done(struct syncq_po_proc *p);
/* Park the calling fiber until woken (its state already BLOCKING). */
void po_fiber_park(struct syncq_po_proc *self);
/* Let the other runnable fibers of this scheduler run first. */
void po_fiber_yield(struct syncq_po_proc *self);
/* recv's yield: when this scheduler has another fiber to run, run it and
 * come back (true); false at once when it has none. Unlike
 * po_fiber_yield it steals nothing and wakes no idle scheduler: the
 * caller only wants another look at its inbox before it parks. */
bool po_fiber_yield_local(struct syncq_po_proc *self);
/* After a message was queued for dst (a fiber): wake it if it is blocking
 * or parked. `waker` is the sending process (NULL: unknown / a thread). */
void po_fiber_wake(struct syncq_po_proc *waker, struct syncq_po_proc *dst);

struct po_timers;
struct po_timer;
/* The timer heap of the scheduler running the calling fiber `self`. */
struct po_timers *po_fiber_timers(struct syncq_po_proc *self);
/* Queue a timer from a plain thread: on a scheduler chosen round robin,
 * which is woken if the timer is its earliest. SYNCQ_OK or SYNCQ_ENOMEM. */
int po_fiber_timer_add_remote(po_fiber_rt *rt, struct po_timer *t);

#endif
