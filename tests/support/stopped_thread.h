/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stopped_thread.h — stop one thread at a named race point until the test
 * releases it (a thread preempted for as long as the test likes), for the
 * race tests of one structure. Include after syncq_race.h and cmocka.h.
 *
 * The thread that is to stop sets stopped_thread_is_me = 1 before its
 * call; it halts the first time it passes the point start_stopped named.
 * A queue's enqueue or dequeue as that thread: stopped_enqueue and
 * stopped_dequeue on a stopped_call.
 */
#ifndef SYNCQ_TEST_STOPPED_THREAD_H
#define SYNCQ_TEST_STOPPED_THREAD_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "syncq/queue.h"

static _Thread_local int stopped_thread_is_me;
static const char *stopped_thread_point;
static _Atomic(int) stopped_thread_at_point, stopped_thread_released;

static void stopped_thread_hook(const char *name) {
  if (!stopped_thread_is_me || strcmp(name, stopped_thread_point) != 0 || atomic_load(&stopped_thread_at_point)) return;
  atomic_store(&stopped_thread_at_point, 1);
  while (!atomic_load(&stopped_thread_released)) sched_yield();
}

static inline double stopped_thread_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One queue operation for the stopped thread, through the queue's ops
 * table (its algorithm's registry entry). */
typedef struct stopped_call {
  const syncq_queue_ops *ops;
  void *q;
  void *item; /* enqueue: the item; dequeue: what came out */
  int status;
} stopped_call;

static inline void *stopped_enqueue(void *p) {
  stopped_call *c = p;
  stopped_thread_is_me = 1;
  c->status = c->ops->enqueue(c->q, c->item);
  return NULL;
}

static inline void *stopped_dequeue(void *p) {
  stopped_call *c = p;
  stopped_thread_is_me = 1;
  c->status = c->ops->dequeue(c->q, &c->item);
  return NULL;
}

/* Start fn(arg) on *t and return once it halts at `point`; fails the test
 * if it has not within patience_s seconds. */
static void start_stopped(pthread_t *t, void *(*fn)(void *), void *arg, const char *point, double patience_s) {
  stopped_thread_point = point;
  atomic_store(&stopped_thread_at_point, 0);
  atomic_store(&stopped_thread_released, 0);
  syncq_race_hook = stopped_thread_hook;
  assert_int_equal(pthread_create(t, NULL, fn, arg), 0);
  const double t0 = stopped_thread_now_s();
  while (!atomic_load(&stopped_thread_at_point)) {
    if (stopped_thread_now_s() - t0 > patience_s) fail_msg("the stopped thread never reached %s", point);
    sched_yield();
  }
}

/* Let the stopped thread go on, join it, and remove the hook. */
static void release_stopped(pthread_t t) {
  atomic_store(&stopped_thread_released, 1);
  pthread_join(t, NULL);
  syncq_race_hook = NULL;
}

#endif
