/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * record_pool.c — the records of the reclamation schemes (record_pool.h).
 *
 * Contract
 *   Source:      the per-thread records of M. M. Michael, "Hazard
 *                pointers", IEEE TPDS 15(6), 2004, Figure 3 (a record is
 *                taken by a CAS on its active flag, given back by a store,
 *                and reused by the next thread: records are never freed),
 *                used for the epoch records of ebr.c too.
 *   Progress:    take and give back are lock-free (a CAS per record
 *                tried, a store); rpool_alloc takes a mutex (the pool's),
 *                once per record a domain grows by; drain waits for a
 *                holder that is giving its record back.
 *   Atomics:     take: 1 CAS per record tried; give back: 1 store;
 *                publish: 1 CAS (+ retries) + 1 FAA. All seq_cst.
 *   Memory:      records are allocated cache-line aligned and never
 *                freed while the process lives (a stale hint stays
 *                readable); a destroyed domain's go to the pool.
 *   Signal-safe: no (rpool_alloc allocates and locks).
 *   Process-shared: no.
 */
#include "record_pool.h"

#include <string.h>

#include "syncq/platform.h"

static _Atomic(uint64_t) next_domain_id = 1;

void rpool_domain_init(rpool_domain *d) {
  atomic_init(&d->records, NULL);
  atomic_init(&d->nrecords, 0);
  d->id = atomic_fetch_add(&next_domain_id, 1);
}

bool rpool_try_take(rpool_record *r, uint64_t id) {
  uint64_t want = id << RPOOL_OWNER_SHIFT;
  return atomic_compare_exchange_strong(&r->owner, &want, (id << RPOOL_OWNER_SHIFT) | RPOOL_OWNER_ACTIVE);
}

rpool_record *rpool_take_free(rpool_domain *d) {
  for (rpool_record *r = rpool_first(d); r != NULL; r = r->domain_next)
    if (rpool_try_take(r, d->id)) return r;
  return NULL;
}

rpool_record *rpool_alloc(rpool *p) {
  pthread_mutex_lock(&p->lock);
  rpool_record *r = p->free;
  if (r != NULL) p->free = r->pool_next;
  pthread_mutex_unlock(&p->lock);
  if (r != NULL) return r;
  char *mem = syncq_alloc_aligned(p->size, SYNCQ_CACHELINE);
  if (mem == NULL) return NULL;
  memset(mem, 0, p->size);
  r = (rpool_record *)(void *)(mem + p->offset);
  atomic_init(&r->owner, 0);
  return r;
}

void rpool_publish(rpool_domain *d, rpool_record *r) {
  atomic_store(&r->owner, (d->id << RPOOL_OWNER_SHIFT) | RPOOL_OWNER_ACTIVE);
  rpool_record *head = atomic_load(&d->records);
  do r->domain_next = head;
  while (!atomic_compare_exchange_weak(&d->records, &head, r));
  atomic_fetch_add(&d->nrecords, 1);
}

void rpool_give_back(rpool_record *r, uint64_t id) { atomic_store(&r->owner, id << RPOOL_OWNER_SHIFT); }

bool rpool_begin_release(rpool_record *r, uint64_t id) {
  uint64_t held = (id << RPOOL_OWNER_SHIFT) | RPOOL_OWNER_ACTIVE;
  return atomic_compare_exchange_strong(&r->owner, &held, held | RPOOL_OWNER_RELEASING);
}

void rpool_domain_drain(rpool *p, rpool_domain *d, void (*clean)(rpool_record *r, void *ctx), void *ctx) {
  rpool_record *r = rpool_first(d);
  while (r != NULL) {
    rpool_record *next = r->domain_next; /* read first: the pool hands r on */
    for (;;) {
      uint64_t o = atomic_load(&r->owner);
      if (o & RPOOL_OWNER_RELEASING) { /* a thread exit is clearing it */
        syncq_yield();
        continue;
      }
      if (atomic_compare_exchange_strong(&r->owner, &o, 0)) break; /* no id is 0: no hint matches */
    }
    clean(r, ctx);
    pthread_mutex_lock(&p->lock);
    r->pool_next = p->free;
    p->free = r;
    pthread_mutex_unlock(&p->lock);
    r = next;
  }
}
