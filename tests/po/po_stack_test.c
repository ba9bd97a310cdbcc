/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_stack_test.c — the fiber stacks' cache of destroyed systems
 * (src/po/fiber_stack.c, "the stack cache"): a kept stack is writable and
 * keeps its guard; the bound follows the pool destroyed last, half again
 * (a pool larger than SYNCQ_PO_STACK_CACHE_BYTES is kept whole, a like
 * pool after it maps nothing, nor a larger one after a somewhat smaller
 * one), falls back after a small pool (the excess is unmapped), and
 * never passes SYNCQ_PO_STACK_CACHE_MAX_BYTES; syncq_po_stack_cache_trim
 * unmaps every kept stack (the next pool maps again); a fiber system that
 * repeats a large one spawns without mapping a chunk; guards are made
 * batch by batch as stacks are taken (a pool makes few more than it hands
 * out, each handed-out stack guarded), and a kept chunk made in part goes
 * on being carved by the next pool without a new mapping; spawners that
 * race for a fiber table's last slots hold no stack when refused (a fiber
 * takes its stack at its first run), so the pool does not grow round
 * after round; a batch's stacks come with their top page, and only that,
 * resident; processes spawned and still queued hold no stack; a
 * process that cannot have a stack when it first runs exits with
 * SYNCQ_PO_EXIT_NOMEM without running (its monitor told, its join and
 * destroy clean); threads taking stacks from one pool at once each get
 * distinct stacks whose guards are in place.
 *
 * Each test uses a stack and guard size of its own, so what another test
 * kept does not count for it. Counts are fixed numbers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "po/po_internal.h"

enum { KIB = 1024, TOUCHED = 200 };

#include "test_sanitizer.h"

/* Does reading `p` fault (a guard)? A system call that reads it says so
 * without a signal: EFAULT. */
static bool faults(const char *p) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  ssize_t n = write(fds[1], p, 1);
  int err = errno;
  close(fds[0]);
  close(fds[1]);
  return n < 0 && err == EFAULT;
}

/* Take n stacks from a fresh pool of this geometry, write the top and
 * bottom of the first TOUCHED (below each stack's top page, resident with
 * its batch, pages only those make resident), give
 * them back and destroy the pool (its chunks go to the cache). */
static void cycle(size_t stack, size_t guard, size_t n) {
  po_stack_pool pool;
  assert_int_equal(po_stack_pool_init(&pool, stack, guard), SYNCQ_OK);
  po_stack **s = calloc(n, sizeof *s);
  assert_non_null(s);
  const char *why = NULL;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(po_stack_get(&pool, &s[i], &why), SYNCQ_OK);
    if (i >= TOUCHED) continue;
    s[i]->lo[s[i]->size - 1] = (char)i;
    s[i]->lo[0] = (char)i;
  }
  for (size_t i = 0; i < n; i++) po_stack_put(&pool, s[i]);
  free(s);
  po_stack_pool_destroy(&pool);
}

static void test_kept_stack_keeps_guard(void **state) {
  (void)state;
  const size_t stack = 12 * KIB, guard = 20 * KIB;
  cycle(stack, guard, 100);
  size_t mapped0;
  po_stack_cache_stats(NULL, NULL, &mapped0);
  po_stack_pool pool;
  assert_int_equal(po_stack_pool_init(&pool, stack, guard), SYNCQ_OK);
  po_stack *s;
  const char *why = NULL;
  assert_int_equal(po_stack_get(&pool, &s, &why), SYNCQ_OK);
  size_t mapped1;
  po_stack_cache_stats(NULL, NULL, &mapped1);
  assert_int_equal(mapped1, mapped0); /* a kept chunk, not a new one */
  memset(s->lo, 0x5a, s->size);       /* every byte writable */
  assert_int_equal((unsigned char)s->lo[s->size - 1], 0x5a);
  if (s->guard != NULL) {
    assert_int_equal(s->guard_size, pool.guard_size);
    assert_true(faults(s->guard));
    assert_true(faults(s->lo - 1));
  }
  po_stack_put(&pool, s);
  po_stack_pool_destroy(&pool);
}

static void test_bound_follows_peak(void **state) {
  (void)state;
  const size_t stack = 16 * KIB, guard = 8 * KIB;
  const size_t big = SYNCQ_PO_STACK_CACHE_BYTES / stack + 4000; /* past the fixed bound */
  cycle(stack, guard, big);
  size_t bytes, limit, mapped0, mapped1;
  po_stack_cache_stats(&bytes, &limit, &mapped0);
  assert_true(limit >= big * stack); /* the pool destroyed last sets it */
  assert_true(bytes >= big * stack); /* ... and all of that pool is kept */
  assert_true(bytes <= limit);
  po_stack_pool idle; /* a pool that hands out nothing leaves the bound as it is */
  assert_int_equal(po_stack_pool_init(&idle, stack, guard), SYNCQ_OK);
  po_stack_pool_destroy(&idle);
  size_t bytes1, limit1;
  po_stack_cache_stats(&bytes1, &limit1, NULL);
  assert_int_equal(bytes1, bytes);
  assert_int_equal(limit1, limit);
  cycle(stack, guard, big); /* the same again: every chunk from the cache */
  po_stack_cache_stats(&bytes, &limit, &mapped1);
  assert_int_equal(mapped1, mapped0);
  assert_true(bytes >= big * stack);
  cycle(stack, guard, 1); /* a small pool: the bound falls back, the excess goes */
  po_stack_cache_stats(&bytes, &limit, NULL);
  assert_int_equal(limit, SYNCQ_PO_STACK_CACHE_BYTES);
  assert_true(bytes <= SYNCQ_PO_STACK_CACHE_BYTES);
}

/* A repeated system whose peak varies from run to run (a tree's peak
 * depends on which children the schedulers steal): after a smaller run
 * (within the bound's slack of the pool's half again) the stacks of the
 * larger one are still kept, and the larger one again maps nothing. */
static void test_bound_slack(void **state) {
  (void)state;
  const size_t stack = 16 * KIB, guard = 12 * KIB;
  const size_t big = SYNCQ_PO_STACK_CACHE_BYTES / stack + 6000; /* past the fixed bound */
  const size_t smaller = big - big / 5;                         /* 20% fewer: within the slack */
  cycle(stack, guard, big);
  size_t bytes, limit, mapped0, mapped1;
  po_stack_cache_stats(&bytes, &limit, &mapped0);
  assert_true(bytes >= big * stack);
  cycle(stack, guard, smaller);
  po_stack_cache_stats(&bytes, &limit, NULL);
  assert_true(limit >= big * stack);
  assert_true(bytes >= big * stack); /* the larger run's chunks stay */
  cycle(stack, guard, big);
  po_stack_cache_stats(&bytes, &limit, &mapped1);
  assert_int_equal(mapped1, mapped0); /* every chunk from the cache */
  (void)syncq_po_stack_cache_trim();
}

static void test_bound_capped(void **state) {
  (void)state;
  const size_t stack = 4096 * KIB, guard = 4 * KIB;
  const size_t n = SYNCQ_PO_STACK_CACHE_MAX_BYTES / stack + 100; /* past the cap (address space only) */
  cycle(stack, guard, n);
  size_t bytes, limit;
  po_stack_cache_stats(&bytes, &limit, NULL);
  assert_int_equal(limit, SYNCQ_PO_STACK_CACHE_MAX_BYTES);
  assert_true(bytes <= SYNCQ_PO_STACK_CACHE_MAX_BYTES);
  cycle(stack, guard, 1); /* back to the fixed bound: the rest is unmapped */
  po_stack_cache_stats(&bytes, &limit, NULL);
  assert_true(bytes <= SYNCQ_PO_STACK_CACHE_BYTES);
}

static void test_trim(void **state) {
  (void)state;
  const size_t stack = 20 * KIB, guard = 4 * KIB;
  cycle(stack, guard, 3000);
  size_t bytes, mapped0, mapped1;
  po_stack_cache_stats(&bytes, NULL, &mapped0);
  assert_true(bytes >= 3000 * stack);
  assert_int_equal(syncq_po_stack_cache_trim(), bytes);
  po_stack_cache_stats(&bytes, NULL, NULL);
  assert_int_equal(bytes, 0);
  assert_int_equal(syncq_po_stack_cache_trim(), 0); /* nothing left */
  cycle(stack, guard, 1);                           /* maps again */
  po_stack_cache_stats(&bytes, NULL, &mapped1);
  assert_int_equal(mapped1, mapped0 + 1);
  assert_true(bytes > 0);
}

/* mprotect'ed guards (as on a kernel before 6.13, or under qemu-user):
 * each costs mappings of vm.max_map_count's budget, and kept chunks hold
 * theirs. A pool of another geometry that finds the budget spent by kept
 * stacks gets guards all the same (the kept guarded chunks give their
 * mappings back). In a child: the guard mode and budget are the
 * process's. */
static void test_kept_guards_yield_budget(void **state) {
  (void)state;
  if (SANITIZED) {
    print_message("skipped under a sanitizer: its runtime needs mappings of its own, and using them up kills it\n");
    skip();
  }
  fflush(NULL);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    if (setenv("SYNCQ_PO_GUARD", "mprotect", 1) != 0) _exit(9);
    /* 70,000 stacks: more than 65,530 mappings' worth of guards (two
     * each), so the budget is spent and the rest carry canaries. */
    const size_t stack = 16 * KIB, guard = 16 * KIB;
    cycle(stack, guard, 70000);
    po_stack_pool pool;
    if (po_stack_pool_init(&pool, 24 * KIB, guard) != SYNCQ_OK) _exit(10);
    po_stack *s;
    const char *why = NULL;
    if (po_stack_get(&pool, &s, &why) != SYNCQ_OK) _exit(11);
    if (s->guard == NULL) _exit(12); /* a canary: the kept chunks kept the budget */
    if (!faults(s->guard)) _exit(13);
    po_stack_put(&pool, s);
    po_stack_pool_destroy(&pool);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* Take n stacks from `pool`: each distinct, writable top and bottom, and
 * guarded below (a fault) when the pool has guards. */
static po_stack **take_checked(po_stack_pool *pool, size_t n) {
  po_stack **s = calloc(n, sizeof *s);
  assert_non_null(s);
  const char *why = NULL;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(po_stack_get(pool, &s[i], &why), SYNCQ_OK);
    s[i]->lo[s[i]->size - 1] = 1;
    s[i]->lo[0] = 1;
    if (s[i]->guard != NULL) {
      assert_true(faults(s[i]->guard));
      assert_true(faults(s[i]->lo - 1));
    }
    for (size_t j = 0; j < i; j++) assert_ptr_not_equal(s[j], s[i]);
  }
  return s;
}

static void give_back(po_stack_pool *pool, po_stack **s, size_t n) {
  for (size_t i = 0; i < n; i++) po_stack_put(pool, s[i]);
  free(s);
  po_stack_pool_destroy(pool);
}

/* Guards are made for the stacks a pool hands out, a batch at a time:
 * 1,000 stacks cost at most a batch (64, or a sixteenth of the pool)
 * more, where whole chunks (64, 128, ..., 1,024 stacks) would make 1,984;
 * and the next pool of the geometry takes the kept chunks, carving the
 * rest of the one made in part, without mapping a new one. */
static void test_guards_follow_use(void **state) {
  (void)state;
  const size_t stack = 8 * KIB, guard = 28 * KIB, n = 1000, more = 1500;
  po_stack_pool pool;
  assert_int_equal(po_stack_pool_init(&pool, stack, guard), SYNCQ_OK);
  po_stack **s = take_checked(&pool, n);
  assert_true(pool.stacks >= n);
  assert_true(pool.stacks <= n + 64);
  give_back(&pool, s, n);
  size_t mapped0, mapped1;
  po_stack_cache_stats(NULL, NULL, &mapped0);
  assert_int_equal(po_stack_pool_init(&pool, stack, guard), SYNCQ_OK);
  s = take_checked(&pool, more);
  po_stack_cache_stats(NULL, NULL, &mapped1);
  if (po_stack_guards_are_markers()) {
    assert_int_equal(mapped1, mapped0); /* 64 + ... + 512 + 1,024 slots kept: enough */
  } else {
    /* mprotect'ed guards (qemu-user, kernels before 6.13): chunks of 64
     * stacks, each guarded whole; the kept 1,024 are not enough */
    print_message("guards are mprotect'ed here: chunks of 64, the second pool maps more\n");
    assert_true(mapped1 > mapped0);
  }
  assert_true(pool.stacks >= more);
  assert_true(pool.stacks <= more + more / 16 + 64);
  give_back(&pool, s, more);
  (void)syncq_po_stack_cache_trim();
}

/* A batch's stacks come with their top page resident (made so with
 * their guards, in one call: a fiber's first frame then takes no page
 * fault), and only that page: the page below it is not, until written. */
static bool resident(const char *p) {
  unsigned char v = 0;
  long page = sysconf(_SC_PAGESIZE);
  char *pg = (char *)((uintptr_t)p & ~(uintptr_t)(page - 1));
  assert_int_equal(mincore(pg, (size_t)page, &v), 0);
  return (v & 1) != 0;
}

/* Does this process's kernel make a page resident for
 * process_madvise(MADV_POPULATE_WRITE) on a pidfd of its own, the call
 * the pool makes? Markers can work without it (a kernel or a seccomp
 * filter that refuses pidfd_open or process_madvise: the pool installs
 * its guards one madvise each then), and the pool then leaves the tops
 * to fault in. */
static bool populate_works(void) {
#if defined(SYS_pidfd_open) && defined(SYS_process_madvise)
  long page = sysconf(_SC_PAGESIZE);
  char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  long fd = syscall(SYS_pidfd_open, (long)getpid(), 0L);
  bool ok = false;
  if (fd >= 0) {
    struct iovec iov = {p, (size_t)page};
    ok = syscall(SYS_process_madvise, fd, &iov, (size_t)1, 23L /* MADV_POPULATE_WRITE */, 0L) == page && resident(p);
    close((int)fd);
  }
  assert_int_equal(munmap(p, (size_t)page), 0);
  return ok;
#else
  return false;
#endif
}

static void test_batch_tops_resident(void **state) {
  (void)state;
  const size_t stack = 36 * KIB, guard = 8 * KIB, n = 100; /* a geometry of its own: nothing kept */
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  po_stack_pool pool;
  assert_int_equal(po_stack_pool_init(&pool, stack, guard), SYNCQ_OK);
  po_stack **s = calloc(n, sizeof *s);
  assert_non_null(s);
  const char *why = NULL;
  for (size_t i = 0; i < n; i++) assert_int_equal(po_stack_get(&pool, &s[i], &why), SYNCQ_OK);
  if (!po_stack_guards_are_markers()) {
    /* mprotect'ed guards (qemu-user, kernels before 6.13): stacks fault their top in */
    print_message("guards are mprotect'ed here: stack tops are not made resident ahead\n");
  } else if (!populate_works()) {
    print_message("process_madvise(MADV_POPULATE_WRITE) refused here: stack tops fault in\n");
  } else {
    for (size_t i = 0; i < n; i++) {
      assert_true(resident(s[i]->lo + s[i]->size - 1));
      if (s[i]->size > page) assert_false(resident(s[i]->lo + s[i]->size - 1 - page)); /* the page below */
    }
  }
  for (size_t i = 0; i < n; i++) po_stack_put(&pool, s[i]);
  free(s);
  po_stack_pool_destroy(&pool);
  (void)syncq_po_stack_cache_trim();
}

/* Threads taking stacks from one pool at once (the pool grows by
 * batches of guards and by chunks while they race): each stack a taker
 * gets has its guard already (a fault below it; where the pool has
 * guards, as take_checked), is writable, and no two takers get the same
 * one. */
enum { TAKERS = 4, TAKES = 300 };

typedef struct taker {
  po_stack_pool *pool;
  po_stack *got[TAKES];
  _Atomic(int) *errors;
} taker;

static void *take_concurrently(void *arg) {
  taker *t = arg;
  const char *why = NULL;
  for (int i = 0; i < TAKES; i++) {
    if (po_stack_get(t->pool, &t->got[i], &why) != SYNCQ_OK) {
      atomic_fetch_add(t->errors, 1);
      t->got[i] = NULL;
      continue;
    }
    po_stack *st = t->got[i];
    if (st->guard != NULL && (!faults(st->guard) || !faults(st->lo - 1))) atomic_fetch_add(t->errors, 1);
    st->lo[st->size - 1] = 1;
    st->lo[0] = 1;
  }
  return NULL;
}

static int by_address(const void *a, const void *b) {
  const po_stack *x = *(po_stack *const *)a, *y = *(po_stack *const *)b;
  return x < y ? -1 : x > y;
}

static void test_concurrent_takers_get_guarded_stacks(void **state) {
  (void)state;
  po_stack_pool pool;
  assert_int_equal(po_stack_pool_init(&pool, 28 * KIB, 8 * KIB), SYNCQ_OK);
  _Atomic(int) errors = 0;
  static taker tk[TAKERS];
  pthread_t th[TAKERS];
  for (int i = 0; i < TAKERS; i++) {
    tk[i].pool = &pool;
    tk[i].errors = &errors;
    assert_int_equal(pthread_create(&th[i], NULL, take_concurrently, &tk[i]), 0);
  }
  for (int i = 0; i < TAKERS; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_int_equal(atomic_load(&errors), 0);
  po_stack **all = malloc(sizeof *all * TAKERS * TAKES);
  assert_non_null(all);
  for (int i = 0; i < TAKERS; i++)
    for (int k = 0; k < TAKES; k++) all[i * TAKES + k] = tk[i].got[k];
  qsort(all, TAKERS * TAKES, sizeof *all, by_address);
  for (int i = 1; i < TAKERS * TAKES; i++) assert_ptr_not_equal(all[i - 1], all[i]);
  assert_true(pool.stacks >= TAKERS * TAKES);
  for (int i = 0; i < TAKERS * TAKES; i++) po_stack_put(&pool, all[i]);
  free(all);
  po_stack_pool_destroy(&pool);
  (void)syncq_po_stack_cache_trim();
}

/* Tells main (arg: its pid) that it runs, so holds its stack, then waits
 * for a message. */
static void waiter(syncq_po_proc *self, void *arg) {
  syncq_po_msg *m;
  if (syncq_po_get(self, 0, &m) != SYNCQ_OK) return;
  if (syncq_po_send(self, (syncq_po_pid)(intptr_t)arg, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, m);
  if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) syncq_po_free(self, m);
}

/* n processes live and running at once (each has told main it runs, and
 * waits for a message: a fiber takes its stack when it first runs), then
 * released and joined. */
static void one_system(size_t stack, size_t guard, uint32_t n) {
  syncq_po_config cfg = {"mpsc", n + 1, stack, guard, "fiber", 2, false}; /* and the attached main */
  syncq_po_system *sys;
  assert_int_equal(syncq_po_create(&cfg, &sys), SYNCQ_OK);
  syncq_po_proc *me;
  assert_int_equal(syncq_po_attach(sys, &me), SYNCQ_OK);
  syncq_po_pid *pids = malloc(n * sizeof *pids);
  assert_non_null(pids);
  void *main_pid = (void *)(intptr_t)syncq_po_pid_of(me);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(syncq_po_spawn(sys, waiter, main_pid, &pids[i]), SYNCQ_OK);
  for (uint32_t i = 0; i < n; i++) {
    syncq_po_msg *m;
    assert_int_equal(syncq_po_recv_blocking(me, &m), SYNCQ_OK);
    assert_int_equal(syncq_po_free(me, m), SYNCQ_OK);
  }
  for (uint32_t i = 0; i < n; i++) {
    syncq_po_msg *m;
    assert_int_equal(syncq_po_get(me, 0, &m), SYNCQ_OK);
    assert_int_equal(syncq_po_send(me, pids[i], m, SYNCQ_PO_LINK), SYNCQ_OK);
  }
  for (uint32_t i = 0; i < n; i++) assert_int_equal(syncq_po_join(sys, pids[i]), SYNCQ_OK);
  free(pids);
  assert_int_equal(syncq_po_detach(me), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

static void test_system_repeats_without_mapping(void **state) {
  (void)state;
  /* Large stacks (the sanitizers' frames need them), so that few fibers
   * (ThreadSanitizer keeps a thread state for each) pass the fixed bound. */
  const size_t stack = 256 * KIB, guard = 12 * KIB;
  const uint32_t n = (uint32_t)(SYNCQ_PO_STACK_CACHE_BYTES / stack) + 1000; /* more than the fixed bound keeps */
  one_system(stack, guard, n);
  size_t mapped0, mapped1;
  po_stack_cache_stats(NULL, NULL, &mapped0);
  one_system(stack, guard, n);
  po_stack_cache_stats(NULL, NULL, &mapped1);
  assert_int_equal(mapped1, mapped0);
}

/* Spawners racing for the last slots of a fiber table: a spawn takes no
 * stack (its fiber takes one when it first runs), so a spawn the full
 * table refuses holds none. Every round exactly max_procs spawns succeed;
 * over the rounds the pool needs no more than the live processes' stacks:
 * two chunks (a stack lost per refusal would need a new chunk every few
 * rounds). */
enum { RACE_PROCS = 64, RACE_SPAWNERS = 4, RACE_TRIES = 32, RACE_ROUNDS = 200 };

static void quit_at_once(syncq_po_proc *self, void *arg) { (void)self, (void)arg; }

static syncq_po_system *queued_sys;

typedef struct race_spawner {
  syncq_po_system *sys;
  syncq_po_pid pids[RACE_TRIES];
  int ok, refused, other;
} race_spawner;

static void *race_spawn(void *arg) {
  race_spawner *r = arg;
  r->ok = r->refused = r->other = 0;
  for (int i = 0; i < RACE_TRIES; i++) {
    int e = syncq_po_spawn(r->sys, quit_at_once, NULL, &r->pids[r->ok]);
    if (e == SYNCQ_OK) r->ok++;
    else if (e == SYNCQ_ELIMIT) r->refused++;
    else r->other++;
  }
  return NULL;
}

static void test_full_table_returns_stacks(void **state) {
  (void)state;
  syncq_po_config cfg = {"mpsc", RACE_PROCS, 48 * KIB, 20 * KIB, "fiber", 2, false};
  syncq_po_system *sys;
  assert_int_equal(syncq_po_create(&cfg, &sys), SYNCQ_OK);
  static race_spawner sp[RACE_SPAWNERS];
  size_t mapped0, mapped1;
  po_stack_cache_stats(NULL, NULL, &mapped0);
  for (int round = 0; round < RACE_ROUNDS; round++) {
    pthread_t t[RACE_SPAWNERS];
    for (int i = 0; i < RACE_SPAWNERS; i++) {
      sp[i].sys = sys;
      assert_int_equal(pthread_create(&t[i], NULL, race_spawn, &sp[i]), 0);
    }
    int ok = 0, refused = 0;
    for (int i = 0; i < RACE_SPAWNERS; i++) {
      assert_int_equal(pthread_join(t[i], NULL), 0);
      assert_int_equal(sp[i].other, 0);
      ok += sp[i].ok;
      refused += sp[i].refused;
    }
    assert_int_equal(ok, RACE_PROCS);
    assert_int_equal(refused, RACE_SPAWNERS * RACE_TRIES - RACE_PROCS);
    for (int i = 0; i < RACE_SPAWNERS; i++)
      for (int k = 0; k < sp[i].ok; k++) assert_int_equal(syncq_po_join(sys, sp[i].pids[k]), SYNCQ_OK);
  }
  po_stack_cache_stats(NULL, NULL, &mapped1);
  assert_true(mapped1 - mapped0 <= 2); /* 64 + 128 slots hold the 64 processes */
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

/* A fiber's stack is taken when a scheduler first runs it: 2,000
 * processes spawned by a fiber that has not let them run (one scheduler)
 * hold no stack, so the pool maps nothing past the spawner's own chunk;
 * run and joined one by one (each exits at once), they reuse one stack
 * after another. */
enum { QUEUED = 2000 };

typedef struct queued_run {
  size_t mapped_before, mapped_queued;
  int errors;
} queued_run;

static int spawn_queued(syncq_po_proc *self, void *arg) {
  (void)self;
  queued_run *q = arg;
  syncq_po_system *sys = queued_sys;
  static syncq_po_pid pids[QUEUED];
  for (int i = 0; i < QUEUED; i++)
    if (syncq_po_spawn(sys, quit_at_once, NULL, &pids[i]) != SYNCQ_OK) q->errors++;
  po_stack_cache_stats(NULL, NULL, &q->mapped_queued);
  for (int i = 0; i < QUEUED; i++)
    if (syncq_po_join(sys, pids[i]) != SYNCQ_OK) q->errors++;
  return 0;
}

static void test_queued_processes_hold_no_stack(void **state) {
  (void)state;
  syncq_po_config cfg = {"mpsc", QUEUED + 1, 40 * KIB, 24 * KIB, "fiber", 1, false}; /* a geometry of its own */
  assert_int_equal(syncq_po_create(&cfg, &queued_sys), SYNCQ_OK);
  queued_run q = {0, 0, 0};
  po_stack_cache_stats(NULL, NULL, &q.mapped_before);
  int result = -1;
  assert_int_equal(syncq_po_run(queued_sys, spawn_queued, &q, &result), SYNCQ_OK);
  assert_int_equal(result, 0);
  assert_int_equal(q.errors, 0);
  assert_int_equal(q.mapped_queued - q.mapped_before, 1); /* the spawner's chunk; 2,000 stacks would be 5 more */
  size_t mapped_after;
  po_stack_cache_stats(NULL, NULL, &mapped_after);
  assert_int_equal(mapped_after - q.mapped_before, 1);
  assert_int_equal(syncq_po_destroy(queued_sys), SYNCQ_OK);
  queued_sys = NULL;
}

/* A process that cannot have a stack when a scheduler first runs it (no
 * memory: here the address space limit, below what the pool's next chunk
 * of 1 GiB stacks maps) exits with SYNCQ_PO_EXIT_NOMEM without running
 * its body: a monitor gets its "down" with that reason, join returns,
 * the limit reason names memory, syncq_po_run answers SYNCQ_ENOMEM, and
 * destroy is clean. In a child process (the limit stays there). The
 * sanitizers reserve terabytes of shadow memory: no address space limit
 * can be set under them. */
enum { STILLBORN_UNLIMITED = 77 };

static _Atomic(int) body_ran;

static void mark_ran(syncq_po_proc *self, void *arg) {
  (void)self, (void)arg;
  atomic_store(&body_ran, 1);
}

static int main_ran(syncq_po_proc *self, void *arg) {
  (void)self, (void)arg;
  atomic_store(&body_ran, 1);
  return 7;
}

static int stillborn_child(void) {
  syncq_po_config cfg = {"mpsc", 8, (size_t)1 << 30, 64 * KIB, "fiber", 1, false};
  syncq_po_system *sys;
  if (syncq_po_create(&cfg, &sys) != SYNCQ_OK) return 10;
  syncq_po_proc *me;
  if (syncq_po_attach(sys, &me) != SYNCQ_OK) return 11;
  struct rlimit lim = {(rlim_t)16 << 30, (rlim_t)16 << 30}; /* far below 64 stacks of 1 GiB */
  if (setrlimit(RLIMIT_AS, &lim) != 0) return 12;
  /* Where the limit does not bind mappings (an emulator that reserved the
   * guest's address space up front), there is nothing to test. */
  void *probe =
    mmap(NULL, (size_t)32 << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe != MAP_FAILED) {
    munmap(probe, (size_t)32 << 30);
    return STILLBORN_UNLIMITED;
  }
  syncq_po_pid pid;
  if (syncq_po_spawn(sys, mark_ran, NULL, &pid) != SYNCQ_OK) return 13; /* a slot, no stack */
  uint64_t ref;
  int r = syncq_po_monitor(me, pid, &ref);
  if (r != SYNCQ_OK) return 14;
  syncq_po_msg *m;
  if (syncq_po_recv_blocking(me, &m) != SYNCQ_OK) return 15;
  syncq_po_down d;
  if (m->type != SYNCQ_PO_DOWN || m->len != sizeof d) return 16;
  memcpy(&d, m->data, sizeof d);
  syncq_po_free(me, m);
  if (d.pid != pid || d.ref != ref || d.reason != SYNCQ_PO_EXIT_NOMEM) return 17;
  if (syncq_po_join(sys, pid) != SYNCQ_OK) return 18;
  const char *why = syncq_po_limit_reason(sys);
  if (why == NULL) return 19;
  int result = -1;
  if (syncq_po_run(sys, main_ran, NULL, &result) != SYNCQ_ENOMEM || result != -1) return 20;
  if (atomic_load(&body_ran) != 0) return 21;
  if (syncq_po_detach(me) != SYNCQ_OK) return 22;
  if (syncq_po_destroy(sys) != SYNCQ_OK) return 23;
  return 0;
}

static void test_stillborn_exits_nomem(void **state) {
  (void)state;
  if (SANITIZED) {
    print_message("skipped under a sanitizer: its shadow memory needs an unlimited address space\n");
    return;
  }
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) _exit(stillborn_child());
  int status;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == STILLBORN_UNLIMITED) {
    print_message("skipped: the address space limit does not bind mappings here\n");
    return;
  }
  assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kept_stack_keeps_guard),
    cmocka_unit_test(test_bound_follows_peak),
    cmocka_unit_test(test_bound_slack),
    cmocka_unit_test(test_bound_capped),
    cmocka_unit_test(test_trim),
    cmocka_unit_test(test_kept_guards_yield_budget),
    cmocka_unit_test(test_guards_follow_use),
    cmocka_unit_test(test_batch_tops_resident),
    cmocka_unit_test(test_concurrent_takers_get_guarded_stacks),
    cmocka_unit_test(test_full_table_returns_stacks),
    cmocka_unit_test(test_system_repeats_without_mapping),
    cmocka_unit_test(test_queued_processes_hold_no_stack),
    cmocka_unit_test(test_stillborn_exits_nomem),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
