/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stopped_waiter.h — waiters that queue for a lock and are then stopped
 * inside their lock() call, for the tests of the time-published locks
 * (clh_tp_test.c, mcs_tp_test.c), which must pass over a waiter that is
 * not running.
 *
 * A waiter thread calls lock(), records its turn and unlocks. A stopped
 * waiter is sent SIGUSR1 once it has had 30 ms to queue; the handler
 * sleeps until sw_thaw(), so the waiter publishes nothing meanwhile (the
 * locks are signal-safe with SPIN and YIELD). The sleeps order arrivals;
 * they measure nothing. Include after cmocka.h, in one test file; the
 * state is the file's (one lock under test at a time).
 */
#ifndef SYNCQ_TESTS_LOCK_STOPPED_WAITER_H
#define SYNCQ_TESTS_LOCK_STOPPED_WAITER_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "syncq/lock.h"
#include "syncq/platform.h"

#define SW_MAX_WAITERS 3

typedef int (*sw_lock_fn)(void *lock, syncq_lock_node *node);

typedef struct sw_waiter {
  int id;
  syncq_lock_node node;
} sw_waiter;

static struct {
  void *lock;
  sw_lock_fn lock_fn, unlock_fn;
  _Atomic(int) calling[SW_MAX_WAITERS]; /* about to call lock() */
  int order[SW_MAX_WAITERS];            /* who got the lock, in turn (written under the lock) */
  _Atomic(int) got;                     /* how many got it */
  _Atomic(int) stopped;                 /* how many are inside the handler */
  _Atomic(int) thaw;                    /* the handlers may return */
  sw_waiter ws[SW_MAX_WAITERS];
} sw;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void sw_stop_handler(int sig) {
  (void)sig;
  atomic_fetch_add(&sw.stopped, 1);
  while (!atomic_load(&sw.thaw)) {
    struct timespec ts = {0, 1000000L};
    nanosleep(&ts, NULL); /* async-signal-safe */
  }
}

static void *sw_waiter_main(void *p) {
  sw_waiter *w = p;
  atomic_store(&sw.calling[w->id], 1);
  if (sw.lock_fn(sw.lock, &w->node) == SYNCQ_OK) {
    sw.order[atomic_load(&sw.got)] = w->id;
    atomic_fetch_add(&sw.got, 1);
    sw.unlock_fn(sw.lock, &w->node);
  }
  return NULL;
}

/* Reset the state for a lock (initialised by the caller) and install the
 * stopping handler. */
static void sw_setup(void *lock, sw_lock_fn lock_fn, sw_lock_fn unlock_fn) {
  sw.lock = lock;
  sw.lock_fn = lock_fn;
  sw.unlock_fn = unlock_fn;
  for (int i = 0; i < SW_MAX_WAITERS; i++) atomic_store(&sw.calling[i], 0);
  atomic_store(&sw.stopped, 0);
  atomic_store(&sw.thaw, 0);
  atomic_store(&sw.got, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = sw_stop_handler;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
}

/* Start waiter id (0 .. SW_MAX_WAITERS - 1) and give it 30 ms to queue. */
static pthread_t sw_start(int id) {
  pthread_t t;
  sw.ws[id].id = id;
  assert_int_equal(pthread_create(&t, NULL, sw_waiter_main, &sw.ws[id]), 0);
  while (!atomic_load(&sw.calling[id])) syncq_yield();
  sleep_ms(30);
  return t;
}

/* Start waiter id, let it queue, then stop it inside lock(). */
static pthread_t sw_start_stopped(int id) {
  int before = atomic_load(&sw.stopped);
  pthread_t t = sw_start(id);
  assert_int_equal(pthread_kill(t, SIGUSR1), 0);
  while (atomic_load(&sw.stopped) != before + 1) syncq_yield();
  return t;
}

/* Wait up to 20 s for some waiter to get the lock: false if none did (the
 * lock waited for a stopped waiter; the stopped ones are thawed then). */
static bool sw_await_first(void) {
  for (int i = 0; i < 20000 && atomic_load(&sw.got) == 0; i++) sleep_ms(1);
  if (atomic_load(&sw.got) != 0) return true;
  atomic_store(&sw.thaw, 1);
  return false;
}

/* Let the stopped waiters run on. */
static void sw_thaw(void) { atomic_store(&sw.thaw, 1); }

/* The default action for SIGUSR1 again. */
static void sw_teardown(void) { signal(SIGUSR1, SIG_DFL); }

#endif
