/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/barrier.h — barriers: the family's ops table and the generic API.
 *
 * A barrier is created for a fixed number of threads; each episode, every
 * thread calls wait(b, id) with its own id in [0, threads), and no call
 * returns before all `threads` calls of that episode have begun. Episodes
 * repeat without re-initialisation.
 *
 *   "central-cas"     sense-reversing centralized, arrival by CAS loop   syncq/barrier/central.h
 *   "central-faa"     sense-reversing centralized, arrival by FAA        syncq/barrier/central.h
 *   "mcs-tree"        MCS tree barrier, arrival fan-in 4, wake fan-out 2 syncq/barrier/mcs_tree.h
 *   "dissemination"   dissemination barrier (Hensgen, Finkel & Manber)  syncq/barrier/dissemination.h
 *   "pthread-barrier" POSIX barrier, the baseline                       syncq/barrier/pthread_barrier.h
 *
 * Each takes a waiting discipline (syncq/wait.h) in its config; with
 * SYNCQ_WAIT_COMPETITIVE a waiter spins for a time proportional to the
 * threads not yet arrived (one context-switch time each, as 003 §3.4
 * does), then blocks.
 *
 * Timeouts and broken barriers. A thread that never arrives would hold
 * every other waiter forever; syncq_barrier_wait_timed bounds the wait:
 *  - It returns SYNCQ_OK when every thread arrived at its episode before
 *    the deadline (the plain wait's guarantee), or SYNCQ_ETIMEDOUT when
 *    its deadline passed first: it leaves the episode and BREAKS the
 *    barrier.
 *  - A broken barrier stays broken until syncq_barrier_reset: every waiter
 *    still waiting in that episode, timed or not, returns SYNCQ_EBROKEN
 *    (woken from spinning, yielding or a futex sleep: none hangs), and so
 *    does every later wait or wait_timed, at once, without joining.
 *    A waiter that had already seen its whole episode arrive when the
 *    barrier broke returns SYNCQ_OK (the barrier's guarantee held for it):
 *    in the episode that breaks, statuses may mix OK, ETIMEDOUT and
 *    EBROKEN; in every later one, all are EBROKEN.
 *  - The deadline is timeout_ns after the call first has to wait, on the
 *    monotonic clock (syncq_now_ns; a call that need not wait, like the
 *    last arrival's, never reads the clock); spinning reads it every few
 *    pauses, yielding at every yield, and sleeping is a FUTEX_WAIT
 *    bounded by the time left.
 *  - timeout_ns 0 is SYNCQ_EINVAL: arriving cannot be undone, so a poll
 *    would break the barrier whenever the caller is not last.
 *    SYNCQ_BARRIER_NO_TIMEOUT waits like syncq_barrier_wait.
 *  - syncq_barrier_reset (and destroy) require that no thread is inside a
 *    wait on the barrier (every waiter has returned): the caller orders it
 *    after their returns (a join, a lock, another barrier). After a reset
 *    the barrier is as after init: episodes start again.
 *  - "pthread-barrier" has no timed wait (POSIX has none, and a waiter
 *    cannot leave a pthread_barrier_wait): its wait_timed and reset return
 *    SYNCQ_ENOTSUP and never wait; its plain wait still waits forever for
 *    a thread that never arrives. Peer libraries' barriers (syncq-lab)
 *    have no wait_timed either: SYNCQ_ENOTSUP through the generic API.
 * A thread killed (or a process, for a process-shared barrier) before it
 * arrives is, for the others, a thread that never arrives: the same
 * timeout and EBROKEN, then reset (or re-create) the barrier.
 */
#ifndef SYNCQ_BARRIER_H
#define SYNCQ_BARRIER_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most threads a barrier can be created for. */
#define SYNCQ_BARRIER_MAX_THREADS 4096u

/* timeout_ns of syncq_barrier_wait_timed that means "no deadline". */
#define SYNCQ_BARRIER_NO_TIMEOUT UINT64_MAX

typedef struct syncq_barrier_config {
  unsigned threads;    /* participants, 1 .. SYNCQ_BARRIER_MAX_THREADS (0: SYNCQ_EINVAL) */
  int wait;            /* a syncq_wait_discipline; 0 = the algorithm's default */
  bool process_shared; /* will live in memory shared between processes (SYNCQ_ENOTSUP if it cannot) */
} syncq_barrier_config;

/* The barrier family's ops table (syncq_algo.ops of a barrier). Every
 * function returns a syncq_status and validates its arguments. */
typedef struct syncq_barrier_ops {
  size_t size;  /* bytes of one barrier */
  size_t align; /* its alignment */
  /* SYNCQ_EINVAL: NULL, threads 0, unknown discipline; SYNCQ_ELIMIT:
   * threads > SYNCQ_BARRIER_MAX_THREADS; SYNCQ_ENOTSUP: discipline or
   * process_shared not possible; SYNCQ_ENOMEM. */
  int (*init)(void *b, const syncq_barrier_config *cfg);
  int (*destroy)(void *b);
  /* SYNCQ_OK after every thread arrived; SYNCQ_EINVAL for NULL or id out
   * of range (the episode is not joined then); SYNCQ_EBROKEN when the
   * barrier is or becomes broken (see the header comment). */
  int (*wait)(void *b, unsigned id);
  /* Added members: NULL in an ops table that has no timed wait (the
   * generic API then returns SYNCQ_ENOTSUP). */
  /* wait with a deadline: SYNCQ_OK, SYNCQ_ETIMEDOUT (the barrier is now
   * broken), SYNCQ_EBROKEN; SYNCQ_EINVAL for NULL, id out of range or
   * timeout_ns 0 (the episode is not joined then); SYNCQ_ENOTSUP when the
   * algorithm cannot time out. */
  int (*wait_timed)(void *b, unsigned id, uint64_t timeout_ns);
  /* Back to the state after init (mends a broken barrier); only while no
   * thread waits on it. SYNCQ_EINVAL for NULL, SYNCQ_ENOTSUP as above. */
  int (*reset)(void *b);
} syncq_barrier_ops;

/* One statement registers a barrier: its ops table (void * wrappers around
 * the typed functions, written here once) and its registry entry
 * syncq_barrier_<algo>_algo, e.g.
 *   SYNCQ_BARRIER_REGISTER(mcs_tree, "mcs-tree", "title", "paper", BLOCKING, 0);
 * progress is the suffix of a SYNCQ_PROGRESS_* name, props a SYNCQ_PROP_*
 * mask.
 *   SYNCQ_BARRIER_REGISTER: the uniform names, type syncq_barrier_<algo> and
 *     syncq_barrier_<algo>_init, _destroy, _wait, _wait_timed, _reset.
 *   SYNCQ_BARRIER_REGISTER_FNS: the type and functions named explicitly,
 *     for variants that share a type.
 *   SYNCQ_BARRIER_REGISTER_UNTIMED_FNS: the same without wait_timed and
 *     reset (both NULL in the table, so the generic API answers
 *     SYNCQ_ENOTSUP): for barriers with no deadline, the lab's peers.
 * For C and C++ translation units. */
#define SYNCQ_BARRIER_ENTRY_(algo, name_, title_, paper_, progress_, props_, T, timed_, reset_)                      \
  static const syncq_barrier_ops syncq_barrier_##algo##_ops_ = {                                                     \
    .size = sizeof(T),                                                                                               \
    .align = SYNCQ_ALIGNOF_(T),                                                                                      \
    .init = syncq_barrier_##algo##_init_,                                                                            \
    .destroy = syncq_barrier_##algo##_destroy_,                                                                      \
    .wait = syncq_barrier_##algo##_wait_,                                                                            \
    .wait_timed = timed_,                                                                                            \
    .reset = reset_,                                                                                                 \
  };                                                                                                                 \
  const syncq_algo syncq_barrier_##algo##_algo = {                                                                   \
    SYNCQ_FAMILY_BARRIER, name_, title_, paper_, SYNCQ_PROGRESS_##progress_, (props_), &syncq_barrier_##algo##_ops_, \
  }
#define SYNCQ_BARRIER_WRAPPERS_(algo, T, init_fn, destroy_fn, wait_fn)                                               \
  static int syncq_barrier_##algo##_init_(void *o, const syncq_barrier_config *cfg) { return init_fn((T *)o, cfg); } \
  static int syncq_barrier_##algo##_destroy_(void *o) { return destroy_fn((T *)o); }                                 \
  static int syncq_barrier_##algo##_wait_(void *o, unsigned id) { return wait_fn((T *)o, id); }
#define SYNCQ_BARRIER_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn, wait_fn, \
                                   wait_timed_fn, reset_fn)                                                         \
  SYNCQ_BARRIER_WRAPPERS_(algo, T, init_fn, destroy_fn, wait_fn)                                                    \
  static int syncq_barrier_##algo##_wait_timed_(void *o, unsigned id, uint64_t timeout_ns) {                        \
    return wait_timed_fn((T *)o, id, timeout_ns);                                                                   \
  }                                                                                                                 \
  static int syncq_barrier_##algo##_reset_(void *o) { return reset_fn((T *)o); }                                    \
  SYNCQ_BARRIER_ENTRY_(algo, name_, title_, paper_, progress_, props_, T, syncq_barrier_##algo##_wait_timed_,       \
                       syncq_barrier_##algo##_reset_)
#define SYNCQ_BARRIER_REGISTER_UNTIMED_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn, \
                                           wait_fn)                                                                \
  SYNCQ_BARRIER_WRAPPERS_(algo, T, init_fn, destroy_fn, wait_fn)                                                   \
  SYNCQ_BARRIER_ENTRY_(algo, name_, title_, paper_, progress_, props_, T, NULL, NULL)
#define SYNCQ_BARRIER_REGISTER(algo, name_, title_, paper_, progress_, props_)                                         \
  SYNCQ_BARRIER_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, syncq_barrier_##algo,                     \
                             syncq_barrier_##algo##_init, syncq_barrier_##algo##_destroy, syncq_barrier_##algo##_wait, \
                             syncq_barrier_##algo##_wait_timed, syncq_barrier_##algo##_reset)

/* The registry entries (syncq/registry.h) of the built-in barriers: name, paper, progress guarantee,
 * properties and ops table of each; run one by name with syncq_barrier_create("name", ...). */
SYNCQ_API extern const syncq_algo syncq_barrier_central_cas_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_central_faa_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_mcs_tree_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_dissemination_algo;
SYNCQ_API extern const syncq_algo syncq_barrier_pthread_algo;

/* ---- the generic API ---- */
typedef struct syncq_barrier syncq_barrier;

/* Create a barrier of the named algorithm for cfg->threads participants.
 * Created barriers are private to the process.
 * SYNCQ_EINVAL: algo, cfg or out is NULL, cfg->threads is 0, or cfg->wait
 * is not a wait discipline (syncq_wait_check). SYNCQ_ELIMIT: cfg->threads
 * is above SYNCQ_BARRIER_MAX_THREADS. SYNCQ_ENOENT: no barrier of that name
 * is registered. SYNCQ_ENOMEM: the handle or the barrier's storage could
 * not be allocated. SYNCQ_ENOTSUP: the algorithm cannot wait as cfg->wait
 * asks, or cannot live in shared memory when cfg->process_shared is set.
 * Thread safety: any thread, concurrently with any other call (each call
 * makes a barrier of its own; the name is looked up as syncq_registry_find
 * does); not from a signal handler (malloc).
 * The barrier it makes lives in this process's heap: it cannot be shared
 * between processes.
 * Progress: not a concurrent operation (the object is new): it allocates
 * (malloc) and runs the algorithm's init.
 * Example: `syncq_barrier_config cfg = {4, 0, false}; syncq_barrier *b;`
 *   `int r = syncq_barrier_create("dissemination", &cfg, &b);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "dissemination: %s\n", syncq_strerror(r));`
 *   `else { work(); syncq_barrier_destroy(b); }` */
SYNCQ_API int syncq_barrier_create(const char *algo, const syncq_barrier_config *cfg, syncq_barrier **out);
/* Destroy a barrier made by syncq_barrier_create and free it.
 * SYNCQ_EINVAL: b is NULL.
 * SYNCQ_EBUSY: an episode is under way: some participant of a central
 * barrier ("central-cas", "central-faa") has arrived and the others have
 * not, or pthread_barrier_destroy refused ("pthread-barrier": a thread
 * waits on it); nothing is freed.
 * Thread safety: once no thread is inside a wait on the barrier (every
 * waiter has returned: the caller orders it after their returns), by one
 * thread; not from a signal handler (free).
 * Progress: not a concurrent operation: it runs alone on the barrier, with
 * no other call on it to wait for.
 * Example: `syncq_barrier_config cfg = {4, 0, false}; syncq_barrier *bar;`
 *   `if (syncq_barrier_create("central-faa", &cfg, &bar) != SYNCQ_OK) fputs("no central-faa\n", stderr);`
 *   `else { work(); syncq_barrier_destroy(bar); }` */
SYNCQ_API int syncq_barrier_destroy(syncq_barrier *b);
/* Arrive at the barrier as participant id and wait for the others.
 * Returns SYNCQ_OK once every participant has arrived.
 * SYNCQ_EINVAL: b is NULL, or id is not below cfg->threads.
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode, or a central barrier counted more arrivals than
 * participants: its count was overwritten or an id arrived twice); it
 * stays broken until syncq_barrier_reset.
 * SYNCQ_ESYS: "pthread-barrier" only: pthread_barrier_wait failed; errno
 * holds why.
 * Thread safety: each participant (id in [0, threads), one thread per id)
 * calls wait or wait_timed once per episode, at the same time as the
 * others; never two calls with one id at once, and not during reset or
 * destroy. From a signal handler: no (it waits for other threads). From a
 * postoffice fiber: yes, but the wait holds the fiber's scheduler thread
 * until every participant arrives, so participants that are fibers of the
 * same scheduler arrive only once the monitor hands that scheduler's queue
 * to a spare thread (syncq/po.h, "Blocking calls");
 * syncq_po_blocking_begin/_end around the wait hand it off at once.
 * Progress: blocking: a wait returns only once every participant has
 * arrived (every barrier is SYNCQ_PROGRESS_BLOCKING:
 * syncq_barrier_algo(b)->progress); wait_timed bounds the wait.
 * Example: `for (int step = 0; step < 100; step++) { compute(step, id); syncq_barrier_wait(b, id); }` */
SYNCQ_API int syncq_barrier_wait(syncq_barrier *b, unsigned id);
/* Arrive as participant id and wait for the others, for at most
 * timeout_ns nanoseconds once it has to wait. Returns SYNCQ_OK once every
 * participant has arrived.
 * SYNCQ_EINVAL: b is NULL, id is not below cfg->threads, or timeout_ns is 0.
 * SYNCQ_ETIMEDOUT: timeout_ns passed before every participant arrived; the
 * barrier is now broken (the other waiters return SYNCQ_EBROKEN).
 * SYNCQ_EBROKEN: the barrier is broken (a timed wait ran out in this or an
 * earlier episode, or a central barrier counted more arrivals than
 * participants); it stays broken until syncq_barrier_reset.
 * SYNCQ_ENOTSUP: the algorithm has no timed wait ("pthread-barrier", a
 * peer's ops table); nothing was done.
 * Thread safety: as syncq_barrier_wait. From a signal handler: no. From a
 * postoffice fiber: yes, but the wait holds the fiber's scheduler thread
 * until every participant arrives, so participants that are fibers of the
 * same scheduler arrive only once the monitor hands that scheduler's queue
 * to a spare thread (syncq/po.h, "Blocking calls");
 * syncq_po_blocking_begin/_end around the wait hand it off at once.
 * Progress: blocking, at most timeout_ns after it first has to wait (then
 * SYNCQ_ETIMEDOUT, and the barrier is broken); algorithms without it
 * ("pthread-barrier", peers) return SYNCQ_ENOTSUP at once. */
SYNCQ_API int syncq_barrier_wait_timed(syncq_barrier *b, unsigned id, uint64_t timeout_ns);
/* Mend a broken barrier: back to the state after create.
 * SYNCQ_EINVAL: b is NULL.
 * SYNCQ_ENOTSUP: the algorithm has no reset ("pthread-barrier", a peer's
 * ops table); nothing was done.
 * Thread safety: only while no thread is inside a wait on the barrier
 * (every waiter has returned), by one thread; not from a signal handler.
 * Progress: not a concurrent operation: it runs alone on the barrier, with
 * no other call on it to wait for (SYNCQ_ENOTSUP at once where the
 * algorithm has no reset). */
SYNCQ_API int syncq_barrier_reset(syncq_barrier *b);
/* The registry entry of the algorithm the barrier was created from.
 * Thread safety: any thread, at any time between create and destroy, from a
 * signal handler too (one load).
 * Progress: wait-free. */
SYNCQ_API const syncq_algo *syncq_barrier_algo(const syncq_barrier *b); /* NULL for NULL */

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_BARRIER_H */
