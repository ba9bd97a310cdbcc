/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pool.h — a shared work pool for the applications (lab/apps/): any
 * registered queue (FIFO) or stack (LIFO) behind one put/take interface,
 * reached through the registry's ops tables, so an application runs every
 * registered structure, syncq's and the peer libraries', by name.
 *
 * Items are non-NULL `void *`; the applications encode work descriptors
 * in the low 48 bits with the low 4 bits clear (app_pool_item), which
 * every registered queue and stack can store (tagged-pointer queues keep
 * 48-bit pointers).
 *
 * put() answers true when the structure took the item and false when it
 * refused it for lack of room (FULL from a bounded queue, ENOMEM from a
 * node pool): the caller then does the work itself, which is what a
 * work-sharing runtime does when its pool is full. Any other status is a
 * failure and is counted in *errors. take() answers false when the pool
 * looked empty.
 *
 * A lost item (a structure that answers SYNCQ_OK to a put and never gives
 * the item out) would leave the application's idle threads looking at an
 * empty pool for ever, the work never done. The pool carries the lab's
 * watch for it (lab.h, lab_queue_watch), made for the pool's `threads`:
 * the applications' idle loops feed it (lab_queue_watch_empty on each
 * empty look) and each thread says lab_queue_watch_finished when it
 * leaves its loop. Here the producers are the consumers themselves: a
 * thread puts only while it holds work, so once every thread has finished
 * or waits, quiet, on an empty pool, no put is in flight and none will
 * come; a thread that the pseudo-scheduler (mp_common.h) stopped while
 * holding work is not quiet, so the scheduler's stops cannot fake it
 * (one stopped between an idle wait's item and the wait's end counts as
 * quiet for that stop, a few quanta, far below LAB_QUEUE_LOST_MS).
 */
#ifndef SYNCQ_LAB_APPS_POOL_H
#define SYNCQ_LAB_APPS_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lab.h"
#include "syncq/registry.h"

/* Items carry 44 bits of payload above 4 clear low bits. */
#define APP_POOL_ITEM_SHIFT 4
#define APP_POOL_PAYLOAD_BITS 44

typedef struct app_pool {
  const syncq_algo *algo; /* SYNCQ_FAMILY_QUEUE or SYNCQ_FAMILY_STACK */
  void *obj;              /* the structure, in aligned storage */
  lab_queue_watch watch;  /* items lost (see above) */
} app_pool;

/* True when the algorithm can serve as a pool shared by many producers and
 * consumers (single-producer/single-consumer rings cannot). */
bool app_pool_usable(const syncq_algo *algo);

/* Make a pool of the algorithm holding up to `capacity` items (a power of
 * two) for up to `threads` threads. SYNCQ_OK or the structure's status
 * (SYNCQ_EINVAL for a family other than queue and stack). */
int app_pool_init(app_pool *p, const syncq_algo *algo, size_t capacity, unsigned threads);
void app_pool_destroy(app_pool *p);
/* "queue" or "stack", for the watch's verdict. */
static inline const char *app_pool_kind(const app_pool *p) {
  return p->algo->family == SYNCQ_FAMILY_QUEUE ? "queue" : "stack";
}

bool app_pool_put(const app_pool *p, void *item, _Atomic(int) *errors);
bool app_pool_take(const app_pool *p, void **item, _Atomic(int) *errors);

static inline void *app_pool_item(uint64_t payload) {
  return (void *)(uintptr_t)((payload + 1) << APP_POOL_ITEM_SHIFT);
}
static inline uint64_t app_pool_payload(void *item) { return ((uint64_t)(uintptr_t)item >> APP_POOL_ITEM_SHIFT) - 1; }

#endif
