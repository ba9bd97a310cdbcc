/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * signal_nblfq.c — a signal handler hands work to a thread through NBLFQ.
 *
 * NBLFQ is async-signal-safe (no locks, no allocation, caller storage): a
 * SIGUSR1 handler enqueues one work item per signal, a worker thread
 * dequeues and adds them up. The handler uses the static inline enqueue
 * (syncq/static/queue/nblfq.h): no call into the library from the handler.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <syncq/platform.h>
#include <syncq/static/queue/nblfq.h>
#include <syncq/version.h>

#define CAPACITY 256 /* a power of two */
#define SIGNALS 1000

static syncq_queue_nblfq *work;       /* initialised before the handler is installed */
static volatile sig_atomic_t dropped; /* items the full queue refused */
static _Atomic(int) done;             /* the worker may stop once the queue is empty */

static void on_signal(int sig) {
  static uintptr_t next = 1; /* only the handler touches it; signals do not nest (sa_mask) */
  (void)sig;
  if (syncq_queue_nblfq_enqueue_inline(work, (void *)next++) != SYNCQ_OK) dropped = dropped + 1;
}

static void *worker(void *arg) {
  uint64_t *sum = arg;
  for (;;) {
    void *item;
    if (syncq_queue_nblfq_dequeue_inline(work, &item) == SYNCQ_OK) *sum += (uintptr_t)item;
    else if (atomic_load(&done)) return NULL;
    else syncq_yield();
  }
}

int main(void) {
  size_t bytes;
  if (syncq_queue_nblfq_bytes(CAPACITY, &bytes) != SYNCQ_OK) return 1;
  work = syncq_alloc_aligned(bytes, _Alignof(syncq_queue_nblfq));
  if (work == NULL || syncq_queue_nblfq_init(work, CAPACITY) != SYNCQ_OK) return 1;

  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigfillset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return 1;

  uint64_t sum = 0;
  pthread_t t;
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &block, &old); /* the worker never runs the handler */
  if (pthread_create(&t, NULL, worker, &sum) != 0) return 1;
  pthread_sigmask(SIG_SETMASK, &old, NULL);

  for (int i = 0; i < SIGNALS; i++) {
    raise(SIGUSR1);                             /* delivered to this thread before raise returns */
    if (i % (CAPACITY / 2) == 0) syncq_yield(); /* let the worker drain */
  }
  atomic_store(&done, 1);
  pthread_join(t, NULL);
  void *left;
  while (syncq_queue_nblfq_dequeue_inline(work, &left) == SYNCQ_OK) sum += (uintptr_t)left;

  /* items 1..SIGNALS minus the dropped ones; with none dropped, n(n+1)/2 */
  uint64_t expect = (uint64_t)SIGNALS * (SIGNALS + 1) / 2;
  printf("syncq %s: %d signals, %d dropped (queue full), sum %llu\n", syncq_version(), SIGNALS, (int)dropped,
         (unsigned long long)sum);
  syncq_queue_nblfq_destroy(work);
  free(work);
  return (dropped == 0 && sum == expect) || (dropped > 0 && sum < expect) ? 0 : 1;
}
