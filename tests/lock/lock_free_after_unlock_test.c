/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_free_after_unlock_test.c — the next holder may destroy and free a
 * lock as soon as it holds it, as it may a POSIX mutex: an unlock touches
 * nothing of the lock after its hand-over but a futex system call on its
 * address (syncq/lock.h).
 *
 * For every registered lock (peers aside) and every waiting discipline it
 * accepts (and, created by the generic API, with none named: its safe
 * default; the generic API restricts the FIFO locks under block,
 * competitive and that default, src/lock/gcr.c, and the "heap" cases go
 * through it): A holds the lock; B calls lock() and waits (BLOCK, COMPETITIVE
 * and the mutexes: until the kernel reports it asleep); A unlocks, and the
 * race point "lock.handover" (tests/support/syncq_race.h) stalls A right
 * after its hand-over, while B is kicked by a signal (a spurious return
 * from its futex wait, which every sleeper must tolerate) and runs: it
 * takes the lock, releases it, destroys it and frees it. Then A goes on.
 * Each case runs in a child process of its own (tests/support/
 * bounded_call.h: a fault or a hang fails the case by name), once for
 * each way of freeing:
 *  - "unmap": the lock lives in pages of its own (mmap) through its ops
 *    table; B poisons them and makes them inaccessible (PROT_NONE), so any
 *    access of A after its hand-over faults, in every build;
 *  - "heap": syncq_lock_create / syncq_lock_destroy (malloc, free): under
 *    AddressSanitizer such an access is a heap-use-after-free report.
 * A case fails when its child dies of a signal or reports a failure: a
 * lock call that did not return SYNCQ_OK, a B that did not sleep, an
 * unlock without the race point, or a B that could not take the lock
 * while A stood at the point (the point would not follow the hand-over).
 * Two threads per case, whatever the machine.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, before any static body */

#include "bounded_call.h"

#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/registry.h"
#include "syncq/wait.h"

SYNCQ_RACE_HOOK_DEFINE;

/* How long B may take to fall asleep, or to take the lock while A is
 * stalled, before the case fails (generous: the machine may be loaded). */
#define PATIENCE_S 20
#define CASE_LIMIT_S (4 * PATIENCE_S) /* a case that hangs is a failure too */
/* Spinning and yielding disciplines: let B reach its wait loop. */
#define SPIN_HEAD_START_NS 20000000L

enum free_mode { FREE_UNMAP, FREE_HEAP };
static const char *const mode_names[] = {"unmap", "heap"};

/* Child exit codes. */
enum {
  CASE_OK = 0,
  CASE_CALL = 10,    /* a lock call did not return SYNCQ_OK */
  CASE_NOSLEEP = 11, /* B never slept */
  CASE_NOPOINT = 12, /* A's unlock passed no race point */
  CASE_STUCK = 13,   /* B could not take the lock while A stood at the point */
  CASE_SETUP = 14,   /* the test's own set-up failed */
  CASE_SKIP = 15,    /* the lock does not accept the discipline */
};

/* ---- the child's state (one case per process) ---- */
static enum free_mode mode;
static const syncq_lock_ops *ops;
static void *storage; /* FREE_UNMAP: the lock, in pages of its own */
static size_t map_len;
static syncq_lock *glock; /* FREE_HEAP */
static pthread_t b_thread;
static _Atomic int b_tid;
static sem_t b_freed;
static _Atomic int point_passed;
static _Thread_local int stall_here; /* set in A around its unlock */

static void fail_child(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  _exit(code);
}

static int do_lock(syncq_lock_node *n) { return mode == FREE_HEAP ? syncq_lock_lock(glock, n) : ops->lock(storage, n); }
static int do_unlock(syncq_lock_node *n) {
  return mode == FREE_HEAP ? syncq_lock_unlock(glock, n) : ops->unlock(storage, n);
}

/* The race point's hook: stall A right after its hand-over until B has
 * freed the lock. */
static void hook(const char *name) {
  if (!stall_here || strcmp(name, "lock.handover") != 0) return;
  stall_here = 0;
  atomic_store(&point_passed, 1);
  /* B may sleep in the kernel; the releaser that would wake it stands
   * here. A signal makes its futex wait return, as a spurious wake-up
   * would; B then re-checks its word and finds the lock handed over. */
  pthread_kill(b_thread, SIGUSR1);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += PATIENCE_S;
  while (sem_timedwait(&b_freed, &until) != 0)
    if (errno != EINTR) fail_child(CASE_STUCK, "B did not get the lock while the releaser stood after its hand-over");
}

static void on_kick(int sig) { (void)sig; }

static void *b_main(void *arg) {
  (void)arg;
  atomic_store(&b_tid, (int)syscall(SYS_gettid));
  syncq_lock_node node;
  int r = do_lock(&node);
  if (r != SYNCQ_OK) fail_child(CASE_CALL, "B: lock returned %d", r);
  r = do_unlock(&node);
  if (r != SYNCQ_OK) fail_child(CASE_CALL, "B: unlock returned %d", r);
  if (mode == FREE_HEAP) {
    r = syncq_lock_destroy(glock); /* frees */
    if (r != SYNCQ_OK) fail_child(CASE_CALL, "B: destroy returned %d", r);
  } else {
    r = ops->destroy(storage);
    if (r != SYNCQ_OK) fail_child(CASE_CALL, "B: destroy returned %d", r);
    memset(storage, 0xA5, map_len); /* poison, then take the pages away */
    if (mprotect(storage, map_len, PROT_NONE) != 0) fail_child(CASE_SETUP, "mprotect: %s", strerror(errno));
  }
  sem_post(&b_freed);
  return NULL;
}

/* The state letter of thread tid (/proc/self/task/tid/stat), '?' if
 * unreadable. */
static char thread_state(int tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  FILE *f = fopen(path, "r");
  if (f == NULL) return '?';
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the name may hold spaces */
  return (p != NULL && p[1] == ' ') ? p[2] : '?';
}

static void wait_until_asleep(int tid) {
  for (long ms = 0; ms < PATIENCE_S * 1000L; ms++) {
    if (thread_state(tid) == 'S') return;
    struct timespec d = {0, 1000000L};
    nanosleep(&d, NULL);
  }
  fail_child(CASE_NOSLEEP, "B never slept");
}

/* One case, in the child; exits. */
static void run_case(const syncq_algo *a, int wait, enum free_mode m) {
  mode = m; /* in a child of bounded_call: a fault kills it, and a hang past CASE_LIMIT_S too */
  ops = a->ops;
  syncq_lock_config cfg = {0, wait, false};
  if (sem_init(&b_freed, 0, 0) != 0) fail_child(CASE_SETUP, "sem_init");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_kick; /* no SA_RESTART: interrupted waits return */
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) fail_child(CASE_SETUP, "sigaction");
  int r;
  if (m == FREE_HEAP) {
    r = syncq_lock_create(a->name, &cfg, &glock);
  } else {
    long page = sysconf(_SC_PAGESIZE);
    map_len = (ops->size + (size_t)page - 1) / (size_t)page * (size_t)page;
    storage = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (storage == MAP_FAILED) fail_child(CASE_SETUP, "mmap: %s", strerror(errno));
    r = ops->init(storage, &cfg);
  }
  if (r == SYNCQ_ENOTSUP) _exit(CASE_SKIP);
  if (r != SYNCQ_OK) fail_child(CASE_CALL, "init returned %d", r);
  if (wait == SYNCQ_WAIT_DEFAULT) wait = syncq_lock_discipline(glock); /* the safe default chosen */
  /* the time-published locks (queue locks, not FIFO) restricted by that
   * default: B, alone, is admitted and yields in the lock's queue; only
   * waiters beyond the admitted ones sleep */
  bool b_sleeps =
    syncq_wait_may_sleep(wait) && (a->props & (SYNCQ_PROP_USES_NODE | SYNCQ_PROP_FIFO)) != SYNCQ_PROP_USES_NODE;
  syncq_lock_node node;
  r = do_lock(&node);
  if (r != SYNCQ_OK) fail_child(CASE_CALL, "A: lock returned %d", r);
  syncq_race_hook = hook; /* before B starts: B's thread creation publishes it */
  if (pthread_create(&b_thread, NULL, b_main, NULL) != 0) fail_child(CASE_SETUP, "pthread_create");
  int tid;
  while ((tid = atomic_load(&b_tid)) == 0) sched_yield();
  if (b_sleeps) {
    wait_until_asleep(tid);
  } else {
    struct timespec d = {0, SPIN_HEAD_START_NS};
    nanosleep(&d, NULL);
  }
  stall_here = 1;
  r = do_unlock(&node); /* the hook stalls us after the hand-over */
  stall_here = 0;
  if (r != SYNCQ_OK) fail_child(CASE_CALL, "A: unlock returned %d", r);
  if (!atomic_load(&point_passed)) fail_child(CASE_NOPOINT, "A's unlock passed no race point \"lock.handover\"");
  pthread_join(b_thread, NULL);
  _exit(CASE_OK);
}

typedef struct case_arg {
  const syncq_algo *a;
  int wait;
  enum free_mode m;
} case_arg;

/* run_case ends the child itself, with one of the codes above. */
static int case_call(void *arg) {
  const case_arg *c = arg;
  run_case(c->a, c->wait, c->m);
  return CASE_SETUP; /* not reached */
}

static const char *describe(bounded_outcome o) {
  static char buf[128];
  if (o.end == BOUNDED_SIGNALED && o.value != SIGALRM) {
    snprintf(buf, sizeof buf, "killed by signal %d (%s): the releaser touched the freed lock", o.value,
             strsignal(o.value));
    return buf;
  }
  if (o.end != BOUNDED_EXITED) return bounded_describe(o, buf, sizeof buf);
  switch (o.value) {
  case CASE_CALL:
    return "a lock call failed";
  case CASE_NOSLEEP:
    return "B never slept";
  case CASE_NOPOINT:
    return "no race point in unlock";
  case CASE_STUCK:
    return "B could not take the lock while A stood after its hand-over";
  case CASE_SETUP:
    return "test set-up failed";
  default:
    snprintf(buf, sizeof buf, "exit status %d (a sanitizer report: the releaser touched the freed lock)", o.value);
    return buf;
  }
}

static void test_free_after_unlock_every_lock(void **state) {
  (void)state;
  const syncq_algo *algos[SYNCQ_REGISTRY_MAX];
  int n = syncq_registry_list(SYNCQ_FAMILY_LOCK, algos, SYNCQ_REGISTRY_MAX);
  assert_true(n > 0);
  int cases = 0, failures = 0, locks = 0;
  for (int i = 0; i < n; i++) {
    const syncq_algo *a = algos[i];
    if (a->props & SYNCQ_PROP_PEER) continue;
    int disciplines = 0;
    for (int w = SYNCQ_WAIT_DEFAULT; w < SYNCQ_WAIT_COUNT; w++) {
      /* the children probe the discipline: init in this process could
       * calibrate COMPETITIVE with a thread, and we fork. DEFAULT: the
       * generic API's safe default, through syncq_lock_create only */
      for (int m = w == SYNCQ_WAIT_DEFAULT ? FREE_HEAP : FREE_UNMAP; m <= FREE_HEAP; m++) {
        case_arg c = {a, w, (enum free_mode)m};
        const bounded_outcome o = bounded_call(case_call, &c, CASE_LIMIT_S);
        if (o.end == BOUNDED_EXITED && o.value == CASE_SKIP) break; /* not accepted */
        if (m == FREE_UNMAP) disciplines++;
        cases++;
        if (!(o.end == BOUNDED_EXITED && o.value == CASE_OK)) {
          failures++;
          print_message("FAIL lock %s, wait %s, free by %s: %s\n", a->name, syncq_wait_name(w), mode_names[m],
                        describe(o));
        }
      }
    }
    assert_true(disciplines > 0);
    locks++;
  }
  print_message("%d locks, %d cases, %d failures\n", locks, cases, failures);
  assert_true(locks >= 13);
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_free_after_unlock_every_lock),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
