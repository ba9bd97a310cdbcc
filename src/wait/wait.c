/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wait.c — the waiting disciplines of syncq/wait.h.
 *
 * Contract
 *   Source:      003 §3.4 (busy-wait, immediate blocking, competitive
 *                spinning with the spin interval equal to the cost of a
 *                context switch, after Karlin et al.); futexes for blocking.
 *   Progress:    a waiter returns when the word changes or (spurious) early;
 *                no wake-up is lost (Dekker ordering on sleepers, seq_cst).
 *   Atomics:     SPIN/YIELD: none. BLOCK: 2 RMW on sleepers per sleep.
 *                Wakers: one load of sleepers, a futex call only if > 0.
 *                Marked words (syncq_waiter_step / _sleep, the locks):
 *                none here; the lock marks its word and its releaser's
 *                hand-over exchange reads the mark.
 *   Memory:      none; calibration creates one thread once.
 *   Signal-safe: SPIN and YIELD pauses yes; calibration no.
 *   Process-shared: yes with process_shared (shared futexes).
 *   Timed pause (syncq_waiter_pause_until): the same steps, with the
 *                deadline read from the monotonic clock every CLOCK_EVERY
 *                spins (every yield) and futex sleeps bounded by the time
 *                left (FUTEX_WAIT's relative timeout); one seq_cst fence
 *                and one load of the cancel word per sleep.
 */
#include "syncq/wait.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "stats_internal.h"
#include "syncq/clock.h"
#include "syncq/platform.h"

static const char *const names[SYNCQ_WAIT_COUNT] = {"default", "spin", "yield", "block", "competitive"};

int syncq_wait_check(int discipline) {
  return (discipline >= 0 && discipline < SYNCQ_WAIT_COUNT) ? SYNCQ_OK : SYNCQ_EINVAL;
}

const char *syncq_wait_name(int discipline) {
  return syncq_wait_check(discipline) == SYNCQ_OK ? names[discipline] : NULL;
}

int syncq_wait_from_name(const char *name, int *out) {
  if (name == NULL || out == NULL) return SYNCQ_EINVAL;
  for (int i = 0; i < SYNCQ_WAIT_COUNT; i++)
    if (strcmp(name, names[i]) == 0) {
      *out = i;
      return SYNCQ_OK;
    }
  return SYNCQ_ENOENT;
}

void syncq_wait_futex_wake(_Atomic(uint32_t) *word, int n, bool process_shared) {
  (void)syncq_futex_wake(word, n, process_shared);
}

/* ------------------------------------------------------------ calibration */

#define CAL_ROUNDS 200
#define CAL_MIN_NS 1000u
#define CAL_MAX_NS 200000u

static pthread_once_t cal_once = PTHREAD_ONCE_INIT;
static uint64_t cal_ns = 0; /* written once under cal_once, read after it */

typedef struct cal_pair {
  _Atomic(uint32_t) turn; /* 0: the calibrating thread's turn, 1: the partner's */
  int cpu;
} cal_pair;

static void pin_to(int cpu) {
#if defined(__linux__)
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#else
  (void)cpu;
#endif
}

static void *cal_partner(void *p) {
  cal_pair *c = p;
  pin_to(c->cpu);
  for (int i = 0; i < CAL_ROUNDS + 1; i++) {
    while (atomic_load(&c->turn) != 1u) syncq_futex_wait(&c->turn, 0u, -1, false);
    atomic_store(&c->turn, 0u);
    syncq_futex_wake(&c->turn, 1, false);
  }
  return NULL;
}

static void calibrate_once(void) {
  uint64_t result = 5000; /* a typical context switch, if measuring fails */
  cal_pair c;
  atomic_init(&c.turn, 0u);
  c.cpu = -1;
#if defined(__linux__)
  cpu_set_t old;
  bool have_old = pthread_getaffinity_np(pthread_self(), sizeof old, &old) == 0;
  c.cpu = sched_getcpu();
#endif
  pthread_t t;
  if (pthread_create(&t, NULL, cal_partner, &c) == 0) {
    pin_to(c.cpu); /* both threads on one processor: each hand-off is a switch */
    uint64_t t0 = 0;
    for (int i = 0; i < CAL_ROUNDS + 1; i++) {
      if (i == 1) t0 = syncq_now_ns(); /* round 0 warms up */
      atomic_store(&c.turn, 1u);
      syncq_futex_wake(&c.turn, 1, false);
      while (atomic_load(&c.turn) != 0u) syncq_futex_wait(&c.turn, 1u, -1, false);
    }
    uint64_t total = syncq_now_ns() - t0;
    pthread_join(t, NULL);
    result = total / (2u * CAL_ROUNDS); /* two switches per round */
  }
#if defined(__linux__)
  if (have_old) (void)pthread_setaffinity_np(pthread_self(), sizeof old, &old);
#endif
  if (result < CAL_MIN_NS) result = CAL_MIN_NS;
  if (result > CAL_MAX_NS) result = CAL_MAX_NS;
  cal_ns = result;
}

uint64_t syncq_wait_calibrate(void) {
  pthread_once(&cal_once, calibrate_once);
  return cal_ns;
}

uint64_t syncq_wait_spin_limit_ns(void) { return syncq_wait_calibrate(); }

uint64_t syncq_wait_spin_limit_for(int discipline) {
  return discipline == SYNCQ_WAIT_COMPETITIVE ? syncq_wait_spin_limit_ns() : 0u;
}

void syncq_wait_yield(void) {
  SYNCQ_STAT_INC(yields);
  syncq_yield();
}

/* ------------------------------------------------------------ waiting */

static void block_on(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t seen, _Atomic(uint32_t) *sleepers) {
  /* seq_cst: the Dekker pair with the waker's load in syncq_wait_wake. */
  atomic_fetch_add(sleepers, 1u);
  SYNCQ_STAT_INC(blocks);
  /* the kernel re-checks *word == seen after our increment */
  (void)syncq_futex_wait(word, seen, -1, w->process_shared);
  atomic_fetch_sub(sleepers, 1u);
}

/* Competitive spinning reads the clock once per this many pauses. */
#define CLOCK_EVERY 32u

void syncq_waiter_pause(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t seen, _Atomic(uint32_t) *sleepers) {
  uint32_t k = w->pauses++;
  switch (w->discipline) {
  case SYNCQ_WAIT_YIELD:
    syncq_wait_yield();
    return;
  case SYNCQ_WAIT_BLOCK:
    block_on(w, word, seen, sleepers);
    return;
  case SYNCQ_WAIT_COMPETITIVE:
    if (k == 0) w->started_ns = syncq_now_ns();
    if (w->started_ns == UINT64_MAX ||
        (k % CLOCK_EVERY == CLOCK_EVERY - 1u && syncq_now_ns() - w->started_ns >= w->spin_limit_ns)) {
      w->started_ns = UINT64_MAX; /* spun long enough: block from now on */
      block_on(w, word, seen, sleepers);
      return;
    }
    syncq_pr_relax();
    return;
  default: /* SYNCQ_WAIT_SPIN */
    syncq_pr_relax();
    return;
  }
}

/* ------------------------------------------------------------ marked words */

bool syncq_waiter_step(syncq_waiter *w) {
  uint32_t k = w->pauses++;
  switch (w->discipline) {
  case SYNCQ_WAIT_YIELD:
    syncq_wait_yield();
    return false;
  case SYNCQ_WAIT_BLOCK:
    return true;
  case SYNCQ_WAIT_COMPETITIVE:
    if (k == 0) w->started_ns = syncq_now_ns();
    if (w->started_ns == UINT64_MAX ||
        (k % CLOCK_EVERY == CLOCK_EVERY - 1u && syncq_now_ns() - w->started_ns >= w->spin_limit_ns)) {
      w->started_ns = UINT64_MAX; /* spun long enough: sleep from now on */
      return true;
    }
    syncq_pr_relax();
    return false;
  default: /* SYNCQ_WAIT_SPIN */
    syncq_pr_relax();
    return false;
  }
}

void syncq_waiter_sleep(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t marked) {
  SYNCQ_STAT_INC(blocks);
  /* the kernel re-checks *word == marked: a hand-over exchange between
   * the caller's marking and this call makes it return at once */
  (void)syncq_futex_wait(word, marked, -1, w->process_shared);
}

/* ------------------------------------------------------------ timed waiting */

/* Sleep on word until woken, changed, cancelled or deadline_ns. */
static int block_until(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t seen, _Atomic(uint32_t) *sleepers,
                       uint64_t deadline_ns, _Atomic(uint32_t) *cancel) {
  int64_t timeout_ns = -1; /* none */
  if (deadline_ns != UINT64_MAX) {
    uint64_t now = syncq_now_ns();
    if (now >= deadline_ns) return SYNCQ_ETIMEDOUT;
    uint64_t left = deadline_ns - now;
    timeout_ns = left > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)left;
  }
  /* seq_cst fence: orders this thread's earlier stores to *word (a
   * barrier resetting its own flag) and the increment below before the
   * load of *cancel, so a canceller's seq_cst store of *cancel is either
   * seen here or precedes our increment's visibility to its load of
   * *sleepers (the Dekker pair of syncq_waiter_pause_until's comment).
   * It stays under ThreadSanitizer, which draws no happens-before from a
   * fence: none is needed from it, the increment and the load it orders
   * being seq_cst themselves (TSan sees their release and acquire), and
   * the earlier stores to *word the caller's, published by their own
   * orders. */
  if (cancel != NULL) atomic_thread_fence(memory_order_seq_cst);
  /* seq_cst: the Dekker pair with the waker's load in syncq_wait_wake. */
  atomic_fetch_add(sleepers, 1u);
  SYNCQ_STAT_INC(blocks);
  int r = SYNCQ_OK;
  /* seq_cst: pairs with the canceller's seq_cst store (see above) */
  if (cancel == NULL || atomic_load(cancel) == 0u)
    r = syncq_futex_wait(word, seen, timeout_ns, w->process_shared); /* the kernel re-checks *word == seen */
  atomic_fetch_sub(sleepers, 1u);
  return r == SYNCQ_ETIMEDOUT ? SYNCQ_ETIMEDOUT : SYNCQ_OK;
}

static inline bool passed(uint64_t deadline_ns) { return syncq_now_ns() >= deadline_ns; }

int syncq_waiter_pause_until(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t seen, _Atomic(uint32_t) *sleepers,
                             uint64_t deadline_ns, _Atomic(uint32_t) *cancel) {
  uint32_t k = w->pauses++;
  bool timed = deadline_ns != UINT64_MAX;
  bool clock_turn = k % CLOCK_EVERY == CLOCK_EVERY - 1u; /* read the clock on this pause */
  switch (w->discipline) {
  case SYNCQ_WAIT_YIELD:
    if (timed && passed(deadline_ns)) return SYNCQ_ETIMEDOUT;
    syncq_wait_yield();
    return SYNCQ_OK;
  case SYNCQ_WAIT_BLOCK:
    return block_until(w, word, seen, sleepers, deadline_ns, cancel);
  case SYNCQ_WAIT_COMPETITIVE: {
    if (k == 0) w->started_ns = syncq_now_ns();
    if (w->started_ns == UINT64_MAX) return block_until(w, word, seen, sleepers, deadline_ns, cancel);
    if (clock_turn) {
      uint64_t now = syncq_now_ns();
      if (timed && now >= deadline_ns) return SYNCQ_ETIMEDOUT;
      if (now - w->started_ns >= w->spin_limit_ns) {
        w->started_ns = UINT64_MAX; /* spun long enough: block from now on */
        return block_until(w, word, seen, sleepers, deadline_ns, cancel);
      }
    }
    syncq_pr_relax();
    return SYNCQ_OK;
  }
  default: /* SYNCQ_WAIT_SPIN */
    if (timed && clock_turn && passed(deadline_ns)) return SYNCQ_ETIMEDOUT;
    syncq_pr_relax();
    return SYNCQ_OK;
  }
}
