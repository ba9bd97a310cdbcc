/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * locks_cost.c — locks-cost: what a lock costs (syncq's lock-cost
 * benchmark), each lock as a ratio to the POSIX mutex measured
 * in the same run (interleaved repetitions, normalize_to).
 *
 * The panels (param "phase"):
 *  - uncontended: one thread, N acquire+release pairs; plus "two-atomics",
 *    two uncontended seq_cst fetch-and-adds on one cache line, each behind
 *    an indirect call as every ops-table row's acquire and release are
 *    (two_atomics_ops: the floor such a lock approaches when each is one
 *    atomic), and "two-atomics:inline", the same two in the inline rows'
 *    loop (their floor);
 *  - two-threads: 2 threads share N acquire / increment / release
 *    operations, 200 ns of busy work outside the critical section (so the
 *    lock changes hands rather than staying with one thread);
 *  - oversubscribed: 4x as many threads as processing units, the same
 *    loop, every lock with every blocking discipline it accepts (block,
 *    competitive) as "<lock>@<discipline>", syncq's made by
 *    syncq_lock_create(name, {discipline}) and driven through the generic
 *    API (the FIFO ones restricted, src/lock/gcr.c), the peers' through
 *    their ops tables; busy-waiting is left out here (a FIFO spin lock
 *    convoys behind preempted threads for seconds);
 *  - defaults-oversubscribed: 4x as many threads as processing units,
 *    every syncq lock created through the generic API with no discipline
 *    named, threads not pinned, nothing beside (as defaults-busy below,
 *    without the busy program);
 *  - defaults-busy: 2x as many threads as processing units (4 on 2 cores)
 *    with a busy program beside (a child process spinning on one core),
 *    every syncq lock created through the generic API with no discipline
 *    named (syncq_lock_create(name, NULL): the safe default of lock.h),
 *    driven through syncq_lock_lock / syncq_lock_unlock; threads not
 *    pinned (a runtime's usually are not; pinned, see the note in run());
 *    a sample makes N increments or stops at a deadline, whichever is
 *    first (DEADLINE_CHECK_EVERY).
 * The shared counter is checked after each run (mutual exclusion).
 *
 * What the rows execute: the registry's rows (syncq's and the peers') call
 * the lock's ops table, two indirect calls per pair, as does two-atomics;
 * the ":inline" rows (syncq/static/lock/<algo>.h, ck's headers) and
 * two-atomics:inline compile the bodies into their loop, no call. syncq's
 * ops-table rows run the lab's copy of the library, syncq_static, built
 * with SYNCQ_STATS=1 (the lab records cas_per_op and the like from it; the
 * installed libsyncq counts nothing unless configured -DSYNCQ_STATS=ON).
 * On the uncontended path that is one thread-local add for mcs (its
 * release CAS) and for clh (its spare-node CAS), none for ticket and ttas;
 * the inline rows count nothing (the lab does not define SYNCQ_STATS), nor
 * do ck's rows. The add is a plain increment of a thread-local word, no
 * call: measured in one program, the inline MCS body compiled once with
 * and once without SYNCQ_STATS and called alternately through function
 * pointers, it cost under 0.1 ns of a 10.1-10.3 ns pair (best of 31
 * rounds, three runs, 2-core AMD EPYC), less than the 7% by which
 * placing the same code elsewhere moved it (libsyncq against the
 * counting copy: clh 7.4 against 6.9 ns, the counting copy faster). A
 * note of the run says so with every result.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../construct.h"
#include "../lab.h"
#include "../prng.h"
#include "syncq/clock.h"
#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/static/lock/mcs.h"
#include "syncq/static/lock/tas.h"
#include "syncq/static/lock/ticket.h"
#include "syncq/stats.h"
#include "syncq/wait.h"
#if defined(SYNCQ_LAB_HAVE_CK)
#include <ck_spinlock.h>
#endif

#define OUTSIDE_NS 200u           /* busy work between operations (contended panels) */
#define DEFAULTS_THREADS_PER_PU 2 /* defaults-busy: 4 threads on 2 cores */
#define OVER_THREADS_PER_PU 4     /* oversubscribed, defaults-oversubscribed: 8 threads on 2 cores */
/* defaults-busy: a sample also stops at a deadline (time_per_op is then the
 * wall time over the increments made): a lock whose hand-over to a
 * preempted waiter costs a time slice (a FIFO lock whose waiters only
 * yield: up to 0.9 ms per increment beside the busy program, as the
 * scheduler-conscious locks did before they could sleep) would otherwise
 * take 8 s or more a sample at --quick's 20,000 increments, and its cost
 * is known to a few percent from a thousand. Each thread reads the clock every
 * DEADLINE_CHECK_EVERY of its operations. */
#define DEADLINE_CHECK_EVERY 64u

typedef struct cost_point {
  const syncq_algo *algo; /* NULL: two-atomics */
  int threads;
  int wait;
  uint64_t ops;
  uint64_t outside_ns;
  bool generic;         /* created by syncq_lock_create(name, NULL), driven by the generic API */
  int inl;              /* an inline row (cost_inline), 0: through the ops table */
  uint64_t deadline_ns; /* generic only: a sample stops after this long (0: never) */
  bool named;           /* syncq_lock_create(name, {wait}) with the point's discipline (oversubscribed) */
} cost_point;

/* The inline rows of the uncontended and two-threads phases: the lock's
 * static inline body compiled into the loop (no indirect call, no
 * statistics), beside Concurrency Kit's inline counterpart. */
enum cost_inline {
  INL_NONE = 0,
  INL_MCS,       /* "mcs:inline"            syncq/static/lock/mcs.h */
  INL_TICKET,    /* "ticket:inline"         syncq/static/lock/ticket.h */
  INL_TTAS,      /* "ttas:inline"           syncq/static/lock/tas.h */
  INL_CK_MCS,    /* "ck:spinlock_mcs:inline" */
  INL_CK_TICKET, /* "ck:spinlock_ticket:inline" */
  INL_CK_CAS,    /* "ck:spinlock_cas:inline" (ck's test-and-test-and-set) */
  INL_ATOMICS,   /* "two-atomics:inline"    the inline rows' floor (uncontended only) */
  INL_COUNT
};
static const char *const inline_names[INL_COUNT] = {
  NULL,
  "mcs:inline",
  "ticket:inline",
  "ttas:inline",
  "ck:spinlock_mcs:inline",
  "ck:spinlock_ticket:inline",
  "ck:spinlock_cas:inline",
  "two-atomics:inline",
};

/* Storage for any of the inline locks, one cache line aligned. */
typedef union inline_lock {
  _Atomic(uint64_t) word; /* two-atomics:inline */
  syncq_lock_mcs mcs;
  syncq_lock_ticket ticket;
  syncq_lock_tas tas;
#if defined(SYNCQ_LAB_HAVE_CK)
  ck_spinlock_mcs_t ck_mcs;
  ck_spinlock_ticket_t ck_ticket;
  ck_spinlock_cas_t ck_cas;
#endif
} inline_lock;

typedef struct cost_run {
  const cost_point *pt;
  const syncq_lock_ops *ops;
  void *lock;
  syncq_lock *generic; /* pt->generic: the lock, through the generic API */
  uint64_t counter;    /* plain: guarded by the lock */
  _Atomic(int) errors;
  uint64_t deadline;      /* generic: the clock reading at which workers stop (0: never) */
  _Atomic(uint64_t) made; /* generic: the increments made, summed over the team */
} cost_run;

typedef struct atomics_pair {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) word;
} atomics_pair;

/* The "two-atomics" row is driven as the lock rows are (lock_worker: an
 * indirect call to the table's lock, the increment, an indirect call to
 * its unlock, each status checked), through a table whose lock and unlock
 * are each one seq_cst fetch-and-add on one word: the floor a lock called
 * through its ops table approaches when its acquire and release are one
 * atomic each. Beside it the inline rows' floor, "two-atomics:inline",
 * the two fetch-and-adds in the inline rows' loop. */
static int two_atomics_op(void *word, syncq_lock_node *node) {
  (void)node;
  atomic_fetch_add((_Atomic(uint64_t) *)word, 1);
  return SYNCQ_OK;
}
static int two_atomics_init(void *word, const syncq_lock_config *cfg) {
  (void)cfg;
  atomic_init((_Atomic(uint64_t) *)word, 0);
  return SYNCQ_OK;
}
static int two_atomics_destroy(void *word) {
  (void)word;
  return SYNCQ_OK;
}
static const syncq_lock_ops two_atomics_ops = {
  .size = sizeof(atomics_pair),
  .align = _Alignof(atomics_pair),
  .init = two_atomics_init,
  .destroy = two_atomics_destroy,
  .lock = two_atomics_op,
  .trylock = two_atomics_op,
  .unlock = two_atomics_op,
};

static void lock_worker(lab_worker *w) {
  cost_run *run = w->arg;
  uint64_t n = lab_share(run->pt->ops, w->n, w->id);
  syncq_lock_node node;
  if (run->generic != NULL) {
    uint64_t made = 0;
    for (uint64_t i = 0; i < n; i++) {
      if (run->deadline != 0 && i % DEADLINE_CHECK_EVERY == 0 && syncq_now_ns() >= run->deadline) break;
      if (syncq_lock_lock(run->generic, &node) != SYNCQ_OK) {
        atomic_fetch_add(&run->errors, 1);
        continue;
      }
      run->counter++;
      syncq_lock_unlock(run->generic, &node);
      made++;
      if (run->pt->outside_ns) syncq_delay_ns(run->pt->outside_ns);
    }
    atomic_fetch_add(&run->made, made);
    return;
  }
  for (uint64_t i = 0; i < n; i++) {
    if (run->ops->lock(run->lock, &node) != SYNCQ_OK) {
      atomic_fetch_add(&run->errors, 1);
      continue;
    }
    run->counter++;
    run->ops->unlock(run->lock, &node);
    if (run->pt->outside_ns) syncq_delay_ns(run->pt->outside_ns);
  }
}

/* One loop per inline lock: LOCK and UNLOCK are statements on `l`. */
#define INLINE_WORKER(fname, LOCK, UNLOCK)                          \
  static void fname(lab_worker *w) {                                \
    cost_run *run = w->arg;                                         \
    inline_lock *l = run->lock;                                     \
    uint64_t n = lab_share(run->pt->ops, w->n, w->id);              \
    syncq_lock_node node;                                           \
    (void)node;                                                     \
    for (uint64_t i = 0; i < n; i++) {                              \
      LOCK;                                                         \
      run->counter++;                                               \
      UNLOCK;                                                       \
      if (run->pt->outside_ns) syncq_delay_ns(run->pt->outside_ns); \
    }                                                               \
  }
INLINE_WORKER(inl_mcs_worker, syncq_lock_mcs_lock_inline(&l->mcs, &node), syncq_lock_mcs_unlock_inline(&l->mcs, &node))
INLINE_WORKER(inl_ticket_worker, syncq_lock_ticket_lock_inline(&l->ticket), syncq_lock_ticket_unlock_inline(&l->ticket))
INLINE_WORKER(inl_ttas_worker, syncq_lock_ttas_lock_inline(&l->tas), syncq_lock_ttas_unlock_inline(&l->tas))
INLINE_WORKER(inl_atomics_worker, atomic_fetch_add(&l->word, 1), atomic_fetch_add(&l->word, 1))
#if defined(SYNCQ_LAB_HAVE_CK)
_Static_assert(sizeof(struct ck_spinlock_mcs) <= sizeof(syncq_lock_node), "a ck MCS node fits a syncq_lock_node");
INLINE_WORKER(inl_ck_mcs_worker, ck_spinlock_mcs_lock(&l->ck_mcs, (struct ck_spinlock_mcs *)(void *)node.opaque),
              ck_spinlock_mcs_unlock(&l->ck_mcs, (struct ck_spinlock_mcs *)(void *)node.opaque))
INLINE_WORKER(inl_ck_ticket_worker, ck_spinlock_ticket_lock(&l->ck_ticket), ck_spinlock_ticket_unlock(&l->ck_ticket))
INLINE_WORKER(inl_ck_cas_worker, ck_spinlock_cas_lock(&l->ck_cas), ck_spinlock_cas_unlock(&l->ck_cas))
#endif

/* ThreadSanitizer cannot see ck's inline-assembly atomics (as for every
 * peer in that build): its inline locks would be reported as races. */
#define LAB_CK_INLINE_UNDER_TSAN (!SYNCQ_TSAN) /* syncq/export.h */

static bool inline_available(int inl) {
  if (inl == INL_ATOMICS) return true;
#if defined(SYNCQ_LAB_HAVE_CK)
  return inl < INL_CK_MCS || LAB_CK_INLINE_UNDER_TSAN;
#else
  return inl < INL_CK_MCS;
#endif
}

/* Initialise the inline lock and return its worker (NULL if unavailable).
 * syncq's locks with NULL config: the typed default, SPIN, as ck's. */
static void (*inline_setup(int inl, inline_lock *l))(lab_worker *) {
  switch (inl) {
  case INL_MCS:
    return syncq_lock_mcs_init(&l->mcs, NULL) == SYNCQ_OK ? inl_mcs_worker : NULL;
  case INL_TICKET:
    return syncq_lock_ticket_init(&l->ticket, NULL) == SYNCQ_OK ? inl_ticket_worker : NULL;
  case INL_TTAS:
    return syncq_lock_ttas_init(&l->tas, NULL) == SYNCQ_OK ? inl_ttas_worker : NULL;
  case INL_ATOMICS:
    atomic_init(&l->word, 0);
    return inl_atomics_worker;
#if defined(SYNCQ_LAB_HAVE_CK)
  case INL_CK_MCS:
    ck_spinlock_mcs_init(&l->ck_mcs);
    return inl_ck_mcs_worker;
  case INL_CK_TICKET:
    ck_spinlock_ticket_init(&l->ck_ticket);
    return inl_ck_ticket_worker;
  case INL_CK_CAS:
    ck_spinlock_cas_init(&l->ck_cas);
    return inl_ck_cas_worker;
#endif
  default:
    return NULL;
  }
}

static int cost_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const cost_point *pt = arg;
  uint64_t ns;
  uint64_t made = pt->ops;                       /* the operations the sample made (fewer when a deadline stopped it) */
  if (pt->algo == NULL && pt->inl == INL_NONE) { /* two-atomics, through two_atomics_ops */
    cost_run *run = syncq_alloc_aligned(sizeof *run, _Alignof(cost_run));
    atomics_pair *p = syncq_alloc_aligned(sizeof *p, _Alignof(atomics_pair));
    if (run == NULL || p == NULL) {
      free(run);
      free(p);
      lab_fail(ctx, "out of memory");
      return -1;
    }
    (void)two_atomics_ops.init(&p->word, NULL);
    run->pt = pt;
    run->ops = &two_atomics_ops;
    run->lock = &p->word;
    run->generic = NULL;
    run->deadline = 0;
    atomic_init(&run->made, 0);
    run->counter = 0;
    atomic_init(&run->errors, 0);
    int rc = lab_team_run(ctx, 1, lock_worker, run, NULL, &ns, &out->stats);
    bool ok = atomic_load(&run->errors) == 0 && run->counter == pt->ops && atomic_load(&p->word) == 2 * pt->ops;
    free(p);
    free(run);
    if (rc != 0) return -1;
    if (!ok) {
      lab_fail(ctx, "two-atomics: wrong count");
      return -1;
    }
  } else if (pt->inl != INL_NONE) { /* an inline row */
    cost_run *run = syncq_alloc_aligned(sizeof *run, _Alignof(cost_run));
    inline_lock *l = syncq_alloc_aligned(sizeof *l, SYNCQ_CACHELINE);
    void (*worker)(lab_worker *) = l != NULL ? inline_setup(pt->inl, l) : NULL;
    if (run == NULL || worker == NULL) {
      free(run);
      free(l);
      lab_fail(ctx, "cannot set up %s", inline_names[pt->inl]);
      return -1;
    }
    run->pt = pt;
    run->ops = NULL;
    run->lock = l;
    run->generic = NULL;
    run->counter = 0;
    atomic_init(&run->errors, 0);
    int rc = lab_team_run(ctx, pt->threads, worker, run, NULL, &ns, &out->stats);
    bool ok = run->counter == pt->ops && (pt->inl != INL_ATOMICS || atomic_load(&l->word) == 2 * pt->ops);
    free(l);
    free(run);
    if (rc != 0) return -1;
    if (!ok) {
      lab_fail(ctx, "%s: mutual exclusion failed", inline_names[pt->inl]);
      return -1;
    }
  } else if (pt->generic) {
    cost_run *run = syncq_alloc_aligned(sizeof *run, _Alignof(cost_run));
    if (run == NULL || syncq_lock_create(pt->algo->name, NULL, &run->generic) != SYNCQ_OK) {
      free(run);
      lab_fail(ctx, "cannot create a default %s lock", pt->algo->name);
      return -1;
    }
    run->pt = pt;
    run->ops = NULL;
    run->lock = NULL;
    run->counter = 0;
    atomic_init(&run->errors, 0);
    atomic_init(&run->made, 0);
    /* unpinned: the scheduler may move a preempted waiter, as in a runtime
     * whose threads are not pinned (pinned, see the note) */
    int *no_pin = malloc((size_t)pt->threads * sizeof *no_pin);
    for (int i = 0; no_pin != NULL && i < pt->threads; i++) no_pin[i] = -1;
    run->deadline = pt->deadline_ns ? syncq_now_ns() + pt->deadline_ns : 0;
    int rc = no_pin == NULL ? -1 : lab_team_run(ctx, pt->threads, lock_worker, run, no_pin, &ns, &out->stats);
    free(no_pin);
    made = atomic_load(&run->made);
    bool ok =
      atomic_load(&run->errors) == 0 && run->counter == made && made > 0 && (pt->deadline_ns != 0 || made == pt->ops);
    syncq_lock_destroy(run->generic);
    free(run);
    if (rc != 0) return -1;
    if (!ok) {
      lab_fail(ctx, "%s: mutual exclusion failed", pt->algo->name);
      return -1;
    }
  } else {
    const syncq_lock_ops *ops = pt->algo->ops;
    cost_run *run = syncq_alloc_aligned(sizeof *run, _Alignof(cost_run));
    syncq_lock_config cfg = {(unsigned)pt->threads, pt->wait, false};
    void *l = NULL;
    syncq_lock *gl = NULL;
    int made_st = run == NULL ? SYNCQ_ENOMEM
                  : pt->named ? syncq_lock_create(pt->algo->name, &cfg, &gl)
                              : lab_object_new(pt->algo, &(lab_object_cfg){.lock = &cfg}, &l);
    if (made_st != SYNCQ_OK) {
      free(run);
      lab_fail(ctx, "cannot create a %s lock (%s)", pt->algo->name, syncq_wait_name(pt->wait));
      return -1;
    }
    run->pt = pt;
    run->ops = ops;
    run->lock = l;
    run->generic = gl; /* named: driven through the generic API, as an application would */
    run->deadline = 0;
    atomic_init(&run->made, 0);
    run->counter = 0;
    atomic_init(&run->errors, 0);
    int rc = lab_team_run(ctx, pt->threads, lock_worker, run, NULL, &ns, &out->stats);
    bool ok = atomic_load(&run->errors) == 0 && run->counter == pt->ops;
    if (gl != NULL) syncq_lock_destroy(gl);
    else lab_object_free(pt->algo, l);
    free(run);
    if (rc != 0) return -1;
    if (!ok) {
      lab_fail(ctx, "%s: mutual exclusion failed", pt->algo->name);
      return -1;
    }
  }
  out->value = (double)ns / (double)made;
  out->ops = made;
  return 0;
}

static bool accepts(const syncq_algo *a, int wait) {
  syncq_lock_config cfg = {0, wait, false};
  return lab_object_can_make(a, &(lab_object_cfg){.lock = &cfg}, NULL);
}

/* A busy program beside the measured one: a child process spinning until
 * killed (the scheduler shares the processors between it and the team). */
static pid_t start_busy_program(void) {
  pid_t pid = fork();
  if (pid == 0) {
    volatile uint64_t x = 0; /* volatile: the loop stays */
    for (;;) x++;
  }
  return pid;
}

/* The generic API's defaults (syncq_lock_create(name, NULL), driven by
 * syncq_lock_lock/unlock, threads not pinned), at `threads` threads, with a
 * busy program beside or not: the phases defaults-busy and
 * defaults-oversubscribed. */
static int lab_run_defaults(lab_ctx *ctx, const syncq_algo *const *algos, int nalgos, int pus, cost_point *pts,
                            int threads_per_pu, const char *phase, bool busy_beside, uint64_t outside_ns) {
  int threads = threads_per_pu * pus;
  /* N increments or the deadline (DEADLINE_CHECK_EVERY), whichever ends
   * first: the well-behaved locks make N in about a millisecond at --quick */
  uint64_t n = lab_by_size(ctx, 4000, 20000, 400000, 2000000);
  uint64_t deadline_ns = lab_by_size(ctx, 200, 250, 2000, 10000) * 1000000u;
  lab_group g;
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", threads);
  lab_group_param_str(&g, "phase", phase);
  g.metric = "time_per_op";
  g.unit = "ns";
  g.sample = cost_sample;
  g.normalize_to = "pthread-mutex";
  for (int a = 0; a < nalgos && g.nvariants < LAB_MAX_VARIANTS; a++) {
    if (algos[a]->props & SYNCQ_PROP_PEER) continue; /* peers keep their own (spin) default */
    int v = g.nvariants++;
    pts[v] = (cost_point){algos[a], threads, SYNCQ_WAIT_DEFAULT, n, outside_ns, true, INL_NONE, deadline_ns};
    g.variants[v] = (lab_variant){algos[a]->name, &pts[v]};
  }
  if (busy_beside)
    lab_note(ctx,
             "%s: %d threads (%dx the processing units), N=%llu increments or %llu ms "
             "(whichever ends first; time_per_op is the wall time over the increments made), every syncq "
             "lock made by syncq_lock_create(name, NULL) (the safe default: competitive spinning, "
             "the FIFO locks restricted to one admitted waiter and mcs-tp and clh-tp to two, src/lock/gcr.c; the "
             "mutexes' own "
             "blocking), a busy child "
             "process spinning beside the team, threads not pinned. Pinned two to a core, the FIFO "
             "queue locks (mcs, clh, array-cas) are not safe even so: each hand-over to a waiter "
             "sharing the releaser's core costs context switches (16-21 us per operation measured "
             "here, 300x pthread mutex)",
             phase, threads, threads_per_pu, (unsigned long long)n, (unsigned long long)(deadline_ns / 1000000u));
  else
    lab_note(ctx,
             "%s: %d threads (%dx the processing units), N=%llu operations (acquire, increment, "
             "release, %llu ns of busy work, as in the oversubscribed phase) or %llu ms (whichever "
             "ends first), every syncq lock made by syncq_lock_create(name, NULL) and driven through "
             "the generic API, threads not pinned, nothing else running: what a program that takes "
             "the defaults gets when it has more threads than processors",
             phase, threads, threads_per_pu, (unsigned long long)n, (unsigned long long)outside_ns,
             (unsigned long long)(deadline_ns / 1000000u));
  pid_t busy = -1;
  if (busy_beside && (busy = start_busy_program()) < 0) {
    lab_fail(ctx, "%s: cannot fork the busy program", phase);
    return -1;
  }
  int rc = lab_run_group(ctx, &g);
  if (busy > 0) {
    kill(busy, SIGKILL);
    waitpid(busy, NULL, 0);
  }
  return rc;
}

/* The inline rows after the group's other variants (pts indexed alike). */
static void add_inline_rows(lab_group *g, cost_point *pts, int threads, uint64_t ops, uint64_t outside_ns) {
  for (int k = INL_NONE + 1; k < INL_COUNT && g->nvariants < LAB_MAX_VARIANTS; k++) {
    if (!inline_available(k) || (k == INL_ATOMICS && threads != 1)) continue; /* no exclusion: one thread */
    int v = g->nvariants++;
    pts[v] = (cost_point){NULL, threads, SYNCQ_WAIT_DEFAULT, ops, outside_ns, false, k};
    g->variants[v] = (lab_variant){inline_names[k], &pts[v]};
  }
}

static int locks_cost_run_exp(lab_ctx *ctx) {
  const syncq_algo *algos[LAB_MAX_VARIANTS];
  int nalgos = syncq_registry_list(SYNCQ_FAMILY_LOCK, algos, LAB_MAX_VARIANTS);
  if (nalgos > LAB_MAX_VARIANTS - 1) nalgos = LAB_MAX_VARIANTS - 1;
  int pus = lab_pus(ctx);
  uint64_t n_unc = lab_by_size(ctx, 20000, 500000, 5000000, 20000000);
  uint64_t n_two = lab_by_size(ctx, 5000, 100000, 1000000, 5000000);
  uint64_t n_over = lab_by_size(ctx, 2000, 20000, 200000, 1000000);
  int over = OVER_THREADS_PER_PU * pus;

  lab_begin(ctx,
            "Cost of each lock, as a ratio to pthread-mutex in the same run. uncontended: 1 "
            "thread, N=%llu acquire+release pairs, plus two-atomics (two seq_cst fetch-and-adds "
            "per pair, each called through an ops table as the lock rows' acquire and release are) "
            "and two-atomics:inline (the two in the loop of the inline rows, which call nothing). "
            "two-threads: 2 threads, N=%llu operations (acquire, increment a shared "
            "counter, release, %u ns of busy work). oversubscribed: %d threads (4x the "
            "processing units), N=%llu of the same operations, each lock with each blocking "
            "discipline it accepts (\"<lock>@block\", \"<lock>@competitive\"; syncq's made by "
            "syncq_lock_create with that discipline and driven through the generic API). time_per_op is the "
            "team's wall time divided by N. syncq's rows run the lab's counting copy of the library "
            "(statistics compiled in: a note gives what they add); the inline rows, the floors and the "
            "peers' rows count nothing.",
            (unsigned long long)n_unc, (unsigned long long)n_two, OUTSIDE_NS, over, (unsigned long long)n_over);
  lab_note(ctx, "competitive spin limit (one measured context switch): %llu ns",
           (unsigned long long)syncq_wait_spin_limit_ns());
  lab_note(ctx,
           "syncq's rows through the ops table run the lab's counting copy of the library "
           "(SYNCQ_STATS=%d): uncontended, mcs and clh add one to a thread-local counter per pair "
           "(a plain add, no call; under 0.1 ns measured), ticket and ttas nothing; the inline rows, "
           "two-atomics and Concurrency Kit's rows count nothing",
           syncq_stats_enabled());
  if (!inline_available(INL_CK_MCS))
    lab_note(ctx, "ck's inline locks not measured: %s",
#if defined(SYNCQ_LAB_HAVE_CK)
             "ThreadSanitizer cannot see their inline-assembly atomics"
#else
             "Concurrency Kit not found (Debian package libck-dev)"
#endif
    );

  static cost_point pts[LAB_MAX_VARIANTS];
  static char names[LAB_MAX_VARIANTS][64];
  lab_group g;

  /* uncontended */
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", 1);
  lab_group_param_str(&g, "phase", "uncontended");
  g.metric = "time_per_op";
  g.unit = "ns";
  g.sample = cost_sample;
  g.normalize_to = "pthread-mutex";
  for (int a = 0; a < nalgos; a++) {
    pts[a] = (cost_point){algos[a], 1, SYNCQ_WAIT_DEFAULT, n_unc, 0};
    g.variants[g.nvariants++] = (lab_variant){algos[a]->name, &pts[a]};
  }
  pts[nalgos] = (cost_point){NULL, 1, SYNCQ_WAIT_DEFAULT, n_unc, 0};
  g.variants[g.nvariants++] = (lab_variant){"two-atomics", &pts[nalgos]};
  add_inline_rows(&g, pts, 1, n_unc, 0);
  if (lab_run_group(ctx, &g) != 0) return -1;

  /* two threads */
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", 2);
  lab_group_param_str(&g, "phase", "two-threads");
  g.metric = "time_per_op";
  g.unit = "ns";
  g.sample = cost_sample;
  g.normalize_to = "pthread-mutex";
  for (int a = 0; a < nalgos; a++) {
    pts[a] = (cost_point){algos[a], 2, SYNCQ_WAIT_DEFAULT, n_two, OUTSIDE_NS};
    g.variants[g.nvariants++] = (lab_variant){algos[a]->name, &pts[a]};
  }
  add_inline_rows(&g, pts, 2, n_two, OUTSIDE_NS);
  if (lab_run_group(ctx, &g) != 0) return -1;

  /* oversubscribed, blocking disciplines */
  memset(&g, 0, sizeof g);
  lab_group_param(&g, "threads", over);
  lab_group_param_str(&g, "phase", "oversubscribed");
  g.metric = "time_per_op";
  g.unit = "ns";
  g.sample = cost_sample;
  g.normalize_to = "pthread-mutex";
  const int disciplines[] = {SYNCQ_WAIT_BLOCK, SYNCQ_WAIT_COMPETITIVE};
  for (int a = 0; a < nalgos; a++) {
    if (strcmp(algos[a]->name, "pthread-mutex") == 0) { /* the reference, by its own name */
      int v = g.nvariants++;
      pts[v] = (cost_point){algos[a], over, SYNCQ_WAIT_DEFAULT, n_over, OUTSIDE_NS};
      pts[v].named = true; /* through the generic API, as the others */
      g.variants[v] = (lab_variant){algos[a]->name, &pts[v]};
    }
    for (size_t d = 0; d < sizeof disciplines / sizeof disciplines[0]; d++) {
      if (g.nvariants >= LAB_MAX_VARIANTS || !accepts(algos[a], disciplines[d])) continue;
      int v = g.nvariants++;
      snprintf(names[v], sizeof names[v], "%s@%s", algos[a]->name, syncq_wait_name(disciplines[d]));
      pts[v] = (cost_point){algos[a], over, disciplines[d], n_over, OUTSIDE_NS};
      /* syncq's locks by syncq_lock_create(name, {discipline}): what a
       * program naming the discipline gets (the FIFO locks restricted,
       * src/lock/gcr.c); the peers through their ops tables */
      pts[v].named = (algos[a]->props & SYNCQ_PROP_PEER) == 0;
      g.variants[v] = (lab_variant){names[v], &pts[v]};
    }
  }
  if (lab_run_group(ctx, &g) != 0) return -1;

  /* the generic API's defaults: oversubscribed 4x, then 2x beside a busy program */
  if (lab_run_defaults(ctx, algos, nalgos, pus, pts, OVER_THREADS_PER_PU, "defaults-oversubscribed", false,
                       OUTSIDE_NS) != 0)
    return -1;
  if (lab_run_defaults(ctx, algos, nalgos, pus, pts, DEFAULTS_THREADS_PER_PU, "defaults-busy", true, 0) != 0) return -1;
  return 0;
}

/* clang-format off */
#define UNC(lock, floor)                                                                               \
  "{\"op\":\"ratio_below\",\"metric\":\"time_per_op\",\"num\":\"" lock "\",\"den\":\"" floor "\","    \
  "\"where\":{\"phase\":\"uncontended\"},\"at\":\"max_threads\",\"bound\":1.2}"
/* clang-format on */
/* clang-format off */
#define DEFAULTS(variant)                                                                              \
  "{\"op\":\"ratio_below\",\"metric\":\"time_per_op\",\"num\":\"" variant "\",\"den\":\"pthread-mutex\"," \
  "\"where\":{\"phase\":\"defaults-busy\"},\"at\":\"max_threads\",\"bound\":3.0}"
/* clang-format on */
/* clang-format off */
#define DEF_OVER(variant)                                                                              \
  "{\"op\":\"ratio_below\",\"metric\":\"time_per_op\",\"num\":\"" variant "\",\"den\":\"pthread-mutex\"," \
  "\"where\":{\"phase\":\"defaults-oversubscribed\"},\"at\":\"max_threads\",\"bound\":2.0}"
/* clang-format on */
/* clang-format off */
#define OVER(variant)                                                                                  \
  "{\"op\":\"ratio_below\",\"metric\":\"time_per_op\",\"num\":\"" variant "\",\"den\":\"pthread-mutex\"," \
  "\"where\":{\"phase\":\"oversubscribed\"},\"at\":\"max_threads\",\"bound\":2.0}"
/* clang-format on */

/* One lock's time within 1.1x of another's, same phase, same run. */
/* clang-format off */
#define WITHIN_1_1(num, den, phase)                                                                    \
  "{\"op\":\"ratio_below\",\"metric\":\"time_per_op\",\"num\":\"" num "\",\"den\":\"" den "\","          \
  "\"where\":{\"phase\":\"" phase "\"},\"at\":\"max_threads\",\"bound\":1.1}"
/* clang-format on */
/* Ours against Concurrency Kit's counterpart. */
#define VS_CK(ours, ck, phase) WITHIN_1_1(ours, ck, phase)
#define VS_CK_BOTH(ours, ck) VS_CK(ours, ck, "uncontended") "," VS_CK(ours, ck, "two-threads")

#define INL_BOTH(ours, ck) VS_CK(ours, ck, "uncontended") "," VS_CK(ours, ck, "two-threads")

/* clang-format off */
static const lab_claim locks_cost_claims[] = {
  {"syncq target: the inline MCS, ticket and TTAS locks (syncq/static/lock/*.h) within 1.1x of "
   "Concurrency Kit's inline ck_spinlock_mcs, _ticket and _cas, uncontended and with two threads.",
   "{\"op\":\"all\",\"rules\":[" INL_BOTH("mcs:inline", "ck:spinlock_mcs:inline") ","
   INL_BOTH("ticket:inline", "ck:spinlock_ticket:inline") "," INL_BOTH("ttas:inline", "ck:spinlock_cas:inline") "]}"},
  {"syncq target: with 2 threads per processing unit and a busy program beside, every lock "
   "created with the generic API's defaults is within 3x of pthread mutex (spinning by default, "
   "MCS and ticket did not finish in 60 s).",
   "{\"op\":\"all\",\"rules\":[" DEFAULTS("tas") "," DEFAULTS("ttas") "," DEFAULTS("ticket") ","
   DEFAULTS("anderson") "," DEFAULTS("array-cas") "," DEFAULTS("array-faa") "," DEFAULTS("mcs") ","
   DEFAULTS("mcs-tp") "," DEFAULTS("clh-tp") "," DEFAULTS("clh") "," DEFAULTS("futex-mutex") "," DEFAULTS("ttas-ps") ","
   DEFAULTS("sc-queue") "," DEFAULTS("hybrid-sc") "]}"},
  {"syncq target: with 4 threads per processing unit, every lock created with the generic API's "
   "defaults is within 2x of pthread mutex (the time-published MCS-TP among them: a FIFO lock "
   "that passes over preempted waiters).",
   "{\"op\":\"all\",\"rules\":[" DEF_OVER("tas") "," DEF_OVER("ttas") "," DEF_OVER("ticket") ","
   DEF_OVER("anderson") "," DEF_OVER("array-cas") "," DEF_OVER("array-faa") "," DEF_OVER("mcs") ","
   DEF_OVER("mcs-tp") "," DEF_OVER("clh-tp") "," DEF_OVER("clh") "," DEF_OVER("futex-mutex") "," DEF_OVER("ttas-ps") ","
   DEF_OVER("sc-queue") "," DEF_OVER("hybrid-sc") "]}"},
  {"syncq target: syncq's MCS, CLH, ticket and TTAS locks cost within 1.1x of Concurrency Kit's "
   "counterparts (ck_spinlock_mcs, _clh, _ticket, and _cas, ck's test-and-test-and-set), "
   "uncontended and with two threads.",
   "{\"op\":\"all\",\"rules\":[" VS_CK_BOTH("mcs", "ck:spinlock_mcs") "," VS_CK_BOTH("clh", "ck:spinlock_clh") ","
   VS_CK_BOTH("ticket", "ck:spinlock_ticket") "," VS_CK_BOTH("ttas", "ck:spinlock_cas") "]}"},
  {"syncq target: TTAS, ticket and MCS uncontended cost within 1.2x of two uncontended "
   "atomic operations measured in the same run, called the same way (through an ops table, "
   "or inline).",
   "{\"op\":\"all\",\"rules\":[" UNC("ttas", "two-atomics") "," UNC("ticket", "two-atomics") ","
   UNC("mcs", "two-atomics") "," UNC("ttas:inline", "two-atomics:inline") ","
   UNC("ticket:inline", "two-atomics:inline") "," UNC("mcs:inline", "two-atomics:inline") "]}"},
  {"syncq target: under 4x oversubscription every blocking or competitive discipline is "
   "within 2x of pthread mutex.",
   "{\"op\":\"all\",\"rules\":[" OVER("tas@block") "," OVER("tas@competitive") "," OVER("ttas@block") ","
   OVER("ttas@competitive") "," OVER("ticket@block") "," OVER("ticket@competitive") "," OVER("anderson@block") ","
   OVER("anderson@competitive") "," OVER("array-cas@block") "," OVER("array-cas@competitive") ","
   OVER("array-faa@block") "," OVER("array-faa@competitive") "," OVER("mcs@block") "," OVER("mcs@competitive") ","
   OVER("clh@block") "," OVER("clh@competitive") "," OVER("futex-mutex@block") "," OVER("futex-mutex@competitive") ","
   OVER("pthread-mutex@competitive") "]}"},
  {"Without contention all locks but the POSIX mutex are within a few percent of each other, "
   "the POSIX mutex more than 25% worse (000 §4, Table 1): here ticket vs pthread-mutex "
   "uncontended.",
   "{\"op\":\"ratio_below\",\"metric\":\"time_per_op\",\"num\":\"ticket\",\"den\":\"pthread-mutex\","
   "\"where\":{\"phase\":\"uncontended\"},\"at\":\"max_threads\",\"bound\":0.8}"},
  {"syncq target: the time-published locks (mcs-tp, clh-tp) uncontended within 1.1x of plain MCS "
   "measured in the same run (no clock read and no pool operation without a predecessor).",
   "{\"op\":\"all\",\"rules\":[" WITHIN_1_1("mcs-tp", "mcs", "uncontended") ","
   WITHIN_1_1("clh-tp", "mcs", "uncontended") "]}"},
};
/* clang-format on */

/* The rows that are no registry entry, so that --algos can name them: the
 * floor of the ops-table rows, and the inline rows with their floor (the
 * ck rows only where ck is linked: inline_available). */
static const char *const cost_fixed[] = {"two-atomics",
                                         "mcs:inline",
                                         "ticket:inline",
                                         "ttas:inline",
#if defined(SYNCQ_LAB_HAVE_CK)
                                         "ck:spinlock_mcs:inline",
                                         "ck:spinlock_ticket:inline",
                                         "ck:spinlock_cas:inline",
#endif
                                         "two-atomics:inline",
                                         NULL};

const lab_experiment lab_exp_locks_cost = {
  .name = "locks-cost",
  .paper = "syncq lock-cost benchmark; 000 Lumetta & Culler 1998, §4",
  .figure = "lock costs (uncontended, 2 threads, 4x oversubscribed)",
  .title = "Lock cost as a ratio to pthread mutex: uncontended, two threads, oversubscribed",
  .x = "threads",
  .log_y = true,
  .claims = locks_cost_claims,
  .nclaims = sizeof locks_cost_claims / sizeof locks_cost_claims[0],
  .uses_registry = true,
  .family = SYNCQ_FAMILY_LOCK,
  .fixed_algos = cost_fixed,
  .run = locks_cost_run_exp,
};
