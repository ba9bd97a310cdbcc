/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_spawn_retry_race_test.c — spawn's retry over refused slots
 * (src/po/process.c, take_slot), raced: several threads spawn and join
 * while the mailbox locks of half the slots refuse, so every take of one
 * of those slots refuses its drain, gives the slot back and takes the next,
 * up to SYNCQ_PO_SPAWN_SLOT_TRIES slots, each once.
 *
 * The system's lock is replaced by one of the test's own before any
 * mailbox exists (as po_mbox_lock_test does): a pthread mutex whose
 * acquire refuses (SYNCQ_ESYS) while its slot is marked refusing. Every
 * slot is used once first, one at a time, so each lock knows its slot
 * and every later take is a reuse, whose drain takes the lock.
 *
 * Checked, per spawn: a pid is never handed out on a slot that another
 * live (spawned, not yet joined) process holds; the slots whose drain was
 * refused in one call are refusing ones, each at most once, at most
 * SYNCQ_PO_SPAWN_SLOT_TRIES of them; SYNCQ_OK lands on an admitting slot
 * after at most SYNCQ_PO_SPAWN_SLOT_TRIES - 1 refusals, SYNCQ_ESYS comes
 * after at least one, with no pid; no other status (fewer live processes
 * and spawns under way than max_procs: never SYNCQ_ELIMIT). Afterwards,
 * every lock admitting, no slot is lost: max_procs spawned processes and
 * SYNCQ_PO_ATTACH_RESERVE attached ones hold every slot of the table at
 * once, each a different one, and one attach more is refused. A take
 * that never gave a refused slot back would hang that fill (a watchdog
 * ends the test), one that gave it back twice would hand a slot to two
 * processes.
 *
 * The race points "po.slot.freed" (a slot given back or freed, its count
 * not yet) and "po.slot_ring.put.claimed" (a put into the free slots with
 * its position claimed, its cell not yet written) yield the processor at
 * one call in three, widening the windows where a retry's give-back meets
 * another spawner's take. Both backends; the thread one spawns fewer.
 */
#include "syncq_race.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <cmocka.h>

#include "po/po_internal.h"
#include "syncq/po.h"

SYNCQ_RACE_HOOK_DEFINE;

enum {
  MAX_PROCS = 16,
  NSLOTS = MAX_PROCS + SYNCQ_PO_ATTACH_RESERVE,
  SPAWNERS = 4,
  HOLD = 2, /* live processes a spawner keeps: SPAWNERS * (HOLD + 1) <= MAX_PROCS */
};
_Static_assert(SPAWNERS *(HOLD + 1) <= MAX_PROCS, "a spawn must never find max_procs live");

/* ---- the lock: refuses while its slot is marked ---- */

typedef struct refusing_lock {
  pthread_mutex_t m;
  int slot; /* -1 until the warm-up names it; read-only while spawners run */
} refusing_lock;

static _Atomic(int) refusing[NSLOTS];
static void *made[2 * NSLOTS]; /* the locks in the order made (two a "two-lock" mailbox) */
static _Atomic(uint32_t) n_made;

/* The refusals of the spawn this thread is in: the slots, in order. */
static _Thread_local uint32_t refused_at[64];
static _Thread_local uint32_t n_refused;

static int rl_init(void *l, const syncq_lock_config *cfg) {
  (void)cfg;
  refusing_lock *rl = l;
  rl->slot = -1;
  uint32_t k = atomic_fetch_add(&n_made, 1u);
  if (k < 2 * NSLOTS) made[k] = l;
  return pthread_mutex_init(&rl->m, NULL) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int rl_destroy(void *l) { return pthread_mutex_destroy(&((refusing_lock *)l)->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY; }
static int rl_lock(void *l, syncq_lock_node *n) {
  (void)n;
  refusing_lock *rl = l;
  if (rl->slot >= 0 && atomic_load(&refusing[rl->slot])) {
    if (n_refused < 64) refused_at[n_refused] = (uint32_t)rl->slot;
    n_refused++;
    return SYNCQ_ESYS;
  }
  return pthread_mutex_lock(&rl->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static int rl_trylock(void *l, syncq_lock_node *n) {
  (void)n;
  return pthread_mutex_trylock(&((refusing_lock *)l)->m) == 0 ? SYNCQ_OK : SYNCQ_EBUSY;
}
static int rl_unlock(void *l, syncq_lock_node *n) {
  (void)n;
  return pthread_mutex_unlock(&((refusing_lock *)l)->m) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}
static const syncq_lock_ops refusing_ops = {
  sizeof(refusing_lock), _Alignof(refusing_lock), rl_init, rl_destroy, rl_lock, rl_trylock, rl_unlock,
};

/* ---- race points: yield at one call in three ---- */

static _Thread_local uint32_t points;

static void hook(const char *name) {
  if (strcmp(name, "po.slot.freed") != 0 && strcmp(name, "po.slot_ring.put.claimed") != 0) return;
  if (++points % 3 == 0) sched_yield();
}

/* ---- a watchdog: a lost slot makes a spawn wait for ever ---- */

static _Atomic(int) done;

static void *watchdog(void *arg) {
  const char *what = arg;
  for (int i = 0; i < 1200 && !atomic_load(&done); i++) { /* 120 s: TSan on a loaded machine */
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
  }
  if (!atomic_load(&done)) {
    fprintf(
      stderr,
      "po_spawn_retry_race_test: %s still running after 120 s: a slot lost, or put back twice (the free slots overflow)?\n",
      what);
    _exit(1);
  }
  return NULL;
}

/* ---- the spawners ---- */

static syncq_po_system *sys;
static _Atomic(int) owner[NSLOTS]; /* the spawner holding the slot's live process + 1, 0: none */
static _Atomic(int) go;

typedef struct spawner {
  int id;
  int spawns;
  /* Tallies, read by the main thread after the join. */
  int ok, esys, refusals, other;
  int double_handout, bad_refusal;
} spawner;

static void quick(syncq_po_proc *self, void *arg) {
  (void)self;
  (void)arg;
}

static bool refused_ok(uint32_t n) {
  if (n > SYNCQ_PO_SPAWN_SLOT_TRIES || n > 64) return false;
  for (uint32_t i = 0; i < n; i++) {
    if (!atomic_load(&refusing[refused_at[i]])) return false;
    for (uint32_t k = 0; k < i; k++)
      if (refused_at[k] == refused_at[i]) return false; /* tried twice in one call */
  }
  return true;
}

static void *spawner_main(void *arg) {
  spawner *s = arg;
  syncq_po_pid held[HOLD];
  int nheld = 0;
  while (!atomic_load(&go)) sched_yield();
  for (int it = 0; it < s->spawns; it++) {
    n_refused = 0;
    syncq_po_pid pid = -1;
    int r = syncq_po_spawn(sys, quick, NULL, &pid);
    uint32_t nr = n_refused;
    s->refusals += (int)nr;
    if (!refused_ok(nr)) s->bad_refusal++;
    if (r == SYNCQ_OK) {
      s->ok++;
      uint32_t slot = po_slot_of(sys, pid);
      if (nr >= SYNCQ_PO_SPAWN_SLOT_TRIES || slot >= NSLOTS || atomic_load(&refusing[slot])) s->bad_refusal++;
      int none = 0;
      if (slot < NSLOTS && !atomic_compare_exchange_strong(&owner[slot], &none, s->id + 1)) s->double_handout++;
      held[nheld++] = pid;
    } else if (r == SYNCQ_ESYS) {
      s->esys++;
      if (nr == 0 || pid != -1) s->bad_refusal++;
    } else {
      s->other++;
    }
    if (nheld == HOLD || (it + 1 == s->spawns && nheld > 0)) {
      while (nheld > 0) {
        syncq_po_pid p = held[--nheld];
        uint32_t slot = po_slot_of(sys, p);
        /* Still ours until the join frees it. */
        if (slot < NSLOTS) atomic_store(&owner[slot], 0);
        if (syncq_po_join(sys, p) != SYNCQ_OK) s->other++;
      }
    }
  }
  return NULL;
}

static _Atomic(int) release;

static void parked(syncq_po_proc *self, void *arg) {
  (void)arg;
  while (!atomic_load(&release)) (void)syncq_po_yield(self);
}

static void churn(const char *backend, const char *mailbox, int spawns) {
  syncq_po_config cfg = {mailbox, MAX_PROCS, 0, 0, backend, 2, false};
  assert_int_equal(syncq_po_create(&cfg, &sys), SYNCQ_OK);
  assert_int_equal(sys->nslots, NSLOTS);
  assert_non_null(sys->lock); /* a lock-based mailbox */
  const syncq_lock_ops *own = sys->lock;
  sys->lock = &refusing_ops; /* before any slot has its mailbox */
  for (int i = 0; i < NSLOTS; i++) {
    atomic_store(&refusing[i], 0);
    atomic_store(&owner[i], 0);
  }
  atomic_store(&n_made, 0);
  atomic_store(&go, 0);
  atomic_store(&release, 0);

  /* Every slot once, one at a time: a fresh system hands out 0, 1, 2, ...
   * and each first use makes its mailbox's locks, which learn their slot. */
  syncq_po_proc *att[NSLOTS];
  for (uint32_t i = 0; i < NSLOTS; i++) {
    uint32_t before = atomic_load(&n_made);
    assert_int_equal(syncq_po_attach(sys, &att[i]), SYNCQ_OK);
    assert_int_equal(po_slot_of(sys, syncq_po_pid_of(att[i])), i);
    uint32_t after = atomic_load(&n_made);
    assert_true(after > before && after <= 2 * NSLOTS);
    for (uint32_t k = before; k < after; k++) ((refusing_lock *)made[k])->slot = (int)i;
  }
  for (uint32_t i = 0; i < NSLOTS; i++) assert_int_equal(syncq_po_detach(att[i]), SYNCQ_OK);
  /* Half the slots refuse, spread over the free slots' order. */
  for (int i = 1; i < NSLOTS; i += 2) atomic_store(&refusing[i], 1);

  atomic_store(&done, 0);
  pthread_t wd, t[SPAWNERS];
  assert_int_equal(pthread_create(&wd, NULL, watchdog, (void *)backend), 0);
  spawner s[SPAWNERS];
  for (int i = 0; i < SPAWNERS; i++) {
    memset(&s[i], 0, sizeof s[i]);
    s[i].id = i;
    s[i].spawns = spawns;
    assert_int_equal(pthread_create(&t[i], NULL, spawner_main, &s[i]), 0);
  }
  atomic_store(&go, 1);
  spawner sum = {0};
  for (int i = 0; i < SPAWNERS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    sum.ok += s[i].ok;
    sum.esys += s[i].esys;
    sum.refusals += s[i].refusals;
    sum.other += s[i].other;
    sum.double_handout += s[i].double_handout;
    sum.bad_refusal += s[i].bad_refusal;
  }
  print_message("%s, %s: %d spawns: %d started, %d SYNCQ_ESYS, %d drains refused\n", backend, mailbox,
                SPAWNERS * spawns, sum.ok, sum.esys, sum.refusals);
  assert_int_equal(sum.double_handout, 0);
  assert_int_equal(sum.bad_refusal, 0);
  assert_int_equal(sum.other, 0);
  assert_int_equal(sum.ok + sum.esys, SPAWNERS * spawns);
  assert_true(sum.ok > 0);
  assert_true(sum.refusals > 0); /* the retry ran */
  assert_int_equal(syncq_po_live(sys), 0);

  /* No slot lost: with every lock admitting, max_procs spawned and the
   * reserve attached hold every slot, each a different one. */
  for (int i = 0; i < NSLOTS; i++) atomic_store(&refusing[i], 0);
  bool seen[NSLOTS] = {false};
  syncq_po_pid pids[MAX_PROCS];
  for (int i = 0; i < MAX_PROCS; i++) {
    assert_int_equal(syncq_po_spawn(sys, parked, NULL, &pids[i]), SYNCQ_OK);
    uint32_t slot = po_slot_of(sys, pids[i]);
    assert_true(slot < NSLOTS && !seen[slot]);
    seen[slot] = true;
  }
  for (int i = 0; i < (int)SYNCQ_PO_ATTACH_RESERVE; i++) {
    assert_int_equal(syncq_po_attach(sys, &att[i]), SYNCQ_OK);
    uint32_t slot = po_slot_of(sys, syncq_po_pid_of(att[i]));
    assert_true(slot < NSLOTS && !seen[slot]);
    seen[slot] = true;
  }
  syncq_po_proc *extra = NULL;
  assert_int_equal(syncq_po_attach(sys, &extra), SYNCQ_ELIMIT);
  atomic_store(&release, 1);
  for (int i = 0; i < MAX_PROCS; i++) assert_int_equal(syncq_po_join(sys, pids[i]), SYNCQ_OK);
  for (int i = 0; i < (int)SYNCQ_PO_ATTACH_RESERVE; i++) assert_int_equal(syncq_po_detach(att[i]), SYNCQ_OK);
  atomic_store(&done, 1);
  assert_int_equal(pthread_join(wd, NULL), 0);
  sys->lock = own;
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
}

static void test_fiber_mutex(void **state) {
  (void)state;
  churn("fiber", "mutex", 2000);
}
static void test_fiber_two_lock(void **state) {
  (void)state;
  churn("fiber", "two-lock", 2000);
}
static void test_thread_mutex(void **state) {
  (void)state;
  churn("thread", "mutex", 1000);
}

int main(void) {
  syncq_race_hook = hook; /* before any thread starts */
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_thread_mutex),
#if PO_TEST_FIBERS
    cmocka_unit_test(test_fiber_mutex),
    cmocka_unit_test(test_fiber_two_lock),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
