/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/counter.h — shared counters, the generic API and the ops table.
 *
 * A counter holds a signed 64-bit value that threads add to concurrently;
 * the value wraps modulo 2^64 like unsigned arithmetic. The algorithms
 * (003 §4.1, 001 §4) differ in how the update is made atomic:
 *   "faa"          one fetch-and-add                    syncq/counter/faa.h
 *   "cas"          load, then CAS until it succeeds      syncq/counter/cas.h
 *   "cas-backoff"  the same, with exponential backoff    syncq/counter/cas.h
 *   "aggfunnel"    adds batched through aggregators      syncq/counter/aggfunnel.h
 *   "mutex"        a pthread mutex around a plain add    syncq/counter/mutex.h
 *   "lock-*"       a plain add under a registered lock    syncq/counter/lock.h
 *
 * Typed APIs (syncq_counter_<algo>_*) work on caller-provided storage and
 * do not allocate. The generic API below looks an algorithm up by name and
 * allocates the storage.
 */
#ifndef SYNCQ_COUNTER_H
#define SYNCQ_COUNTER_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The counter family's ops table (syncq_algo.ops of a counter). Every
 * function returns a syncq_status and validates its pointers. */
typedef struct syncq_counter_ops {
  size_t size;  /* bytes of one counter */
  size_t align; /* its alignment */
  int (*init)(void *c, int64_t initial);
  int (*destroy)(void *c);
  int (*fetch_add)(void *c, int64_t delta, int64_t *old); /* old may be NULL */
  int (*load)(void *c, int64_t *value);
} syncq_counter_ops;

/* One statement registers a counter: its ops table (void * wrappers around
 * the typed functions, written here once) and its registry entry
 * syncq_counter_<algo>_algo, e.g.
 *   SYNCQ_COUNTER_REGISTER(faa, "faa", "fetch-and-add counter", "paper", WAIT_FREE, SYNCQ_PROP_LINEARIZABLE);
 * progress is the suffix of a SYNCQ_PROGRESS_* name, props a SYNCQ_PROP_*
 * mask.
 *   SYNCQ_COUNTER_REGISTER: the uniform names, type syncq_counter_<algo> and
 *     syncq_counter_<algo>_init, _destroy, _fetch_add, _load.
 *   SYNCQ_COUNTER_REGISTER_FNS: the type and functions named explicitly,
 *     for variants that share a type.
 * For C and C++ translation units. */
#define SYNCQ_COUNTER_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn,           \
                                   fetch_add_fn, load_fn)                                                            \
  static int syncq_counter_##algo##_init_(void *o, int64_t initial) { return init_fn((T *)o, initial); }             \
  static int syncq_counter_##algo##_destroy_(void *o) { return destroy_fn((T *)o); }                                 \
  static int syncq_counter_##algo##_fetch_add_(void *o, int64_t delta, int64_t *old) {                               \
    return fetch_add_fn((T *)o, delta, old);                                                                         \
  }                                                                                                                  \
  static int syncq_counter_##algo##_load_(void *o, int64_t *value) { return load_fn((T *)o, value); }                \
  static const syncq_counter_ops syncq_counter_##algo##_ops_ = {                                                     \
    .size = sizeof(T),                                                                                               \
    .align = SYNCQ_ALIGNOF_(T),                                                                                      \
    .init = syncq_counter_##algo##_init_,                                                                            \
    .destroy = syncq_counter_##algo##_destroy_,                                                                      \
    .fetch_add = syncq_counter_##algo##_fetch_add_,                                                                  \
    .load = syncq_counter_##algo##_load_,                                                                            \
  };                                                                                                                 \
  const syncq_algo syncq_counter_##algo##_algo = {                                                                   \
    SYNCQ_FAMILY_COUNTER, name_, title_, paper_, SYNCQ_PROGRESS_##progress_, (props_), &syncq_counter_##algo##_ops_, \
  }
#define SYNCQ_COUNTER_REGISTER(algo, name_, title_, paper_, progress_, props_)                     \
  SYNCQ_COUNTER_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, syncq_counter_##algo, \
                             syncq_counter_##algo##_init, syncq_counter_##algo##_destroy,          \
                             syncq_counter_##algo##_fetch_add, syncq_counter_##algo##_load)

/* The registry entries (syncq/registry.h) of the built-in counters: name, paper, progress guarantee,
 * properties and ops table of each; run one by name with syncq_counter_create("name", ...). */
SYNCQ_API extern const syncq_algo syncq_counter_faa_algo;
SYNCQ_API extern const syncq_algo syncq_counter_cas_algo;
SYNCQ_API extern const syncq_algo syncq_counter_cas_backoff_algo;
SYNCQ_API extern const syncq_algo syncq_counter_aggfunnel_algo;
SYNCQ_API extern const syncq_algo syncq_counter_mutex_algo;
/* Lock-based counters over registered locks (syncq/counter/lock.h). */
SYNCQ_API extern const syncq_algo syncq_counter_lock_ttas_algo;
SYNCQ_API extern const syncq_algo syncq_counter_lock_ticket_algo;
SYNCQ_API extern const syncq_algo syncq_counter_lock_futex_mutex_algo;
/* The registry entry of the preemption-safe variant of "lock-ttas" (001 §4.4): the lock "ttas-ps"
 * (src/counter/lock_ttas_ps.c). */
SYNCQ_API extern const syncq_algo syncq_counter_lock_ttas_ps_algo;

/* A counter of any registered algorithm, allocated by syncq_counter_create. */
typedef struct syncq_counter syncq_counter;

/* Create a counter of the named algorithm with the given initial value.
 * SYNCQ_EINVAL: algo or out is NULL. SYNCQ_ENOENT: no counter of that name
 * is registered. SYNCQ_ENOMEM: the handle or the counter's storage could
 * not be allocated. SYNCQ_ESYS: the "mutex" counter's pthread_mutex_init
 * failed.
 * Thread safety: any thread, concurrently with any other call (each call
 * makes a counter of its own; the name is looked up as syncq_registry_find
 * does); not from a signal handler (malloc).
 * The counter it makes lives in this process's heap: it cannot be shared
 * between processes.
 * Progress: not a concurrent operation (the object is new): it allocates
 * (malloc) and runs the algorithm's init.
 * Example: `syncq_counter *c; int r = syncq_counter_create("faa", 0, &c);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "faa: %s\n", syncq_strerror(r)); else { work(); syncq_counter_destroy(c); }` */
SYNCQ_API int syncq_counter_create(const char *algo, int64_t initial, syncq_counter **out);

/* Destroy the counter and free its storage and handle.
 * SYNCQ_EINVAL: c is NULL.
 * SYNCQ_EBUSY: a fetch_add or load on it has not returned: the lock of a
 * lock-based counter ("mutex", "lock-ttas", "lock-ttas-ps", "lock-ticket",
 * "lock-futex-mutex") is held; nothing is freed.
 * Thread safety: once every other call on the counter has returned, by one
 * thread; not from a signal handler (free).
 * Progress: not a concurrent operation: it runs alone on the counter, with
 * no other call on it to wait for.
 * Example: `syncq_counter *c; if (syncq_counter_create("faa", 0, &c) != SYNCQ_OK) fputs("no faa\n", stderr);`
 *   `else { work(); syncq_counter_destroy(c); }` */
SYNCQ_API int syncq_counter_destroy(syncq_counter *c);

/* Add delta; *old (if old is not NULL) receives the value before.
 * SYNCQ_EINVAL: c is NULL, or (aggfunnel) the counter's storage fails its
 * consistency check (it was overwritten).
 * Thread safety: as the algorithm's own fetch_add and load: any number of
 * threads may call fetch_add and load on the same counter at the same time,
 * never concurrently with its destroy. From a signal handler: only where
 * the algorithm's registry entry has SYNCQ_PROP_SIGNAL_SAFE
 * (syncq_counter_algo(c)->props); the dispatch itself is one indirect call.
 * From a postoffice fiber: yes for lock-free and wait-free algorithms; a
 * blocking one holds the fiber's scheduler thread while it waits.
 * Progress: the algorithm's: syncq_counter_algo(c)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `int64_t before; syncq_counter_fetch_add(c, 1, &before);` */
SYNCQ_API int syncq_counter_fetch_add(syncq_counter *c, int64_t delta, int64_t *old);

/* Read the current value into *value.
 * SYNCQ_EINVAL: c or value is NULL.
 * Thread safety: as the algorithm's own fetch_add and load: any number of
 * threads may call fetch_add and load on the same counter at the same time,
 * never concurrently with its destroy. From a signal handler: only where
 * the algorithm's registry entry has SYNCQ_PROP_SIGNAL_SAFE
 * (syncq_counter_algo(c)->props); the dispatch itself is one indirect call.
 * From a postoffice fiber: yes for lock-free and wait-free algorithms; a
 * blocking one holds the fiber's scheduler thread while it waits.
 * Progress: the algorithm's: syncq_counter_algo(c)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `int64_t v; if (syncq_counter_load(c, &v) == SYNCQ_OK) printf("%lld\n", (long long)v);` */
SYNCQ_API int syncq_counter_load(syncq_counter *c, int64_t *value);

/* The registry entry the counter was created from (NULL for NULL).
 * Thread safety: any thread, at any time between create and destroy, from a
 * signal handler too (one load).
 * Progress: wait-free. */
SYNCQ_API const syncq_algo *syncq_counter_algo(const syncq_counter *c);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_COUNTER_H */
