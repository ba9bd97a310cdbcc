/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/registry.h — every algorithm, by family and name.
 *
 * Each algorithm publishes one syncq_algo: its family, its name as the
 * literature names it, the paper it follows, its progress guarantee, its
 * properties, and a family-specific ops table (syncq_counter_ops, ...), so a
 * workload can run any algorithm by name. A peer library's algorithm joins
 * by syncq_registry_add() of one more entry.
 *
 * Thread safety: lookups and listing may run concurrently with each other
 * and with syncq_registry_add(); entries are never removed.
 */
#ifndef SYNCQ_REGISTRY_H
#define SYNCQ_REGISTRY_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum syncq_family {
  SYNCQ_FAMILY_LOCK,
  SYNCQ_FAMILY_BARRIER,
  SYNCQ_FAMILY_COUNTER,
  SYNCQ_FAMILY_QUEUE,
  SYNCQ_FAMILY_STACK,
  SYNCQ_FAMILY_PQUEUE,
  SYNCQ_FAMILY_COUNT /* number of families, not a family */
} syncq_family;

typedef enum syncq_progress {
  SYNCQ_PROGRESS_BLOCKING,    /* a stalled thread can stop the others (locks) */
  SYNCQ_PROGRESS_OBSTRUCTION, /* obstruction-free */
  SYNCQ_PROGRESS_LOCK_FREE,   /* some thread always completes */
  SYNCQ_PROGRESS_WAIT_FREE    /* every thread completes in bounded steps */
} syncq_progress;

/* Properties an algorithm promises (bit set). Validation drivers check the
 * promised ones and say which they skip. */
enum {
  SYNCQ_PROP_LINEARIZABLE = 1u << 0,   /* operations appear atomic */
  SYNCQ_PROP_FIFO = 1u << 1,           /* FIFO (queues; FIFO locks) */
  SYNCQ_PROP_BOUNDED = 1u << 2,        /* fixed capacity; can be full */
  SYNCQ_PROP_ALLOCATES = 1u << 3,      /* allocates after init */
  SYNCQ_PROP_SIGNAL_SAFE = 1u << 4,    /* usable from a signal handler */
  SYNCQ_PROP_PROCESS_SHARED = 1u << 5, /* can live in memory shared by processes */
  SYNCQ_PROP_PEER = 1u << 6,           /* from a peer library, not syncq */
  /* One producer and one consumer at a time only (SPSC rings): drivers and
   * experiments run it with one thread on each side or not at all. */
  SYNCQ_PROP_SPSC = 1u << 7,
  /* Bounded, but FULL comes somewhere between capacity and 2 x capacity
   * items (peer rings that keep one slot empty get a ring of 2 x capacity):
   * drivers check capacity items fit and FULL comes by 2 x capacity. */
  SYNCQ_PROP_LOOSE_CAPACITY = 1u << 8,
  /* Locks: the algorithm's own default discipline already sleeps (mutexes);
   * the generic lock API keeps it instead of the safe default (lock.h). */
  SYNCQ_PROP_SLEEPS_BY_DEFAULT = 1u << 9,
  /* Queues ("spins-on-preempted"): an operation may busy-wait, inside the
   * call and without ever yielding, for a slot (or a tail) that another
   * thread claimed but has not yet completed: bounded rings whose
   * producers wait for earlier claimers to publish (ck_ring MPMC, DPDK
   * rte_ring). If that thread is preempted, the caller spins until the
   * scheduler runs it again, so with more threads than processing units
   * an operation can stall for a scheduler quantum or more. Not set on
   * structures that answer FULL/EMPTY instead of waiting (Vyukov's ring),
   * that yield while they wait (syncq's naive ring and f&i array queue),
   * or whose waiting is a lock's discipline (the lock-based queues):
   * stress drivers and experiments oversubscribe the ones that have it
   * less. */
  SYNCQ_PROP_SPINS_ON_PREEMPTED = 1u << 10,
  /* Locks ("uses-node"): lock, trylock and unlock keep state in the
   * caller's syncq_lock_node (queue locks: MCS, CLH), so the generic API
   * refuses a NULL node for them; it accepts NULL for every other lock. */
  SYNCQ_PROP_USES_NODE = 1u << 11
};

/* The alignment of a type, for the family headers' registration macros,
 * which C and C++ translation units both expand (the lab's C++ peers). */
#ifdef __cplusplus
#define SYNCQ_ALIGNOF_(T) alignof(T)
#else
#define SYNCQ_ALIGNOF_(T) _Alignof(T)
#endif

typedef struct syncq_algo {
  syncq_family family;
  const char *name;  /* unique within the family, e.g. "faa" */
  const char *title; /* one line, e.g. "fetch-and-add counter" */
  const char *paper; /* source, e.g. "003 §4.1, Figure 3" */
  syncq_progress progress;
  uint32_t props;  /* SYNCQ_PROP_* */
  const void *ops; /* the family's ops table (syncq_counter_ops, ...) */
} syncq_algo;

/* The name of family f: "lock", "barrier", "counter", "queue", "stack",
 * "pqueue"; NULL when f is not a family.
 * Thread safety: any thread, any time, from a signal handler too (it reads
 * a constant table).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_family_name(syncq_family f);

/* Parse a family name into *out.
 * SYNCQ_ENOENT: name is no family's ("queue", "stack", ...).
 * SYNCQ_EINVAL: name or out is NULL.
 * Thread safety: any thread, any time, from a signal handler too (strcmp
 * against a constant table).
 * Progress: wait-free.
 * Example: `syncq_family f;`
 *   `if (syncq_family_from_name("queue", &f) != SYNCQ_OK) fputs("no queue family\n", stderr);` */
SYNCQ_API int syncq_family_from_name(const char *name, syncq_family *out);

/* The name of progress class p: "blocking", "obstruction-free",
 * "lock-free", "wait-free"; NULL otherwise.
 * Thread safety: any thread, any time, from a signal handler too.
 * Progress: wait-free.
 * Example: `const syncq_algo *a;`
 *   `if (syncq_registry_find(SYNCQ_FAMILY_QUEUE, "scq", &a) == SYNCQ_OK) puts(syncq_progress_name(a->progress));`
 *   `else fputs("no scq\n", stderr);` */
SYNCQ_API const char *syncq_progress_name(syncq_progress p);

/* Comma-separated names of the properties in props ("fifo,bounded"), or
 * "-" for none, written to buf (NUL-terminated, truncated to len).
 * Returns the length the full text needs (0 or more).
 * SYNCQ_EINVAL: buf is NULL with len > 0.
 * Thread safety: any thread, any time (it writes only buf); not from a
 * signal handler (snprintf is not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API int syncq_props_format(uint32_t props, char *buf, size_t len);

/* Parse a comma-separated list of property names, as syncq_props_format
 * writes it ("fifo,bounded", or "-" for none; spaces around names are not
 * allowed) into *out. *out is written only on SYNCQ_OK.
 * SYNCQ_ENOENT: a name is unknown or empty (",,", a trailing ",").
 * SYNCQ_EINVAL: text or out is NULL.
 * Thread safety: any thread, any time, from a signal handler too (string
 * compares against a constant table; it writes only *out).
 * Progress: wait-free. */
SYNCQ_API int syncq_props_parse(const char *text, uint32_t *out);

/* Find an algorithm of family f by name, into *out.
 * SYNCQ_ENOENT: the family has no algorithm of that name.
 * SYNCQ_EINVAL: name or out is NULL, or f is not a family.
 * Thread safety: any thread, concurrently with other lookups, listings and
 * syncq_registry_add (an entry added meanwhile may or may not be seen);
 * not from a signal handler.
 * Progress: wait-free (a scan of at most SYNCQ_REGISTRY_MAX entries, no
 * lock).
 * Example: `const syncq_algo *a;`
 *   `if (syncq_registry_find(SYNCQ_FAMILY_QUEUE, "scq", &a) != SYNCQ_OK) fputs("no scq\n", stderr);` */
SYNCQ_API int syncq_registry_find(syncq_family f, const char *name, const syncq_algo **out);

/* List the family's algorithms, in registration order: writes up to cap
 * pointers into out (out may be NULL when cap is 0) and returns how many
 * there are in all (0 or more).
 * SYNCQ_EINVAL: f is not a family, or out is NULL with cap > 0.
 * Thread safety: as syncq_registry_find (an entry added during the call
 * may or may not be listed).
 * Progress: as syncq_registry_find. */
SYNCQ_API int syncq_registry_list(syncq_family f, const syncq_algo **out, size_t cap);

/* Register one more algorithm (the entry is referenced, not copied: it must
 * outlive every use).
 * SYNCQ_EINVAL: algo is NULL, its family is not one, its name is NULL or
 * empty, it has no ops table, or its progress is no syncq_progress class.
 * SYNCQ_EEXIST: the name is taken in that family.
 * SYNCQ_ELIMIT: the registry holds SYNCQ_REGISTRY_MAX entries already.
 * Thread safety: any thread, concurrently with lookups, listings and other
 * adds (adds take one mutex in turn); not from a signal handler.
 * Progress: blocking (a process-wide mutex, held for a scan of the
 * entries). */
SYNCQ_API int syncq_registry_add(const syncq_algo *algo);

/* Most entries the registry holds, built-in and added together. */
#define SYNCQ_REGISTRY_MAX 256

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_REGISTRY_H */
