/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tbb.cpp — oneTBB (libtbb-dev) behind the queue, priority-queue and lock
 * ops tables.
 *
 * Contract (of the adapters; the structures are TBB's, unchanged)
 *   Source:      oneTBB 2021 (Debian libtbb-dev): tbb/concurrent_queue.h
 *                (concurrent_queue, concurrent_bounded_queue),
 *                tbb/concurrent_priority_queue.h, tbb/spin_mutex.h,
 *                tbb/queuing_mutex.h.
 *   Entries:     queue "tbb:concurrent_queue" (unbounded, try_pop),
 *                queue "tbb:concurrent_bounded_queue" (set_capacity,
 *                try_push / try_pop), pqueue "tbb:concurrent_priority_queue"
 *                (least key first), lock "tbb:spin_mutex", lock
 *                "tbb:queuing_mutex" (MCS-style, FIFO).
 *   Promises:    TBB documents FIFO order per producer for its queues and
 *                no linearizability: they are registered with SYNCQ_PROP_FIFO
 *                only, and the linearizability runs report rather than
 *                assert. The priority queue serialises operations through
 *                TBB's aggregator (linearizable).
 *   Progress:    blocking (TBB's queues and its aggregator wait for other
 *                threads; the mutexes spin, the queuing mutex in FIFO order).
 *   Capacity:    the priority queue is unbounded in TBB; syncq's pqueue
 *                contract has a capacity (SYNCQ_ENOMEM when full), so the
 *                adapter keeps an item count beside it (one fetch-and-add
 *                per operation that TBB alone would not do).
 *   Memory:      made at init (new), growing by TBB's allocator
 *                (SYNCQ_PROP_ALLOCATES), freed at destroy.
 *   Locks:       spin, SYNCQ_WAIT_SPIN and the default only (TBB's spin
 *                mutex backs off and yields by itself); the queuing mutex's
 *                scoped_lock lives in the caller's syncq_lock_node.
 *   Signal-safe: no. Process-shared: no.
 */
#include <tbb/concurrent_priority_queue.h>
#include <tbb/concurrent_queue.h>
#include <tbb/queuing_mutex.h>
#include <tbb/spin_mutex.h>

#include <atomic>
#include <new>
#include <utility>

#include "peer_adapter.h"
#include "syncq/lock.h"
#include "syncq/pqueue.h"
#include "syncq/queue.h"
#include "syncq/wait.h"

namespace {

#define TBB_SOURCE "oneTBB 2021 (libtbb-dev)"

template <class T>
T *obj(peer_box *b) {
  return (b != nullptr && b->magic == PEER_MAGIC_LIVE) ? static_cast<T *>(b->obj) : nullptr;
}

bool aligned(void *p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

/* ---------------------------------------------------------------- queues */

using cq_t = tbb::concurrent_queue<void *>;
using bq_t = tbb::concurrent_bounded_queue<void *>;

int cq_bytes(size_t, size_t *b) {
  if (b == nullptr) return SYNCQ_EINVAL;
  *b = sizeof(peer_box);
  return SYNCQ_OK;
}

int bq_bytes(size_t c, size_t *b) {
  if (b == nullptr || !peer_pow2(c) || c > PEER_MAX_CAPACITY) return SYNCQ_EINVAL;
  *b = sizeof(peer_box);
  return SYNCQ_OK;
}

int cq_init(peer_box *b, size_t c) {
  if (b == nullptr || !aligned(b, alignof(peer_box))) return SYNCQ_EINVAL;
  cq_t *x = new (std::nothrow) cq_t();
  if (x == nullptr) return SYNCQ_ENOMEM;
  b->obj = x;
  b->capacity = c;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

int bq_init(peer_box *b, size_t c) {
  if (b == nullptr || !aligned(b, alignof(peer_box)) || !peer_pow2(c) || c > PEER_MAX_CAPACITY) return SYNCQ_EINVAL;
  bq_t *x = new (std::nothrow) bq_t();
  if (x == nullptr) return SYNCQ_ENOMEM;
  x->set_capacity(static_cast<bq_t::size_type>(c));
  b->obj = x;
  b->capacity = c;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

template <class T>
int destroy(peer_box *q) {
  T *x = obj<T>(q);
  if (x == nullptr) return SYNCQ_EINVAL;
  q->magic = 0;
  delete x;
  return SYNCQ_OK;
}

int cq_enqueue(peer_box *q, void *item) {
  cq_t *x = obj<cq_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  try {
    x->push(item);
  } catch (...) {
    return SYNCQ_ENOMEM;
  }
  return SYNCQ_OK;
}

int cq_dequeue(peer_box *q, void **item) {
  cq_t *x = obj<cq_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->try_pop(*item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

int bq_enqueue(peer_box *q, void *item) {
  bq_t *x = obj<bq_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  try {
    return x->try_push(item) ? SYNCQ_OK : SYNCQ_FULL;
  } catch (...) {
    return SYNCQ_ENOMEM;
  }
}

int bq_dequeue(peer_box *q, void **item) {
  bq_t *x = obj<bq_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->try_pop(*item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

/* ---------------------------------------------------------------- priority queue */

struct pq_item {
  uint64_t key;
  void *payload;
};
struct pq_greater { /* TBB pops the largest by its compare: invert it for least key first */
  bool operator()(const pq_item &a, const pq_item &b) const { return a.key > b.key; }
};
using pq_impl = tbb::concurrent_priority_queue<pq_item, pq_greater>;

struct pq_t {
  pq_impl q;
  std::atomic<uint64_t> count{0}; /* items held or being inserted (capacity) */
  uint64_t capacity;
};

int pq_init(peer_box *b, const syncq_pqueue_config *cfg) {
  if (b == nullptr || !aligned(b, alignof(peer_box))) return SYNCQ_EINVAL;
  if (cfg != nullptr && (cfg->capacity > SYNCQ_PQUEUE_MAX_CAPACITY || cfg->max_threads > SYNCQ_PQUEUE_MAX_THREADS))
    return SYNCQ_EINVAL;
  pq_t *x = new (std::nothrow) pq_t();
  if (x == nullptr) return SYNCQ_ENOMEM;
  x->capacity = cfg != nullptr && cfg->capacity != 0 ? cfg->capacity : SYNCQ_PQUEUE_DEFAULT_CAPACITY;
  b->obj = x;
  b->capacity = x->capacity;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

int pq_insert(peer_box *p, uint64_t key, void *payload) {
  pq_t *x = obj<pq_t>(p);
  if (x == nullptr) return SYNCQ_EINVAL;
  /* relaxed: the count only bounds the size; TBB's own synchronisation
   * orders the items */
  if (x->count.fetch_add(1, std::memory_order_relaxed) >= x->capacity) {
    x->count.fetch_sub(1, std::memory_order_relaxed);
    return SYNCQ_ENOMEM;
  }
  try {
    x->q.push(pq_item{key, payload});
  } catch (...) {
    x->count.fetch_sub(1, std::memory_order_relaxed);
    return SYNCQ_ENOMEM;
  }
  return SYNCQ_OK;
}

int pq_delete_min(peer_box *p, uint64_t *key, void **payload) {
  pq_t *x = obj<pq_t>(p);
  if (x == nullptr || key == nullptr || payload == nullptr) return SYNCQ_EINVAL;
  pq_item it;
  if (!x->q.try_pop(it)) return SYNCQ_EMPTY;
  x->count.fetch_sub(1, std::memory_order_relaxed); /* relaxed: as in pq_insert */
  *key = it.key;
  *payload = it.payload;
  return SYNCQ_OK;
}

/* ---------------------------------------------------------------- locks */

int lock_cfg(const syncq_lock_config *cfg) {
  if (cfg == nullptr) return SYNCQ_OK;
  if (cfg->wait < 0 || cfg->wait >= SYNCQ_WAIT_COUNT) return SYNCQ_EINVAL;
  if (cfg->wait != SYNCQ_WAIT_DEFAULT && cfg->wait != SYNCQ_WAIT_SPIN) return SYNCQ_ENOTSUP;
  if (cfg->process_shared) return SYNCQ_ENOTSUP;
  return SYNCQ_OK;
}

template <class M>
struct lock_box {
  uint64_t magic;
  M *m;
};

using spin_box = lock_box<tbb::spin_mutex>;
using queuing_box = lock_box<tbb::queuing_mutex>;

template <class M>
M *lock_of(lock_box<M> *b) {
  return (b != nullptr && b->magic == PEER_MAGIC_LIVE) ? b->m : nullptr;
}

template <class M>
int lk_init(lock_box<M> *b, const syncq_lock_config *cfg) {
  if (b == nullptr) return SYNCQ_EINVAL;
  int r = lock_cfg(cfg);
  if (r != SYNCQ_OK) return r;
  b->m = new (std::nothrow) M();
  if (b->m == nullptr) return SYNCQ_ENOMEM;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

using qlock_t = tbb::queuing_mutex::scoped_lock;
static_assert(sizeof(qlock_t) <= sizeof(syncq_lock_node), "a queuing_mutex scoped_lock fits a syncq_lock_node");
static_assert(alignof(qlock_t) <= alignof(syncq_lock_node), "and is aligned by it");

int spin_destroy(spin_box *l) {
  tbb::spin_mutex *m = lock_of<tbb::spin_mutex>(l);
  if (m == nullptr) return SYNCQ_EINVAL;
  if (!m->try_lock()) return SYNCQ_EBUSY; /* held: refuse, as syncq's locks do */
  m->unlock();
  l->magic = 0;
  delete m;
  return SYNCQ_OK;
}

int spin_lock(spin_box *l, syncq_lock_node *n) {
  tbb::spin_mutex *m = lock_of<tbb::spin_mutex>(l);
  if (m == nullptr || n == nullptr) return SYNCQ_EINVAL;
  m->lock();
  return SYNCQ_OK;
}

int spin_trylock(spin_box *l, syncq_lock_node *n) {
  tbb::spin_mutex *m = lock_of<tbb::spin_mutex>(l);
  if (m == nullptr || n == nullptr) return SYNCQ_EINVAL;
  return m->try_lock() ? SYNCQ_OK : SYNCQ_EBUSY;
}

int spin_unlock(spin_box *l, syncq_lock_node *n) {
  tbb::spin_mutex *m = lock_of<tbb::spin_mutex>(l);
  if (m == nullptr || n == nullptr) return SYNCQ_EINVAL;
  m->unlock();
  return SYNCQ_OK;
}

int queuing_destroy(queuing_box *l) {
  tbb::queuing_mutex *m = lock_of<tbb::queuing_mutex>(l);
  if (m == nullptr) return SYNCQ_EINVAL;
  {
    qlock_t probe;
    if (!probe.try_acquire(*m)) return SYNCQ_EBUSY;
    probe.release();
  }
  l->magic = 0;
  delete m;
  return SYNCQ_OK;
}

int queuing_lock(queuing_box *l, syncq_lock_node *n) {
  tbb::queuing_mutex *m = lock_of<tbb::queuing_mutex>(l);
  if (m == nullptr || n == nullptr) return SYNCQ_EINVAL;
  qlock_t *s = new (n->opaque) qlock_t();
  s->acquire(*m);
  return SYNCQ_OK;
}

int queuing_trylock(queuing_box *l, syncq_lock_node *n) {
  tbb::queuing_mutex *m = lock_of<tbb::queuing_mutex>(l);
  if (m == nullptr || n == nullptr) return SYNCQ_EINVAL;
  qlock_t *s = new (n->opaque) qlock_t();
  if (s->try_acquire(*m)) return SYNCQ_OK;
  s->~qlock_t();
  return SYNCQ_EBUSY;
}

int queuing_unlock(queuing_box *l, syncq_lock_node *n) {
  tbb::queuing_mutex *m = lock_of<tbb::queuing_mutex>(l);
  if (m == nullptr || n == nullptr) return SYNCQ_EINVAL;
  qlock_t *s = std::launder(reinterpret_cast<qlock_t *>(n->opaque));
  s->release();
  s->~qlock_t();
  return SYNCQ_OK;
}

/* Neither queue is SPINS_ON_PREEMPTED: a push (pop) waits for the
 * earlier ticket of its micro-queue (spin_wait_until_my_turn,
 * spin_wait_until_eq in _concurrent_queue_base.h), but TBB's
 * atomic_backoff yields after LOOPS_BEFORE_YIELD pauses. */
SYNCQ_QUEUE_REGISTER_FNS(tbb_cq, "tbb:concurrent_queue", "oneTBB concurrent_queue (unbounded)", TBB_SOURCE, BLOCKING,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, peer_box, cq_bytes, cq_init,
                         destroy<cq_t>, cq_enqueue, cq_dequeue);
SYNCQ_QUEUE_REGISTER_FNS(tbb_bq, "tbb:concurrent_bounded_queue", "oneTBB concurrent_bounded_queue (try_push/try_pop)",
                         TBB_SOURCE, BLOCKING,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_ALLOCATES, peer_box,
                         bq_bytes, bq_init, destroy<bq_t>, bq_enqueue, bq_dequeue);
SYNCQ_PQUEUE_REGISTER_FNS(tbb_pq, "tbb:concurrent_priority_queue", "oneTBB concurrent_priority_queue (aggregator)",
                          TBB_SOURCE, BLOCKING,
                          SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_ALLOCATES,
                          peer_box, pq_init, destroy<pq_t>, pq_insert, pq_delete_min);
SYNCQ_LOCK_REGISTER_FNS(tbb_spin, "tbb:spin_mutex", "oneTBB spin_mutex (test-and-set, backoff)", TBB_SOURCE, BLOCKING,
                        SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE, spin_box, lk_init<tbb::spin_mutex>, spin_destroy,
                        spin_lock, spin_trylock, spin_unlock);
SYNCQ_LOCK_REGISTER_FNS(tbb_queuing, "tbb:queuing_mutex", "oneTBB queuing_mutex (MCS-style queue lock)", TBB_SOURCE,
                        BLOCKING,
                        SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES |
                          SYNCQ_PROP_USES_NODE,
                        queuing_box, lk_init<tbb::queuing_mutex>, queuing_destroy, queuing_lock, queuing_trylock,
                        queuing_unlock);

const syncq_algo *const tbb_algos[] = {
  &syncq_queue_tbb_cq_algo,  &syncq_queue_tbb_bq_algo,     &syncq_pqueue_tbb_pq_algo,
  &syncq_lock_tbb_spin_algo, &syncq_lock_tbb_queuing_algo,
};

} // namespace

extern "C" int lab_peer_tbb_register(unsigned, char *why, size_t len) {
  int n = 0, st = SYNCQ_OK;
  for (const syncq_algo *a : tbb_algos) n += peer_add(a, &st);
  if (n == 0) snprintf(why, len, "registry refused: %s", syncq_strerror(st));
  return n;
}
