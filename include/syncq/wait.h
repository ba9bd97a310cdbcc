/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/wait.h — waiting disciplines: how a thread waits for a lock or a
 * barrier (003 §3.4; Karlin et al. 1991 for competitive spinning).
 *
 *   SYNCQ_WAIT_SPIN         busy-wait (the algorithm adds its own backoff:
 *                           exponential for TAS/TTAS, proportional for the
 *                           ticket lock), never gives up the processor
 *   SYNCQ_WAIT_YIELD        sched_yield() between checks
 *   SYNCQ_WAIT_BLOCK        immediate blocking: sleep on a futex as soon as
 *                           the wait is found necessary
 *   SYNCQ_WAIT_COMPETITIVE  spin for about one context-switch time, then
 *                           block; the limit is measured once per process
 *                           (syncq_wait_calibrate) and can be queried. At a
 *                           barrier the spin time is proportional to the
 *                           threads not yet arrived, as 003 does.
 *
 * Two mechanisms. In both a waiter waits for a 32-bit word to change from
 * a value it saw, in the algorithm's own check loop, and sleeps on it with
 * a futex.
 *
 * Locks: the word carries its own sleep mark (syncq_waiter_step,
 * syncq_waiter_sleep). A waiter about to sleep first marks the word it
 * waits on (Drepper, "Futexes Are Tricky", mutex 2: 0 free, 1 held, 2 held
 * and someone may sleep), by a CAS from the value it saw or an exchange,
 * and sleeps while the word holds the marked value. The releaser hands
 * the lock over with an exchange, whose old value says whether anybody
 * marked it, and wakes only then. After that exchange it touches nothing
 * of the lock: a futex wake is a system call on an address, which does no
 * harm when the next holder has destroyed and freed the lock meanwhile
 * (as it may a POSIX mutex). No wake-up is lost: the mark and the
 * exchange are read-modify-writes of one word, so one of them sees the
 * other, and the kernel re-checks the marked value before it sleeps.
 * Queue locks keep the mark in the flag their waiter spins on (its own
 * node or slot), never in the lock's shared fields.
 *
 * Barriers: a waiter announces itself in a `sleepers` counter of the
 * barrier (syncq_waiter_pause, syncq_wait_wake), so a wake costs one load
 * when nobody sleeps. The ordering is Dekker's: the waiter increments
 * sleepers, then the kernel re-checks the word; the waker changes the
 * word, then loads sleepers; all four accesses are seq_cst, so at least
 * one side sees the other and no wake-up is lost. The waker reads the
 * counter after its change of the word, so the object must outlive the
 * waker's call: fine for a barrier episode, not for a lock's hand-over.
 */
#ifndef SYNCQ_WAIT_H
#define SYNCQ_WAIT_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum syncq_wait_discipline {
  SYNCQ_WAIT_DEFAULT = 0, /* the algorithm's own default (in configs) */
  SYNCQ_WAIT_SPIN = 1,
  SYNCQ_WAIT_YIELD = 2,
  SYNCQ_WAIT_BLOCK = 3,
  SYNCQ_WAIT_COMPETITIVE = 4
} syncq_wait_discipline;

/* Number of disciplines including DEFAULT (valid values are 0 .. COUNT-1). */
#define SYNCQ_WAIT_COUNT 5

/* Check that discipline is a wait discipline (DEFAULT included).
 * SYNCQ_EINVAL: discipline is not one of 0 .. SYNCQ_WAIT_COUNT - 1.
 * Thread safety: any thread, any time, from a signal handler too.
 * Progress: wait-free. */
SYNCQ_API int syncq_wait_check(int discipline);

/* The name of a wait discipline: "default", "spin", "yield", "block",
 * "competitive"; NULL when unknown.
 * Thread safety: any thread, any time, from a signal handler too (a
 * constant table).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_wait_name(int discipline);

/* Parse a name of syncq_wait_name into *out.
 * SYNCQ_EINVAL: name or out is NULL.
 * SYNCQ_ENOENT: name is no discipline's.
 * Thread safety: any thread, any time, from a signal handler too (string
 * compares; it writes only *out).
 * Progress: wait-free. */
SYNCQ_API int syncq_wait_from_name(const char *name, int *out);

/* True for the disciplines that may sleep (BLOCK, COMPETITIVE): their
 * wakers must call syncq_wait_wake.
 * Thread safety: any thread, from a signal handler too (a comparison).
 * Progress: wait-free. */
static inline bool syncq_wait_may_sleep(int discipline) {
  return discipline == SYNCQ_WAIT_BLOCK || discipline == SYNCQ_WAIT_COMPETITIVE;
}

/* Measure (once per process; later calls return the first result) the cost
 * of one context switch: two threads on one processor hand a futex word
 * back and forth. Returns it in ns, clamped to [1 us, 200 us]; the
 * competitive spin limit. Thread-safe.
 * Thread safety: any thread, concurrently with other calls (pthread_once);
 * not from a signal handler. From a postoffice fiber: the first call of the
 * process blocks its scheduler thread for the measurement.
 * Progress: blocking on the process's first call (it starts a thread and
 * measures for a while; concurrent first calls wait for it); wait-free
 * afterwards. */
SYNCQ_API uint64_t syncq_wait_calibrate(void);

/* The competitive spin limit in ns (calibrates on first call).
 * Thread safety: as syncq_wait_calibrate.
 * Progress: as syncq_wait_calibrate. */
SYNCQ_API uint64_t syncq_wait_spin_limit_ns(void);

/* The spin limit a waiter of `discipline` passes to syncq_waiter_init:
 * syncq_wait_spin_limit_ns() for COMPETITIVE (calibrating on the first
 * call), 0 for every other discipline, an unknown one included (only
 * COMPETITIVE reads the limit). The one place the limit is computed for
 * locks; barriers multiply it by the threads not yet arrived.
 * Thread safety: as syncq_wait_calibrate for COMPETITIVE; any thread, from
 * a signal handler too, for the others (a comparison).
 * Progress: as syncq_wait_calibrate for COMPETITIVE; wait-free otherwise. */
SYNCQ_API uint64_t syncq_wait_spin_limit_for(int discipline);

/* Give the processor to another runnable thread (sched_yield) and count
 * the yield in the calling thread's syncq_stats: the yield of a poll loop
 * that waits for something other than one word's change (a free node, a
 * successor's link, a preempted operation's end).
 * Thread safety: any thread, concurrently with anything, from a signal
 * handler too (a system call and a thread-local add).
 * Progress: wait-free as far as syncq goes (one sched_yield). */
SYNCQ_API void syncq_wait_yield(void);

/* One pause of a poll loop that spins, then yields: relaxes the core
 * (syncq_pr_relax), except every yield_every-th call, counted in *pauses
 * (start it at 0; one counter per wait), which yields instead
 * (syncq_wait_yield). yield_every 0 never yields (a pure spin: *pauses is
 * then left alone). For waits on something a preempted thread must finish
 * (a ticket's item, a successor's link), where blocking on a word does not
 * apply: the yields let that thread run on an oversubscribed machine.
 * Thread safety: by the thread that owns *pauses; from a signal handler
 * too (a pause or a yield).
 * Progress: wait-free: one pause or one yield. */
static inline void syncq_wait_spin_yield(uint32_t *pauses, uint32_t yield_every) {
  if (yield_every != 0u && ++*pauses % yield_every == 0u) syncq_wait_yield();
  else syncq_pr_relax();
}

/* The state of one wait (one acquisition attempt, one barrier episode). */
typedef struct syncq_waiter {
  int discipline;         /* SPIN .. COMPETITIVE (DEFAULT is not allowed here) */
  bool process_shared;    /* futexes across processes */
  uint64_t spin_limit_ns; /* COMPETITIVE: spin this long before blocking */
  uint64_t started_ns;    /* first pause (0: not yet) */
  uint32_t pauses;        /* pauses so far */
} syncq_waiter;

/* Start a wait. spin_limit_ns is used by COMPETITIVE only (pass
 * syncq_wait_spin_limit_ns(), or a multiple of it at barriers).
 * Thread safety: any thread on its own syncq_waiter (one wait's state, on
 * the waiter's stack), from a signal handler too.
 * Progress: wait-free (it fills w). */
static inline void syncq_waiter_init(syncq_waiter *w, int discipline, bool process_shared, uint64_t spin_limit_ns) {
  w->discipline = discipline;
  w->process_shared = process_shared;
  w->spin_limit_ns = spin_limit_ns;
  w->started_ns = 0;
  w->pauses = 0;
}

/* One step of waiting for *word to differ from `seen`: SPIN relaxes the
 * core once; YIELD yields; BLOCK sleeps on the futex (sleepers counted in
 * *sleepers) until woken or the word differs; COMPETITIVE spins until
 * spin_limit_ns has passed since the first pause, then blocks. Spurious
 * returns are allowed: callers re-check their condition in a loop. Counts
 * yields and blocks in the thread's syncq_stats.
 * Thread safety: by the thread that owns the syncq_waiter (a waiter is one
 * thread's wait: never shared), concurrently with other threads' waits and
 * wakes on the same word; from a signal handler only with SPIN or YIELD (a
 * handler that sleeps on a word its interrupted thread must change never
 * wakes). From a postoffice fiber: SPIN and YIELD hold the scheduler
 * thread, BLOCK sleeps it (syncq/po.h, "Blocking calls").
 * Progress: blocking by purpose: one step of a wait for another thread's
 * change of the word (SPIN and YIELD return after one pause or yield; BLOCK
 * and COMPETITIVE past its limit sleep until woken, the word differs or a
 * spurious return). */
SYNCQ_API void syncq_waiter_pause(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t seen, _Atomic(uint32_t) *sleepers);

/* One step of a wait whose word carries its own sleep mark (the locks;
 * see the header comment). SPIN relaxes the core once, YIELD yields,
 * COMPETITIVE relaxes until spin_limit_ns has passed since its first
 * step; each returns false. BLOCK, and COMPETITIVE past its limit, return
 * true at once: the caller should now mark its word and call
 * syncq_waiter_sleep (and from then on true at every step). Counts yields
 * in the thread's syncq_stats.
 * Thread safety: by the thread that owns the syncq_waiter (a waiter is one
 * thread's wait: never shared), concurrently with other threads' waits and
 * wakes on the same word; from a signal handler too (a pause, a yield or a
 * clock read).
 * Progress: wait-free: one pause or yield, or none (it only says whether to
 * sleep). */
SYNCQ_API bool syncq_waiter_step(syncq_waiter *w);

/* Sleep on *word while it holds `marked`, the value with the caller's
 * sleep mark in it: a futex wait (the kernel re-checks the value).
 * Spurious returns are allowed: callers re-check in a loop. Counts a
 * block.
 * Thread safety: by the thread that owns the syncq_waiter (a waiter is one
 * thread's wait: never shared), concurrently with other threads' waits and
 * wakes on the same word; not from a signal handler on a word its
 * interrupted thread must change. From a postoffice fiber: it sleeps the
 * scheduler thread.
 * Progress: blocking: a futex sleep until the word changes, a wake or a
 * spurious return. */
SYNCQ_API void syncq_waiter_sleep(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t marked);

/* syncq_waiter_pause with a deadline and a cancel word, for waits that may
 * give up (the timed barrier wait). deadline_ns is a syncq_now_ns() time;
 * UINT64_MAX means none. Returns SYNCQ_OK unless the deadline has passed
 * (a step done, the word changed, a spurious or a cancelled return:
 * callers re-check in a loop).
 * cancel (may be NULL): a sleeper announces itself in *sleepers and then
 * loads *cancel before it sleeps, after a seq_cst fence; if it is not 0 it
 * does not sleep. Whoever sets *cancel (seq_cst), then changes every word
 * a waiter may sleep on (seq_cst read-modify-write) and then calls
 * syncq_wait_wake (or loads *sleepers and wakes) cannot leave a sleeper
 * behind: Dekker's argument of the header comment, on *cancel. The fence
 * also orders the waiter's own earlier stores to the word before its load
 * of *cancel.
 * SYNCQ_ETIMEDOUT: the deadline has passed (SPIN and COMPETITIVE's
 * spinning read the clock every few pauses, YIELD at every pause; sleeping
 * is a futex wait bounded by the time left).
 * Thread safety: by the thread that owns the syncq_waiter (a waiter is one
 * thread's wait: never shared), concurrently with other threads' waits and
 * wakes on the same word; as syncq_waiter_pause otherwise.
 * Progress: blocking as syncq_waiter_pause, bounded by deadline_ns
 * (SYNCQ_ETIMEDOUT). */
SYNCQ_API int syncq_waiter_pause_until(syncq_waiter *w, _Atomic(uint32_t) *word, uint32_t seen,
                                       _Atomic(uint32_t) *sleepers, uint64_t deadline_ns, _Atomic(uint32_t) *cancel);

/* Wake up to n (n <= 0: all) threads sleeping on word: a futex system
 * call on its address (no access: the word may have been freed). Locks
 * call it when their hand-over exchange returned a marked value; barriers
 * call syncq_wait_wake, which skips it when nobody sleeps.
 * Thread safety: any thread (or process, with process_shared as the
 * sleepers'), concurrently with anything, on memory that may be freed
 * already (no access: a system call on the address); from a signal handler
 * too.
 * Progress: wait-free as far as syncq goes: one futex system call, which
 * does not wait for the woken threads. */
SYNCQ_API void syncq_wait_futex_wake(_Atomic(uint32_t) *word, int n, bool process_shared);

/* After changing *word (with a seq_cst store or read-modify-write): wake up
 * to n (n <= 0: all) threads sleeping on it, if the discipline may sleep
 * and someone does. Reads *sleepers after the change: for barriers, not
 * for a lock's hand-over (see the header comment).
 * Thread safety: any thread, concurrently with waiters pausing on word;
 * the object holding word and sleepers must outlive the call; from a
 * signal handler too (a lock-free load and a futex system call).
 * Progress: wait-free (one load, and a FUTEX_WAKE system call when
 * someone sleeps). */
static inline void syncq_wait_wake(int discipline, _Atomic(uint32_t) *word, _Atomic(uint32_t) *sleepers, int n,
                                   bool process_shared) {
  if (!syncq_wait_may_sleep(discipline)) return;
  /* seq_cst: the Dekker pair with the waiter's increment of sleepers (see
   * the header comment); the caller's change of *word was seq_cst too. */
  if (atomic_load(sleepers) != 0) syncq_wait_futex_wake(word, n, process_shared);
}

#ifdef __cplusplus
}
#endif
/* The waiting of the static inline lock bodies (syncq/static/lock/),
 * out of line: the uncontended path that branches to it then needs no
 * stack frame (no callee-saved registers pushed before and popped after
 * its one atomic), and the waiting code stays out of the caller's
 * instruction cache lines. Internal to those headers. */
#if defined(__GNUC__) || defined(__clang__)
#define SYNCQ_LOCK_SLOW_PATH_ static __attribute__((noinline, cold, unused))
#else
#define SYNCQ_LOCK_SLOW_PATH_ static inline
#endif

#endif /* SYNCQ_WAIT_H */
