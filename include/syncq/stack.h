/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/stack.h — LIFO stacks: the generic API and the family's ops table.
 *
 * A stack holds non-NULL `void *` items. push() returns SYNCQ_OK, or
 * SYNCQ_ENOMEM when the stack's node pool (sized at init by
 * syncq_stack_config.capacity) has no free node; the stack is unchanged
 * then. pop() returns SYNCQ_OK with the item, or SYNCQ_EMPTY.
 *
 * The algorithms (001 §4.2 and the references it cites):
 *   "lock"           single lock around a linked list  syncq/stack/lock.h
 *   "treiber"        Treiber 1986: CAS on a tagged Top  syncq/stack/treiber.h
 *   "herlihy"        Herlihy 1993, optimized as in 001 §4.2: each operation
 *                    builds a private copy of Top and swings a shared
 *                    pointer to it                       syncq/stack/herlihy.h
 *   "treiber-hp"     Treiber with hazard pointers (Michael 2004), malloc'd
 *                    nodes, unbounded                    syncq/stack/treiber_hp.h
 *   "elimination"    elimination-backoff stack (Hendler, Shavit &
 *                    Yerushalmi 2004)                    syncq/stack/elimination.h
 *
 * Every algorithm but "treiber-hp" allocates its node pool at init and
 * never after (nodes are type-stable: recycled, never freed, until
 * destroy); "treiber-hp" allocates a node per push and frees it through
 * hazard pointers (SYNCQ_PROP_ALLOCATES, not SYNCQ_PROP_BOUNDED). Typed APIs
 * (syncq_stack_<algo>_*) work on caller-provided storage for the structure
 * itself; the generic API looks an algorithm up by name and allocates.
 */
#ifndef SYNCQ_STACK_H
#define SYNCQ_STACK_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nodes in the pool when the config leaves capacity 0. */
#define SYNCQ_STACK_DEFAULT_CAPACITY 65536u
/* Largest capacity any stack accepts (node indices are 32-bit). */
#define SYNCQ_STACK_MAX_CAPACITY (1u << 28)
/* Threads that may operate at once when the config leaves max_threads 0. */
#define SYNCQ_STACK_DEFAULT_THREADS 256u
/* Largest max_threads. */
#define SYNCQ_STACK_MAX_THREADS 65536u

/* Options of a stack at init; a NULL config means the defaults. */
typedef struct syncq_stack_config {
  uint32_t capacity;    /* most items held at once (nodes in the pool); 0: default; > MAX: EINVAL */
  uint32_t max_threads; /* threads operating at once (Herlihy's private copies); 0: default; > MAX: EINVAL */
  const char *lock;     /* lock-based stacks: the lock's registry name; NULL: "ttas" (001 §4) */
} syncq_stack_config;

/* The stack family's ops table (syncq_algo.ops of a stack). Every function
 * returns a syncq_status and validates its pointers (SYNCQ_EINVAL). */
typedef struct syncq_stack_ops {
  size_t size;  /* bytes of one stack */
  size_t align; /* its alignment */
  /* SYNCQ_EINVAL (NULL s, bad config), SYNCQ_ENOMEM (pool allocation),
   * SYNCQ_ENOENT (lock-based: no such lock registered), SYNCQ_ENOTSUP. */
  int (*init)(void *s, const syncq_stack_config *cfg);
  int (*destroy)(void *s);          /* frees the pool; items still held are dropped */
  int (*push)(void *s, void *item); /* SYNCQ_OK, SYNCQ_ENOMEM; EINVAL: NULL s or item */
  /* SYNCQ_OK, SYNCQ_EMPTY; EINVAL: NULL s or item; ENOMEM only from
   * algorithms that allocate (a hazard record could not be allocated) */
  int (*pop)(void *s, void **item);
} syncq_stack_ops;

/* One statement registers a stack: its ops table (void * wrappers around
 * the typed functions, written here once) and its registry entry
 * syncq_stack_<algo>_algo, e.g.
 *   SYNCQ_STACK_REGISTER(treiber, "treiber", "title", "paper", LOCK_FREE, SYNCQ_PROP_BOUNDED);
 * progress is the suffix of a SYNCQ_PROGRESS_* name, props a SYNCQ_PROP_*
 * mask.
 *   SYNCQ_STACK_REGISTER: the uniform names, type syncq_stack_<algo> and
 *     syncq_stack_<algo>_init, _destroy, _push, _pop.
 *   SYNCQ_STACK_REGISTER_FNS: the type and functions named explicitly,
 *     for variants that share a type.
 * For C and C++ translation units. */
#define SYNCQ_STACK_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, T, init_fn, destroy_fn, push_fn, \
                                 pop_fn)                                                                          \
  static int syncq_stack_##algo##_init_(void *o, const syncq_stack_config *cfg) { return init_fn((T *)o, cfg); }  \
  static int syncq_stack_##algo##_destroy_(void *o) { return destroy_fn((T *)o); }                                \
  static int syncq_stack_##algo##_push_(void *o, void *item_) { return push_fn((T *)o, item_); }                  \
  static int syncq_stack_##algo##_pop_(void *o, void **item_) { return pop_fn((T *)o, item_); }                   \
  static const syncq_stack_ops syncq_stack_##algo##_ops_ = {                                                      \
    .size = sizeof(T),                                                                                            \
    .align = SYNCQ_ALIGNOF_(T),                                                                                   \
    .init = syncq_stack_##algo##_init_,                                                                           \
    .destroy = syncq_stack_##algo##_destroy_,                                                                     \
    .push = syncq_stack_##algo##_push_,                                                                           \
    .pop = syncq_stack_##algo##_pop_,                                                                             \
  };                                                                                                              \
  const syncq_algo syncq_stack_##algo##_algo = {                                                                  \
    SYNCQ_FAMILY_STACK, name_, title_, paper_, SYNCQ_PROGRESS_##progress_, (props_), &syncq_stack_##algo##_ops_,  \
  }
#define SYNCQ_STACK_REGISTER(algo, name_, title_, paper_, progress_, props_)                                   \
  SYNCQ_STACK_REGISTER_FNS(algo, name_, title_, paper_, progress_, props_, syncq_stack_##algo,                 \
                           syncq_stack_##algo##_init, syncq_stack_##algo##_destroy, syncq_stack_##algo##_push, \
                           syncq_stack_##algo##_pop)

/* The registry entries (syncq/registry.h) of the built-in stacks: name, paper, progress guarantee,
 * properties and ops table of each; run one by name with syncq_stack_create("name", ...). */
SYNCQ_API extern const syncq_algo syncq_stack_lock_algo;
SYNCQ_API extern const syncq_algo syncq_stack_treiber_algo;
SYNCQ_API extern const syncq_algo syncq_stack_herlihy_algo;
SYNCQ_API extern const syncq_algo syncq_stack_treiber_hp_algo;
SYNCQ_API extern const syncq_algo syncq_stack_elimination_algo;
/* The registry entry of the preemption-safe variant of "lock" (001 §4.2): the lock "ttas-ps"
 * (src/stack/lock_ps.c). */
SYNCQ_API extern const syncq_algo syncq_stack_lock_ps_algo;

/* A stack of any registered algorithm, allocated by syncq_stack_create. */
typedef struct syncq_stack syncq_stack;

/* Create a stack of the named algorithm (cfg may be NULL: defaults).
 * SYNCQ_EINVAL: algo or out is NULL, cfg->capacity is above
 * SYNCQ_STACK_MAX_CAPACITY, or cfg->max_threads above
 * SYNCQ_STACK_MAX_THREADS. SYNCQ_ENOENT: no stack of that name is
 * registered, or (a lock-based stack) cfg->lock names no registered lock.
 * SYNCQ_ENOMEM: the handle, the storage or the node pool could not be
 * allocated. SYNCQ_ENOTSUP: the algorithm needs a double-width CAS this
 * processor lacks (treiber).
 * Thread safety: any thread, concurrently with any other call (each call
 * makes a stack of its own; the name is looked up as syncq_registry_find
 * does); not from a signal handler (malloc).
 * The stack it makes lives in this process's heap: it cannot be shared
 * between processes.
 * Progress: not a concurrent operation (the object is new): it allocates
 * (malloc) and runs the algorithm's init.
 * Example: `syncq_stack *s; int r = syncq_stack_create("treiber", NULL, &s);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "treiber: %s\n", syncq_strerror(r));`
 *   `else { work(); syncq_stack_destroy(s); }` */
SYNCQ_API int syncq_stack_create(const char *algo, const syncq_stack_config *cfg, syncq_stack **out);
/* Destroy a stack made by syncq_stack_create and free it.
 * SYNCQ_EINVAL: s is NULL.
 * SYNCQ_EBUSY: a push or pop on the stack has not returned: treiber-hp's
 * hazard-pointer record is in use, or the lock of a "lock" or "lock-ps"
 * stack is held; nothing is freed.
 * Thread safety: once every other call on the stack has returned, by one
 * thread; not from a signal handler (free).
 * Progress: not a concurrent operation: it runs alone on the stack, with no
 * other call on it to wait for.
 * Example: `syncq_stack *s; if (syncq_stack_create("treiber", NULL, &s) != SYNCQ_OK) fputs("no treiber\n", stderr);`
 *   `else { work(); syncq_stack_destroy(s); }` */
SYNCQ_API int syncq_stack_destroy(syncq_stack *s);
/* Push item on the stack. Returns SYNCQ_OK once it is the top.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: no node is left: the capacity nodes of herlihy,
 * elimination and lock stacks are all in the stack; in treiber, every node
 * not in the stack sits in a thread's cache (up to
 * SYNCQ_STACK_TREIBER_CACHE_NODES nodes per thread that has used the stack,
 * exited threads included: syncq/stack/treiber.h); or (treiber-hp) a node
 * could not be allocated; the item is not pushed.
 * SYNCQ_ELIMIT: a "lock" stack whose cfg->lock is "anderson" is held and
 * waited for by as many threads as the lock has places (64).
 * SYNCQ_ESYS: a "lock" stack whose cfg->lock is "pthread-mutex" and
 * pthread_mutex_lock failed; errno holds why.
 * Thread safety: as the algorithm's own push and pop: any number of threads
 * may call push and pop on the same stack at the same time, never
 * concurrently with its destroy. From a signal handler: only where the
 * algorithm's registry entry has SYNCQ_PROP_SIGNAL_SAFE
 * (syncq_stack_algo(s)->props); the dispatch itself is one indirect call.
 * From a postoffice fiber: yes for lock-free and wait-free algorithms; a
 * blocking one holds the fiber's scheduler thread while it waits.
 * Progress: the algorithm's: syncq_stack_algo(s)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `int r = syncq_stack_push(s, item);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "push: %s\n", syncq_strerror(r));` */
SYNCQ_API int syncq_stack_push(syncq_stack *s, void *item);
/* Pop the newest item into *item. Returns SYNCQ_OK when one was taken.
 * SYNCQ_EMPTY: the stack held no item.
 * SYNCQ_EINVAL: s or item is NULL.
 * SYNCQ_ENOMEM: treiber-hp needed a hazard-pointer record and none could
 * be allocated; nothing was taken.
 * SYNCQ_ELIMIT: a "lock" stack whose cfg->lock is "anderson" is held and
 * waited for by as many threads as the lock has places (64).
 * SYNCQ_ESYS: a "lock" stack whose cfg->lock is "pthread-mutex" and
 * pthread_mutex_lock failed; errno holds why.
 * Thread safety: as the algorithm's own push and pop: any number of threads
 * may call push and pop on the same stack at the same time, never
 * concurrently with its destroy. From a signal handler: only where the
 * algorithm's registry entry has SYNCQ_PROP_SIGNAL_SAFE
 * (syncq_stack_algo(s)->props); the dispatch itself is one indirect call.
 * From a postoffice fiber: yes for lock-free and wait-free algorithms; a
 * blocking one holds the fiber's scheduler thread while it waits.
 * Progress: the algorithm's: syncq_stack_algo(s)->progress
 * (syncq_progress_name names it; its registry entry and the contract block
 * of its source file say why); the generic call adds one indirect call.
 * Example: `void *top; if (syncq_stack_pop(s, &top) == SYNCQ_EMPTY) puts("empty");` */
SYNCQ_API int syncq_stack_pop(syncq_stack *s, void **item);
/* The registry entry of the algorithm the stack was created from.
 * Thread safety: any thread, at any time between create and destroy, from a
 * signal handler too (one load).
 * Progress: wait-free. */
SYNCQ_API const syncq_algo *syncq_stack_algo(const syncq_stack *s); /* NULL for NULL */

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STACK_H */
