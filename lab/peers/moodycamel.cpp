/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * moodycamel.cpp — moodycamel::ConcurrentQueue (libconcurrentqueue-dev)
 * behind the queue ops table.
 *
 * Contract (of the adapter; the queue is Cameron Desrochers', unchanged)
 *   Source:      moodycamel::ConcurrentQueue 1.0 (Debian
 *                libconcurrentqueue-dev), concurrentqueue.h: enqueue() and
 *                try_dequeue() without tokens (an implicit producer
 *                sub-queue per thread).
 *   Entry:       queue "moodycamel:concurrentqueue".
 *   Promises:    what the library documents and no more: items of one
 *                producer come out in the order it enqueued them; there is
 *                no order across producers (not SYNCQ_PROP_FIFO) and it is
 *                not linearizable (try_dequeue may answer empty while items
 *                are in other sub-queues): the drivers skip those checks
 *                and say so.
 *   Progress:    lock-free (the library's claim).
 *   Memory:      blocks malloc'd as it grows (SYNCQ_PROP_ALLOCATES), freed
 *                at destroy; the queue object itself is made at init.
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      unbounded; items non-NULL.
 */
#include <concurrentqueue/concurrentqueue.h>

#include <new>

#include "peer_adapter.h"
#include "syncq/queue.h"

namespace {

using queue_t = moodycamel::ConcurrentQueue<void *>;

queue_t *obj(peer_box *b) {
  return (b != nullptr && b->magic == PEER_MAGIC_LIVE) ? static_cast<queue_t *>(b->obj) : nullptr;
}

int mc_bytes(size_t, size_t *b) {
  if (b == nullptr) return SYNCQ_EINVAL;
  *b = sizeof(peer_box);
  return SYNCQ_OK;
}

int mc_init(peer_box *b, size_t c) {
  if (b == nullptr || reinterpret_cast<uintptr_t>(b) % alignof(peer_box) != 0) return SYNCQ_EINVAL;
  /* the capacity is a sizing hint: the initial block allocation */
  queue_t *x = new (std::nothrow) queue_t(c > 0 && c <= PEER_MAX_CAPACITY ? c : 32);
  if (x == nullptr) return SYNCQ_ENOMEM;
  b->obj = x;
  b->capacity = c;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

int mc_destroy(peer_box *q) {
  queue_t *x = obj(q);
  if (x == nullptr) return SYNCQ_EINVAL;
  q->magic = 0;
  delete x;
  return SYNCQ_OK;
}

int mc_enqueue(peer_box *q, void *item) {
  queue_t *x = obj(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->enqueue(item) ? SYNCQ_OK : SYNCQ_ENOMEM;
}

int mc_dequeue(peer_box *q, void **item) {
  queue_t *x = obj(q);
  if (x == nullptr || item == nullptr) return SYNCQ_EINVAL;
  return x->try_dequeue(*item) ? SYNCQ_OK : SYNCQ_EMPTY;
}

SYNCQ_QUEUE_REGISTER_FNS(moodycamel, "moodycamel:concurrentqueue",
                         "moodycamel::ConcurrentQueue (per-producer sub-queues, no total order)",
                         "moodycamel ConcurrentQueue 1.0 (libconcurrentqueue-dev)", LOCK_FREE,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_ALLOCATES, peer_box, mc_bytes, mc_init, mc_destroy, mc_enqueue,
                         mc_dequeue);

} // namespace

extern "C" int lab_peer_moodycamel_register(unsigned, char *why, size_t len) {
  int st = SYNCQ_OK;
  int n = peer_add(&syncq_queue_moodycamel_algo, &st);
  if (n == 0) snprintf(why, len, "registry refused: %s", syncq_strerror(st));
  return n;
}
