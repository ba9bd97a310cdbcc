/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sched.c — the multiprogramming pseudo-scheduler and the preemption
 * interface of syncq/mp/sched.h.
 *
 * Contract
 *   Source:      001 §4 (a pseudo-scheduler on its own processor interrupts
 *                a process when it is due for preemption, forcing it into
 *                a signal handler that waits on a flag the scheduler sets
 *                to resume it; quantum 10 ms); 001 §2 (Edler et al.'s
 *                Symunix: a process may ask the kernel not to preempt it
 *                while it holds a lock, honoured up to a time limit);
 *                003 §3.4 (a user-level scheduler emulates the kernel and
 *                publishes which processes are preempted, for the
 *                scheduler-conscious queue lock; gang scheduling vs time
 *                sharing).
 *   Progress:    the scheduler thread never waits for a worker: a worker
 *                that ignores its signal (blocked it) just keeps running.
 *   Atomics:     nopreempt_begin: no atomic read-modify-write: a relaxed
 *                load and store of the calling thread's depth and a signal
 *                fence (a compiler barrier); nopreempt_end: the same plus,
 *                when the outermost request ends, one relaxed load of the
 *                gate; is_preempted: one load. The 001 §2 request is a
 *                store to a flag the kernel reads; here the "kernel" is the
 *                handler running on the same thread, so plain program order
 *                is enough.
 *   Memory:      create allocates the scheduler and max_threads thread
 *                records; nothing after.
 *   Signal-safe: begin / end / self / is_preempted yes (atomics, futex).
 *   Process-shared: no (handles are pointers; threads of one process).
 *   Limits:      SYNCQ_MP_MAX_* in syncq/mp/sched.h; one signal number taken
 *                over from the first scheduler's creation on (the handler
 *                stays installed after destroy: schedulers may overlap,
 *                and it ignores threads that are not registered).
 *
 * The hand-shake. The scheduler decides to stop a thread by storing
 * GATE_STOP in its gate and signalling it, and resumes it by storing
 * GATE_GO and waking the gate's futex. A stopped thread (in the signal
 * handler, or giving up the processor at the end of a no-preemption
 * request) sleeps while the gate is not GATE_GO, re-checking after every
 * wake-up: a resume that comes before the signal is delivered leaves the
 * handler nothing to wait for, so no resume is lost.
 *
 * The no-preemption request is decided on the thread itself. The
 * scheduler always signals; the handler, which runs on the interrupted
 * thread between two of its instructions, reads the thread's request depth
 * (written only by the thread) and the gate:
 *   gate GO            resumed before delivery: nothing to do (a request
 *                      it finds is counted, see Counters);
 *   gate STOP, depth 0 stop here until resumed;
 *   gate STOP, depth>0 defer: mark the preemption deferred (counted) and
 *                      return; the request's outermost end stops the thread;
 *   gate FORCE         stop here, request or not (the bound, below).
 * begin stores depth + 1 and then a signal fence; end puts a signal fence,
 * stores depth - 1, and, when that ends the outermost request, a signal
 * fence and a load of the gate (not GATE_GO: stop here). The fences are
 * compiler barriers: the handler interrupts the thread at an instruction
 * boundary and sees the thread's own earlier stores, so only the
 * compiler's reordering has to be held back. The interleavings:
 *   - signal before begin's store: depth 0, the thread stops before it
 *     enters the request; after the store: deferred. The store is one
 *     instruction and only the thread writes depth (its handler reads it),
 *     so there is no torn or lost update: an interrupting handler that
 *     makes its own request (begin/end are signal-safe) leaves depth as it
 *     found it before the interrupted store writes.
 *   - signal during the request: deferred, and the handler saw GATE_STOP;
 *     end's later load of the gate, on the same thread, reads that value or
 *     a later one (coherence), so it stops the thread unless the scheduler
 *     resumed it meanwhile (GATE_GO: nothing left to give up).
 *   - signal between end's store of depth 0 and its load of the gate: the
 *     handler sees depth 0 and stops the thread; after the resume the load
 *     reads GATE_GO (or a new STOP: the thread stops again, as it would
 *     have at that STOP's signal).
 *   - gate STOP at end, signal not yet delivered: the thread stops itself;
 *     the signal then finds it stopped (state PREEMPTED: the handler
 *     returns to the futex wait) or resumed (gate GO: nothing to do).
 *   - gate still GO at end's load though the scheduler has just stored
 *     STOP: the signal that follows the store stops the thread at depth 0.
 *   - nested requests: only the end that brings depth to 0 loads the gate;
 *     a signal at any depth above 0 is deferred.
 *   - the bound: every preemption carries a deadline (decision +
 *     nopreempt_limit_ns). At the deadline a thread that has not stopped
 *     (its gate not GO, its state not PREEMPTED) gets its gate changed
 *     from STOP to FORCE by CAS and a second signal, which stops it inside
 *     its request. A deferral the handler records after the CAS reads
 *     FORCE and stops at once; one recorded before it is stopped by the
 *     second signal.
 * Counters, all counted where the request is seen, in the handler:
 * "deferrals", the preemptions whose signal found the thread in a request
 * (the scheduler used to count those whose depth it read as not 0 at its
 * decision; now the sample is taken at delivery, and a signal delivered
 * after the resume, to a thread the machine did not run meanwhile, counts
 * too if it finds a request); "forced", requests stopped at the bound (the
 * handler read FORCE inside a request); "preemptions" is reported as the
 * decisions less the deferrals plus the forced ones, which is what it
 * counted before (preemptions that stopped a thread without a request,
 * and requests overrun).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/clock.h"
#include "syncq/mp/sched.h"
#include "syncq/platform.h"
#include "syncq/pr.h"
#include "sched_internal.h"

/* The thread record and the request's inline bodies: sched_internal.h. */
enum { GATE_GO = SYNCQ_MP_GATE_GO, GATE_STOP = SYNCQ_MP_GATE_STOP, GATE_FORCE = SYNCQ_MP_GATE_FORCE };
enum { STATE_RUNNING = SYNCQ_MP_STATE_RUNNING, STATE_PREEMPTED = SYNCQ_MP_STATE_PREEMPTED };

struct syncq_mp_sched {
  syncq_mp_config cfg;
  pthread_mutex_t mu; /* guards the slots' used/tid/defer fields and signalling */
  pthread_t thread;
  _Atomic(uint32_t) stop_word; /* 1: stop; the scheduler sleeps on it */
  _Atomic(bool) joined;
  unsigned nregistered;
  uint64_t cur_slice; /* the slice being run (under mu) */
  syncq_mp_thread *threads;
  /* decisions: preemptions decided (each one signalled); the rest as
   * syncq_mp_stats, preemptions derived in syncq_mp_get_stats */
  _Atomic(uint64_t) slices, decisions, deferrals, forced, self_preemptions, resumes;
};

/* The calling thread's record (sched_internal.h: initial-exec, so the
 * handler's first access does not allocate the thread's TLS block). */
_Thread_local syncq_mp_thread *syncq_mp_self_tls_ = NULL;

/* Sleep while the gate says stop (STOP or FORCE). Called by the thread
 * itself only. */
static void mp_stop_here(syncq_mp_thread *t) {
  if (atomic_load(&t->gate) == GATE_GO) return; /* resumed before we got here */
  atomic_fetch_add(&t->stops, 1);
  atomic_store(&t->state, STATE_PREEMPTED);
  for (uint32_t g; (g = atomic_load(&t->gate)) != GATE_GO;) (void)syncq_futex_wait(&t->gate, g, -1, false);
  atomic_store(&t->state, STATE_RUNNING);
}

static void mp_handler(int sig) {
  (void)sig;
  int saved = errno; /* futex calls may change errno under the interrupted code */
  syncq_mp_thread *t = syncq_mp_self_tls_;
  /* a signal arriving while the thread already waits in mp_stop_here
   * (giving up at the end of a request) returns to that wait */
  if (t != NULL && atomic_load(&t->state) != STATE_PREEMPTED) {
    /* seq_cst: the scheduler's store of the gate came before its signal */
    uint32_t g = atomic_load(&t->gate);
    /* relaxed: written only by this thread, which the handler interrupts */
    bool in_request = atomic_load_explicit(&t->nopreempt, memory_order_relaxed) != 0u;
    /* relaxed (all three): statistics; deferred is cleared by the
     * scheduler before the gate store that this signal follows, so each
     * decision is counted once whichever of its signals comes first. A
     * signal that comes after the resume (gate GO; the thread was not
     * running) still found the thread in its request, as the scheduler's
     * own look at the depth used to */
    if (in_request && atomic_load_explicit(&t->deferred, memory_order_relaxed) == 0u) {
      atomic_store_explicit(&t->deferred, 1u, memory_order_relaxed);
      atomic_fetch_add_explicit(&t->sched->deferrals, 1, memory_order_relaxed);
    }
    /* relaxed: a count for the statistics; nothing is published with it */
    if (g == GATE_FORCE && in_request) atomic_fetch_add_explicit(&t->sched->forced, 1, memory_order_relaxed);
    if (g == GATE_FORCE || (g == GATE_STOP && !in_request)) mp_stop_here(t);
  }
  errno = saved;
}

void syncq_mp_config_default(syncq_mp_config *cfg, unsigned level, unsigned procs) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof *cfg);
  cfg->level = level;
  cfg->procs = procs;
  cfg->quantum_ns = SYNCQ_MP_DEFAULT_QUANTUM_NS;
  cfg->nopreempt_limit_ns = SYNCQ_MP_DEFAULT_NOPREEMPT_NS;
  cfg->max_threads = SYNCQ_MP_DEFAULT_MAX_THREADS;
  cfg->policy = SYNCQ_MP_TIMESHARE;
  cfg->signo = 0;
}

/* The application that holds processor proc in slice `slice`. */
static unsigned active_app(const syncq_mp_sched *s, uint64_t slice, unsigned proc) {
  uint64_t m = s->cfg.level;
  if (s->cfg.policy == SYNCQ_MP_GANG) return (unsigned)(slice % m);
  return (unsigned)((slice + proc) % m);
}

/* The preemption signal is blocked while a worker holds s->mu: a handler
 * stopping the thread there would keep the scheduler from the mutex. */
static void lock_unpreemptible(syncq_mp_sched *s, sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, s->cfg.signo);
  pthread_sigmask(SIG_BLOCK, &set, old);
  pthread_mutex_lock(&s->mu);
}

static void unlock_unpreemptible(syncq_mp_sched *s, const sigset_t *old) {
  pthread_mutex_unlock(&s->mu);
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void wake_thread(syncq_mp_sched *s, syncq_mp_thread *t) {
  atomic_store(&t->gate, GATE_GO); /* from STOP or FORCE */
  (void)syncq_futex_wake(&t->gate, 1, false);
  t->defer_deadline = 0;
  atomic_fetch_add_explicit(&s->resumes, 1, memory_order_relaxed); /* relaxed: a statistic */
}

static void preempt_thread(syncq_mp_sched *s, syncq_mp_thread *t, uint64_t now) {
  /* relaxed: the handler's store of 1 comes after the signal below; a
   * statistic's once-per-decision mark */
  atomic_store_explicit(&t->deferred, 0u, memory_order_relaxed);
  /* seq_cst: read by the handler after the signal, and by the thread at
   * its request's end */
  atomic_store(&t->gate, GATE_STOP);
  t->defer_deadline = now + s->cfg.nopreempt_limit_ns;
  /* relaxed: a statistic; counted before the signal so that the
   * handler's deferral never runs ahead of it by much */
  atomic_fetch_add_explicit(&s->decisions, 1, memory_order_relaxed);
  (void)pthread_kill(t->tid, s->cfg.signo);
}

/* Preemptions under way: drop those that stopped or were resumed, force
 * those past their bound. Returns the earliest pending deadline
 * (UINT64_MAX: none). Under s->mu. */
static uint64_t check_deferred(syncq_mp_sched *s, uint64_t now) {
  uint64_t earliest = UINT64_MAX;
  for (unsigned i = 0; i < s->cfg.max_threads; i++) {
    syncq_mp_thread *t = &s->threads[i];
    if (!t->used || t->defer_deadline == 0) continue;
    if (atomic_load(&t->gate) == GATE_GO || atomic_load(&t->state) == STATE_PREEMPTED) {
      t->defer_deadline = 0;
    } else if (now >= t->defer_deadline) {
      t->defer_deadline = 0;
      uint32_t expect = GATE_STOP;
      /* seq_cst: a handler that reads the gate after this CAS stops the
       * thread; one that read STOP before it is stopped by the signal */
      if (atomic_compare_exchange_strong(&t->gate, &expect, GATE_FORCE)) (void)pthread_kill(t->tid, s->cfg.signo);
    } else if (t->defer_deadline < earliest) {
      earliest = t->defer_deadline;
    }
  }
  return earliest;
}

static void *sched_main(void *arg) {
  syncq_mp_sched *s = arg;
  uint64_t slice = 0, next = syncq_now_ns();
  while (atomic_load(&s->stop_word) == 0u) {
    uint64_t now = syncq_now_ns();
    pthread_mutex_lock(&s->mu);
    s->cur_slice = slice;
    /* stop first, then resume: a processor is never given to two threads
     * by decision (the signal itself lands a little later) */
    for (unsigned i = 0; i < s->cfg.max_threads; i++) {
      syncq_mp_thread *t = &s->threads[i];
      if (t->used && active_app(s, slice, t->proc) != t->app && atomic_load(&t->gate) == GATE_GO)
        preempt_thread(s, t, now);
    }
    for (unsigned i = 0; i < s->cfg.max_threads; i++) {
      syncq_mp_thread *t = &s->threads[i];
      if (t->used && active_app(s, slice, t->proc) == t->app && atomic_load(&t->gate) != GATE_GO) wake_thread(s, t);
    }
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add_explicit(&s->slices, 1, memory_order_relaxed); /* relaxed: a statistic */
    next += s->cfg.quantum_ns;
    for (;;) {
      now = syncq_now_ns();
      if (now >= next || atomic_load(&s->stop_word) != 0u) break;
      pthread_mutex_lock(&s->mu);
      uint64_t deadline = check_deferred(s, now);
      pthread_mutex_unlock(&s->mu);
      uint64_t until = deadline < next ? deadline : next;
      (void)syncq_futex_wait(&s->stop_word, 0u, (int64_t)(until - now), false);
    }
    /* a late scheduler (the machine is loaded) does not replay the slices
     * it missed: the next one starts now */
    if (syncq_now_ns() > next + s->cfg.quantum_ns) next = syncq_now_ns();
    slice++;
  }
  return NULL;
}

int syncq_mp_create(const syncq_mp_config *cfg, syncq_mp_sched **out) {
  if (cfg == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_mp_config c = *cfg;
  if (c.level == 0 || c.level > SYNCQ_MP_MAX_LEVEL || c.procs == 0 || c.procs > SYNCQ_MP_MAX_PROCS ||
      c.quantum_ns == 0 || c.max_threads > SYNCQ_MP_MAX_THREADS ||
      (c.policy != SYNCQ_MP_TIMESHARE && c.policy != SYNCQ_MP_GANG))
    return SYNCQ_EINVAL;
  if (c.max_threads == 0) c.max_threads = SYNCQ_MP_DEFAULT_MAX_THREADS;
  if (c.nopreempt_limit_ns == 0) c.nopreempt_limit_ns = SYNCQ_MP_DEFAULT_NOPREEMPT_NS;
  if (c.signo == 0) c.signo = SIGRTMIN + SYNCQ_MP_SIGNAL_OFFSET;
  if (c.signo <= 0 || c.signo > SIGRTMAX || c.signo == SIGKILL || c.signo == SIGSTOP) return SYNCQ_EINVAL;
  syncq_mp_sched *s = calloc(1, sizeof *s);
  syncq_mp_thread *th = syncq_alloc_aligned(sizeof *th * c.max_threads, _Alignof(syncq_mp_thread));
  if (s == NULL || th == NULL) {
    free(s);
    free(th);
    return SYNCQ_ENOMEM;
  }
  memset(th, 0, sizeof *th * c.max_threads);
  for (unsigned i = 0; i < c.max_threads; i++) {
    atomic_init(&th[i].gate, GATE_GO);
    atomic_init(&th[i].state, STATE_RUNNING);
    atomic_init(&th[i].nopreempt, 0u);
    atomic_init(&th[i].deferred, 0u);
    atomic_init(&th[i].stops, 0u);
    th[i].sched = s;
  }
  s->cfg = c;
  s->threads = th;
  atomic_init(&s->stop_word, 0u);
  atomic_init(&s->joined, false);
  pthread_mutex_init(&s->mu, NULL);
  struct sigaction sa, cur;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = mp_handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(c.signo, NULL, &cur) != 0) goto sys_fail;
  /* another scheduler may have installed it already */
  if (cur.sa_handler != mp_handler && sigaction(c.signo, &sa, NULL) != 0) goto sys_fail;
  if (pthread_create(&s->thread, NULL, sched_main, s) != 0) goto sys_fail;
  *out = s;
  return SYNCQ_OK;
sys_fail:
  pthread_mutex_destroy(&s->mu);
  free(th);
  free(s);
  return SYNCQ_ESYS;
}

int syncq_mp_stop(syncq_mp_sched *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  atomic_store(&s->stop_word, 1u);
  (void)syncq_futex_wake(&s->stop_word, 1, false);
  if (!atomic_exchange(&s->joined, true)) pthread_join(s->thread, NULL);
  sigset_t old;
  lock_unpreemptible(s, &old);
  for (unsigned i = 0; i < s->cfg.max_threads; i++)
    if (s->threads[i].used && atomic_load(&s->threads[i].gate) != GATE_GO) wake_thread(s, &s->threads[i]);
  unlock_unpreemptible(s, &old);
  return SYNCQ_OK;
}

int syncq_mp_destroy(syncq_mp_sched *s) {
  if (s == NULL) return SYNCQ_EINVAL;
  (void)syncq_mp_stop(s);
  sigset_t old;
  lock_unpreemptible(s, &old);
  unsigned n = s->nregistered;
  unlock_unpreemptible(s, &old);
  if (n != 0) return SYNCQ_EBUSY;
  /* the handler stays installed: another scheduler may still use the same
   * signal, and the handler ignores threads that are not registered */
  pthread_mutex_destroy(&s->mu);
  free(s->threads);
  free(s);
  return SYNCQ_OK;
}

int syncq_mp_register(syncq_mp_sched *s, unsigned app, unsigned proc, syncq_mp_thread **out) {
  if (s == NULL || app >= s->cfg.level || proc >= s->cfg.procs || syncq_mp_self_tls_ != NULL) return SYNCQ_EINVAL;
  sigset_t old;
  lock_unpreemptible(s, &old);
  syncq_mp_thread *t = NULL;
  for (unsigned i = 0; i < s->cfg.max_threads && t == NULL; i++)
    if (!s->threads[i].used) t = &s->threads[i];
  if (t == NULL) {
    unlock_unpreemptible(s, &old);
    return SYNCQ_ELIMIT;
  }
  /* the current slice's decision applies at once: a thread whose
   * application does not hold its processor now stops below */
  bool run_now = atomic_load(&s->stop_word) != 0u || active_app(s, s->cur_slice, proc) == app;
  atomic_store(&t->gate, run_now ? GATE_GO : GATE_STOP);
  atomic_store(&t->state, STATE_RUNNING);
  atomic_store(&t->nopreempt, 0u);
  atomic_store(&t->deferred, 0u);
  atomic_store(&t->stops, 0u);
  t->tid = pthread_self();
  t->app = app;
  t->proc = proc;
  t->defer_deadline = 0;
  syncq_mp_self_tls_ = t; /* before the slot is visible to the scheduler (under mu) */
  t->used = true;
  s->nregistered++;
  unlock_unpreemptible(s, &old);
  if (out != NULL) *out = t;
  mp_stop_here(t); /* returns at once when the gate says go */
  return SYNCQ_OK;
}

int syncq_mp_unregister(syncq_mp_thread *t) {
  if (t == NULL || syncq_mp_self_tls_ != t) return SYNCQ_EINVAL;
  syncq_mp_sched *s = t->sched;
  sigset_t old;
  lock_unpreemptible(s, &old);
  t->used = false;
  t->defer_deadline = 0;
  atomic_store(&t->gate, GATE_GO); /* a signal still in flight finds nothing to wait for */
  syncq_mp_self_tls_ = NULL;
  s->nregistered--;
  unlock_unpreemptible(s, &old); /* a pending signal now finds syncq_mp_self_tls_ NULL */
  return SYNCQ_OK;
}

syncq_mp_thread *syncq_mp_self(void) { return syncq_mp_self_tls_; }

bool syncq_mp_is_preempted(const syncq_mp_thread *t) {
  if (t == NULL) return false;
  /* relaxed: a hint read by lock holders deciding whom to pass to; no data
   * is published with it */
  return atomic_load_explicit(&((syncq_mp_thread *)t)->state, memory_order_relaxed) == STATE_PREEMPTED;
}

uint64_t syncq_mp_preempt_count(const syncq_mp_thread *t) {
  return t == NULL ? 0 : atomic_load(&((syncq_mp_thread *)t)->stops);
}

/* The exported request is the inline bodies of sched_internal.h, which
 * the library's preemption-safe locks compile in. */
void syncq_mp_nopreempt_begin(void) { syncq_mp_nopreempt_begin_inline(); }
void syncq_mp_nopreempt_end(void) { syncq_mp_nopreempt_end_inline(); }

void syncq_mp_end_stop_(syncq_mp_thread *t) {
  /* relaxed: a statistic */
  atomic_fetch_add_explicit(&t->sched->self_preemptions, 1, memory_order_relaxed);
  mp_stop_here(t);
}

int syncq_mp_get_stats(const syncq_mp_sched *s, syncq_mp_stats *out) {
  if (s == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_mp_sched *m = (syncq_mp_sched *)s;
  out->slices = atomic_load(&m->slices);
  /* deferrals before decisions: each deferral's decision was counted
   * before its signal, so the difference does not go below 0 but for a
   * reordered statistic, which the clamp covers */
  out->deferrals = atomic_load(&m->deferrals);
  out->forced = atomic_load(&m->forced);
  uint64_t decisions = atomic_load(&m->decisions);
  out->preemptions = (decisions > out->deferrals ? decisions - out->deferrals : 0) + out->forced;
  out->self_preemptions = atomic_load(&m->self_preemptions);
  out->resumes = atomic_load(&m->resumes);
  return SYNCQ_OK;
}

bool syncq_mp_rseq_slice_available(void) {
  /* The build's linux/rseq.h has no time-slice extension (no field or
   * flag to request one), so there is nothing to probe for. */
  return false;
}
