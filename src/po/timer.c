/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timer.c — the postoffice's timers: receive with a deadline, a fiber's
 * sleep, send_after.
 *
 * Contract
 *   Source:      beyond 002 (which has no time in its Recv). Erlang's
 *                `receive ... after T` and erlang:send_after; the layout
 *                follows the M:N runtimes (Go keeps a timer heap per P,
 *                run by its scheduler loop, and an idle P sleeps no longer
 *                than its earliest timer): a binary min-heap of deadlines
 *                per scheduler, fired by that scheduler between fibers and
 *                bounding its idle futex sleep. A thread system has no
 *                scheduler: its receives with a deadline are timed futex
 *                waits, and send_after's heap is served by a timer thread
 *                started on first use.
 *   Structures:  an array heap of pointers, each timer knowing its index,
 *                so a wait that ends early takes its deadline out in
 *                O(log n) instead of leaving it to fire for nothing.
 *   Progress:    blocking: a mutex per heap (its scheduler, and the
 *                processes that add or cancel deadlines on it; no hot path
 *                of a message hop touches it). An empty heap costs the
 *                scheduler one relaxed load per switch.
 *   Memory:      the heap's array grows by doubling (an add may fail with
 *                SYNCQ_ENOMEM); a WAKE timer is embedded in its process, a
 *                SEND timer is allocated by send_after and freed when it
 *                fires or at destroy.
 *   Clock:       a scheduler with a deadline pending reads the clock
 *                between two fibers only when a cheap constant-rate
 *                counter, calibrated against CLOCK_MONOTONIC, says the
 *                earliest deadline may be near (po_due_gate, timer.h): with
 *                a read every switch one parked deadline made every other
 *                fiber's switch 10-30% dearer (docs/reliability.md has the
 *                figures). Go reads its clock on every schedule while a
 *                timer is pending; a read every K-th switch instead would
 *                bound lateness by K fiber runs, unbounded in time, while
 *                the counter keeps the bound in time: no later than a read
 *                every switch gives. Where no usable counter exists every
 *                switch reads the clock, as before; on x86-64 also where
 *                the kernel has rejected the TSC (it is not among its
 *                available clocksources: po_tsc_listed, timer.h).
 *   Limits:      a timer fires when its scheduler next looks: a scheduler
 *                blocked in a system call (or running a fiber that never
 *                yields) fires its timers late. The counter's rate is
 *                calibrated once per process and checked against the
 *                clock wherever the runtime reads it anyway (a gated
 *                look, the monitor's tick: po_drift_check, timer.h); a
 *                rate more than 1/16 off trips the check for good and
 *                every switch reads the clock. Until it trips (within
 *                PO_DRIFT_NOTICE_NS of the change while fibers run), one
 *                that slowed by more than 1/8 (a virtual machine moved
 *                without TSC scaling) makes a busy scheduler's deadlines
 *                late, by up to the time left at its last clock read
 *                times (7/8 / the ratio - 1); an idle one's wait ends by
 *                the clock and expires the gate, on time
 *                (docs/reliability.md).
 *   Signal-safe: no.  Process-shared: no.
 */
#include <float.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "po_internal.h"
#include "timer.h"

#include "syncq/clock.h"
#include "syncq/platform.h"

int po_timers_init(po_timers *h) {
  memset(h, 0, sizeof *h);
  atomic_init(&h->next_due, UINT64_MAX);
  return pthread_mutex_init(&h->lock, NULL) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}

static bool before(const po_timer *x, const po_timer *y) {
  return x->due < y->due || (x->due == y->due && x->seq < y->seq);
}

static void place(po_timers *h, uint32_t i, po_timer *t) {
  h->a[i] = t;
  t->index = i;
}

static void sift_up(po_timers *h, uint32_t i) {
  po_timer *t = h->a[i];
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!before(t, h->a[p])) break;
    place(h, i, h->a[p]);
    i = p;
  }
  place(h, i, t);
}

static void sift_down(po_timers *h, uint32_t i) {
  po_timer *t = h->a[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && before(h->a[c + 1], h->a[c])) c++;
    if (!before(h->a[c], t)) break;
    place(h, i, h->a[c]);
    i = c;
  }
  place(h, i, t);
}

/* Under the lock: publish the earliest deadline for lock-free peeks. */
static void publish(po_timers *h) {
  /* relaxed: a hint (see next_due); the lock orders the heap itself. */
  atomic_store_explicit(&h->next_due, h->n ? h->a[0]->due : UINT64_MAX, memory_order_relaxed);
}

static void remove_at(po_timers *h, uint32_t i) {
  po_timer *t = h->a[i];
  t->heap = NULL;
  h->n--;
  if (i == h->n) return;
  place(h, i, h->a[h->n]);
  if (i > 0 && before(h->a[i], h->a[(i - 1) / 2])) sift_up(h, i);
  else sift_down(h, i);
}

int po_timers_add(po_timers *h, po_timer *t, bool *earliest) {
  pthread_mutex_lock(&h->lock);
  if (h->n == h->cap) {
    uint32_t cap = h->cap ? h->cap * 2 : 16;
    po_timer **a = realloc(h->a, (size_t)cap * sizeof *a);
    if (a == NULL) {
      pthread_mutex_unlock(&h->lock);
      return SYNCQ_ENOMEM;
    }
    h->a = a;
    h->cap = cap;
  }
  t->seq = h->seq++;
  t->heap = h;
  place(h, h->n++, t);
  sift_up(h, h->n - 1);
  if (earliest) *earliest = h->a[0] == t;
  publish(h);
  pthread_mutex_unlock(&h->lock);
  return SYNCQ_OK;
}

void po_timers_cancel(po_timers *h, po_timer *t) {
  pthread_mutex_lock(&h->lock);
  if (t->heap == h) { /* not fired meanwhile */
    remove_at(h, t->index);
    publish(h);
  }
  pthread_mutex_unlock(&h->lock);
}

int po_timers_fire(po_timers *h, uint64_t now) {
  int fired = 0;
  for (;;) {
    pthread_mutex_lock(&h->lock);
    if (h->n == 0 || h->a[0]->due > now) {
      pthread_mutex_unlock(&h->lock);
      return fired;
    }
    po_timer *t = h->a[0];
    remove_at(h, 0);
    publish(h);
    /* Copy what we act on: a WAKE timer belongs to its process, which may
     * reuse it as soon as the lock is released. */
    int kind = t->kind;
    struct syncq_po_proc *p = t->proc;
    syncq_po_msg *m = t->msg;
    syncq_po_pid to = t->to;
    pthread_mutex_unlock(&h->lock);
    fired++;
    if (kind == PO_TIMER_WAKE) {
      /* A spurious wake is harmless: the process looks at its deadline. */
      p->sys->up->wake(NULL, p); /* the scheduler's, a layer above */
    } else {
      free(t);
      /* The postoffice's, a layer above. A send_after has returned long
       * ago: a delivery refused (the recipient gone, or its mailbox's
       * lock) drops the message, with nobody to tell (po.h). */
      (void)p->sys->up->deliver(p->sys, to, m);
    }
  }
}

void po_timers_destroy(po_timers *h, struct syncq_po_system *sys) {
  for (uint32_t i = 0; i < h->n; i++) {
    po_timer *t = h->a[i];
    if (t->kind == PO_TIMER_SEND) {
      if (!sys->mb->free_list) { /* type-stable headers are freed with the system */
        po_payload_free(t->msg);
        free(t->msg);
      }
      free(t);
    }
  }
  free(h->a);
  h->a = NULL;
  h->n = h->cap = 0;
  pthread_mutex_destroy(&h->lock);
}

/* ---- a thread system's timer thread ---- */

int po_timer_thread_init(po_timer_thread *tt) {
  memset(tt, 0, sizeof *tt);
  atomic_init(&tt->stop, 0);
  atomic_init(&tt->word, 0);
  if (pthread_mutex_init(&tt->start_lock, NULL) != 0) return SYNCQ_ESYS;
  int r = po_timers_init(&tt->heap);
  if (r != SYNCQ_OK) pthread_mutex_destroy(&tt->start_lock);
  return r;
}

static void *timer_main(void *arg) {
  po_timer_thread *tt = arg;
  /* acquire: pairs with destroy's release store of stop. */
  while (atomic_load_explicit(&tt->stop, memory_order_acquire) == 0) {
    /* acquire: pairs with the release increments (a new earliest
     * deadline, or stop): read before the heap, so a change after this
     * load makes the wait below return at once. */
    uint32_t w = atomic_load_explicit(&tt->word, memory_order_acquire);
    uint64_t now = syncq_now_ns();
    po_timers_fire(&tt->heap, now);
    uint64_t next = po_timers_next(&tt->heap);
    if (atomic_load_explicit(&tt->stop, memory_order_acquire) != 0) break; /* as above */
    now = syncq_now_ns();
    int64_t wait = next == UINT64_MAX ? -1 : next <= now ? 0 : (int64_t)(next - now);
    if (wait != 0) (void)syncq_futex_wait(&tt->word, w, wait, false);
  }
  return NULL;
}

int po_timer_thread_add(po_timer_thread *tt, po_timer *t) {
  pthread_mutex_lock(&tt->start_lock);
  if (!tt->started) {
    if (pthread_create(&tt->tid, NULL, timer_main, tt) != 0) {
      pthread_mutex_unlock(&tt->start_lock);
      return SYNCQ_ELIMIT;
    }
    tt->started = true;
  }
  pthread_mutex_unlock(&tt->start_lock);
  bool earliest = false;
  int r = po_timers_add(&tt->heap, t, &earliest);
  if (r == SYNCQ_OK && earliest) {
    /* release: the timer thread's acquire load of word, then its look at
     * the heap (whose lock orders the insert) sees the new deadline. */
    atomic_fetch_add_explicit(&tt->word, 1u, memory_order_release);
    (void)syncq_futex_wake(&tt->word, 1, false);
  }
  return r;
}

void po_timer_thread_destroy(po_timer_thread *tt, struct syncq_po_system *sys) {
  if (tt->started) {
    /* release: pairs with timer_main's acquire loads of stop. */
    atomic_store_explicit(&tt->stop, 1u, memory_order_release);
    atomic_fetch_add_explicit(&tt->word, 1u, memory_order_release); /* as in po_timer_thread_add */
    (void)syncq_futex_wake(&tt->word, 1, false);
    pthread_join(tt->tid, NULL);
  }
  po_timers_destroy(&tt->heap, sys);
  pthread_mutex_destroy(&tt->start_lock);
}

/* ---- the counter that decides when to read the clock ---- */

#define TICKS_ROUNDS 5               /* odd: a true median */
#define TICKS_ROUND_NS 200000u       /* each round spans this much of ns() */
#define TICKS_ROUND_READS (1u << 22) /* reads of ns() a round may take at most */
#define TICKS_COST_READS 64          /* reads timed to compare the two sources' cost */
#define TICKS_TRIES 8                /* brackets a sample takes the tightest of */

static int cmp_rate(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One reading of both sources: the clock between two counter reads, the
 * counter taken as their midpoint; the tightest bracket of TICKS_TRIES,
 * so a preemption between two reads does not skew the rate. False: a
 * source ran backwards (every read is checked against the one before). */
static bool sample(uint64_t (*ticks)(void), uint64_t (*ns)(void), uint64_t *tprev, uint64_t *nprev, uint64_t *t,
                   uint64_t *n, uint64_t *step) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < TICKS_TRIES; i++) {
    uint64_t a = ticks(), c = ns(), b = ticks();
    if (a < *tprev || c < *nprev || b < a) return false;
    if (b > a && b - a < *step) *step = b - a;
    *tprev = b;
    *nprev = c;
    if (b - a < best) {
      best = b - a;
      *t = a + (b - a) / 2;
      *n = c;
    }
  }
  return true;
}

int po_ticks_calibrate(uint64_t (*ticks)(void), uint64_t (*ns)(void), double *ticks_per_ns, uint64_t *step) {
  if (ticks_per_ns == NULL) return SYNCQ_EINVAL;
  *ticks_per_ns = 0;
  if (ticks == NULL || ns == NULL || step == NULL) return SYNCQ_EINVAL;
  *step = UINT64_MAX;
  double rate[TICKS_ROUNDS];
  uint64_t tprev = 0, nprev = 0;
  for (int r = 0; r < TICKS_ROUNDS; r++) {
    uint64_t t0, n0, t1, n1;
    if (!sample(ticks, ns, &tprev, &nprev, &t0, &n0, step)) return SYNCQ_EINVAL;
    uint32_t reads = 0;
    while (nprev - n0 < TICKS_ROUND_NS && ++reads < TICKS_ROUND_READS) {
      uint64_t t = ticks(), n = ns();
      if (t < tprev || n < nprev) return SYNCQ_EINVAL; /* ran backwards */
      if (t > tprev && t - tprev < *step) *step = t - tprev;
      tprev = t;
      nprev = n;
    }
    if (!sample(ticks, ns, &tprev, &nprev, &t1, &n1, step)) return SYNCQ_EINVAL;
    if (n1 - n0 < TICKS_ROUND_NS || t1 <= t0) return SYNCQ_EINVAL; /* stood still */
    rate[r] = (double)(t1 - t0) / (double)(n1 - n0);
  }
  double sorted[TICKS_ROUNDS];
  memcpy(sorted, rate, sizeof rate);
  qsort(sorted, TICKS_ROUNDS, sizeof sorted[0], cmp_rate);
  double med = sorted[TICKS_ROUNDS / 2];
  for (int r = 0; r < TICKS_ROUNDS; r++)
    if (rate[r] > med * (1.0 + 1.0 / 64) || rate[r] < med * (1.0 - 1.0 / 64)) return SYNCQ_EINVAL;
  *ticks_per_ns = med;
  return SYNCQ_OK;
}

#if PO_HAVE_TICKS
static uint64_t ticks_read(void) { return po_ticks(); }

/* A counter that ticks at one rate whatever the core's frequency and
 * sleep state: AArch64's generic timer always does; x86-64 says so in
 * cpuid's invariant TSC bit (a guest whose hypervisor hides it reads the
 * clock every switch). */
static bool ticks_invariant(void) {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &a, &b, &c, &d) == 0) return false;
  return (d & (1u << 8)) != 0;
#else
  return true;
#endif
}

/* What one read of each source costs, the median of rounds. */
static double read_cost(uint64_t (*f)(void)) {
  double cost[TICKS_ROUNDS];
  for (int r = 0; r < TICKS_ROUNDS; r++) {
    uint64_t t0 = syncq_now_ns();
    for (int k = 0; k < TICKS_COST_READS; k++) (void)f();
    cost[r] = (double)(syncq_now_ns() - t0) / TICKS_COST_READS;
  }
  qsort(cost, TICKS_ROUNDS, sizeof cost[0], cmp_rate);
  return cost[TICKS_ROUNDS / 2];
}
#endif

int po_tsc_listed(const char *path) {
  if (path == NULL) return PO_TSC_UNREAD;
  FILE *f = fopen(path, "re"); /* e: close-on-exec */
  if (f == NULL) return PO_TSC_UNREAD;
  /* Word by word: len counts the current word's bytes (past 3 it cannot
   * be "tsc"), so a list of any length is read in constant space. */
  char w[3];
  size_t len = 0;
  bool listed = false;
  int c;
  while ((c = getc(f)) != EOF) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      if (len == 3 && memcmp(w, "tsc", 3) == 0) listed = true;
      len = 0;
    } else {
      if (len < 3) w[len] = (char)c;
      if (len < 4) len++;
    }
  }
  if (len == 3 && memcmp(w, "tsc", 3) == 0) listed = true;
  bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) return PO_TSC_UNREAD;
  return listed ? PO_TSC_LISTED : PO_TSC_UNLISTED;
}

const char *const po_ticks_reasons[PO_TICKS_REASONS] = {
  "no cycle counter on this architecture",
  "the kernel's available clocksources leave out the TSC (marked unstable)",
  "cpuid reports no invariant TSC",
  "the counter costs more than half a clock read",
  "the counter's calibration against the clock was refused",
  "the counter's rate drifted from its calibration",
};

static double ticks_rate;     /* written once under ticks_once */
static uint64_t ticks_step;   /* written once under ticks_once */
static const char *ticks_why; /* written once under ticks_once */
static pthread_once_t ticks_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ticks_list_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *ticks_list = PO_CLOCKSOURCE_AVAILABLE; /* under ticks_list_lock */
static bool ticks_decided;                                /* under ticks_list_lock */
static double ticks_scale = 1.0;                          /* under ticks_list_lock */

int po_ticks_set_clocksource_list(const char *path) {
  if (path == NULL) return SYNCQ_EINVAL;
  pthread_mutex_lock(&ticks_list_lock);
  int r = ticks_decided ? SYNCQ_EBUSY : SYNCQ_OK;
  if (r == SYNCQ_OK) ticks_list = path;
  pthread_mutex_unlock(&ticks_list_lock);
  return r;
}

int po_ticks_set_scale(double scale) {
  if (!(scale > 0) || scale > DBL_MAX) return SYNCQ_EINVAL; /* NaN, 0, negative, infinite */
  pthread_mutex_lock(&ticks_list_lock);
  int r = ticks_decided ? SYNCQ_EBUSY : SYNCQ_OK;
  if (r == SYNCQ_OK) ticks_scale = scale;
  pthread_mutex_unlock(&ticks_list_lock);
  return r;
}

static void ticks_init(void) {
  ticks_rate = 0;
  pthread_mutex_lock(&ticks_list_lock);
  ticks_decided = true;
  const char *list = ticks_list;
  double scale = ticks_scale;
  pthread_mutex_unlock(&ticks_list_lock);
#if PO_HAVE_TICKS
#if defined(__x86_64__)
  /* The kernel's verdict (timer.h) first, so that po_ticks_why names it
   * whatever cpuid says: an unreadable list is no verdict. */
  if (po_tsc_listed(list) == PO_TSC_UNLISTED) {
    ticks_why = po_ticks_reasons[1];
    return;
  }
#else
  (void)list; /* cntvct_el0: architected, no list to consult (timer.h) */
#endif
  if (!ticks_invariant()) {
    ticks_why = po_ticks_reasons[2];
    return;
  }
  /* A counter that traps to a hypervisor saves nothing: it must cost less
   * than half a clock read (the clock's cost includes the counter's own
   * read, where the vDSO reads the same counter). */
  if (read_cost(ticks_read) * 2 > read_cost(syncq_now_ns)) {
    ticks_why = po_ticks_reasons[3];
    return;
  }
  double r;
  uint64_t st;
  if (po_ticks_calibrate(ticks_read, syncq_now_ns, &r, &st) != SYNCQ_OK) {
    ticks_why = po_ticks_reasons[4];
    return;
  }
  ticks_rate = r * scale;
  ticks_step = st;
  ticks_why = NULL;
#else
  (void)list;
  (void)scale;
  ticks_why = po_ticks_reasons[0];
#endif
}

/* ---- the rate checked as it runs (timer.h) ---- */

static _Atomic(uint32_t) drift_trip;                           /* 1 once tripped: never cleared */
static pthread_mutex_t drift_lock = PTHREAD_MUTEX_INITIALIZER; /* the rates the trip recorded */
static double drift_from, drift_to;                            /* under drift_lock */

int po_drift_feed(po_drift *d, double rate, uint64_t t0, uint64_t n, uint64_t t1, double *implied) {
  if (!(rate > 0)) return PO_DRIFT_NONE;
  /* A bracket that ran backwards or that a preemption widened says
   * nothing about when the clock was read: not a pair. The limit is in
   * calibrated ticks: a slowed counter's narrower bracket passes (its
   * verdict is far outside the tolerance whatever the error), a sped one
   * up to 1/PO_DRIFT_TOL_DEN faster passes as a steady one would. */
  if (t1 < t0 || (double)(t1 - t0) > rate * PO_DRIFT_BRACKET_NS) return PO_DRIFT_NONE;
  uint64_t t = t0 + (t1 - t0) / 2;
  if (!d->have || t < d->t || n < d->n) { /* the first pair, or one behind the last: start over */
    d->have = true;
    d->t = t;
    d->n = n;
    return PO_DRIFT_NONE;
  }
  if (n - d->n < PO_DRIFT_MIN_NS) return PO_DRIFT_NONE; /* keep the reference: the interval grows */
  double r = (double)(t - d->t) / (double)(n - d->n);
  d->t = t;
  d->n = n;
  *implied = r;
  double tol = rate / PO_DRIFT_TOL_DEN;
  return r > rate + tol || r < rate - tol ? PO_DRIFT_OFF : PO_DRIFT_STEADY;
}

bool po_drift_tripped(void) {
  /* relaxed: a flag set once; what it guards (every look reads the clock)
   * needs no other data, and the rates are read under drift_lock. */
  return atomic_load_explicit(&drift_trip, memory_order_relaxed) != 0;
}

bool po_drift_check(po_drift *d, double rate, uint64_t t0, uint64_t n, uint64_t t1) {
  if (po_drift_tripped()) return true;
  double r;
  if (po_drift_feed(d, rate, t0, n, t1, &r) != PO_DRIFT_OFF) return false;
  pthread_mutex_lock(&drift_lock);
  if (atomic_load_explicit(&drift_trip, memory_order_relaxed) == 0) { /* under drift_lock: the first records */
    drift_from = rate;
    drift_to = r;
    /* relaxed: see po_drift_tripped. */
    atomic_store_explicit(&drift_trip, 1u, memory_order_relaxed);
  }
  pthread_mutex_unlock(&drift_lock);
  return true;
}

bool po_drift_rates(double *from, double *to) {
  pthread_mutex_lock(&drift_lock);
  bool tripped = atomic_load_explicit(&drift_trip, memory_order_relaxed) != 0; /* under drift_lock */
  if (tripped) {
    *from = drift_from;
    *to = drift_to;
  }
  pthread_mutex_unlock(&drift_lock);
  return tripped;
}

double po_ticks_rate(uint64_t *step) {
  pthread_once(&ticks_once, ticks_init);
  *step = ticks_step;
  return po_drift_tripped() ? 0 : ticks_rate;
}

const char *po_ticks_why(void) {
  pthread_once(&ticks_once, ticks_init);
  if (ticks_why == NULL && po_drift_tripped()) return po_ticks_reasons[5];
  return ticks_why;
}

int po_clock_gate_format(double rate, const char *why, bool *counter, char *buf, size_t len) {
  if ((counter == NULL && buf == NULL) || (buf == NULL) != (len == 0)) return SYNCQ_EINVAL;
  bool on = rate > 0;
  if (counter != NULL) *counter = on;
  if (buf == NULL) return SYNCQ_OK;
  int n = on ? snprintf(buf, len, "counter: %.4g ticks/ns", rate)
             : snprintf(buf, len, "clock at every switch: %s", why != NULL ? why : "no reason given");
  return n >= 0 && (size_t)n < len ? SYNCQ_OK : SYNCQ_ELIMIT;
}

int po_clock_gate_format_drift(double from, double to, bool *counter, char *buf, size_t len) {
  if ((counter == NULL && buf == NULL) || (buf == NULL) != (len == 0)) return SYNCQ_EINVAL;
  if (counter != NULL) *counter = false;
  if (buf == NULL) return SYNCQ_OK;
  int n = snprintf(buf, len, "clock at every switch: the counter's rate drifted from %.4g to %.4g ticks/ns", from, to);
  return n >= 0 && (size_t)n < len ? SYNCQ_OK : SYNCQ_ELIMIT;
}

int syncq_po_clock_gate(bool *counter, char *why, size_t len) {
  if ((counter == NULL && why == NULL) || (why == NULL) != (len == 0)) return SYNCQ_EINVAL;
  uint64_t step;
  double rate = po_ticks_rate(&step), from, to;
  if (po_drift_rates(&from, &to)) return po_clock_gate_format_drift(from, to, counter, why, len);
  return po_clock_gate_format(rate, po_ticks_why(), counter, why, len);
}

void po_due_gate_check(po_due_gate *g, uint64_t t0, uint64_t now, uint64_t t1) {
  if (g->rate > 0 && po_drift_check(&g->drift, g->rate, t0, now, t1)) g->rate = 0;
}

void po_due_gate_set(po_due_gate *g, uint64_t due, uint64_t t0, uint64_t now) {
  g->due = due;
  g->last = t0;
  atomic_store_explicit(&g->until, 0, memory_order_relaxed); /* read at the next look; relaxed: see until */
  if (g->rate > 0 && po_drift_tripped()) g->rate = 0;        /* tripped elsewhere (the monitor, another scheduler) */
  if (g->rate <= 0 || due == UINT64_MAX || due <= now) return;
  /* Capped at an hour: a far deadline costs a read an hour (or when an
   * earlier one comes), and the product stays far below 2^64. */
  uint64_t left = due - now;
  if (left > 3600ull * 1000000000ull) left = 3600ull * 1000000000ull;
  uint64_t ahead = (uint64_t)((double)left * g->rate * PO_GATE_NUM / PO_GATE_DEN);
  if (ahead > g->step) atomic_store_explicit(&g->until, t0 + ahead - g->step, memory_order_relaxed); /* see until */
}
