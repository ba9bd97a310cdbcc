/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * taskq.h — a task-queue kernel in the manner of SPLASH-2 Cholesky and
 * Radiosity (as 003 §6 ran them with its queues and locks): one shared
 * queue of tasks; a task computes, and may subdivide into child tasks that
 * join the queue (Radiosity's adaptive patch refinement), until no task is
 * left.
 *
 * The shared queue is any registered queue or stack (pool.h), or a ring
 * behind any registered lock (the lock-based task queues of SPLASH-2).
 *
 * Use: app_taskq_init (puts the root tasks), every thread runs
 * app_taskq_worker, then app_taskq_check (the tasks' checksum against the
 * one computed independently by app_taskq_expected), then
 * app_taskq_destroy.
 */
#ifndef SYNCQ_LAB_APPS_TASKQ_H
#define SYNCQ_LAB_APPS_TASKQ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "syncq/lock.h"

#define APP_TASKQ_MAX_LEVEL 10 /* levels of subdivision; ids stay within a pool item */
#define APP_TASKQ_CHILDREN 4   /* a patch splits into four (a quadtree, as Radiosity) */
#define APP_TASKQ_RING 16384u  /* the lock-based queue's ring */

typedef struct app_taskq_shape {
  uint32_t roots;     /* initial tasks */
  uint32_t max_level; /* a task at this level never splits */
  uint32_t split_pct; /* chance in percent that a task below max_level splits */
  uint32_t work;      /* mean iterations of a task's computation (LCG steps) */
} app_taskq_shape;

typedef struct app_taskq {
  app_taskq_shape shape;
  app_pool pool;          /* a registered queue or stack, or ... */
  const syncq_algo *lock; /* ... a registered lock guarding `ring` */
  void *lk;
  uint64_t *ring;
  uint64_t head, tail;   /* under the lock */
  _Atomic(int64_t) live; /* tasks queued or running: the team stops at 0 */
  _Atomic(uint64_t) sum, tasks;
  _Atomic(int) errors;
} app_taskq;

/* The checksum and task count the kernel must produce, computed by walking
 * the task tree without running the tasks' loops (their results come from
 * the LCG's jump-ahead). SYNCQ_EINVAL for a bad shape. */
int app_taskq_expected(const app_taskq_shape *shape, uint64_t *sum, uint64_t *tasks);

/* queue_or_stack XOR lock: exactly one non-NULL. `wait` is the lock's
 * waiting discipline (0: its default). SYNCQ_OK, SYNCQ_EINVAL (bad shape
 * or structure), SYNCQ_ENOMEM, or the structure's init status. */
int app_taskq_init(app_taskq *s, const app_taskq_shape *shape, const syncq_algo *queue_or_stack, const syncq_algo *lock,
                   int wait, unsigned threads);
void app_taskq_worker(app_taskq *s);
/* 0 when no operation failed, the queue ends empty and the checksum and
 * task count equal app_taskq_expected's; else -1 with the reason. */
int app_taskq_check(const app_taskq *s, char *why, size_t len);
void app_taskq_destroy(app_taskq *s);

#endif
