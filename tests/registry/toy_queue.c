/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * toy_queue.c — a queue added to syncq by one file plus one line: the
 * typed functions under the uniform names syncq_queue_toy_<verb>, then one
 * SYNCQ_QUEUE_REGISTER statement that writes the ops table and the
 * registry entry syncq_queue_toy_algo. What lists it: in the library, one
 * line of src/queue/queue_registry.c; here, the toy_queue_test target of
 * tests/registry/CMakeLists.txt, which links this file into the queue
 * validation driver (tests/queue/queue_test.c) and names the entry, which
 * the driver adds to the registry (syncq_registry_add) and runs like every
 * built-in queue.
 *
 * Contract:
 *   Source:       none: the textbook bounded buffer, a ring under one lock.
 *   Progress:     blocking (one pthread mutex around each operation).
 *   Atomics:      none of its own; a mutex lock and unlock per operation.
 *   Memory:       the caller's storage, the ring after the header; no
 *                 allocation.
 *   Signal safety: none (a pthread mutex).
 *   Process-shared: no.
 *   Limits:       capacity a power of two from 2 to 2^30 (as the ring
 *                 queues ask, so the driver's bounded-queue checks apply).
 *   Linearizable: yes, FIFO: each operation is one critical section.
 */
#include <pthread.h>
#include <stdint.h>

#include "syncq/queue.h"

#define TOY_MAGIC 0x746f79u /* "toy": initialised and not yet destroyed */
#define TOY_MAX_CAPACITY ((size_t)1 << 30)

typedef struct syncq_queue_toy {
  pthread_mutex_t mutex;
  size_t mask;  /* capacity - 1 */
  size_t head;  /* index of the oldest item */
  size_t count; /* items held */
  unsigned magic;
  void *slots[]; /* capacity of them */
} syncq_queue_toy;

static int syncq_queue_toy_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || capacity > TOY_MAX_CAPACITY || (capacity & (capacity - 1)) != 0)
    return SYNCQ_EINVAL;
  *bytes = sizeof(syncq_queue_toy) + capacity * sizeof(void *);
  return SYNCQ_OK;
}

static int syncq_queue_toy_init(syncq_queue_toy *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || (uintptr_t)q % _Alignof(syncq_queue_toy) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_toy_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  if (pthread_mutex_init(&q->mutex, NULL) != 0) return SYNCQ_ENOMEM;
  q->mask = capacity - 1;
  q->head = 0;
  q->count = 0;
  q->magic = TOY_MAGIC;
  return SYNCQ_OK;
}

static int syncq_queue_toy_destroy(syncq_queue_toy *q) {
  if (q == NULL || q->magic != TOY_MAGIC) return SYNCQ_EINVAL;
  q->magic = 0;
  (void)pthread_mutex_destroy(&q->mutex);
  return SYNCQ_OK;
}

static int syncq_queue_toy_enqueue(syncq_queue_toy *q, void *item) {
  if (q == NULL || item == NULL || q->magic != TOY_MAGIC) return SYNCQ_EINVAL;
  int r = SYNCQ_FULL;
  pthread_mutex_lock(&q->mutex);
  if (q->count <= q->mask) {
    q->slots[(q->head + q->count) & q->mask] = item;
    q->count++;
    r = SYNCQ_OK;
  }
  pthread_mutex_unlock(&q->mutex);
  return r;
}

static int syncq_queue_toy_dequeue(syncq_queue_toy *q, void **item) {
  if (q == NULL || item == NULL || q->magic != TOY_MAGIC) return SYNCQ_EINVAL;
  int r = SYNCQ_EMPTY;
  pthread_mutex_lock(&q->mutex);
  if (q->count > 0) {
    *item = q->slots[q->head];
    q->head = (q->head + 1) & q->mask;
    q->count--;
    r = SYNCQ_OK;
  }
  pthread_mutex_unlock(&q->mutex);
  return r;
}

SYNCQ_QUEUE_REGISTER(toy, "toy", "ring under one pthread mutex (added by one file plus one line)",
                     "none (textbook bounded buffer)", BLOCKING,
                     SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED);
