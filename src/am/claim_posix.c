/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * claim_posix.c — the POSIX mutex packet claim of 000, made robust.
 *
 * Contract
 *   Source:      000 §3.1, Figure 2 under "the Solaris implementation of
 *                Posix mutexes" (process-shared; "locks are implicitly
 *                reclaimed after abnormal termination"). Written here, not
 *                through src/lock/pthread_mutex.c: that lock repairs
 *                EOWNERDEAD silently, and the claim must know, to repair
 *                the tail a dying holder may have left half-advanced.
 *   Progress:    blocking, but a holder that dies inside the critical
 *                section does not block the others: the next locker gets
 *                EOWNERDEAD, repairs the queue tail (below) and marks the
 *                mutex consistent.
 *   Bounds:      SYNCQ_AM_NOWAIT: pthread_mutex_trylock (SYNCQ_EBUSY when
 *                held). Plain: pthread_mutex_timedlock for
 *                SYNCQ_AM_LOCK_WAIT_STALE stale intervals (at least
 *                SYNCQ_AM_LOCK_WAIT_MIN_NS) in all (a live
 *                holder that never unlocks: SYNCQ_ETIMEDOUT; the deadline
 *                is on CLOCK_REALTIME, as timedlock wants, so a clock step
 *                moves it). A mutex whose bytes were overwritten: what
 *                glibc answers, as a status (EINVAL, ENOTRECOVERABLE,
 *                EDEADLK: SYNCQ_EINVAL); a kind word other than the one
 *                this claim's mutexes have (glibc dispatches on it: lock
 *                elision, priority inheritance) is SYNCQ_EINVAL before
 *                any call. glibc links a held robust mutex
 *                into the holder thread's robust list through pointers in
 *                the mutex itself: a process that overwrites those while
 *                we hold it (a window of one critical section) is the one
 *                hostile write this claim cannot check.
 *   Atomics:     glibc robust mutex: uncontended lock 1 CAS (plus the
 *                robust-list bookkeeping, no system call), unlock 1
 *                exchange; + the critical section of Figure 2 (1 acquire
 *                load, 1 release store; bulk + 1 load, 1 store).
 *   Memory:      in the segment; never allocates.
 *   Signal-safe: no (pthread_mutex_lock is not async-signal-safe).
 *   Process-shared: yes (PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST).
 *   Limits:      none beyond the queue's.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "syncq/export.h" /* SYNCQ_TSAN */
#if SYNCQ_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#include "am_claim.h"
#include "am_segment.h"
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

/* Initialise m as every claim's mutex: process-shared and robust. */
static int mutex_make(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a) != 0) return EAGAIN;
  int e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  if (e == 0) e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (e == 0) e = pthread_mutex_init(m, &a);
  (void)pthread_mutexattr_destroy(&a);
  return e;
}

static int posix_init(am_queue *q) {
  int e = mutex_make(&q->lock.mutex);
  if (e != 0) {
    errno = e;
    return e == ENOTSUP ? SYNCQ_ENOTSUP : SYNCQ_ESYS;
  }
  return SYNCQ_OK;
}

#ifdef __GLIBC__
/* glibc dispatches every mutex call on the mutex's own kind word: an
 * overwritten one sends it down paths this mutex never takes (lock
 * elision executes XBEGIN, SIGILL on a CPU without TSX; priority
 * inheritance or protection). The kind our mutexes have, learned once
 * from a local one made the same way. */
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;
static int kind_expected = -1; /* written once under kind_once, then only read */

static void kind_learn(void) {
  pthread_mutex_t m;
  if (mutex_make(&m) != 0) return;
  kind_expected = m.__data.__kind;
  (void)pthread_mutex_destroy(&m);
}

/* False when the mutex's kind word is not the one syncq_am_create made. */
static bool kind_ok(const pthread_mutex_t *m) {
  (void)pthread_once(&kind_once, kind_learn);
  /* a plain read: the word is written only at creation (or by a hostile
   * process, which is what this checks for) */
  return kind_expected >= 0 && *(const volatile int *)&m->__data.__kind == kind_expected;
}
#else
static bool kind_ok(const pthread_mutex_t *m) {
  (void)m;
  return true;
}
#endif

/* The library status of a pthread_mutex_*lock error. */
static int lock_status(int e) {
  switch (e) {
  case EBUSY:
    return SYNCQ_EBUSY; /* trylock: held */
  case ETIMEDOUT:
    return SYNCQ_ETIMEDOUT; /* the patience bound ran out */
  case EINVAL:              /* glibc: the mutex's kind or owner word was overwritten */
  case ENOTRECOVERABLE:     /* a holder died and nobody repaired it (not we: we always do) */
  case EDEADLK:
    return SYNCQ_EINVAL; /* the owner word names us: overwritten */
  default:
    errno = e;
    return SYNCQ_ESYS;
  }
}

static int posix_claim(const am_qview *v, bool nowait, am_claim_state *cs) {
  pthread_mutex_t *m = &v->q->lock.mutex;
  if (!kind_ok(m)) return SYNCQ_EINVAL; /* overwritten: glibc would follow it anywhere */
  int e;
  if (nowait) {
    e = pthread_mutex_trylock(m);
  } else {
    /* A holder that is alive but never unlocks (stopped, or a foreign
     * owner written into the mutex) is waited for the patience bound. */
    struct timespec until;
    (void)clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = am_lock_patience_ns(v->stale_ns);
    uint64_t sec = ns / 1000000000u + ((uint64_t)until.tv_nsec + ns % 1000000000u) / 1000000000u;
    until.tv_nsec = (long)(((uint64_t)until.tv_nsec + ns % 1000000000u) % 1000000000u);
    until.tv_sec = sec > (uint64_t)(INT32_MAX) ? (time_t)INT32_MAX + until.tv_sec : until.tv_sec + (time_t)sec;
    e = pthread_mutex_trylock(m); /* the common case; and TSan knows an EOWNERDEAD of trylock as a lock */
    if (e == EBUSY) {
      e = pthread_mutex_timedlock(m, &until);
#if SYNCQ_TSAN
      /* TSan's timedlock interceptor records a lock only on 0: tell it
       * that EOWNERDEAD (the dead holder's mutex is ours) is one too */
      if (e == EOWNERDEAD) {
        __tsan_mutex_pre_lock(m, __tsan_mutex_try_lock);
        __tsan_mutex_post_lock(m, __tsan_mutex_try_lock, 0);
      }
#endif
    }
  }
  if (e == EOWNERDEAD) {
    am_claim_repair(v); /* claim_common.c */
    e = pthread_mutex_consistent(m);
    if (e != 0) { /* not a robust mutex after all: overwritten */
      (void)pthread_mutex_unlock(m);
      return SYNCQ_EINVAL;
    }
  }
  if (e != 0) return lock_status(e);
  SYNCQ_RACE_POINT("am.claim.inside"); /* tests: die (or stop) holding the mutex */
  int got = am_claim_under_lock(v, cs);
  e = pthread_mutex_unlock(m);
  if (e != 0) return lock_status(e);
  return got > 0 ? SYNCQ_OK : got == 0 ? SYNCQ_FULL : got;
}

const am_claim_ops am_claim_posix_mutex = {"posix-mutex", posix_init, posix_claim, am_claim_locked_bulk_stalled, false};
