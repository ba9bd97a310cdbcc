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
 *   Atomics:     nopreempt_begin / _end: one fetch-and-add each plus, at
 *                _end, one load of the gate; is_preempted: one load.
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
 * GATE_STOP in its gate and resumes it by storing GATE_GO and waking the
 * gate's futex. A stopped thread (in the signal handler, or giving up the
 * processor at the end of a no-preemption request) sleeps while the gate is
 * GATE_STOP, re-checking after every wake-up: a resume that comes before
 * the signal is delivered leaves the handler nothing to wait for, so no
 * resume is lost. The deferral is Dekker's: the scheduler stores
 * GATE_STOP then loads the request depth; the thread decrements the depth
 * then loads the gate (all seq_cst): if the scheduler saw a request it
 * defers (and forces the signal at the bound), and then the thread sees
 * GATE_STOP at _end and stops itself; if it saw none, it signals.
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

enum { GATE_GO = 0u, GATE_STOP = 1u };
enum { STATE_RUNNING = 0u, STATE_PREEMPTED = 1u };
/* While a preemption is deferred, the scheduler re-checks the request
 * this often (at most) so that a thread stopping itself is seen soon. */
#define MP_DEFER_POLL_NS 100000ull

struct syncq_mp_thread {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) gate; /* GATE_*: the scheduler's decision */
  _Atomic(uint32_t) state;                        /* STATE_*: set by the thread itself */
  _Atomic(uint32_t) nopreempt;                    /* depth of no-preemption requests */
  _Atomic(uint64_t) stops;                        /* times stopped */
  struct syncq_mp_sched *sched;
  pthread_t tid;
  unsigned app, proc;
  bool used;               /* slot taken (under sched->mu) */
  uint64_t defer_deadline; /* scheduler only: forced preemption time, 0: none */
};

struct syncq_mp_sched {
  syncq_mp_config cfg;
  pthread_mutex_t mu; /* guards the slots' used/tid/defer fields and signalling */
  pthread_t thread;
  _Atomic(uint32_t) stop_word; /* 1: stop; the scheduler sleeps on it */
  _Atomic(bool) joined;
  unsigned nregistered;
  uint64_t cur_slice; /* the slice being run (under mu) */
  syncq_mp_thread *threads;
  _Atomic(uint64_t) slices, preemptions, deferrals, forced, self_preemptions, resumes;
};

/* The calling thread's record. Set at registration, before any signal can
 * target the thread, so that the handler's first access does not have to
 * allocate the thread's TLS block. */
static _Thread_local syncq_mp_thread *mp_self;

/* Sleep while the gate says stop. Called by the thread itself only. */
static void mp_stop_here(syncq_mp_thread *t) {
  if (atomic_load(&t->gate) != GATE_STOP) return; /* resumed before we got here */
  atomic_fetch_add(&t->stops, 1);
  atomic_store(&t->state, STATE_PREEMPTED);
  while (atomic_load(&t->gate) == GATE_STOP) (void)syncq_futex_wait(&t->gate, GATE_STOP, -1, false);
  atomic_store(&t->state, STATE_RUNNING);
}

static void mp_handler(int sig) {
  (void)sig;
  int saved = errno; /* futex calls may change errno under the interrupted code */
  syncq_mp_thread *t = mp_self;
  /* a signal arriving while the thread already waits in mp_stop_here
   * (giving up at the end of a request) returns to that wait */
  if (t != NULL && atomic_load(&t->state) != STATE_PREEMPTED) mp_stop_here(t);
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
  atomic_store(&t->gate, GATE_GO);
  (void)syncq_futex_wake(&t->gate, 1, false);
  t->defer_deadline = 0;
  atomic_fetch_add_explicit(&s->resumes, 1, memory_order_relaxed); /* relaxed: a statistic */
}

static void preempt_thread(syncq_mp_sched *s, syncq_mp_thread *t, uint64_t now) {
  /* seq_cst: Dekker pair with nopreempt_end. An exchange, not a store:
   * qemu-user's AArch64 translation lets a store-release pass a later
   * load-acquire on a x86-64 host (docs/reliability.md, the restriction's
   * lost wake-up); a read-modify-write orders them there too. */
  (void)atomic_exchange(&t->gate, GATE_STOP);
  if (atomic_load(&t->nopreempt) != 0u) {
    t->defer_deadline = now + s->cfg.nopreempt_limit_ns;
    atomic_fetch_add_explicit(&s->deferrals, 1, memory_order_relaxed); /* relaxed: a statistic */
    return;
  }
  (void)pthread_kill(t->tid, s->cfg.signo);
  atomic_fetch_add_explicit(&s->preemptions, 1, memory_order_relaxed); /* relaxed: a statistic */
}

/* Deferred preemptions: drop those that stopped themselves or were
 * resumed, force those past their bound. Returns the earliest pending
 * deadline (UINT64_MAX: none). Under s->mu. */
static uint64_t check_deferred(syncq_mp_sched *s, uint64_t now) {
  uint64_t earliest = UINT64_MAX;
  for (unsigned i = 0; i < s->cfg.max_threads; i++) {
    syncq_mp_thread *t = &s->threads[i];
    if (!t->used || t->defer_deadline == 0) continue;
    if (atomic_load(&t->gate) == GATE_GO || atomic_load(&t->state) == STATE_PREEMPTED) {
      t->defer_deadline = 0;
    } else if (now >= t->defer_deadline) {
      t->defer_deadline = 0;
      (void)pthread_kill(t->tid, s->cfg.signo);
      atomic_fetch_add_explicit(&s->forced, 1, memory_order_relaxed);      /* relaxed: a statistic */
      atomic_fetch_add_explicit(&s->preemptions, 1, memory_order_relaxed); /* relaxed: a statistic */
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
      if (t->used && active_app(s, slice, t->proc) == t->app && atomic_load(&t->gate) == GATE_STOP) wake_thread(s, t);
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
      uint64_t until = next;
      if (deadline != UINT64_MAX) {
        uint64_t poll = now + MP_DEFER_POLL_NS;
        until = deadline < until ? deadline : until;
        until = poll < until ? poll : until;
      }
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
    if (s->threads[i].used && atomic_load(&s->threads[i].gate) == GATE_STOP) wake_thread(s, &s->threads[i]);
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
  if (s == NULL || app >= s->cfg.level || proc >= s->cfg.procs || mp_self != NULL) return SYNCQ_EINVAL;
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
  atomic_store(&t->stops, 0u);
  t->tid = pthread_self();
  t->app = app;
  t->proc = proc;
  t->defer_deadline = 0;
  mp_self = t; /* before the slot is visible to the scheduler (under mu) */
  t->used = true;
  s->nregistered++;
  unlock_unpreemptible(s, &old);
  if (out != NULL) *out = t;
  mp_stop_here(t); /* returns at once when the gate says go */
  return SYNCQ_OK;
}

int syncq_mp_unregister(syncq_mp_thread *t) {
  if (t == NULL || mp_self != t) return SYNCQ_EINVAL;
  syncq_mp_sched *s = t->sched;
  sigset_t old;
  lock_unpreemptible(s, &old);
  t->used = false;
  t->defer_deadline = 0;
  atomic_store(&t->gate, GATE_GO); /* a signal still in flight finds nothing to wait for */
  mp_self = NULL;
  s->nregistered--;
  unlock_unpreemptible(s, &old); /* a pending signal now finds mp_self NULL */
  return SYNCQ_OK;
}

syncq_mp_thread *syncq_mp_self(void) { return mp_self; }

bool syncq_mp_is_preempted(const syncq_mp_thread *t) {
  if (t == NULL) return false;
  /* relaxed: a hint read by lock holders deciding whom to pass to; no data
   * is published with it */
  return atomic_load_explicit(&((syncq_mp_thread *)t)->state, memory_order_relaxed) == STATE_PREEMPTED;
}

uint64_t syncq_mp_preempt_count(const syncq_mp_thread *t) {
  return t == NULL ? 0 : atomic_load(&((syncq_mp_thread *)t)->stops);
}

void syncq_mp_nopreempt_begin(void) {
  syncq_mp_thread *t = mp_self;
  if (t != NULL) atomic_fetch_add(&t->nopreempt, 1u); /* seq_cst: Dekker pair with preempt_thread */
}

void syncq_mp_nopreempt_end(void) {
  syncq_mp_thread *t = mp_self;
  /* only the thread itself changes its depth: an unmatched end is ignored */
  if (t == NULL || atomic_load(&t->nopreempt) == 0u) return;
  /* seq_cst: Dekker pair with preempt_thread's store of the gate */
  if (atomic_fetch_sub(&t->nopreempt, 1u) != 1u) return; /* still nested */
  if (atomic_load(&t->gate) == GATE_STOP) {
    /* relaxed: a statistic */
    atomic_fetch_add_explicit(&t->sched->self_preemptions, 1, memory_order_relaxed);
    mp_stop_here(t);
  }
}

int syncq_mp_get_stats(const syncq_mp_sched *s, syncq_mp_stats *out) {
  if (s == NULL || out == NULL) return SYNCQ_EINVAL;
  syncq_mp_sched *m = (syncq_mp_sched *)s;
  out->slices = atomic_load(&m->slices);
  out->preemptions = atomic_load(&m->preemptions);
  out->deferrals = atomic_load(&m->deferrals);
  out->forced = atomic_load(&m->forced);
  out->self_preemptions = atomic_load(&m->self_preemptions);
  out->resumes = atomic_load(&m->resumes);
  return SYNCQ_OK;
}

bool syncq_mp_rseq_slice_available(void) {
  /* The build's linux/rseq.h has no time-slice extension (no field or
   * flag to request one), so there is nothing to probe for. */
  return false;
}
