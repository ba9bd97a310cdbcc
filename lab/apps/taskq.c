/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * taskq.c — tasks that spawn tasks through one shared queue.
 *
 * Contract
 *   Source:   the task queues of SPLASH-2 Cholesky and Radiosity (Woo et
 *             al. 1995), which Nikolopoulos & Papatheodorou 1999 (paper
 *             003) §6, Figure 9 ran with their queues and locks. Radiosity
 *             refines patches adaptively: a patch's task computes, then
 *             may split the patch into four children, each a new task.
 *   Tasks:    (level, id); roots are level 0, ids 0..roots-1; a task's
 *             children are (level+1, 4 id + c). Whether it splits and how
 *             long it computes (work/2 .. 3work/2 steps of a 64-bit LCG from
 *             a seed of (level, id)) come from a hash of (level, id), so the
 *             tree and every result are fixed by the shape.
 *   Sync:     one shared queue of tasks: a registered queue or stack
 *             (pool.h), or a ring of APP_TASKQ_RING tasks behind a
 *             registered lock. A task the queue refuses (full) is run by
 *             the thread that made it. `live` (C11 fetch-and-add) counts
 *             tasks queued or running, children added before their parent
 *             retires, so it reaches 0 only at the end.
 *   Validation: the sum of the tasks' results and their number against
 *             app_taskq_expected, which walks the same tree and gets each
 *             result by the LCG's jump-ahead (O(log steps)), not by running
 *             the loops.
 *   Memory:   the structure; the lock-based ring (8 bytes a slot).
 *   Progress: that of the queue; idle threads yield until `live` is 0,
 *             so the kernel as a whole is blocking. They wait under the
 *             pool's watch (pool.h; the lock-based ring's too, which
 *             cannot lose a task): a queue that lost tasks stops them
 *             about 1.1 s after the last thread fell idle, and the check
 *             names the queue and the tasks lost.
 *   Signal safety: none; process-shared: no (pointers).
 *   Limits:   max_level <= APP_TASKQ_MAX_LEVEL, roots < 2^20.
 */
#include "taskq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/platform.h"

#define TQ_LCG_A 6364136223846793005ull /* Knuth's MMIX LCG */
#define TQ_LCG_C 1442695040888963407ull
#define TQ_LEVEL_BITS 4
#define TQ_MAX_ROOTS (1u << 20)
#define TQ_PCT 100

static inline uint64_t tq_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline uint64_t tq_key(uint32_t level, uint64_t id) { return id << TQ_LEVEL_BITS | level; }
static inline uint64_t tq_hash(uint32_t level, uint64_t id) { return tq_mix(tq_key(level, id)); }
static inline uint64_t tq_steps(const app_taskq_shape *sh, uint64_t h) {
  return sh->work / 2 + (h >> 8) % ((uint64_t)sh->work + 1);
}
static inline int tq_splits(const app_taskq_shape *sh, uint32_t level, uint64_t h) {
  return level < sh->max_level && (h & 0xff) % TQ_PCT < sh->split_pct;
}

/* The task's computation: `steps` LCG steps from its seed. */
static uint64_t tq_run(uint64_t seed, uint64_t steps) {
  uint64_t x = seed;
  for (uint64_t i = 0; i < steps; i++) x = x * TQ_LCG_A + TQ_LCG_C;
  return x;
}

/* The same by jump-ahead: x_k = A^k x + C (A^k - 1)/(A - 1), by squaring. */
static uint64_t tq_jump(uint64_t seed, uint64_t steps) {
  uint64_t acc_a = 1, acc_c = 0, a = TQ_LCG_A, c = TQ_LCG_C;
  for (uint64_t k = steps; k > 0; k >>= 1) {
    if (k & 1) {
      acc_a *= a;
      acc_c = acc_c * a + c;
    }
    c *= a + 1;
    a *= a;
  }
  return acc_a * seed + acc_c;
}

static int tq_shape_ok(const app_taskq_shape *sh) {
  return sh != NULL && sh->roots > 0 && sh->roots < TQ_MAX_ROOTS && sh->max_level <= APP_TASKQ_MAX_LEVEL &&
         sh->split_pct <= TQ_PCT;
}

static void tq_walk(const app_taskq_shape *sh, uint32_t level, uint64_t id, uint64_t *sum, uint64_t *tasks) {
  uint64_t h = tq_hash(level, id);
  *sum += tq_jump(h, tq_steps(sh, h));
  ++*tasks;
  if (tq_splits(sh, level, h))
    for (uint64_t c = 0; c < APP_TASKQ_CHILDREN; c++) tq_walk(sh, level + 1, id * APP_TASKQ_CHILDREN + c, sum, tasks);
}

int app_taskq_expected(const app_taskq_shape *shape, uint64_t *sum, uint64_t *tasks) {
  if (!tq_shape_ok(shape) || sum == NULL || tasks == NULL) return SYNCQ_EINVAL;
  *sum = 0;
  *tasks = 0;
  for (uint64_t r = 0; r < shape->roots; r++) tq_walk(shape, 0, r, sum, tasks);
  return SYNCQ_OK;
}

/* ---- the shared queue: a registered queue/stack, or a ring under a lock ---- */
static bool tq_put(app_taskq *s, uint64_t key) {
  if (s->lock == NULL) return app_pool_put(&s->pool, app_pool_item(key), &s->errors);
  const syncq_lock_ops *ops = s->lock->ops;
  syncq_lock_node node;
  if (ops->lock(s->lk, &node) != SYNCQ_OK) {
    atomic_fetch_add(&s->errors, 1);
    return false;
  }
  bool ok = s->tail - s->head < APP_TASKQ_RING;
  if (ok) s->ring[s->tail++ % APP_TASKQ_RING] = key;
  ops->unlock(s->lk, &node);
  return ok;
}

static bool tq_take(app_taskq *s, uint64_t *key) {
  if (s->lock == NULL) {
    void *item;
    if (!app_pool_take(&s->pool, &item, &s->errors)) return false;
    *key = app_pool_payload(item);
    return true;
  }
  const syncq_lock_ops *ops = s->lock->ops;
  syncq_lock_node node;
  if (ops->lock(s->lk, &node) != SYNCQ_OK) {
    atomic_fetch_add(&s->errors, 1);
    return false;
  }
  bool ok = s->tail != s->head;
  if (ok) *key = s->ring[s->head++ % APP_TASKQ_RING];
  ops->unlock(s->lk, &node);
  return ok;
}

int app_taskq_init(app_taskq *s, const app_taskq_shape *shape, const syncq_algo *queue_or_stack, const syncq_algo *lock,
                   int wait, unsigned threads) {
  if (s == NULL || !tq_shape_ok(shape) || (queue_or_stack == NULL) == (lock == NULL) || threads == 0)
    return SYNCQ_EINVAL;
  if (lock != NULL && lock->family != SYNCQ_FAMILY_LOCK) return SYNCQ_EINVAL;
  memset(s, 0, sizeof *s);
  s->shape = *shape;
  int st;
  if (lock == NULL) {
    st = app_pool_init(&s->pool, queue_or_stack, APP_TASKQ_RING, threads);
    if (st != SYNCQ_OK) return st;
  } else {
    const syncq_lock_ops *ops = lock->ops;
    s->lk = syncq_alloc_aligned(ops->size, ops->align);
    s->ring = malloc(APP_TASKQ_RING * sizeof *s->ring);
    syncq_lock_config cfg = {threads, wait, false};
    st = s->lk == NULL || s->ring == NULL ? SYNCQ_ENOMEM : ops->init(s->lk, &cfg);
    if (st != SYNCQ_OK) {
      free(s->lk);
      free(s->ring);
      s->lk = NULL;
      s->ring = NULL;
      return st;
    }
    s->lock = lock;
  }
  /* the ring's idle waits feed the same watch (app_pool_init made the pool's) */
  if (lock != NULL) lab_queue_watch_init(&s->pool.watch, (int)threads);
  atomic_init(&s->live, (int64_t)shape->roots);
  atomic_init(&s->sum, 0);
  atomic_init(&s->tasks, 0);
  atomic_init(&s->errors, 0);
  for (uint64_t r = 0; r < shape->roots; r++) {
    if (!tq_put(s, tq_key(0, r))) { /* the roots must fit an empty queue */
      app_taskq_destroy(s);
      return SYNCQ_ENOMEM;
    }
  }
  return SYNCQ_OK;
}

typedef struct tq_acc {
  uint64_t sum, tasks;
} tq_acc;

/* Run one task; queue its children (or run those the queue refuses). */
static void tq_task(app_taskq *s, uint64_t key, tq_acc *acc) {
  uint32_t level = (uint32_t)(key & ((1u << TQ_LEVEL_BITS) - 1));
  uint64_t id = key >> TQ_LEVEL_BITS;
  uint64_t h = tq_hash(level, id);
  acc->sum += tq_run(h, tq_steps(&s->shape, h));
  acc->tasks++;
  if (!tq_splits(&s->shape, level, h)) return;
  atomic_fetch_add(&s->live, APP_TASKQ_CHILDREN); /* before any child can be taken and retired */
  for (uint64_t c = 0; c < APP_TASKQ_CHILDREN; c++) {
    uint64_t child = tq_key(level + 1, id * APP_TASKQ_CHILDREN + c);
    if (tq_put(s, child)) continue;
    tq_task(s, child, acc); /* refused: run it here (depth <= max_level) */
    atomic_fetch_sub(&s->live, 1);
  }
}

void app_taskq_worker(app_taskq *s) {
  tq_acc acc = {0, 0};
  lab_queue_streak streak = {0}; /* the current idle wait's (polls 0: none) */
  for (;;) {
    uint64_t key;
    if (!tq_take(s, &key)) {
      if (atomic_load(&s->live) <= 0 || atomic_load(&s->errors) != 0) break;
      syncq_yield();
      if (lab_queue_watch_empty(&s->pool.watch, &streak)) break; /* tasks lost */
      continue;
    }
    if (streak.polls != 0) { /* an idle wait ended */
      lab_queue_watch_end(&s->pool.watch, &streak);
      streak = (lab_queue_streak){0};
    }
    if ((key & ((1u << TQ_LEVEL_BITS) - 1)) > s->shape.max_level) { /* a corrupted task */
      atomic_fetch_add(&s->errors, 1);
      break;
    }
    tq_task(s, key, &acc);
    atomic_fetch_sub(&s->live, 1);
  }
  /* no longer quiet by a wait before finished counts it (once per thread) */
  lab_queue_watch_end(&s->pool.watch, &streak);
  lab_queue_watch_finished(&s->pool.watch);
  /* relaxed: read after the team is joined */
  atomic_fetch_add_explicit(&s->sum, acc.sum, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->tasks, acc.tasks, memory_order_relaxed);
}

int app_taskq_check(const app_taskq *s, char *why, size_t len) {
  app_taskq *m = (app_taskq *)s;
  const char *name = s->lock ? s->lock->name : s->pool.algo->name;
  uint64_t want_sum, want_tasks;
  (void)app_taskq_expected(&s->shape, &want_sum, &want_tasks);
  int64_t live = atomic_load(&m->live);
  /* the tasks still live once every thread gave up: queued, never given out (their children never made) */
  lab_queue_lost lost = {name, s->lock ? "ring" : app_pool_kind(&s->pool), "tasks", live > 0 ? (uint64_t)live : 0,
                         want_tasks};
  if (lab_queue_watch_why(&m->pool.watch, &lost, why, len)) return -1;
  int errors = atomic_load(&m->errors);
  uint64_t key;
  bool empty = !tq_take(m, &key);
  uint64_t sum = atomic_load(&m->sum), tasks = atomic_load(&m->tasks);
  if (errors != 0 || !empty || atomic_load(&m->live) != 0 || sum != want_sum || tasks != want_tasks) {
    snprintf(why, len, "%s: %d failed operations, queue %s, %llu of %llu tasks, checksum %s", name, errors,
             empty ? "empty" : "not empty", (unsigned long long)tasks, (unsigned long long)want_tasks,
             sum == want_sum ? "right" : "wrong");
    return -1;
  }
  return 0;
}

void app_taskq_destroy(app_taskq *s) {
  if (s == NULL) return;
  app_pool_destroy(&s->pool);
  if (s->lk) {
    ((const syncq_lock_ops *)s->lock->ops)->destroy(s->lk);
    free(s->lk);
  }
  free(s->ring);
  s->lk = NULL;
  s->ring = NULL;
}
