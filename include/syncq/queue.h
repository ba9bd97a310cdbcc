/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/queue.h — FIFO queues of pointers: the family's ops table, the
 * generic API and the built-in algorithms.
 *
 * Items are non-NULL `void *` (NULL is SYNCQ_EINVAL: several algorithms use
 * NULL as "empty cell"). enqueue returns SYNCQ_OK or SYNCQ_FULL; dequeue
 * returns SYNCQ_OK (item stored in *item) or SYNCQ_EMPTY. Full and empty
 * are outcomes, not errors.
 *
 * Capacity: the most items the queue must hold at once. Bounded queues
 * (SYNCQ_PROP_BOUNDED) hold exactly that many and need a power of two
 * >= 2 (SYNCQ_EINVAL for 0, 1 or any other value). Unbounded queues take
 * it as a sizing hint and accept any value, 0 included.
 *
 * Storage: every queue lives in caller-provided storage of ops->bytes(capacity)
 * bytes aligned to ops->align, so bounded array queues can be static, on the
 * stack or in shared memory. The generic API below allocates that storage.
 *
 * Built-in algorithms (one file each under src/queue/, contract block at
 * the top of each):
 *   "nblfq"        NBLFQ, 48+16-bit tagged cells, one CAS   004 Algorithms 1-4
 *   "nblfq2"       NBLFQ2, double-width cells, 64-bit counter  004 §IV-B
 *   "naive-ring"   reserve an index by CAS, then write (blocking) 004 §II-B
 *   "vyukov"       Vyukov's bounded MPMC queue (per-cell sequence numbers)
 *                  (not linearizable at EMPTY/FULL: see its contract)
 *   "scq"          SCQ, Nikolaev 2019: two FAA rings of indices around an array
 *                  of items, the form 004 calls SCQD (queue/scqd.h names it so)
 *                  (not linearizable at FULL)
 *   "scq-remap"    the same with Nikolaev's cache remapping (many threads at
 *                  consecutive tickets on different lines; one producer and one
 *                  consumer lose their batching)
 *   "scq2"         SCQ2, Nikolaev 2019: items in double-width cells of one FAA ring
 *                  (not linearizable at FULL)
 *   "lcrq"         LCRQ, Morrison & Afek 2013: linked FAA rings, double-width CAS
 *                  (queue/lcrq.h)
 *   "wcq"          wCQ, Nikolaev & Ravindran 2022: SCQ made wait-free (slow path, helping),
 *                  double-width CAS (queue/wcq.h) (not linearizable at FULL)
 *   "lprq"         LPRQ, Romanov & Koval 2023: LCRQ with single-width CAS rings
 *                  (queue/lprq.h)
 *   "lcrq-af"      LCRQ whose rings take head and tail tickets through aggregating
 *   "lprq-af"      funnels (Roh et al. 2025), LPRQ likewise (queue/lcrq_af.h, lprq_af.h)
 *   "wfqueue"      YMC wfqueue, Yang & Mellor-Crummey 2016: wait-free, FAA on an
 *                  infinite array of linked segments, slow path helped (queue/wfqueue.h)
 *   "loo"          LOO, Giersch & Nolte 2022: linked nodes of FAA slots, freed
 *                  deterministically (queue/loo.h)
 *   "single-lock"  linked queue behind one lock from the registry ("ttas")
 *   "two-lock"     Michael & Scott's two-lock queue               001 Figure 2
 *   "ms"           Michael & Scott non-blocking, counted pointers + free list  001 §4.1
 *   "ms-hp"        the same with hazard pointers (memory really freed)
 *   "fai-array"    fetch-and-increment array queue (tickets on a ring) 003 Figure 1
 *   "plj"          Prakash-Lee-Johnson: snapshot, help, counted pointers (queue/plj.h)
 *   "valois"       Valois, reference-counted nodes corrected per Michael & Scott TR 599
 *                  (queue/valois.h)
 */
#ifndef SYNCQ_QUEUE_H
#define SYNCQ_QUEUE_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The queue family's ops table (syncq_algo.ops of a queue). Every function
 * returns a syncq_status and validates its pointers (SYNCQ_EINVAL). */
typedef struct syncq_queue_ops {
  /* Bytes of storage a queue of this capacity needs, into *bytes.
   * SYNCQ_EINVAL for a NULL bytes or a capacity the algorithm refuses. */
  int (*bytes)(size_t capacity, size_t *bytes);
  size_t align; /* alignment the storage needs */
  /* Initialise storage of ops->bytes(capacity) bytes. Errors: SYNCQ_EINVAL
   * (NULL, misaligned, bad capacity), SYNCQ_ENOTSUP (needs a CPU feature
   * that is missing, e.g. double-width CAS), SYNCQ_ENOENT (needs a lock
   * that is not registered), SYNCQ_ENOMEM (node pool). */
  int (*init)(void *q, size_t capacity);
  int (*destroy)(void *q);
  /* SYNCQ_OK, SYNCQ_FULL, SYNCQ_EINVAL; SYNCQ_ENOMEM from queues that
   * allocate a node per item (SYNCQ_PROP_ALLOCATES) when none is left. */
  int (*enqueue)(void *q, void *item);
  int (*dequeue)(void *q, void **item); /* SYNCQ_OK, SYNCQ_EMPTY, SYNCQ_EINVAL */
} syncq_queue_ops;

/* One macro per queue builds its ops table from the typed functions
 * (themselves the static inline bodies of syncq/static/queue/<algo>.h
 * where one exists), with designated initialisers. For C and C++ translation units. */
#define SYNCQ_QUEUE_OPS(name, T, bytes_fn, init_fn, destroy_fn, enqueue_fn, dequeue_fn) \
  static int name##_bytes_(size_t c, size_t *b) { return bytes_fn(c, b); }              \
  static int name##_init_(void *q, size_t c) { return init_fn((T *)q, c); }             \
  static int name##_destroy_(void *q) { return destroy_fn((T *)q); }                    \
  static int name##_enqueue_(void *q, void *item) { return enqueue_fn((T *)q, item); }  \
  static int name##_dequeue_(void *q, void **item) { return dequeue_fn((T *)q, item); } \
  static const syncq_queue_ops name = {                                                 \
    .bytes = name##_bytes_,                                                             \
    .align = SYNCQ_ALIGNOF_(T),                                                         \
    .init = name##_init_,                                                               \
    .destroy = name##_destroy_,                                                         \
    .enqueue = name##_enqueue_,                                                         \
    .dequeue = name##_dequeue_,                                                         \
  }

/* One statement registers a queue: the ops table above (its void *
 * wrappers written here, once) and the registry entry
 * syncq_queue_<algo>_algo, e.g.
 *   SYNCQ_QUEUE_REGISTER(scq, "scq", "title", "paper", LOCK_FREE, SYNCQ_PROP_FIFO);
 * progress is the suffix of a SYNCQ_PROGRESS_* name, props a SYNCQ_PROP_*
 * mask.
 *   SYNCQ_QUEUE_REGISTER       the uniform names: type syncq_queue_<algo>,
 *                              syncq_queue_<algo>_bytes, _init, _destroy,
 *                              _enqueue, _dequeue.
 *   SYNCQ_QUEUE_REGISTER_FIXED the same without _bytes: storage that does
 *                              not grow with the capacity (linked queues)
 *                              is sizeof(syncq_queue_<algo>).
 *   SYNCQ_QUEUE_REGISTER_FNS, SYNCQ_QUEUE_REGISTER_FIXED_FNS: the type and
 *                              functions named explicitly, for entries that
 *                              share functions (scq and scq-remap) or call
 *                              the static inline bodies.
 * For C and C++ translation units. */
#define SYNCQ_QUEUE_ENTRY_(algo, name_, title_, paper_, progress_, props_)                                       \
  const syncq_algo syncq_queue_##algo##_algo = {                                                                 \
    SYNCQ_FAMILY_QUEUE, name_, title_, paper_, SYNCQ_PROGRESS_##progress_, (props_), &syncq_queue_##algo##_ops_, \
  }
#define SYNCQ_QUEUE_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, T, bytes_fn, init_fn, destroy_fn, \
                                 enqueue_fn, dequeue_fn)                                                           \
  SYNCQ_QUEUE_OPS(syncq_queue_##algo##_ops_, T, bytes_fn, init_fn, destroy_fn, enqueue_fn, dequeue_fn);            \
  SYNCQ_QUEUE_ENTRY_(algo, name_, title_, paper_, progress_, props_)
#define SYNCQ_QUEUE_REGISTER_FIXED_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn,   \
                                       enqueue_fn, dequeue_fn)                                                   \
  static int syncq_queue_##algo##_fixed_bytes_(size_t c, size_t *b) {                                            \
    (void)c;                                                                                                     \
    if (b == NULL) return SYNCQ_EINVAL;                                                                          \
    *b = sizeof(T);                                                                                              \
    return SYNCQ_OK;                                                                                             \
  }                                                                                                              \
  SYNCQ_QUEUE_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, T, syncq_queue_##algo##_fixed_bytes_, \
                           init_fn, destroy_fn, enqueue_fn, dequeue_fn)
#define SYNCQ_QUEUE_REGISTER(algo, name_, title_, paper_, progress_, props_)                                    \
  SYNCQ_QUEUE_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, syncq_queue_##algo,                  \
                           syncq_queue_##algo##_bytes, syncq_queue_##algo##_init, syncq_queue_##algo##_destroy, \
                           syncq_queue_##algo##_enqueue, syncq_queue_##algo##_dequeue)
#define SYNCQ_QUEUE_REGISTER_FIXED(algo, name_, title_, paper_, progress_, props_)                   \
  SYNCQ_QUEUE_REGISTER_FIXED_FNS(algo, name_, title_, paper_, progress_, props_, syncq_queue_##algo, \
                                 syncq_queue_##algo##_init, syncq_queue_##algo##_destroy,            \
                                 syncq_queue_##algo##_enqueue, syncq_queue_##algo##_dequeue)

/* The registry entries (syncq/registry.h) of the built-in queues: name, paper, progress guarantee,
 * properties and ops table of each; run one by name with syncq_queue_create("name", ...). */
SYNCQ_API extern const syncq_algo syncq_queue_nblfq_algo;
SYNCQ_API extern const syncq_algo syncq_queue_nblfq2_algo;
SYNCQ_API extern const syncq_algo syncq_queue_naive_ring_algo;
SYNCQ_API extern const syncq_algo syncq_queue_vyukov_algo;
SYNCQ_API extern const syncq_algo syncq_queue_scq_algo;
SYNCQ_API extern const syncq_algo syncq_queue_scq_remap_algo;
SYNCQ_API extern const syncq_algo syncq_queue_scq2_algo;
SYNCQ_API extern const syncq_algo syncq_queue_single_lock_algo;
SYNCQ_API extern const syncq_algo syncq_queue_two_lock_algo;
SYNCQ_API extern const syncq_algo syncq_queue_ms_algo;
SYNCQ_API extern const syncq_algo syncq_queue_ms_hp_algo;
SYNCQ_API extern const syncq_algo syncq_queue_fai_array_algo;
/* The registry entries of the preemption-safe single-lock and two-lock queues (001 §4.1): their locks
 * are "ttas-ps" (src/queue/single_lock_ps.c, src/queue/two_lock_ps.c). */
SYNCQ_API extern const syncq_algo syncq_queue_single_lock_ps_algo;
SYNCQ_API extern const syncq_algo syncq_queue_two_lock_ps_algo;

/* A queue of any registered algorithm, allocated by syncq_queue_create. */
typedef struct syncq_queue syncq_queue;

/* Create a queue of the named algorithm and capacity.
 * SYNCQ_EINVAL: algo or out is NULL, or the algorithm refuses capacity: a
 * bounded one (SYNCQ_PROP_BOUNDED in its registry entry's props) takes a power of two
 * >= 2, at most a maximum where its header names one (wcq: 2^40); an
 * unbounded one takes any capacity (a sizing hint it rounds and clamps,
 * nodes it makes ready at create, or nothing: its header says which).
 * SYNCQ_ENOENT: no queue of that name is registered (syncq_registry_list
 * lists them). SYNCQ_ENOMEM: the handle or the queue's storage could not be
 * allocated. SYNCQ_ENOTSUP: the algorithm needs a double-width CAS this
 * processor lacks (lcrq, lcrq-af, ms, nblfq2, plj, scq2, wcq).
 * Thread safety: any thread, concurrently with any other call (each call
 * makes a queue of its own; the name is looked up as syncq_registry_find
 * does); not from a signal handler (malloc).
 * The queue it makes lives in this process's heap: it cannot be shared
 * between processes.
 * Progress: not a concurrent operation (the object is new): it allocates
 * (malloc) and runs the algorithm's init.
 * Example: `syncq_queue *q; int r = syncq_queue_create("scq", 1024, &q);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "scq: %s\n", syncq_strerror(r)); else { work(); syncq_queue_destroy(q); }` */
SYNCQ_API int syncq_queue_create(const char *algo, size_t capacity, syncq_queue **out);

/* Destroy the queue and free its storage and handle.
 * SYNCQ_EINVAL: q is NULL.
 * SYNCQ_EBUSY: an enqueue or dequeue on the queue has not returned (its
 * hazard-pointer record or operation handle is in use: ms-hp, lcrq, lprq,
 * lcrq-af, lprq-af, wfqueue); nothing is freed.
 * Thread safety: once every other call on the queue has returned, by one
 * thread; not from a signal handler (free).
 * Progress: not a concurrent operation: it runs alone on the queue, with no
 * other call on it to wait for.
 * Example: `syncq_queue *q; if (syncq_queue_create("ms", 0, &q) != SYNCQ_OK) fputs("no ms\n", stderr);`
 *   `else { work(); syncq_queue_destroy(q); }` */
SYNCQ_API int syncq_queue_destroy(syncq_queue *q);

/* Enqueue a non-NULL item. Returns SYNCQ_OK once it is in the queue.
 * SYNCQ_FULL: a bounded queue (SYNCQ_PROP_BOUNDED) holds capacity items;
 * the item is not queued.
 * SYNCQ_EINVAL: q or item is NULL; or item has a bit set that the algorithm
 * keeps for itself (nblfq, fai-array: an address of 2^48 or more; lprq,
 * lprq-af: bit 63; loo: bit 0 or 1); or the queue's storage fails its
 * consistency check (it was overwritten).
 * SYNCQ_ENOMEM: the algorithm allocates (SYNCQ_PROP_ALLOCATES: a node, a
 * ring, a segment, a hazard-pointer record or a thread's handle) and none
 * could be had; the item is not queued.
 * SYNCQ_ELIMIT: wcq and wfqueue give each thread a number or handle of a
 * fixed table, and this thread found none free (see their headers).
 * Thread safety: as the algorithm's own enqueue and dequeue: any number of
 * threads may call enqueue and dequeue on the same queue at the same time
 * (but one producer and one consumer at a time for an algorithm flagged
 * SYNCQ_PROP_SPSC), never concurrently with its destroy. From a signal
 * handler: only where the algorithm's registry entry has
 * SYNCQ_PROP_SIGNAL_SAFE (syncq_queue_algo(q)->props); the dispatch itself
 * is one indirect call. From a postoffice fiber: yes for lock-free and
 * wait-free algorithms; a blocking one holds the fiber's scheduler thread
 * while it waits.
 * Progress: the algorithm's: syncq_queue_algo(q)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `while (syncq_queue_enqueue(q, item) == SYNCQ_FULL) syncq_yield();`
 * (a bounded queue: full until a dequeue) */
SYNCQ_API int syncq_queue_enqueue(syncq_queue *q, void *item);

/* Dequeue the oldest item into *item. Returns SYNCQ_OK when one was taken.
 * SYNCQ_EMPTY: the queue held no item.
 * SYNCQ_EINVAL: q or item is NULL, or the queue's storage fails its
 * consistency check (it was overwritten).
 * SYNCQ_ENOMEM: the algorithm needed a hazard-pointer record (ms-hp, lcrq,
 * lprq, lcrq-af, lprq-af) or a thread's handle (wfqueue) and none could be
 * allocated; nothing was taken.
 * SYNCQ_ELIMIT: wcq and wfqueue give each thread a number or handle of a
 * fixed table, and this thread found none free (see their headers).
 * Thread safety: as the algorithm's own enqueue and dequeue: any number of
 * threads may call enqueue and dequeue on the same queue at the same time
 * (but one producer and one consumer at a time for an algorithm flagged
 * SYNCQ_PROP_SPSC), never concurrently with its destroy. From a signal
 * handler: only where the algorithm's registry entry has
 * SYNCQ_PROP_SIGNAL_SAFE (syncq_queue_algo(q)->props); the dispatch itself
 * is one indirect call. From a postoffice fiber: yes for lock-free and
 * wait-free algorithms; a blocking one holds the fiber's scheduler thread
 * while it waits.
 * Progress: the algorithm's: syncq_queue_algo(q)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `void *item; while (syncq_queue_dequeue(q, &item) == SYNCQ_EMPTY) syncq_yield();` */
SYNCQ_API int syncq_queue_dequeue(syncq_queue *q, void **item);

/* The registry entry the queue was created from (NULL for NULL).
 * Thread safety: any thread, at any time between create and destroy, from a
 * signal handler too (one load).
 * Progress: wait-free.
 * Example: `puts(syncq_progress_name(syncq_queue_algo(q)->progress));` ("lock-free") */
SYNCQ_API const syncq_algo *syncq_queue_algo(const syncq_queue *q);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_QUEUE_H */
