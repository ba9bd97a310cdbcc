/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/pqueue.h — priority queues: the generic API and the family's ops
 * table.
 *
 * Items are a 64-bit unsigned key with a `void *` payload (any value,
 * NULL included); equal keys are allowed. delete_min() removes an item of
 * least key: SYNCQ_OK with key and payload, or SYNCQ_EMPTY. insert()
 * returns SYNCQ_ENOMEM when the queue holds `capacity` items or its node
 * pool has no free node; the structure is unchanged then.
 *
 * The algorithms (001 §4.3):
 *   "skew-lock"      skew heap under a single lock      syncq/pqueue/skew_lock.h
 *   "skew-herlihy"   Herlihy's non-blocking skew heap with optimized copying
 *                                                       syncq/pqueue/skew_herlihy.h
 *   "linden-jonsson" Lindén-Jonsson skiplist (OPODIS 2013), epoch-based
 *                    reclamation                        syncq/pqueue/linden_jonsson.h
 *
 * Every algorithm allocates its node pool at init and never after.
 */
#ifndef SYNCQ_PQUEUE_H
#define SYNCQ_PQUEUE_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCQ_PQUEUE_DEFAULT_CAPACITY 65536u /* items, when the config leaves 0 */
#define SYNCQ_PQUEUE_MAX_CAPACITY (1u << 26)
#define SYNCQ_PQUEUE_DEFAULT_THREADS 256u
#define SYNCQ_PQUEUE_MAX_THREADS 65536u

/* Options of a priority queue at init; a NULL config means the defaults. */
typedef struct syncq_pqueue_config {
  uint32_t capacity;    /* most items held at once; 0: default; > MAX: EINVAL */
  uint32_t max_threads; /* threads operating at once (sizes copy reserves); 0: default; > MAX: EINVAL */
  const char *lock;     /* lock-based queues: the lock's registry name; NULL: "ttas" (001 §4) */
} syncq_pqueue_config;

/* The priority-queue family's ops table. Every function returns a
 * syncq_status and validates its pointers (SYNCQ_EINVAL). */
typedef struct syncq_pqueue_ops {
  size_t size;
  size_t align;
  /* SYNCQ_EINVAL, SYNCQ_ENOMEM, SYNCQ_ENOENT (no such lock), SYNCQ_ENOTSUP */
  int (*init)(void *q, const syncq_pqueue_config *cfg);
  int (*destroy)(void *q);
  int (*insert)(void *q, uint64_t key, void *payload);       /* OK, ENOMEM; EINVAL: NULL q */
  int (*delete_min)(void *q, uint64_t *key, void **payload); /* OK, EMPTY; EINVAL: any NULL */
} syncq_pqueue_ops;

/* One statement registers a pqueue: its ops table (void * wrappers around
 * the typed functions, written here once) and its registry entry
 * syncq_pqueue_<algo>_algo, e.g.
 *   SYNCQ_PQUEUE_REGISTER(skew_lock, "skew-lock", "title", "paper", BLOCKING, SYNCQ_PROP_BOUNDED);
 * progress is the suffix of a SYNCQ_PROGRESS_* name, props a SYNCQ_PROP_*
 * mask.
 *   SYNCQ_PQUEUE_REGISTER: the uniform names, type syncq_pqueue_<algo> and
 *     syncq_pqueue_<algo>_init, _destroy, _insert, _delete_min.
 *   SYNCQ_PQUEUE_REGISTER_FNS: the type and functions named explicitly,
 *     for variants that share a type.
 * For C and C++ translation units. */
#define SYNCQ_PQUEUE_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn, insert_fn, \
                                  delete_min_fn)                                                                     \
  static int syncq_pqueue_##algo##_init_(void *o, const syncq_pqueue_config *cfg) { return init_fn((T *)o, cfg); }   \
  static int syncq_pqueue_##algo##_destroy_(void *o) { return destroy_fn((T *)o); }                                  \
  static int syncq_pqueue_##algo##_insert_(void *o, uint64_t key, void *payload) {                                   \
    return insert_fn((T *)o, key, payload);                                                                          \
  }                                                                                                                  \
  static int syncq_pqueue_##algo##_delete_min_(void *o, uint64_t *key, void **payload) {                             \
    return delete_min_fn((T *)o, key, payload);                                                                      \
  }                                                                                                                  \
  static const syncq_pqueue_ops syncq_pqueue_##algo##_ops_ = {                                                       \
    .size = sizeof(T),                                                                                               \
    .align = SYNCQ_ALIGNOF_(T),                                                                                      \
    .init = syncq_pqueue_##algo##_init_,                                                                             \
    .destroy = syncq_pqueue_##algo##_destroy_,                                                                       \
    .insert = syncq_pqueue_##algo##_insert_,                                                                         \
    .delete_min = syncq_pqueue_##algo##_delete_min_,                                                                 \
  };                                                                                                                 \
  const syncq_algo syncq_pqueue_##algo##_algo = {                                                                    \
    SYNCQ_FAMILY_PQUEUE, name_, title_, paper_, SYNCQ_PROGRESS_##progress_, (props_), &syncq_pqueue_##algo##_ops_,   \
  }
#define SYNCQ_PQUEUE_REGISTER(algo, name_, title_, paper_, progress_, props_)                                        \
  SYNCQ_PQUEUE_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, syncq_pqueue_##algo,                     \
                            syncq_pqueue_##algo##_init, syncq_pqueue_##algo##_destroy, syncq_pqueue_##algo##_insert, \
                            syncq_pqueue_##algo##_delete_min)

/* The registry entries (syncq/registry.h) of the built-in priority queues: name, paper, progress
 * guarantee, properties and ops table of each; run one by name with syncq_pqueue_create("name", ...). */
SYNCQ_API extern const syncq_algo syncq_pqueue_skew_lock_algo;
SYNCQ_API extern const syncq_algo syncq_pqueue_skew_herlihy_algo;
/* The registry entry of the preemption-safe variant of "skew-lock" (001 §4.3): the lock "ttas-ps"
 * (src/pqueue/skew_lock_ps.c). */
SYNCQ_API extern const syncq_algo syncq_pqueue_skew_lock_ps_algo;

typedef struct syncq_pqueue syncq_pqueue;

/* Create a priority queue of the named algorithm (cfg may be NULL:
 * defaults). SYNCQ_EINVAL: algo or out is NULL, cfg->capacity is above
 * SYNCQ_PQUEUE_MAX_CAPACITY, or cfg->max_threads above
 * SYNCQ_PQUEUE_MAX_THREADS. SYNCQ_ENOENT: no priority queue of that name is
 * registered, or (a lock-based one) cfg->lock names no registered lock.
 * SYNCQ_ENOMEM: the handle or the storage could not be allocated.
 * SYNCQ_ENOTSUP: the algorithm needs a double-width CAS this processor
 * lacks (linden-jonsson, skew-herlihy).
 * Thread safety: any thread, concurrently with any other call (each call
 * makes a priority queue of its own; the name is looked up as
 * syncq_registry_find does); not from a signal handler (malloc). The
 * priority queue it makes lives in this process's heap: it cannot be
 * shared between processes.
 * Progress: not a concurrent operation (the object is new): it allocates
 * (malloc) and runs the algorithm's init.
 * Example: `syncq_pqueue *q; int r = syncq_pqueue_create("linden-jonsson", NULL, &q);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "linden-jonsson: %s\n", syncq_strerror(r));`
 *   `else { work(); syncq_pqueue_destroy(q); }` */
SYNCQ_API int syncq_pqueue_create(const char *algo, const syncq_pqueue_config *cfg, syncq_pqueue **out);
/* Destroy a priority queue made by syncq_pqueue_create and free it.
 * SYNCQ_EINVAL: q is NULL.
 * SYNCQ_EBUSY: an insert or delete_min on it has not returned: the epoch
 * record of a linden-jonsson queue is in use, or the lock of a skew-lock
 * or skew-lock-ps queue is held; nothing is freed.
 * Thread safety: once every other call on the priority queue has returned,
 * by one thread; not from a signal handler (free).
 * Progress: not a concurrent operation: it runs alone on the priority
 * queue, with no other call on it to wait for.
 * Example: `syncq_pqueue *pq;`
 *   `if (syncq_pqueue_create("skew-lock", NULL, &pq) != SYNCQ_OK) fputs("no skew-lock\n", stderr);`
 *   `else { work(); syncq_pqueue_destroy(pq); }` */
SYNCQ_API int syncq_pqueue_destroy(syncq_pqueue *q);
/* Insert payload with priority key (the least key comes out first).
 * Returns SYNCQ_OK once it is in.
 * SYNCQ_EINVAL: q is NULL.
 * SYNCQ_ENOMEM: no node is left: the queue holds capacity items (or, in
 * skew-herlihy, its pool has no node for the copies an insert makes while
 * the heap stays unchanged), or linden-jonsson found no node come back
 * from reclamation within its patience or no epoch record could be
 * allocated; the item is not inserted.
 * SYNCQ_ELIMIT: a skew-lock queue whose cfg->lock is "anderson" is held
 * and waited for by as many threads as the lock has places (64).
 * SYNCQ_ESYS: a skew-lock queue whose cfg->lock is "pthread-mutex" and
 * pthread_mutex_lock failed; errno holds why.
 * Thread safety: as the algorithm's own insert and delete_min: any number
 * of threads may call insert and delete_min on the same priority queue at
 * the same time, never concurrently with its destroy. From a signal
 * handler: only where the algorithm's registry entry has
 * SYNCQ_PROP_SIGNAL_SAFE (syncq_pqueue_algo(q)->props); the dispatch itself
 * is one indirect call. From a postoffice fiber: yes for lock-free and
 * wait-free algorithms; a blocking one holds the fiber's scheduler thread
 * while it waits.
 * Progress: the algorithm's: syncq_pqueue_algo(q)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `static char job[] = "job"; syncq_pqueue_insert(q, 5, job);` (out before any item of key above 5) */
SYNCQ_API int syncq_pqueue_insert(syncq_pqueue *q, uint64_t key, void *payload);
/* Remove an item of least key into *key and *payload. Returns SYNCQ_OK when one
 * was taken.
 * SYNCQ_EMPTY: the priority queue held no item.
 * SYNCQ_EINVAL: q, key or payload is NULL.
 * SYNCQ_ENOMEM: linden-jonsson needed an epoch record and none could be
 * allocated, or skew-herlihy's pool has no node for the merged copy it
 * makes while the heap stays unchanged; nothing was taken.
 * SYNCQ_ELIMIT: a skew-lock queue whose cfg->lock is "anderson" is held
 * and waited for by as many threads as the lock has places (64).
 * SYNCQ_ESYS: a skew-lock queue whose cfg->lock is "pthread-mutex" and
 * pthread_mutex_lock failed; errno holds why.
 * Thread safety: as the algorithm's own insert and delete_min: any number
 * of threads may call insert and delete_min on the same priority queue at
 * the same time, never concurrently with its destroy. From a signal
 * handler: only where the algorithm's registry entry has
 * SYNCQ_PROP_SIGNAL_SAFE (syncq_pqueue_algo(q)->props); the dispatch itself
 * is one indirect call. From a postoffice fiber: yes for lock-free and
 * wait-free algorithms; a blocking one holds the fiber's scheduler thread
 * while it waits.
 * Progress: the algorithm's: syncq_pqueue_algo(q)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `uint64_t key; void *payload; int r = syncq_pqueue_delete_min(q, &key, &payload);` */
SYNCQ_API int syncq_pqueue_delete_min(syncq_pqueue *q, uint64_t *key, void **payload);
/* The registry entry of the algorithm the priority queue was created from.
 * Thread safety: any thread, at any time between create and destroy, from a
 * signal handler too (one load).
 * Progress: wait-free. */
SYNCQ_API const syncq_algo *syncq_pqueue_algo(const syncq_pqueue *q); /* NULL for NULL */

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_PQUEUE_H */
