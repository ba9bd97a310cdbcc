/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * boost.cpp — boost.lockfree (libboost-dev) behind the queue and stack ops
 * tables.
 *
 * Contract (of the adapters; the structures are boost's, unchanged)
 *   Source:      Boost 1.74 boost.lockfree (Tim Blechmann), Debian
 *                libboost-dev: boost/lockfree/queue.hpp (Michael & Scott
 *                with tagged pointers and a node free list), stack.hpp
 *                (Treiber with tagged pointers), spsc_queue.hpp (a ring for
 *                one producer and one consumer).
 *   Entries:     queue "boost:queue", queue "boost:spsc_queue"
 *                (SYNCQ_PROP_SPSC), stack "boost:stack".
 *   Sizes:       every structure is made with its run-time size and used
 *                with the bounded operations, so it never allocates after
 *                init: queue(capacity) holds exactly capacity items
 *                (bounded_push fails past it: SYNCQ_FULL); stack(capacity)
 *                the same (SYNCQ_ENOMEM, as syncq's stacks); spsc_queue
 *                (capacity) holds exactly capacity items.
 *   Progress:    queue and stack lock-free; spsc_queue wait-free.
 *   Memory:      made at init (new), freed at destroy.
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      queue capacity a power of two >= 2 (syncq's rule for
 *                bounded queues), at most PEER_MAX_CAPACITY; items
 *                non-NULL.
 */
#include <boost/lockfree/queue.hpp>
#include <boost/lockfree/spsc_queue.hpp>
#include <boost/lockfree/stack.hpp>
#include <new>

#include "peer_adapter.h"
#include "syncq/queue.h"
#include "syncq/stack.h"

namespace {

using queue_t = boost::lockfree::queue<void *>;
using spsc_t = boost::lockfree::spsc_queue<void *>;
using stack_t_ = boost::lockfree::stack<void *>;

template <class T>
T *obj(peer_box *b) {
  return (b != nullptr && b->magic == PEER_MAGIC_LIVE) ? static_cast<T *>(b->obj) : nullptr;
}

bool aligned(void *p) { return reinterpret_cast<uintptr_t>(p) % alignof(peer_box) == 0; }

int q_bytes(size_t c, size_t *b) {
  if (b == nullptr || !peer_pow2(c) || c > PEER_MAX_CAPACITY) return SYNCQ_EINVAL;
  *b = sizeof(peer_box);
  return SYNCQ_OK;
}

template <class T>
int q_init(peer_box *b, size_t c) {
  if (b == nullptr || !aligned(b) || !peer_pow2(c) || c > PEER_MAX_CAPACITY) return SYNCQ_EINVAL;
  T *x = nullptr;
  try {
    x = new T(c);
  } catch (...) {
    return SYNCQ_ENOMEM;
  }
  b->obj = x;
  b->capacity = c;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

template <class T>
int q_destroy(peer_box *q) {
  T *x = obj<T>(q);
  if (x == nullptr) return SYNCQ_EINVAL;
  q->magic = 0;
  delete x;
  return SYNCQ_OK;
}

int queue_enqueue(peer_box *q, void *item) {
  queue_t *x = obj<queue_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->bounded_push(item) ? SYNCQ_OK : SYNCQ_FULL;
}

int queue_dequeue(peer_box *q, void **item) {
  queue_t *x = obj<queue_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->pop(*item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

int spsc_enqueue(peer_box *q, void *item) {
  spsc_t *x = obj<spsc_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->push(item) ? SYNCQ_OK : SYNCQ_FULL;
}

int spsc_dequeue(peer_box *q, void **item) {
  spsc_t *x = obj<spsc_t>(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->pop(*item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

int s_init(peer_box *b, const syncq_stack_config *cfg) {
  if (b == nullptr || !aligned(b)) return SYNCQ_EINVAL;
  if (cfg != nullptr && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  size_t cap = cfg != nullptr && cfg->capacity != 0 ? cfg->capacity : SYNCQ_STACK_DEFAULT_CAPACITY;
  stack_t_ *x = nullptr;
  try {
    x = new stack_t_(cap);
  } catch (...) {
    return SYNCQ_ENOMEM;
  }
  b->obj = x;
  b->capacity = cap;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

int s_push(peer_box *s, void *item) {
  stack_t_ *x = obj<stack_t_>(s);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->bounded_push(item) ? SYNCQ_OK : SYNCQ_ENOMEM;
}

int s_pop(peer_box *s, void **item) {
  stack_t_ *x = obj<stack_t_>(s);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->pop(*item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

#define BOOST_SOURCE "Boost 1.74 boost.lockfree (libboost-dev)"

/* Linearizable except at FULL, so not SYNCQ_PROP_LINEARIZABLE
 * (tests/support/test_queue_contract.h): bounded_push answers FULL when
 * the node pool is empty, and a node is out of the pool, yet not an item
 * of the queue, while a push that took it has not linked it (pop sees its
 * predecessor's next still NULL: EMPTY) and while a pop that unlinked the
 * old dummy has not given it back (pool.destruct after the head CAS).
 * Taking a push at its link CAS and a pop at its head CAS (Michael &
 * Scott), OK and EMPTY are linearizable; FULL alone is not. */
SYNCQ_QUEUE_REGISTER_FNS(boost_queue, "boost:queue", "boost::lockfree::queue (Michael & Scott, fixed node pool)",
                         BOOST_SOURCE, LOCK_FREE, SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED, peer_box,
                         q_bytes, q_init<queue_t>, q_destroy<queue_t>, queue_enqueue, queue_dequeue);
SYNCQ_QUEUE_REGISTER_FNS(boost_spsc, "boost:spsc_queue", "boost::lockfree::spsc_queue (one producer, one consumer)",
                         BOOST_SOURCE, WAIT_FREE,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SPSC, peer_box, q_bytes,
                         q_init<spsc_t>, q_destroy<spsc_t>, spsc_enqueue, spsc_dequeue);
SYNCQ_STACK_REGISTER_FNS(boost_stack, "boost:stack", "boost::lockfree::stack (Treiber, fixed node pool)", BOOST_SOURCE,
                         LOCK_FREE, SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_BOUNDED, peer_box, s_init,
                         q_destroy<stack_t_>, s_push, s_pop);

} // namespace

extern "C" int lab_peer_boost_register(unsigned flags, char *why, size_t len) {
  int st = SYNCQ_OK;
  int n = peer_add(&syncq_queue_boost_queue_algo, &st) + peer_add(&syncq_stack_boost_stack_algo, &st);
  if ((flags & LAB_PEERS_SPSC) != 0) n += peer_add(&syncq_queue_boost_spsc_algo, &st);
  if (n == 0) snprintf(why, len, "registry refused: %s", syncq_strerror(st));
  return n;
}
