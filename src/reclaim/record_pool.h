/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * record_pool.h — the records that epoch-based reclamation (ebr.c) and
 * hazard pointers (hazard.c) hand to the threads of a domain (internal).
 *
 * A scheme's record (its announcement or its hazard slots, its own retired
 * nodes) embeds an rpool_record: the owner word that says who holds the
 * record, and the two lists it lives on. A domain keeps a push-only list of
 * its records; a thread takes a free one by a CAS on its owner word and
 * gives it back by a store, so a record outlives the thread that used it
 * and the next thread entering the domain reuses it. When the domain is
 * destroyed its records go to the scheme's process-wide pool, for the next
 * domain; they are never freed, so a thread-local hint or cache entry that
 * still points at one is always readable (its owner word then matches
 * nothing it looks for).
 *
 * Owner word: (domain id << RPOOL_OWNER_SHIFT) | RPOOL_OWNER_ACTIVE while
 * a thread holds the record; | RPOOL_OWNER_RELEASING while its holder
 * clears it to give it back (destroy waits for that); (id <<
 * RPOOL_OWNER_SHIFT) when free in domain id; 0 in the pool (no domain id
 * is 0). Every access to it is seq_cst: taking a record orders the
 * previous holder's writes of the record before the taker's reads.
 */
#ifndef SYNCQ_RECLAIM_RECORD_POOL_H
#define SYNCQ_RECLAIM_RECORD_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"

#define RPOOL_OWNER_ACTIVE 1ull    /* a thread holds the record */
#define RPOOL_OWNER_RELEASING 2ull /* its holder is clearing it to give it back */
#define RPOOL_OWNER_SHIFT 2

typedef struct rpool_record {
  /* on its own cache line: every take and give-back writes it */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) owner;
  struct rpool_record *domain_next; /* set before the record is published, then fixed */
  struct rpool_record *pool_next;   /* under the pool's lock */
} rpool_record;

/* A scheme's pool: its records of destroyed domains, and how to allocate
 * a new one (the size of the scheme's record and the offset of its
 * rpool_record). */
typedef struct rpool {
  pthread_mutex_t lock;
  rpool_record *free;
  size_t size;
  size_t offset;
} rpool;

#define RPOOL_INIT(type, member) \
  { PTHREAD_MUTEX_INITIALIZER, NULL, sizeof(type), offsetof(type, member) }

/* The record of type `type` whose rpool_record `member` is at ptr. */
#define RPOOL_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* A domain's records. */
typedef struct rpool_domain {
  _Atomic(rpool_record *) records; /* push-only while the domain lives */
  _Atomic(size_t) nrecords;
  uint64_t id; /* never 0, never reused in the process */
} rpool_domain;

/* An empty domain with a fresh id (shared by both schemes' domains). */
void rpool_domain_init(rpool_domain *d);

static inline rpool_record *rpool_first(rpool_domain *d) { return atomic_load(&d->records); }

/* True if r is held (by any thread, in any domain). */
static inline bool rpool_is_held(rpool_record *r) { return (atomic_load(&r->owner) & RPOOL_OWNER_ACTIVE) != 0; }

/* True if r is held in domain id and not being given back. */
static inline bool rpool_held_in(rpool_record *r, uint64_t id) {
  return atomic_load(&r->owner) == ((id << RPOOL_OWNER_SHIFT) | RPOOL_OWNER_ACTIVE);
}

/* Take r if it is free in domain id. */
bool rpool_try_take(rpool_record *r, uint64_t id);

/* Take the first free record of d; NULL if every record is held. */
rpool_record *rpool_take_free(rpool_domain *d);

/* A record for d, held by the caller: one of the pool's or a new one
 * (zeroed). The caller sets the scheme's fields, then publishes it with
 * rpool_publish. NULL when there is no memory. */
rpool_record *rpool_alloc(rpool *p);

/* Mark r (from rpool_alloc) held in d and push it on d's list; the seq_cst
 * CAS of the push orders the caller's initialisation before any thread
 * that finds r through the list. */
void rpool_publish(rpool_domain *d, rpool_record *r);

/* Give back a record held in domain id: free in id again. */
void rpool_give_back(rpool_record *r, uint64_t id);

/* Start giving back a record this thread holds in domain id: true if it is
 * still held there (it is now marked RELEASING: clear it, then call
 * rpool_give_back), false if it is no longer ours (its domain was
 * destroyed and the record went to the pool). */
bool rpool_begin_release(rpool_record *r, uint64_t id);

/* Destroy: hand every record of d, with clean(record, ctx) called on each
 * once no thread can take it, to the pool p. Waits out a holder that is
 * giving its record back (RELEASING); takes records from threads that
 * keep them (their hints and caches then match nothing). The caller
 * guarantees that no thread uses d meanwhile but such a give-back. */
void rpool_domain_drain(rpool *p, rpool_domain *d, void (*clean)(rpool_record *r, void *ctx), void *ctx);

#endif
