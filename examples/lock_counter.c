/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_counter.c — a counter protected by a lock of the generic API.
 *
 * The lock is made by name with no discipline: the safe default
 * (syncq/lock.h) spins about one context switch, then sleeps, so it does
 * not collapse with more threads than processors (8 threads here). Pass
 * the lock's name as the first argument ("mcs" by default; "syncq-lab
 * algos lock" lists them).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <syncq/lock.h>
#include <syncq/wait.h>

#define THREADS 8
#define INCREMENTS 100000

static syncq_lock *lock;
static uint64_t counter; /* protected by lock */

static void *work(void *arg) {
  (void)arg;
  syncq_lock_node node; /* one per thread per held lock */
  for (int i = 0; i < INCREMENTS; i++) {
    if (syncq_lock_lock(lock, &node) != SYNCQ_OK) return (void *)1;
    counter++;
    syncq_lock_unlock(lock, &node);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "mcs";
  int r = syncq_lock_create(name, NULL, &lock);
  if (r != SYNCQ_OK) {
    fprintf(stderr, "lock %s: %s\n", name, syncq_strerror(r));
    return 1;
  }
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, work, NULL);
  int failed = 0;
  for (int i = 0; i < THREADS; i++) {
    void *res;
    pthread_join(t[i], &res);
    failed |= res != NULL;
  }
  printf("%s (waiting: %s): %llu increments\n", name, syncq_wait_name(syncq_lock_discipline(lock)),
         (unsigned long long)counter);
  syncq_lock_destroy(lock);
  return !failed && counter == (uint64_t)THREADS * INCREMENTS ? 0 : 1;
}
