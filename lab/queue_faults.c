/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_faults.c — a queue that loses or duplicates one item, for the
 * lab's own tests of its queue drivers (lab.h, lab_queue_watch): no
 * registered queue loses an item, so nothing else shows that a driver
 * stops on one, and says so, rather than waiting for the watchdog.
 *
 * SYNCQ_LAB_QUEUE_FAULT=lose:K registers the queue "faulty:lose", and
 * SYNCQ_LAB_QUEUE_FAULT=dup:K the queue "faulty:dup": Michael & Scott's
 * two-lock queue (unbounded, so neither fault can make it FULL) whose K-th
 * enqueue (K >= 1, counted per queue object) answers SYNCQ_OK having put
 * nothing in (lose) or the item twice (dup). The same variable registers
 * a stack of the same name, the single-lock stack ("lock") whose K-th
 * push does the same, for the drivers whose pool is a stack (the
 * applications'). Without the variable nothing is registered. Not for
 * measuring.
 */
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "syncq/queue.h"
#include "syncq/stack.h"

typedef struct fq_header {
  _Atomic(uint64_t) enqueues; /* the enqueues made so far */
} fq_header;

static const syncq_algo *const fq_base = &syncq_queue_two_lock_algo;
static uint64_t fq_k;  /* the faulty enqueue, 1-based */
static bool fq_dup;    /* duplicate it rather than lose it */
static size_t fq_skip; /* the header's size, rounded up to the base queue's alignment */

static const syncq_queue_ops *fq_base_ops(void) { return fq_base->ops; }
static void *fq_inner(void *q) { return (char *)q + fq_skip; }

static int fq_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL) return SYNCQ_EINVAL;
  size_t inner;
  int st = fq_base_ops()->bytes(capacity, &inner);
  if (st == SYNCQ_OK) *bytes = fq_skip + inner;
  return st;
}

static int fq_init(void *q, size_t capacity) {
  if (q == NULL) return SYNCQ_EINVAL;
  atomic_init(&((fq_header *)q)->enqueues, 0);
  return fq_base_ops()->init(fq_inner(q), capacity);
}

static int fq_destroy(void *q) { return q == NULL ? SYNCQ_EINVAL : fq_base_ops()->destroy(fq_inner(q)); }

static int fq_enqueue(void *q, void *item) {
  if (q == NULL) return SYNCQ_EINVAL;
  /* relaxed: a count that picks the K-th enqueue; the base queue orders the items */
  uint64_t n = atomic_fetch_add_explicit(&((fq_header *)q)->enqueues, 1, memory_order_relaxed) + 1;
  if (n == fq_k && !fq_dup) return SYNCQ_OK; /* lost */
  int st = fq_base_ops()->enqueue(fq_inner(q), item);
  if (st == SYNCQ_OK && n == fq_k) st = fq_base_ops()->enqueue(fq_inner(q), item); /* the duplicate */
  return st;
}

static int fq_dequeue(void *q, void **item) {
  return q == NULL ? SYNCQ_EINVAL : fq_base_ops()->dequeue(fq_inner(q), item);
}

static syncq_queue_ops fq_ops = {
  .bytes = fq_bytes,
  .init = fq_init,
  .destroy = fq_destroy,
  .enqueue = fq_enqueue,
  .dequeue = fq_dequeue,
};

static syncq_algo fq_algo = {
  .family = SYNCQ_FAMILY_QUEUE,
  .progress = SYNCQ_PROGRESS_BLOCKING,
  .ops = &fq_ops,
};

/* ---- the stack: the same fault on the single-lock stack's pushes ---- */
static const syncq_algo *const fs_base = &syncq_stack_lock_algo;
static size_t fs_skip; /* the header's size, rounded up to the base stack's alignment */

static const syncq_stack_ops *fs_base_ops(void) { return fs_base->ops; }
static void *fs_inner(void *s) { return (char *)s + fs_skip; }

static int fs_init(void *s, const syncq_stack_config *cfg) {
  if (s == NULL) return SYNCQ_EINVAL;
  atomic_init(&((fq_header *)s)->enqueues, 0);
  return fs_base_ops()->init(fs_inner(s), cfg);
}

static int fs_destroy(void *s) { return s == NULL ? SYNCQ_EINVAL : fs_base_ops()->destroy(fs_inner(s)); }

static int fs_push(void *s, void *item) {
  if (s == NULL) return SYNCQ_EINVAL;
  /* relaxed: a count that picks the K-th push; the base stack orders the items */
  uint64_t n = atomic_fetch_add_explicit(&((fq_header *)s)->enqueues, 1, memory_order_relaxed) + 1;
  if (n == fq_k && !fq_dup) return SYNCQ_OK; /* lost */
  int st = fs_base_ops()->push(fs_inner(s), item);
  if (st == SYNCQ_OK && n == fq_k) st = fs_base_ops()->push(fs_inner(s), item); /* the duplicate */
  return st;
}

static int fs_pop(void *s, void **item) { return s == NULL ? SYNCQ_EINVAL : fs_base_ops()->pop(fs_inner(s), item); }

static syncq_stack_ops fs_ops = {
  .init = fs_init,
  .destroy = fs_destroy,
  .push = fs_push,
  .pop = fs_pop,
};

static syncq_algo fs_algo = {
  .family = SYNCQ_FAMILY_STACK,
  .progress = SYNCQ_PROGRESS_BLOCKING,
  .ops = &fs_ops,
};

const char *lab_queue_faults_name(void) { return fq_k != 0 ? fq_algo.name : NULL; }

int lab_queue_faults_register(void) {
  const char *spec = getenv("SYNCQ_LAB_QUEUE_FAULT");
  if (spec == NULL) return 0;
  bool dup = strncmp(spec, "dup:", 4) == 0;
  if (!dup && strncmp(spec, "lose:", 5) != 0) return -1;
  char *end;
  const char *num = spec + (dup ? 4 : 5);
  unsigned long long k = strtoull(num, &end, 10);
  if (*num < '0' || *num > '9' || *end != '\0' || k == 0) return -1;
  fq_k = k;
  fq_dup = dup;
  size_t a = fq_base_ops()->align > _Alignof(fq_header) ? fq_base_ops()->align : _Alignof(fq_header);
  fq_skip = (sizeof(fq_header) + a - 1) / a * a;
  fq_ops.align = a;
  fq_algo.name = dup ? "faulty:dup" : "faulty:lose";
  fq_algo.title = dup ? "two-lock queue whose K-th enqueue puts the item in twice (SYNCQ_LAB_QUEUE_FAULT)"
                      : "two-lock queue whose K-th enqueue loses the item (SYNCQ_LAB_QUEUE_FAULT)";
  fq_algo.paper = "the lab's own tests";
  fq_algo.props = SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES;
  size_t sa = fs_base_ops()->align > _Alignof(fq_header) ? fs_base_ops()->align : _Alignof(fq_header);
  fs_skip = (sizeof(fq_header) + sa - 1) / sa * sa;
  fs_ops.size = fs_skip + fs_base_ops()->size;
  fs_ops.align = sa;
  fs_algo.name = fq_algo.name;
  fs_algo.title = dup ? "single-lock stack whose K-th push puts the item in twice (SYNCQ_LAB_QUEUE_FAULT)"
                      : "single-lock stack whose K-th push loses the item (SYNCQ_LAB_QUEUE_FAULT)";
  fs_algo.paper = fq_algo.paper;
  fs_algo.props = fs_base->props & ~(uint32_t)(SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_PEER);
  if (syncq_registry_add(&fq_algo) != SYNCQ_OK || syncq_registry_add(&fs_algo) != SYNCQ_OK) {
    fq_k = 0;
    return -1;
  }
  return 1;
}
