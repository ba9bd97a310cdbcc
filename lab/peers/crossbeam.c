/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * crossbeam.c — crossbeam-queue's ArrayQueue and SegQueue (Rust, built by
 * cargo from lab/peers/crossbeam/) behind the queue ops table.
 *
 * Contract (of the adapter; the queues are crossbeam's, unchanged)
 *   Source:      crossbeam-queue 0.3 (Debian's packaged crate, built offline;
 *                crates.io where it is not packaged), through the C ABI of
 *                lab/peers/crossbeam/src/lib.rs (one call per operation,
 *                no locking added).
 *   Entries:     "crossbeam:array_queue" (bounded: a ring of slots with
 *                stamps, Vyukov's design; holds exactly capacity items),
 *                "crossbeam:seg_queue" (unbounded: a linked list of
 *                fixed-size segments).
 *   Progress:    blocking in the strict sense: both wait (spin, then yield)
 *                for a slot another thread has claimed but not yet written.
 *   Memory:      array_queue: the ring, allocated at init; seg_queue:
 *                segments allocated as it grows (SYNCQ_PROP_ALLOCATES); all
 *                freed at destroy. The queue object is Rust-owned (a Box),
 *                its pointer kept in the caller's storage.
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      array_queue capacity a power of two >= 2 (syncq's rule),
 *                at most PEER_MAX_CAPACITY; items non-NULL.
 */
#include <stdlib.h>

#include "peer_adapter.h"
#include "syncq/queue.h"

/* lib.rs: 0 done, 1 full (push) or empty (pop), -1 null queue */
void *syncq_cb_array_new(size_t capacity);
void syncq_cb_array_free(void *q);
int syncq_cb_array_push(void *q, void *item);
int syncq_cb_array_pop(void *q, void **out);
void *syncq_cb_seg_new(void);
void syncq_cb_seg_free(void *q);
int syncq_cb_seg_push(void *q, void *item);
int syncq_cb_seg_pop(void *q, void **out);

#define CB_OK 0

static void *obj(peer_box *b) { return (b != NULL && b->magic == PEER_MAGIC_LIVE) ? b->obj : NULL; }

static int array_bytes(size_t c, size_t *b) {
  if (b == NULL || !peer_pow2(c) || c > PEER_MAX_CAPACITY) return SYNCQ_EINVAL;
  *b = sizeof(peer_box);
  return SYNCQ_OK;
}

static int seg_bytes(size_t c, size_t *b) {
  (void)c; /* unbounded: a sizing hint */
  if (b == NULL) return SYNCQ_EINVAL;
  *b = sizeof(peer_box);
  return SYNCQ_OK;
}

static int array_init(peer_box *b, size_t c) {
  if (b == NULL || (uintptr_t)b % _Alignof(peer_box) != 0 || !peer_pow2(c) || c > PEER_MAX_CAPACITY)
    return SYNCQ_EINVAL;
  if ((b->obj = syncq_cb_array_new(c)) == NULL) return SYNCQ_ENOMEM;
  b->capacity = c;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int seg_init(peer_box *b, size_t c) {
  if (b == NULL || (uintptr_t)b % _Alignof(peer_box) != 0) return SYNCQ_EINVAL;
  if ((b->obj = syncq_cb_seg_new()) == NULL) return SYNCQ_ENOMEM;
  b->capacity = c;
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int array_destroy(peer_box *q) {
  void *x = obj(q);
  if (x == NULL) return SYNCQ_EINVAL;
  q->magic = 0;
  syncq_cb_array_free(x);
  return SYNCQ_OK;
}

static int seg_destroy(peer_box *q) {
  void *x = obj(q);
  if (x == NULL) return SYNCQ_EINVAL;
  q->magic = 0;
  syncq_cb_seg_free(x);
  return SYNCQ_OK;
}

static int array_enqueue(peer_box *q, void *item) {
  void *x = obj(q);
  if (x == NULL || item == NULL) return SYNCQ_EINVAL;
  return syncq_cb_array_push(x, item) == CB_OK ? SYNCQ_OK : SYNCQ_FULL;
}

static int array_dequeue(peer_box *q, void **item) {
  void *x = obj(q);
  if (x == NULL || item == NULL) return SYNCQ_EINVAL;
  return syncq_cb_array_pop(x, item) == CB_OK ? SYNCQ_OK : SYNCQ_EMPTY;
}

static int seg_enqueue(peer_box *q, void *item) {
  void *x = obj(q);
  if (x == NULL || item == NULL) return SYNCQ_EINVAL;
  return syncq_cb_seg_push(x, item) == CB_OK ? SYNCQ_OK : SYNCQ_EINVAL;
}

static int seg_dequeue(peer_box *q, void **item) {
  void *x = obj(q);
  if (x == NULL || item == NULL) return SYNCQ_EINVAL;
  return syncq_cb_seg_pop(x, item) == CB_OK ? SYNCQ_OK : SYNCQ_EMPTY;
}

#define CB_SOURCE "crossbeam-queue 0.3 (Debian librust-crossbeam-queue-dev, Rust, via cargo)"

/* Neither is SPINS_ON_PREEMPTED: both wait for a claimed, unwritten
 * slot, but with crossbeam's Backoff::snooze(), which yields the thread
 * once its short spin limit is passed, so a preempted claimer gets the
 * processor back. */
SYNCQ_QUEUE_REGISTER_FNS(cb_array, "crossbeam:array_queue", "crossbeam ArrayQueue (bounded ring with stamps)",
                         CB_SOURCE, BLOCKING,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED, peer_box,
                         array_bytes, array_init, array_destroy, array_enqueue, array_dequeue);
SYNCQ_QUEUE_REGISTER_FNS(cb_seg, "crossbeam:seg_queue", "crossbeam SegQueue (unbounded list of segments)", CB_SOURCE,
                         BLOCKING, SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES,
                         peer_box, seg_bytes, seg_init, seg_destroy, seg_enqueue, seg_dequeue);

static const syncq_algo *const cb_algos[] = {&syncq_queue_cb_array_algo, &syncq_queue_cb_seg_algo};

int lab_peer_crossbeam_register(unsigned flags, char *why, size_t len) {
  (void)flags;
  int n = 0, st = SYNCQ_OK;
  for (size_t i = 0; i < sizeof cb_algos / sizeof cb_algos[0]; i++) n += peer_add(cb_algos[i], &st);
  if (n == 0) snprintf(why, len, "registry refused: %s", syncq_strerror(st));
  return n;
}
