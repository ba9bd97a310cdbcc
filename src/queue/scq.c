/*
 * scq.c — SCQ: scalable circular queue with fetch-and-add and single-width
 * CAS.
 *
 * Contract
 *   Source:      Ruslan Nikolaev, "A Scalable, Portable, and Memory-Efficient
 *                Lock-Free FIFO Queue", DISC 2019: Figure 8 (SCQ: enqueue,
 *                dequeue, catchup, the threshold against livelock), and §5's
 *                queue of pointers built from two index queues (aq: indices
 *                of filled slots, fq: indices of free slots) around an array
 *                of n slots. 004 §III cites it as the FAA-based state of the
 *                art. (Not one of the five papers; written from the paper's
 *                pseudo-code as recalled: see Deviations.)
 *   Progress:    lock-free (the threshold bounds a dequeuer's tries after
 *                the last enqueue).
 *   Atomics:     uncontended enqueue: fq dequeue (2 FAA + 1 OR, + loads) +
 *                aq enqueue (1 FAA + 1 CAS); dequeue: the same mirrored.
 *   Memory:      caller's storage (header + 5 words per item of capacity);
 *                never allocates.
 *   Signal-safe: yes as an index queue; the pointer queue's slot hand-over
 *                (write slot, then publish its index) is safe too.
 *   Process-shared: yes (no internal pointers).
 *   Limits:      capacity n a power of two >= 2; items non-NULL.
 *   Linearizable: the index rings are; the pointer queue is not at FULL: a
 *                dequeue that has taken its index from aq but not yet given
 *                it back to fq makes a concurrent enqueue see FULL with n-1
 *                items in the queue. Items come out FIFO; EMPTY is
 *                linearizable. The linearizability runs check it with a
 *                capacity no history can fill.
 *   Entries:     64 bits: cycle (high bits, compared modulo their width),
 *                is-safe (1 bit), index (order = log2(2n) bits, all ones =
 *                the empty index "bottom").
 *   Deviations:  none intended; the cache remapping of indices (to spread
 *                neighbours over cache lines) is omitted.
 *   Stats:       cas_attempts, cas_failures.
 */
#include "syncq/queue/scq.h"

#include "../stats_internal.h"
#include "syncq/queue.h"

#define SCQ_MAGIC UINT64_C(0x5343515545554531)

static inline _Atomic(uint64_t) *entries_aq(syncq_queue_scq *q) { return (_Atomic(uint64_t) *)(void *)(q + 1); }
static inline _Atomic(uint64_t) *entries_fq(syncq_queue_scq *q) { return entries_aq(q) + 2 * q->n; }
static inline _Atomic(void *) *slots_of(syncq_queue_scq *q) {
  return (_Atomic(void *) *)(void *)(entries_fq(q) + 2 * q->n);
}

typedef struct ring_view {
  syncq_queue_scq_ring *r;
  _Atomic(uint64_t) *e;
  uint64_t n;      /* capacity; the ring has 2n entries */
  uint32_t order;  /* log2(2n) */
} ring_view;

static inline uint64_t bottom(const ring_view *v) { return (UINT64_C(1) << v->order) - 1; }
static inline uint64_t e_index(const ring_view *v, uint64_t e) { return e & bottom(v); }
static inline uint64_t e_safe(const ring_view *v, uint64_t e) { return (e >> v->order) & 1; }
static inline uint64_t e_cycle(const ring_view *v, uint64_t e) { return e >> (v->order + 1); }
static inline uint64_t make_entry(const ring_view *v, uint64_t cycle, uint64_t safe, uint64_t index) {
  return (cycle << (v->order + 1)) | (safe << v->order) | index;
}
/* cycle of a Head/Tail counter, truncated to the entry's cycle bits */
static inline uint64_t c_cycle(const ring_view *v, uint64_t counter) {
  return (counter >> v->order) & (UINT64_MAX >> (v->order + 1));
}
/* a < b for cycles modulo 2^(64 - order - 1) */
static inline bool cycle_lt(const ring_view *v, uint64_t a, uint64_t b) {
  return (int64_t)((a - b) << (v->order + 1)) < 0;
}

static void ring_init(ring_view *v) {
  uint64_t two_n = 2 * v->n;
  atomic_init(&v->r->tail, two_n); /* cycle 1: entries start at cycle 0 */
  atomic_init(&v->r->head, two_n);
  atomic_init(&v->r->threshold, -1);
  for (uint64_t i = 0; i < two_n; i++) atomic_init(&v->e[i], make_entry(v, 0, 1, bottom(v)));
}

/* Figure 8, enqueue (index < n). */
static void ring_enqueue(ring_view *v, uint64_t index) {
  const uint64_t mask = 2 * v->n - 1;
  for (;;) {
    uint64_t T = atomic_fetch_add(&v->r->tail, 1);
    _Atomic(uint64_t) *ent = &v->e[T & mask];
    /* acquire: pairs with the CAS/OR of the last writer of the entry. */
    uint64_t E = atomic_load_explicit(ent, memory_order_acquire);
    for (;;) {
      if (cycle_lt(v, e_cycle(v, E), c_cycle(v, T)) && e_index(v, E) == bottom(v) &&
          (e_safe(v, E) || atomic_load(&v->r->head) <= T)) {
        SYNCQ_STAT_INC(cas_attempts);
        if (!atomic_compare_exchange_strong(ent, &E, make_entry(v, c_cycle(v, T), 1, index))) {
          SYNCQ_STAT_INC(cas_failures);
          continue; /* retry with the entry's new value */
        }
        int64_t want = (int64_t)(3 * v->n - 1);
        if (atomic_load(&v->r->threshold) != want) atomic_store(&v->r->threshold, want);
        return;
      }
      break; /* this entry cannot take it: next ticket */
    }
  }
}

static void catchup(ring_view *v, uint64_t tail, uint64_t head) {
  while (!atomic_compare_exchange_strong(&v->r->tail, &tail, head)) {
    head = atomic_load(&v->r->head);
    tail = atomic_load(&v->r->tail);
    if (tail >= head) break;
  }
}

/* Figure 8, dequeue: an index, or bottom when empty. */
static uint64_t ring_dequeue(ring_view *v) {
  const uint64_t mask = 2 * v->n - 1;
  if (atomic_load(&v->r->threshold) < 0) return bottom(v);
  for (;;) {
    uint64_t H = atomic_fetch_add(&v->r->head, 1);
    _Atomic(uint64_t) *ent = &v->e[H & mask];
    /* acquire: pairs with the enqueuer's CAS that put an index here. */
    uint64_t E = atomic_load_explicit(ent, memory_order_acquire);
    for (;;) {
      if (e_cycle(v, E) == c_cycle(v, H)) {
        /* consume: set the index bits to bottom (Atomic_OR) */
        atomic_fetch_or(ent, bottom(v));
        return e_index(v, E);
      }
      uint64_t New = make_entry(v, e_cycle(v, E), 0, e_index(v, E)); /* an old item: mark unsafe */
      if (e_index(v, E) == bottom(v)) New = make_entry(v, c_cycle(v, H), e_safe(v, E), bottom(v));
      if (cycle_lt(v, e_cycle(v, E), c_cycle(v, H))) {
        SYNCQ_STAT_INC(cas_attempts);
        if (!atomic_compare_exchange_strong(ent, &E, New)) {
          SYNCQ_STAT_INC(cas_failures);
          continue;
        }
      }
      break;
    }
    uint64_t T = atomic_load(&v->r->tail);
    if (T <= H + 1) {
      catchup(v, T, H + 1);
      atomic_fetch_sub(&v->r->threshold, 1);
      return bottom(v);
    }
    if (atomic_fetch_sub(&v->r->threshold, 1) <= 0) return bottom(v);
  }
}

static inline ring_view view_aq(syncq_queue_scq *q) { return (ring_view){&q->aq, entries_aq(q), q->n, q->order}; }
static inline ring_view view_fq(syncq_queue_scq *q) { return (ring_view){&q->fq, entries_fq(q), q->n, q->order}; }

int syncq_queue_scq_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > ((size_t)1 << 40) || capacity > (SIZE_MAX - sizeof(syncq_queue_scq)) / (5 * sizeof(uint64_t)))
    return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_SCQ_BYTES(capacity);
  return SYNCQ_OK;
}

int syncq_queue_scq_init(syncq_queue_scq *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_scq)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_scq_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  q->n = capacity;
  q->order = 0;
  while ((UINT64_C(1) << q->order) < 2 * (uint64_t)capacity) q->order++;
  ring_view aq = view_aq(q), fq = view_fq(q);
  ring_init(&aq);
  ring_init(&fq);
  _Atomic(void *) *slots = slots_of(q);
  for (size_t i = 0; i < capacity; i++) {
    atomic_init(&slots[i], NULL);
    ring_enqueue(&fq, i); /* every slot starts free */
  }
  q->magic = SCQ_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_scq_destroy(syncq_queue_scq *q) {
  if (q == NULL || q->magic != SCQ_MAGIC) return SYNCQ_EINVAL;
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_scq_enqueue(syncq_queue_scq *q, void *item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  ring_view fq = view_fq(q), aq = view_aq(q);
  uint64_t i = ring_dequeue(&fq);
  if (i == bottom(&fq)) return SYNCQ_FULL;
  /* relaxed: published by the seq_cst CAS that puts i into aq, which the
   * dequeuer reads with acquire before reading the slot. */
  atomic_store_explicit(&slots_of(q)[i], item, memory_order_relaxed);
  ring_enqueue(&aq, i);
  return SYNCQ_OK;
}

int syncq_queue_scq_dequeue(syncq_queue_scq *q, void **item) {
  if (q == NULL || item == NULL) return SYNCQ_EINVAL;
  ring_view fq = view_fq(q), aq = view_aq(q);
  uint64_t i = ring_dequeue(&aq);
  if (i == bottom(&aq)) return SYNCQ_EMPTY;
  /* relaxed: ordered after the enqueuer's store by the acquire load of the
   * aq entry that gave us i; before our fq enqueue (seq_cst) hands the slot on. */
  *item = atomic_load_explicit(&slots_of(q)[i], memory_order_relaxed);
  ring_enqueue(&fq, i);
  return SYNCQ_OK;
}

static int ops_bytes(size_t c, size_t *b) { return syncq_queue_scq_bytes(c, b); }
static int ops_init(void *q, size_t c) { return syncq_queue_scq_init(q, c); }
static int ops_destroy(void *q) { return syncq_queue_scq_destroy(q); }
static int ops_enqueue(void *q, void *item) { return syncq_queue_scq_enqueue(q, item); }
static int ops_dequeue(void *q, void **item) { return syncq_queue_scq_dequeue(q, item); }

static const syncq_queue_ops scq_ops = {
  ops_bytes, _Alignof(syncq_queue_scq), ops_init, ops_destroy, ops_enqueue, ops_dequeue,
};

const syncq_algo syncq_queue_scq_algo = {
  SYNCQ_FAMILY_QUEUE, "scq", "SCQ: scalable circular queue (fetch-and-add, single-width CAS)",
  "Nikolaev 2019 (DISC), Figure 8; cited by 004 §III", SYNCQ_PROGRESS_LOCK_FREE,
  SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED,
  &scq_ops,
};
