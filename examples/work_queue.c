/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * work_queue.c — worker threads fed by an MPMC queue, in two phases with a
 * barrier between them and a shared counter of the jobs done.
 *
 * Phase 1 uses a queue made by name through the generic API (the first
 * argument, "scq" by default; a name that is not registered is answered
 * with the list of those that are). Phase 2 uses LPRQ through its typed
 * header (syncq/queue/lprq.h) in static storage, which its type aligns.
 * Half the threads produce, half consume; every status is checked, and a
 * bounded queue's SYNCQ_FULL and an empty queue's SYNCQ_EMPTY are
 * outcomes to wait out (syncq_yield), not errors. Exits 0 when every job
 * was taken once in each phase.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <syncq/barrier.h>
#include <syncq/counter.h>
#include <syncq/platform.h>
#include <syncq/queue.h>
#include <syncq/queue/lprq.h>

#define THREADS 4 /* the first half produce, the others consume */
#define JOBS 20000

static syncq_queue *named;    /* phase 1: any registered queue, by name */
static syncq_queue_lprq lprq; /* phase 2: the typed API on caller storage */
static syncq_barrier *phases;
static syncq_counter *done; /* jobs taken, both phases together */
static uint32_t jobs[JOBS]; /* an item is a pointer to a job (never NULL) */
static uint64_t taken_sum[THREADS];

static int put(int phase, void *job) {
  int r;
  while ((r = phase == 0 ? syncq_queue_enqueue(named, job) : syncq_queue_lprq_enqueue(&lprq, job)) == SYNCQ_FULL)
    syncq_yield(); /* a bounded queue is full until a consumer takes one */
  return r;
}

static int take(int phase, void **job) {
  return phase == 0 ? syncq_queue_dequeue(named, job) : syncq_queue_lprq_dequeue(&lprq, job);
}

static void *worker(void *arg) {
  unsigned id = (unsigned)(uintptr_t)arg;
  for (int phase = 0; phase < 2; phase++) {
    if (id < THREADS / 2) {
      for (unsigned i = id; i < JOBS; i += THREADS / 2) {
        int r = put(phase, &jobs[i]);
        if (r != SYNCQ_OK) {
          fprintf(stderr, "producer %u: enqueue: %s\n", id, syncq_strerror(r));
          return (void *)1;
        }
      }
    } else {
      for (;;) {
        int64_t n, old;
        void *job;
        if (syncq_counter_load(done, &n) != SYNCQ_OK) return (void *)1;
        if (n >= (int64_t)JOBS * (phase + 1)) break; /* this phase's jobs are all taken */
        int r = take(phase, &job);
        if (r == SYNCQ_EMPTY) {
          syncq_yield();
          continue;
        }
        if (r != SYNCQ_OK) {
          fprintf(stderr, "consumer %u: dequeue: %s\n", id, syncq_strerror(r));
          return (void *)1;
        }
        taken_sum[id] += *(uint32_t *)job;
        if (syncq_counter_fetch_add(done, 1, &old) != SYNCQ_OK) return (void *)1;
      }
    }
    /* nobody starts phase 2 before every thread has finished phase 1 */
    int r = syncq_barrier_wait(phases, id);
    if (r != SYNCQ_OK) {
      fprintf(stderr, "thread %u: barrier: %s\n", id, syncq_strerror(r));
      return (void *)1;
    }
  }
  return NULL;
}

/* The names syncq_queue_create accepts, for a name it did not know. */
static void list_queues(void) {
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_QUEUE, algos, SYNCQ_REGISTRY_MAX);
  fputs("registered queues:", stderr);
  for (int i = 0; i < n && i < (int)SYNCQ_REGISTRY_MAX; i++) fprintf(stderr, " %s", algos[i]->name);
  fputc('\n', stderr);
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "scq";
  int r = syncq_queue_create(name, 1024, &named); /* a bounded queue takes a power of two */
  if (r != SYNCQ_OK) {
    fprintf(stderr, "queue %s: %s\n", name, syncq_strerror(r));
    if (r == SYNCQ_ENOENT) list_queues();
    return 1;
  }
  if ((r = syncq_queue_lprq_init(&lprq, 0)) != SYNCQ_OK) {
    fprintf(stderr, "lprq: %s\n", syncq_strerror(r));
    return 1;
  }
  syncq_barrier_config bc = {.threads = THREADS};
  if ((r = syncq_barrier_create("dissemination", &bc, &phases)) != SYNCQ_OK ||
      (r = syncq_counter_create("faa", 0, &done)) != SYNCQ_OK) {
    fprintf(stderr, "barrier or counter: %s\n", syncq_strerror(r));
    return 1;
  }
  for (uint32_t i = 0; i < JOBS; i++) jobs[i] = i + 1;

  pthread_t t[THREADS];
  for (unsigned i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
  int failed = 0;
  for (unsigned i = 0; i < THREADS; i++) {
    void *res;
    pthread_join(t[i], &res);
    failed |= res != NULL;
  }
  uint64_t sum = 0;
  int64_t n = 0;
  for (unsigned i = 0; i < THREADS; i++) sum += taken_sum[i];
  syncq_counter_load(done, &n);
  uint64_t want = 2 * ((uint64_t)JOBS * (JOBS + 1) / 2); /* each job once per phase */
  printf("%s (%s) then lprq (typed): %lld jobs taken, sum %s\n", name,
         syncq_progress_name(syncq_queue_algo(named)->progress), (long long)n, sum == want ? "right" : "WRONG");
  /* destroy refuses (SYNCQ_EBUSY) while an operation is under way: none is now */
  if (syncq_queue_destroy(named) != SYNCQ_OK || syncq_queue_lprq_destroy(&lprq) != SYNCQ_OK) failed = 1;
  syncq_barrier_destroy(phases);
  syncq_counter_destroy(done);
  return !failed && sum == want && n == 2 * JOBS ? 0 : 1;
}
