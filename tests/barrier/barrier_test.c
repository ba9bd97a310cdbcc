/*
 * barrier_test.c — the barrier validation driver: every registered
 * barrier, with every waiting discipline it accepts, through its ops table;
 * plus the generic API and bad inputs.
 *
 * Over many episodes with random delays before each arrival, threads = 8x
 * the processing units:
 *  - no thread leaves episode k before all arrived: an arrivals counter
 *    read after the barrier must be at least (k+1) x threads, and at most
 *    (k+2) x threads (nobody got two episodes ahead);
 *  - the barrier orders memory: each thread writes its slot of a plain
 *    (non-atomic) array before arriving and reads everybody's after
 *    leaving (TSan checks the happens-before edges);
 *  - thread counts that are not powers of two or of four, and 1.
 * Process-shared barriers run the same check across fork()ed processes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_peers.h"

#include "syncq/barrier.h"
#include "syncq/barrier/central.h"
#include "syncq/barrier/dissemination.h"
#include "syncq/barrier/mcs_tree.h"
#include "syncq/barrier/pthread_barrier.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/wait.h"

#define OVERSUBSCRIPTION 8
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 4
#else
#define SCALE 1
#endif
/* Episodes: spinning waiters under 8x oversubscription burn their time
 * slices each episode, so they get fewer (the point is that they finish). */
#define EPISODES (400 / SCALE)
#define EPISODES_SPIN_OVERSUBSCRIBED (8 / SCALE + 1)
#define EPISODES_SPIN (30 / SCALE)
#define MAX_THREADS 256

static int n_pus(void) {
  long pus = sysconf(_SC_NPROCESSORS_ONLN);
  return (int)(pus < 1 ? 1 : pus);
}

typedef struct bar_shared {
  const syncq_barrier_ops *ops;
  void *b;
  int threads;
  int episodes;
  _Atomic(uint64_t) arrivals;
  _Atomic(int) early;   /* left before everyone arrived */
  _Atomic(int) ahead;   /* someone was two episodes ahead */
  _Atomic(int) stale;   /* a slot did not hold this episode's value */
  _Atomic(int) errors;
  int slot[2][MAX_THREADS]; /* plain: ordered by the barrier only */
} bar_shared;

typedef struct bar_thread {
  bar_shared *s;
  unsigned id;
  unsigned seed;
} bar_thread;

static void *bar_main(void *p) {
  bar_thread *t = p;
  bar_shared *s = t->s;
  unsigned seed = t->seed;
  uint64_t n = (uint64_t)s->threads;
  for (int e = 0; e < s->episodes; e++) {
    seed = seed * 1103515245u + 12345u;
    unsigned r = (seed >> 16) % 8u;
    if (r == 0) syncq_yield();                /* random delays before arriving */
    else if (r == 1) syncq_delay_ns(2000);
    s->slot[e & 1][t->id] = e;
    atomic_fetch_add(&s->arrivals, 1);
    if (s->ops->wait(s->b, t->id) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
    uint64_t a = atomic_load(&s->arrivals);
    if (a < (uint64_t)(e + 1) * n) atomic_fetch_add(&s->early, 1);
    if (a > (uint64_t)(e + 2) * n) atomic_fetch_add(&s->ahead, 1);
    for (int j = 0; j < s->threads; j++)
      if (s->slot[e & 1][j] != e) {
        atomic_fetch_add(&s->stale, 1);
        break;
      }
    if ((seed >> 8) % 5u == 0) syncq_yield(); /* and after leaving */
  }
  return NULL;
}

static void check_episodes(const syncq_algo *a, int wait, int threads, int episodes) {
  const syncq_barrier_ops *ops = a->ops;
  bar_shared *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->ops = ops;
  s->b = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(s->b);
  s->threads = threads;
  s->episodes = episodes;
  syncq_barrier_config cfg = {(unsigned)threads, wait, false};
  assert_int_equal(ops->init(s->b, &cfg), SYNCQ_OK);
  bar_thread ts[MAX_THREADS];
  pthread_t tids[MAX_THREADS];
  for (int i = 0; i < threads; i++) {
    ts[i] = (bar_thread){s, (unsigned)i, (unsigned)i * 7919u + 1u};
    assert_int_equal(pthread_create(&tids[i], NULL, bar_main, &ts[i]), 0);
  }
  for (int i = 0; i < threads; i++) pthread_join(tids[i], NULL);
  if (atomic_load(&s->early) || atomic_load(&s->ahead) || atomic_load(&s->stale))
    fail_msg("%s/%s, %d threads: %d early leaves, %d ahead, %d stale slots", a->name, syncq_wait_name(wait), threads,
             atomic_load(&s->early), atomic_load(&s->ahead), atomic_load(&s->stale));
  assert_int_equal(atomic_load(&s->errors), 0);
  assert_int_equal(atomic_load(&s->arrivals), (uint64_t)threads * (uint64_t)episodes);
  assert_int_equal(ops->destroy(s->b), SYNCQ_OK);
  free(s->b);
  free(s);
}

/* ---- across processes ---- */
#define PS_PROCS 4

typedef struct ps_region {
  _Atomic(uint64_t) arrivals;
  _Atomic(int) early;
  SYNCQ_CACHELINE_ALIGNED unsigned char b[];
} ps_region;

static void check_process_shared(const syncq_algo *a, int wait, int episodes) {
  const syncq_barrier_ops *ops = a->ops;
  size_t bytes = sizeof(ps_region) + ops->size + 4096;
  ps_region *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(r != MAP_FAILED);
  syncq_barrier_config cfg = {PS_PROCS, wait, true};
  assert_int_equal(ops->init(r->b, &cfg), SYNCQ_OK);
  pid_t pids[PS_PROCS];
  for (int p = 0; p < PS_PROCS; p++) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) {
      int bad = 0;
      for (int e = 0; e < episodes; e++) {
        if ((e + p) % 3 == 0) syncq_yield();
        atomic_fetch_add(&r->arrivals, 1);
        if (ops->wait(r->b, (unsigned)p) != SYNCQ_OK) bad = 1;
        if (atomic_load(&r->arrivals) < (uint64_t)(e + 1) * PS_PROCS) atomic_fetch_add(&r->early, 1);
      }
      _exit(bad);
    }
  }
  for (int p = 0; p < PS_PROCS; p++) {
    int st = 0;
    assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  assert_int_equal(atomic_load(&r->early), 0);
  assert_int_equal(atomic_load(&r->arrivals), (uint64_t)PS_PROCS * (uint64_t)episodes);
  assert_int_equal(ops->destroy(r->b), SYNCQ_OK);
  munmap(r, bytes);
}

static void check_bad_inputs(const syncq_algo *a) {
  const syncq_barrier_ops *ops = a->ops;
  void *b = syncq_alloc_aligned(ops->size, ops->align);
  assert_non_null(b);
  syncq_barrier_config cfg = {3, SYNCQ_WAIT_DEFAULT, false};
  assert_int_equal(ops->init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(ops->init(b, NULL), SYNCQ_EINVAL);
  cfg.threads = 0;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_EINVAL);
  cfg.threads = SYNCQ_BARRIER_MAX_THREADS + 1;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_ELIMIT);
  cfg.threads = 3;
  cfg.wait = 17;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_EINVAL);
  cfg.wait = -3;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_EINVAL);
  cfg.wait = SYNCQ_WAIT_DEFAULT;
  assert_int_equal(ops->destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(ops->wait(NULL, 0), SYNCQ_EINVAL);
  /* one thread: wait returns at once, episode after episode */
  cfg.threads = 1;
  assert_int_equal(ops->init(b, &cfg), SYNCQ_OK);
  for (int i = 0; i < 5; i++) assert_int_equal(ops->wait(b, 0), SYNCQ_OK);
  assert_int_equal(ops->wait(b, 1), SYNCQ_EINVAL); /* id out of range */
  assert_int_equal(ops->destroy(b), SYNCQ_OK);
  if ((a->props & SYNCQ_PROP_PROCESS_SHARED) == 0) {
    cfg.process_shared = true;
    assert_int_equal(ops->init(b, &cfg), SYNCQ_ENOTSUP);
  }
  free(b);
}

static void test_every_registered_barrier(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_BARRIER, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n >= 5);
  int over = n_pus() * OVERSUBSCRIPTION;
  if (over > MAX_THREADS) over = MAX_THREADS;
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    const syncq_barrier_ops *ops = a->ops;
    check_bad_inputs(a);
    for (int w = SYNCQ_WAIT_SPIN; w < SYNCQ_WAIT_COUNT; w++) {
      void *probe = syncq_alloc_aligned(ops->size, ops->align);
      syncq_barrier_config cfg = {2, w, false};
      int r = ops->init(probe, &cfg);
      if (r == SYNCQ_OK) ops->destroy(probe);
      free(probe);
      if (r == SYNCQ_ENOTSUP) {
        print_message("barrier %s: discipline %s not supported (skipped)\n", a->name, syncq_wait_name(w));
        continue;
      }
      assert_int_equal(r, SYNCQ_OK);
      uint64_t t0 = syncq_now_ns();
      int eps = w == SYNCQ_WAIT_SPIN ? EPISODES_SPIN : EPISODES;
      check_episodes(a, w, over, w == SYNCQ_WAIT_SPIN ? EPISODES_SPIN_OVERSUBSCRIBED : EPISODES); /* oversubscribed */
      check_episodes(a, w, 5, eps);      /* not a power of 2 or 4 */
      check_episodes(a, w, n_pus(), EPISODES * 2);
      uint64_t t1 = syncq_now_ns();
      if (a->props & SYNCQ_PROP_PROCESS_SHARED) check_process_shared(a, w, eps);
      uint64_t t2 = syncq_now_ns();
      print_message("barrier %s/%s: %d threads: %.2f s, process-shared %.2f s\n", a->name, syncq_wait_name(w), over,
                    (double)(t1 - t0) / 1e9, (double)(t2 - t1) / 1e9);
    }
  }
}

static void test_generic_api(void **state) {
  (void)state;
  syncq_barrier *b = NULL;
  syncq_barrier_config cfg = {1, SYNCQ_WAIT_DEFAULT, false};
  assert_int_equal(syncq_barrier_create("central-faa", &cfg, &b), SYNCQ_OK);
  assert_string_equal(syncq_barrier_algo(b)->name, "central-faa");
  assert_int_equal(syncq_barrier_wait(b, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_wait(b, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_destroy(b), SYNCQ_OK);
  assert_int_equal(syncq_barrier_create("no-such-barrier", &cfg, &b), SYNCQ_ENOENT);
  assert_int_equal(syncq_barrier_create(NULL, &cfg, &b), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_create("mcs-tree", NULL, &b), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_create("mcs-tree", &cfg, NULL), SYNCQ_EINVAL);
  cfg.threads = 0;
  assert_int_equal(syncq_barrier_create("mcs-tree", &cfg, &b), SYNCQ_EINVAL);
  cfg.threads = 2;
  cfg.wait = 9;
  assert_int_equal(syncq_barrier_create("dissemination", &cfg, &b), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_destroy(NULL), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_wait(NULL, 0), SYNCQ_EINVAL);
  assert_null(syncq_barrier_algo(NULL));
}

static void test_typed_apis(void **state) {
  (void)state;
  syncq_barrier_central c;
  syncq_barrier_mcs_tree t;
  syncq_barrier_dissemination d;
  syncq_barrier_pthread p;
  syncq_barrier_config cfg = {1, SYNCQ_WAIT_SPIN, false};
  assert_int_equal(syncq_barrier_central_init(&c, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_cas_wait(&c, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_faa_wait(&c, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_central_faa_wait(NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_cas_wait(&c, 1), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_central_destroy(&c), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_init(&t, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_wait(&t, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_destroy(&t), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_wait(&t, 0), SYNCQ_EINVAL); /* destroyed */
  assert_int_equal(syncq_barrier_dissemination_init(&d, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_wait(&d, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_destroy(&d), SYNCQ_OK);
  assert_int_equal(syncq_barrier_dissemination_wait(&d, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_init(&p, &cfg), SYNCQ_ENOTSUP); /* spin */
  cfg.wait = SYNCQ_WAIT_BLOCK;
  assert_int_equal(syncq_barrier_pthread_init(&p, &cfg), SYNCQ_OK);
  assert_int_equal(syncq_barrier_pthread_wait(&p, 0), SYNCQ_OK);
  assert_int_equal(syncq_barrier_pthread_destroy(&p), SYNCQ_OK);
  assert_int_equal(syncq_barrier_mcs_tree_init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_dissemination_init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_init(NULL, &cfg), SYNCQ_EINVAL);
  assert_int_equal(syncq_barrier_pthread_wait(NULL, 0), SYNCQ_EINVAL);
}

int main(void) {
  test_register_peers();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_registered_barrier),
    cmocka_unit_test(test_generic_api),
    cmocka_unit_test(test_typed_apis),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
