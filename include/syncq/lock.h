/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/lock.h — mutual-exclusion locks: the family's ops table and the
 * generic API.
 *
 * Every lock has init / destroy / lock / trylock / unlock. Queue locks
 * (MCS, CLH, Anderson, the array queue locks of 003) need a per-acquisition
 * record: the caller passes the same syncq_lock_node to lock() and to the
 * matching unlock() (one node per thread per held lock; it must stay alive
 * and untouched while the lock is held or being waited for). Locks that do
 * not need it ignore it, so code written against the ops table always
 * passes one.
 *
 * A lock takes its waiting discipline (busy-wait with backoff, yield,
 * immediate blocking, competitive spinning: syncq/wait.h) from its config
 * where the algorithm allows.
 *
 * Safe default. A lock made with syncq_lock_create() and no discipline
 * (cfg NULL or wait SYNCQ_WAIT_DEFAULT) waits competitively: it spins
 * about one measured context switch, then sleeps on a futex (algorithms
 * that cannot sleep yield instead). It does not collapse when threads
 * outnumber processing units: a FIFO spin lock (ticket, MCS, CLH,
 * Anderson, array) hands the lock to a waiter that may be preempted, and
 * every waiter behind it spins through whole time slices. A FIFO
 * hand-over to a waiter that is not running still costs a wake-up, so
 * a FIFO lock (SYNCQ_PROP_FIFO) left to this default also restricts
 * concurrency (Dice & Kogan 2019, generic concurrency restriction;
 * src/lock/gcr.c): at most one thread waits in the FIFO lock itself
 * (two when the passive head is promoted), the others wait in a FIFO
 * passive set, spinning briefly and then sleeping, and enter as room
 * appears, its head at the latest every 256 acquisitions. The holder's
 * successor is then a recent, running waiter. Such a lock is FIFO among
 * the threads admitted to it, not overall: a thread that arrives while
 * there is room passes the passive waiters (a thread k-th in the passive
 * set is admitted within (k + 1) * 256 acquisitions while each passive
 * head gets to run). Its unlock and
 * trylock are the algorithm's own; lock() costs one more load
 * uncontended. A FIFO lock made with SYNCQ_WAIT_BLOCK or
 * SYNCQ_WAIT_COMPETITIVE named is restricted the same way (a waiter that
 * may sleep anyway sleeps in the passive set), with the same order. The
 * discipline says how the passive waiters wait: sleep at once (BLOCK),
 * or spin about one context switch first (COMPETITIVE); the one or two
 * admitted waiters, next in line, spin about one context switch before
 * they sleep under both, as a FIFO hand-over to a waiter that slept at
 * once idles the lock for its wake-up (syncq_lock_discipline still
 * reports BLOCK). SYNCQ_WAIT_SPIN and
 * SYNCQ_WAIT_YIELD, which promise waiters that never sleep, and the
 * locks that are not FIFO (but the time-published ones left to the safe
 * default, below) get the algorithm alone. Pinned
 * two to a core, the FIFO queue locks (mcs, clh, array-cas) stay slow even
 * so: prefer a mutex or TTAS where threads outnumber cores and are
 * pinned. Pure spinning stays available by name: pass SYNCQ_WAIT_SPIN in
 * the config (fastest while every waiter has a processor of its own).
 * Measurements: docs/library.md, "Locks when threads outnumber
 * processors".
 *
 * Preempted waiters and the FIFO locks. A FIFO lock by name stays that
 * algorithm: "mcs" is Mellor-Crummey & Scott's lock, FIFO when spinning
 * or yielding (with block, competitive or the safe default, FIFO among
 * the admitted threads, above), and the generic API never swaps in the time-published
 * variant "mcs-tp" (He, Scherer & Scott 2005: waiters publish the time
 * while they poll, a release passes over a waiter whose time is more than
 * 100 us old and it queues again), which is FIFO only among waiters that
 * keep running. "mcs-tp" cannot sleep in its queue (a sleeper publishes
 * nothing), so its waiters there yield; a variant that let waiters sleep
 * in the queue convoyed as plain MCS does (src/lock/mcs_tp.c). Left to
 * the safe default, "mcs-tp" and "clh-tp" are restricted as the FIFO
 * locks are: the two or three admitted waiters yield in the queue and
 * publish their time, the others spin about one context switch and sleep
 * in the passive set, outside the queue, where no time of theirs goes
 * stale (syncq_lock_discipline reports COMPETITIVE); yielding or spinning
 * named keeps the algorithm alone. The default lock
 * remains the futex mutex; where a FIFO queue lock must survive
 * oversubscription, take a FIFO lock with the safe default
 * (measurements: docs/library.md, as above; docs/reliability.md, "At 16
 * cores").
 *
 * Destroying. The next holder may destroy and free a lock right after its
 * own unlock, even while the previous holder is still returning from the
 * unlock that handed the lock over (see syncq_lock_destroy).
 *
 * The typed APIs (syncq/lock/<algo>.h) and the ops tables keep each
 * algorithm's own default (SPIN for the spin locks, as in the papers)
 * and are never restricted: pass SYNCQ_WAIT_COMPETITIVE there when threads
 * may outnumber processors, or take the generic API.
 */
#ifndef SYNCQ_LOCK_H
#define SYNCQ_LOCK_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-acquisition record of queue locks: two cache lines of opaque space. */
typedef struct syncq_lock_node {
  SYNCQ_CACHELINE_ALIGNED unsigned char opaque[2 * SYNCQ_CACHELINE];
} syncq_lock_node;

/* Options of a lock at init; a NULL config means the defaults. */
typedef struct syncq_lock_config {
  unsigned max_threads; /* Anderson / array locks: slots (0: default); beyond -> SYNCQ_ELIMIT */
  int wait;             /* a syncq_wait_discipline (syncq/wait.h); 0 = the algorithm's default */
  bool process_shared;  /* will live in memory shared between processes (SYNCQ_ENOTSUP if it cannot) */
} syncq_lock_config;

/* The lock family's ops table (syncq_algo.ops of a lock). Every function
 * returns a syncq_status and validates its pointers (SYNCQ_EINVAL). */
typedef struct syncq_lock_ops {
  size_t size;  /* bytes of one lock */
  size_t align; /* its alignment */
  int (*init)(void *lock, const syncq_lock_config *cfg);
  int (*destroy)(void *lock);
  int (*lock)(void *lock, syncq_lock_node *node);
  int (*trylock)(void *lock, syncq_lock_node *node); /* SYNCQ_OK or SYNCQ_EBUSY */
  int (*unlock)(void *lock, syncq_lock_node *node);
} syncq_lock_ops;

/* ---- ops tables from typed functions ----
 * One macro per lock, designated initialisers: the exported typed
 * functions (themselves the static inline bodies of
 * syncq/static/lock/<algo>.h) become the registry's table `name`.
 * SYNCQ_LOCK_OPS: typed lock/trylock/unlock take (T *, syncq_lock_node *).
 * SYNCQ_LOCK_OPS_NODELESS: they take (T *) only; the table still refuses
 * a NULL node, as syncq_lock_ops promises. For C and C++ translation units. */
#define SYNCQ_LOCK_OPS_COMMON_(name, T, init_fn, destroy_fn)                                  \
  static int name##_init_(void *l, const syncq_lock_config *c) { return init_fn((T *)l, c); } \
  static int name##_destroy_(void *l) { return destroy_fn((T *)l); }
#define SYNCQ_LOCK_OPS_TABLE_(name, T) \
  static const syncq_lock_ops name = { \
    .size = sizeof(T),                 \
    .align = SYNCQ_ALIGNOF_(T),        \
    .init = name##_init_,              \
    .destroy = name##_destroy_,        \
    .lock = name##_lock_,              \
    .trylock = name##_trylock_,        \
    .unlock = name##_unlock_,          \
  }
#define SYNCQ_LOCK_OPS(name, T, init_fn, destroy_fn, lock_fn, trylock_fn, unlock_fn)        \
  SYNCQ_LOCK_OPS_COMMON_(name, T, init_fn, destroy_fn)                                      \
  static int name##_lock_(void *l, syncq_lock_node *n) { return lock_fn((T *)l, n); }       \
  static int name##_trylock_(void *l, syncq_lock_node *n) { return trylock_fn((T *)l, n); } \
  static int name##_unlock_(void *l, syncq_lock_node *n) { return unlock_fn((T *)l, n); }   \
  SYNCQ_LOCK_OPS_TABLE_(name, T)
#define SYNCQ_LOCK_OPS_NODELESS(name, T, init_fn, destroy_fn, lock_fn, trylock_fn, unlock_fn)                       \
  SYNCQ_LOCK_OPS_COMMON_(name, T, init_fn, destroy_fn)                                                              \
  static int name##_lock_(void *l, syncq_lock_node *n) { return n == NULL ? SYNCQ_EINVAL : lock_fn((T *)l); }       \
  static int name##_trylock_(void *l, syncq_lock_node *n) { return n == NULL ? SYNCQ_EINVAL : trylock_fn((T *)l); } \
  static int name##_unlock_(void *l, syncq_lock_node *n) { return n == NULL ? SYNCQ_EINVAL : unlock_fn((T *)l); }   \
  SYNCQ_LOCK_OPS_TABLE_(name, T)

/* One statement registers a lock: its ops table (the wrappers above,
 * written once) and its registry entry syncq_lock_<algo>_algo, e.g.
 *   SYNCQ_LOCK_REGISTER_NODELESS(ticket, "ticket", "title", "paper", BLOCKING, SYNCQ_PROP_FIFO);
 * progress is the suffix of a SYNCQ_PROGRESS_* name, props a SYNCQ_PROP_*
 * mask.
 *   SYNCQ_LOCK_REGISTER           the uniform names: type syncq_lock_<algo>,
 *                                 syncq_lock_<algo>_init, _destroy, _lock,
 *                                 _trylock, _unlock; the last three take
 *                                 (T *, syncq_lock_node *).
 *   SYNCQ_LOCK_REGISTER_NODELESS  the same, lock/trylock/unlock taking (T *).
 *   SYNCQ_LOCK_REGISTER_FNS, SYNCQ_LOCK_REGISTER_NODELESS_FNS: the type and
 *                                 functions named explicitly, for locks that
 *                                 share a type (tas and ttas) or call the
 *                                 static inline bodies.
 * For C and C++ translation units. */
#define SYNCQ_LOCK_ENTRY_(algo, name_, title_, paper_, progress_, props_)                                      \
  const syncq_algo syncq_lock_##algo##_algo = {                                                                \
    SYNCQ_FAMILY_LOCK, name_, title_, paper_, SYNCQ_PROGRESS_##progress_, (props_), &syncq_lock_##algo##_ops_, \
  }
#define SYNCQ_LOCK_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn, lock_fn, \
                                trylock_fn, unlock_fn)                                                           \
  SYNCQ_LOCK_OPS(syncq_lock_##algo##_ops_, T, init_fn, destroy_fn, lock_fn, trylock_fn, unlock_fn);              \
  SYNCQ_LOCK_ENTRY_(algo, name_, title_, paper_, progress_, props_)
#define SYNCQ_LOCK_REGISTER_NODELESS_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn, \
                                         lock_fn, trylock_fn, unlock_fn)                                         \
  SYNCQ_LOCK_OPS_NODELESS(syncq_lock_##algo##_ops_, T, init_fn, destroy_fn, lock_fn, trylock_fn, unlock_fn);     \
  SYNCQ_LOCK_ENTRY_(algo, name_, title_, paper_, progress_, props_)
#define SYNCQ_LOCK_REGISTER(algo, name_, title_, paper_, progress_, props_)                                            \
  SYNCQ_LOCK_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, syncq_lock_##algo, syncq_lock_##algo##_init, \
                          syncq_lock_##algo##_destroy, syncq_lock_##algo##_lock, syncq_lock_##algo##_trylock,          \
                          syncq_lock_##algo##_unlock)
#define SYNCQ_LOCK_REGISTER_NODELESS(algo, name_, title_, paper_, progress_, props_)                                \
  SYNCQ_LOCK_REGISTER_NODELESS_FNS(algo, name_, title_, paper_, progress_, props_, syncq_lock_##algo,               \
                                   syncq_lock_##algo##_init, syncq_lock_##algo##_destroy, syncq_lock_##algo##_lock, \
                                   syncq_lock_##algo##_trylock, syncq_lock_##algo##_unlock)

/* The registry entries (syncq/registry.h) of the built-in locks; run one
 * by name with syncq_lock_create("name", ...). Their names (in quotes):
 *   "tas"           test-and-set, bounded exponential backoff   syncq/lock/tas.h
 *   "ttas"          test-and-test-and-set, same backoff (001)   syncq/lock/tas.h
 *   "ticket"        ticket lock, proportional backoff           syncq/lock/ticket.h
 *   "anderson"      Anderson's array lock                       syncq/lock/anderson.h
 *   "array-cas"     003's array queue lock, ticket by CAS       syncq/lock/array.h
 *   "array-faa"     003's array queue lock, ticket by FAA       syncq/lock/array.h
 *   "mcs"           Mellor-Crummey & Scott list queue lock      syncq/lock/mcs.h
 *   "clh"           Craig, Landin & Hagersten list queue lock   syncq/lock/clh.h
 *   "mcs-tp"        time-published MCS (He, Scherer & Scott 2005):
 *                   passes over waiters whose published time is
 *                   stale (preempted); not FIFO then       syncq/lock/mcs_tp.h
 *   "clh-tp"        time-published CLH (the same paper): a waiter
 *                   removes a predecessor whose published time
 *                   is stale (preempted); not FIFO then      syncq/lock/clh_tp.h
 *   "futex-mutex"   three-state futex mutex (Drepper)           syncq/lock/futex_mutex.h
 *   "pthread-mutex" POSIX mutex, the baseline                   syncq/lock/pthread_mutex.h
 *   "ttas-ps"       001's preemption-safe TTAS (asks syncq/mp.h
 *                   not to be preempted while held)             syncq/lock/ttas_ps.h
 *   "sc-queue"      003 §3.4 scheduler-conscious queue lock,
 *                   ticket by CAS (passes over preempted waiters) syncq/lock/sc_queue.h
 *   "hybrid-sc"     the same, ticket by fetch-and-add (003's hybrid) syncq/lock/sc_queue.h
 * Unknown wait disciplines are SYNCQ_EINVAL at init; disciplines an
 * algorithm cannot use are SYNCQ_ENOTSUP. */
SYNCQ_API extern const syncq_algo syncq_lock_tas_algo;
SYNCQ_API extern const syncq_algo syncq_lock_ttas_algo;
SYNCQ_API extern const syncq_algo syncq_lock_ticket_algo;
SYNCQ_API extern const syncq_algo syncq_lock_anderson_algo;
SYNCQ_API extern const syncq_algo syncq_lock_array_cas_algo;
SYNCQ_API extern const syncq_algo syncq_lock_array_faa_algo;
SYNCQ_API extern const syncq_algo syncq_lock_mcs_algo;
SYNCQ_API extern const syncq_algo syncq_lock_clh_algo;
SYNCQ_API extern const syncq_algo syncq_lock_futex_mutex_algo;
SYNCQ_API extern const syncq_algo syncq_lock_pthread_mutex_algo;

/* ---- the generic API: a lock of any registered algorithm ---- */
typedef struct syncq_lock syncq_lock;

/* The name of the default lock (also what a NULL name means): safe with
 * more threads than processing units and fast uncontended. It is
 * SYNCQ_LOCK_DEFAULT_ALGO, the three-state futex mutex: one CAS to lock
 * and one exchange to unlock uncontended, waiters sleep in the kernel, so a
 * preempted holder or waiter costs nobody a spin (locks-cost's
 * "defaults-busy" and oversubscribed phases measure it). */
#define SYNCQ_LOCK_DEFAULT "default"
#define SYNCQ_LOCK_DEFAULT_ALGO "futex-mutex"

/* Create a lock of the named algorithm (NULL or SYNCQ_LOCK_DEFAULT: the
 * default lock, SYNCQ_LOCK_DEFAULT_ALGO; cfg NULL: defaults; no discipline
 * named: the safe default of syncq/lock.h's wait disciplines) in
 * allocated, suitably aligned storage. A created lock is private to the
 * process (its storage is malloc'ed).
 * SYNCQ_EINVAL: out is NULL, or cfg->wait is not a wait discipline
 * (syncq_wait_check). SYNCQ_ENOENT: no lock of that name is registered.
 * SYNCQ_ENOMEM: the handle or the lock's storage could not be allocated.
 * SYNCQ_ENOTSUP: the algorithm cannot wait as cfg->wait asks, or cannot
 * live in shared memory when cfg->process_shared is set. SYNCQ_ELIMIT:
 * cfg->max_threads is above the algorithm's slots (anderson, array-cas,
 * array-faa: SYNCQ_LOCK_ARRAY_MAX_SLOTS; sc-queue, hybrid-sc:
 * SYNCQ_LOCK_SC_MAX_SLOTS).
 * Thread safety: any thread, concurrently with any other call (each call
 * makes a lock of its own; the name is looked up as syncq_registry_find
 * does); not from a signal handler (malloc).
 * The lock it makes lives in this process's heap: it cannot be shared
 * between processes.
 * Progress: not a concurrent operation (the object is new): it allocates
 * (malloc) and runs the algorithm's init.
 * Example: `syncq_lock *l; int r = syncq_lock_create(SYNCQ_LOCK_DEFAULT, NULL, &l);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "lock: %s\n", syncq_strerror(r)); else { work(); syncq_lock_destroy(l); }` */
SYNCQ_API int syncq_lock_create(const char *algo, const syncq_lock_config *cfg, syncq_lock **out);
/* Destroy and free (must not be held or awaited). As for a POSIX mutex,
 * the last user may destroy and free a lock as soon
 * as it holds it and has released it, while the thread that handed it
 * over may still be inside its unlock: after the store or exchange that
 * releases the lock, no unlock (any built-in lock, any discipline, the
 * typed *_unlock and the static inline bodies alike) touches the lock or
 * a successor's node again, except for a futex wake on the hand-over
 * word's address, a system call that does no harm when the memory is
 * gone. A waiter that sleeps records it in the word it waits on (the sleep
 * mark of syncq/wait.h), so the releaser learns it from its own releasing
 * exchange. tests/lock/lock_free_after_unlock_test.c checks every lock and
 * discipline with the releaser stalled right after its hand-over. The
 * same holds for the typed *_destroy.
 * SYNCQ_EINVAL: l is NULL.
 * SYNCQ_EBUSY: the algorithm sees the lock held or awaited
 * ("pthread-mutex": pthread_mutex_destroy refused); nothing is freed and
 * the lock stays usable.
 * Thread safety: once no thread holds the lock or waits for it, by one
 * thread; the last holder may destroy it as soon as its own unlock has
 * returned, even while the thread that handed the lock over is still inside
 * its unlock (as the description says). Not from a signal handler (free).
 * Progress: not a concurrent operation: it runs alone on the lock, with no
 * other call on it to wait for (a held or awaited lock is SYNCQ_EBUSY).
 * Example: `if (syncq_lock_destroy(l) == SYNCQ_EBUSY) fputs("lock still held\n", stderr);` */
SYNCQ_API int syncq_lock_destroy(syncq_lock *l);
/* Acquire the lock, waiting for it, with the caller's node (the same node
 * for a lock and its unlock). The node may be NULL for every lock that
 * keeps no state in it (all but the queue locks "mcs", "mcs-tp", "clh",
 * "clh-tp" and the peers with the "uses-node" property,
 * SYNCQ_PROP_USES_NODE).
 * SYNCQ_EINVAL: l is NULL, node is NULL where the lock uses one, or the
 * lock's storage fails its consistency check (array-cas, array-faa: it was
 * overwritten).
 * SYNCQ_ELIMIT: "anderson" already has max_threads holders and waiters;
 * the caller holds nothing.
 * SYNCQ_EBUSY: "pthread-mutex" only: pthread_mutex_lock reported EDEADLK
 * (the calling thread holds the mutex already).
 * SYNCQ_ESYS: "pthread-mutex" only: pthread_mutex_lock failed otherwise;
 * errno holds why.
 * Thread safety: any number of threads (within the algorithm's limits:
 * anderson's max_threads, SYNCQ_ELIMIT) may lock and trylock the same lock
 * at the same time, each with a node of its own (untouched until its unlock
 * returns); not concurrently with destroy. From a signal handler: only
 * where the algorithm's contract allows it (SYNCQ_PROP_SIGNAL_SAFE in
 * syncq_lock_algo(l)->props; mostly with SPIN or YIELD only,
 * syncq_lock_discipline(l)), and never on a lock the interrupted thread may
 * hold. From a postoffice fiber: yes, but a wait holds the fiber's
 * scheduler thread (see syncq/po.h, "Blocking calls"), and a fiber must not
 * hold a lock across a call that may switch fibers (recv, yield, join,
 * sleep): it may resume on another thread, and another fiber of its
 * scheduler may be the one that waits.
 * Progress: blocking: every lock is SYNCQ_PROGRESS_BLOCKING
 * (syncq_lock_algo(l)->progress); a preempted holder stops every waiter.
 * Starvation freedom, FIFO order (SYNCQ_PROP_FIFO) and how a waiter waits
 * (spin, yield, sleep: syncq_lock_discipline) are the algorithm's; a FIFO
 * lock that blocks or competes (named, or the safe default) adds
 * syncq/lock.h's concurrency restriction (Dice & Kogan 2019: FIFO among the
 * admitted threads, starvation-free).
 * Example: `syncq_lock_node n; if (syncq_lock_lock(l, &n) == SYNCQ_OK) { work(); syncq_lock_unlock(l, &n); }`
 * (anderson past max_threads answers SYNCQ_ELIMIT, holding nothing) */
SYNCQ_API int syncq_lock_lock(syncq_lock *l, syncq_lock_node *node);
/* Try to acquire without waiting for the holder. Returns SYNCQ_OK when
 * the caller now holds the lock.
 * SYNCQ_EBUSY: another thread holds the lock or is in line for it (or won
 * the race for it); the caller holds nothing.
 * SYNCQ_EINVAL: l is NULL, node is NULL where the lock uses one, or the
 * lock's storage fails its consistency check (array-cas, array-faa).
 * SYNCQ_ELIMIT: "anderson" already has max_threads holders and waiters.
 * SYNCQ_ESYS: "pthread-mutex" only: pthread_mutex_trylock failed other
 * than with EBUSY; errno holds why.
 * Thread safety: as syncq_lock_lock. From a signal handler: where the
 * algorithm's contract (Signal-safe, in src/lock/<algo>.c) says so: most
 * locks' trylock is, pthread-mutex's is not; an EBUSY there may mean that
 * the interrupted thread holds the lock.
 * Progress: it does not wait for the holder (SYNCQ_EBUSY instead; anderson
 * returns SYNCQ_ELIMIT past its max_threads). The algorithm's class
 * (syncq_lock_algo(l)->progress) is blocking all the same: a trylock that
 * succeeds makes the others wait.
 * Example: `syncq_lock_node n; if (syncq_lock_trylock(l, &n) == SYNCQ_OK) { work(); syncq_lock_unlock(l, &n); }` */
SYNCQ_API int syncq_lock_trylock(syncq_lock *l, syncq_lock_node *node);
/* Release the lock held with this node.
 * SYNCQ_EINVAL: l is NULL, node is NULL where the lock uses one, or the
 * lock is not held as this call says: no thread holds it (every built-in
 * lock checks), node is not the holder's ("clh", "clh-tp"), the caller is
 * not the holder ("pthread-mutex"), or the lock's storage fails its
 * consistency check ("anderson", "array-cas", "array-faa").
 * SYNCQ_ESYS: "pthread-mutex" only: pthread_mutex_unlock failed; errno
 * holds why.
 * Thread safety: by the holder only, once per successful lock or trylock,
 * with the node it locked with; concurrently with other threads' lock and
 * trylock. From a signal handler: only to release a lock the handler itself
 * took. From a postoffice fiber: yes, but a wait holds the fiber's
 * scheduler thread (see syncq/po.h, "Blocking calls"), and a fiber must not
 * hold a lock across a call that may switch fibers (recv, yield, join,
 * sleep): it may resume on another thread, and another fiber of its
 * scheduler may be the one that waits.
 * Progress: the algorithm's; a queue lock's unlock may wait briefly for a
 * successor that is still linking itself in (MCS, CLH), so it is blocking
 * too (syncq_lock_algo(l)->progress).
 * Example: `syncq_lock_node n; if (syncq_lock_lock(l, &n) == SYNCQ_OK) { work(); syncq_lock_unlock(l, &n); }`
 * (the node the lock took) */
SYNCQ_API int syncq_lock_unlock(syncq_lock *l, syncq_lock_node *node);
/* The registry entry the lock was created from (NULL for NULL).
 * Thread safety: any thread, at any time between create and destroy, from a
 * signal handler too (one load).
 * Progress: wait-free. */
SYNCQ_API const syncq_algo *syncq_lock_algo(const syncq_lock *l);
/* The waiting discipline the lock uses (a syncq_wait_discipline):
 * the caller's, or the safe default chosen at create; SYNCQ_WAIT_DEFAULT
 * when the algorithm accepts none of the safe ones and uses its own;
 * -1 for NULL.
 * Thread safety: any thread, at any time between create and destroy, from a
 * signal handler too (one load).
 * Progress: wait-free. */
SYNCQ_API int syncq_lock_discipline(const syncq_lock *l);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_LOCK_H */
