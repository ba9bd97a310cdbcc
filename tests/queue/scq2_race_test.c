/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq2_race_test.c — SCQ2 (src/queue/scq2.c) against a double-width CAS
 * that is a lock, the way ThreadSanitizer's runtime and lock-based
 * libatomic implement it (syncq_race_dwcas, tests/support/syncq_race.h):
 *
 *   - overtaken enqueuer, deterministic: an enqueuer is stopped inside its
 *     double-width CAS, after the comparison held and before its write; a
 *     dequeuer holding the same ticket then gives up waiting for it and
 *     invalidates the cell. The item must come out: the dequeuer either
 *     waits for the CAS (it writes the cell with a double-width CAS too)
 *     or sees the item. A dequeuer that wrote the entry word alone would
 *     have its write overwritten by the enqueuer's, answer EMPTY, and the
 *     item would sit in a cell Head has passed: lost for good (what
 *     queue-1p1c's ping-pong once saw under ThreadSanitizer).
 *   - empty polls, deterministic: a consumer polling the empty queue
 *     between items takes no Head ticket (the emptiness test before the
 *     fetch-and-add; without it each poll wrote Head, the producer's next
 *     cell and Tail).
 *   - full and empty at once: dequeuers stopped past the emptiness test
 *     and after their tickets build an empty queue with Threshold run out
 *     after a FULL answer; enqueues must get through.
 *   - dead tickets leave no room unused, deterministic: a dequeuer stopped
 *     after its ticket keeps its item's cell held while enqueues pass it
 *     and give their tickets up; once it goes on, the quiescent queue
 *     holds fewer than n items and enqueues alone must fill it to n.
 *   - a lap of held cells, deterministic: dequeuers stopped after their
 *     tickets hold three items' cells and a fourth item fills the ring;
 *     an enqueue must answer FULL instead of taking tickets for ever.
 *   - room sum after churn: four threads at random with yields injected;
 *     quiescent, Tail - Head + adjust must equal the items a drain finds.
 *   - ping-pong with yields injected at the enqueuer's ticket and inside
 *     the double-width CAS: one item bounced through two queues; a
 *     dequeue that answers EMPTY after the matching enqueue returned (each
 *     queue has one producer and one consumer, so the item is there) is a
 *     lost item, reported at once instead of a hang.
 * Fixed thread counts and rounds: the same work on any machine.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, and it brings syncq/pr.h with its own double-width CAS */

#include "syncq/platform.h"
#include "syncq/pr.h"
#include "syncq/queue/scq2.h"
#include "test_sanitizer.h" /* SANITIZED, TSAN */

SYNCQ_RACE_HOOK_DEFINE;

#if SANITIZED
#define PINGPONG_ROUNDS 4000
#else
#define PINGPONG_ROUNDS 20000
#endif
/* How long a stalled thread waits for the other before the case fails
 * (generous: the machine may be loaded). */
#define PATIENCE_S 30

static void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 4); }

static uint64_t now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec;
}

/* A queue of capacity c, or NULL (with a message) when SCQ2 cannot run. */
static syncq_queue_scq2 *make(size_t c) {
  size_t b = 0;
  assert_int_equal(syncq_queue_scq2_bytes(c, &b), SYNCQ_OK);
  syncq_queue_scq2 *q = syncq_alloc_aligned(b, _Alignof(syncq_queue_scq2));
  assert_non_null(q);
  int st = syncq_queue_scq2_init(q, c);
  if (st == SYNCQ_ENOTSUP) {
    print_message("SKIPPED: no double-width CAS on this CPU (init said SYNCQ_ENOTSUP)\n");
    free(q);
    return NULL;
  }
  assert_int_equal(st, SYNCQ_OK);
  return q;
}

/* ------------------------------------------------------------ overtaken enqueuer */

static _Thread_local int is_enqueuer;
static _Atomic(int) in_window; /* the enqueuer stands inside its double-width CAS */
static _Atomic(int) deq_done;  /* the dequeuer's call has returned */
static _Atomic(int) hook_timed_out;

/* Stop the enqueuer inside its first successful double-width CAS until
 * the dequeuer has returned or queues for the CAS lock. */
static void overtake_hook(const char *name) {
  if (!is_enqueuer || strcmp(name, "pr.dwcas.locked") != 0 || atomic_load(&in_window)) return;
  atomic_store(&in_window, 1);
  const uint64_t t0 = now_s();
  while (!atomic_load(&deq_done) && atomic_load(&syncq_race_dwcas_waiting) == 0) {
    if (now_s() - t0 > PATIENCE_S) {
      atomic_store(&hook_timed_out, 1);
      return;
    }
    sched_yield();
  }
}

static void *enqueuer(void *p) {
  is_enqueuer = 1;
  return (void *)(intptr_t)syncq_queue_scq2_enqueue(p, item_of(2));
}

static void test_overtaken_enqueuer(void **state) {
  (void)state;
  for (size_t c = 2; c <= 16; c *= 2) {
    syncq_queue_scq2 *q = make(c);
    if (q == NULL) return;
    void *x = NULL;
    /* one item in and out: Threshold >= 0, so the dequeue below takes a ticket */
    assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(1)), SYNCQ_OK);
    assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
    assert_ptr_equal(x, item_of(1));

    atomic_store(&in_window, 0);
    atomic_store(&deq_done, 0);
    atomic_store(&hook_timed_out, 0);
    syncq_race_hook = overtake_hook;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, enqueuer, q), 0);
    const uint64_t t0 = now_s();
    while (!atomic_load(&in_window)) {
      if (now_s() - t0 > PATIENCE_S) fail_msg("capacity %zu: the enqueuer never reached its double-width CAS", c);
      sched_yield();
    }
    /* Our ticket is the enqueuer's: the cell is empty and of an older
     * cycle, and Tail says the enqueuer is on its way; we wait our bounded
     * while, then invalidate the cell. */
    x = NULL;
    int first = syncq_queue_scq2_dequeue(q, &x);
    atomic_store(&deq_done, 1);
    void *ret;
    pthread_join(t, &ret);
    syncq_race_hook = NULL;
    assert_int_equal(atomic_load(&hook_timed_out), 0);
    assert_int_equal((int)(intptr_t)ret, SYNCQ_OK);
    int second = SYNCQ_EMPTY;
    if (first != SYNCQ_OK) second = syncq_queue_scq2_dequeue(q, &x);
    if (first != SYNCQ_OK && second != SYNCQ_OK)
      fail_msg("capacity %zu: the item of a completed enqueue is lost (dequeues said %s, then %s)", c,
               syncq_strerror(first), syncq_strerror(second));
    assert_ptr_equal(x, item_of(2));
    assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
    print_message("capacity %zu: the overtaking dequeue answered %s; the item came out once\n", c,
                  first == SYNCQ_OK ? "the item" : "EMPTY before the enqueue returned");
    assert_int_equal(syncq_queue_scq2_destroy(q), SYNCQ_OK);
    free(q);
  }
}

/* ------------------------------------------------------------ empty polls take no ticket */

/* One producer and one consumer in lockstep, the consumer polling between
 * items: each enqueue resets Threshold, so Threshold alone does not stop a
 * poll of the empty queue from taking a Head ticket (and writing the
 * producer's next cell and Tail). The emptiness test (Deviation 5) must
 * answer every such poll with Head and Tail untouched: Head moves exactly
 * once per item. */
static void test_empty_poll_takes_no_ticket(void **state) {
  (void)state;
  enum { ITEMS = 100, POLLS = 3 };
  syncq_queue_scq2 *q = make(8);
  if (q == NULL) return;
  const uint64_t head0 = atomic_load(&q->head), tail0 = atomic_load(&q->tail);
  uint64_t wasted = 0;
  for (uint64_t i = 0; i < ITEMS; i++) {
    void *x = NULL;
    assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(i)), SYNCQ_OK);
    assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
    assert_ptr_equal(x, item_of(i));
    for (int p = 0; p < POLLS; p++) {
      const uint64_t h = atomic_load(&q->head);
      assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
      wasted += atomic_load(&q->head) - h;
    }
  }
  print_message("%d items, %d empty polls after each: %llu Head tickets taken by empty polls\n", ITEMS, POLLS,
                (unsigned long long)wasted);
  assert_int_equal(wasted, 0);
  assert_int_equal(atomic_load(&q->head) - head0, ITEMS);
  assert_int_equal(atomic_load(&q->tail) - tail0, ITEMS);
  assert_int_equal(syncq_queue_scq2_destroy(q), SYNCQ_OK);
  free(q);
}

/* ------------------------------------------------------------ full and empty at once */

/* Capacity 2. Six late dequeuers pass the emptiness test while the
 * queue holds its two items and stop before their tickets; two dequeuers
 * take the tickets of the two items and stop before their cells. The late
 * six go on: the items' tickets are taken, so each answers EMPTY (right),
 * counting Threshold (3n - 1 = 5) down past zero. An enqueue then answers
 * FULL, or goes in past the two held cells: their dequeuers gave the room
 * back with their tickets. (When FULL was counted in tickets alone, it
 * took two tickets whose cells held the items, gave them up and left Tail
 * n past Head.) The stopped dequeuers take their items: the queue holds
 * at most the third, and enqueues must get through. Before the first fix every enqueue answered
 * FULL and every dequeue EMPTY from there on (what 4 producers and 4
 * consumers reached on 16 cores). */
#define LATE_DEQUEUERS 6
static _Thread_local int is_held_dequeuer; /* 1: stop after the ticket; 2: stop before it */
static _Atomic(int) held;                  /* dequeuers stopped after their ticket */
static _Atomic(int) held_late;             /* dequeuers stopped past the emptiness test */
static _Atomic(int) release;               /* let the first go on */
static _Atomic(int) release_late;          /* let the late ones go on */

static void hold_hook(const char *name) {
  _Atomic(int) *count, *go;
  if (is_held_dequeuer == 1 && strcmp(name, "queue.scq2.dequeue.ticket") == 0) {
    count = &held;
    go = &release;
  } else if (is_held_dequeuer == 2 && strcmp(name, "queue.scq2.dequeue.checked") == 0) {
    count = &held_late;
    go = &release_late;
  } else {
    return;
  }
  atomic_fetch_add(count, 1);
  const uint64_t t0 = now_s();
  while (!atomic_load(go) && now_s() - t0 <= PATIENCE_S) sched_yield();
}

static void *held_dequeuer(void *p) {
  is_held_dequeuer = 1;
  void *x = NULL;
  int st = syncq_queue_scq2_dequeue(p, &x);
  return st == SYNCQ_OK ? x : NULL;
}

static void *late_dequeuer(void *p) {
  is_held_dequeuer = 2;
  void *x = NULL;
  return (void *)(intptr_t)syncq_queue_scq2_dequeue(p, &x);
}

static void wait_for(_Atomic(int) *count, int n, const char *what) {
  const uint64_t t0 = now_s();
  while (atomic_load(count) < n) {
    if (now_s() - t0 > PATIENCE_S) fail_msg("%s: %d of %d arrived", what, atomic_load(count), n);
    sched_yield();
  }
}

static void test_full_and_empty_at_once(void **state) {
  (void)state;
  syncq_queue_scq2 *q = make(2);
  if (q == NULL) return;
  void *x = NULL;
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(1)), SYNCQ_OK);
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(2)), SYNCQ_OK);
  atomic_store(&held, 0);
  atomic_store(&held_late, 0);
  atomic_store(&release, 0);
  atomic_store(&release_late, 0);
  syncq_race_hook = hold_hook;
  pthread_t late[LATE_DEQUEUERS], t[2];
  for (int i = 0; i < LATE_DEQUEUERS; i++) assert_int_equal(pthread_create(&late[i], NULL, late_dequeuer, q), 0);
  wait_for(&held_late, LATE_DEQUEUERS, "late dequeuers past the emptiness test");
  for (int i = 0; i < 2; i++) {
    assert_int_equal(pthread_create(&t[i], NULL, held_dequeuer, q), 0);
    wait_for(&held, i + 1, "dequeuers holding the items' tickets");
  }
  /* Both items' tickets are taken: the late dequeuers answer EMPTY, each
   * counting Threshold down (3n - 1 = 5 to start with). */
  atomic_store(&release_late, 1);
  for (int i = 0; i < LATE_DEQUEUERS; i++) {
    void *st;
    pthread_join(late[i], &st);
    assert_int_equal((int)(intptr_t)st, SYNCQ_EMPTY);
  }
  assert_true(atomic_load(&q->threshold) < 0);
  /* An empty poll now answers from Threshold. */
  assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
  /* Both items are in their cells, but their dequeuers hold their
   * tickets: the room is theirs to give back (the two dequeues may take
   * effect first), so the enqueue may go in, past the two held cells; it
   * may not be lost, nor come out before them. */
  const int third = syncq_queue_scq2_enqueue(q, item_of(3));
  assert_true(third == SYNCQ_OK || third == SYNCQ_FULL);
  atomic_store(&release, 1);
  void *got[2];
  for (int i = 0; i < 2; i++) pthread_join(t[i], &got[i]);
  syncq_race_hook = NULL;
  assert_true((got[0] == item_of(1) && got[1] == item_of(2)) || (got[0] == item_of(2) && got[1] == item_of(1)));
  if (third == SYNCQ_OK) {
    assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
    assert_ptr_equal(x, item_of(3));
  }
  /* Empty now. A program that retries FULL and EMPTY must get through. */
  int tries = 0, st;
  while ((st = syncq_queue_scq2_enqueue(q, item_of(4))) == SYNCQ_FULL) {
    if (++tries == 1000)
      fail_msg(
        "an empty queue answered FULL to 1000 enqueues (and EMPTY to the dequeues between): "
        "Tail %llu, Head %llu, Threshold %lld",
        (unsigned long long)atomic_load(&q->tail), (unsigned long long)atomic_load(&q->head),
        (long long)atomic_load(&q->threshold));
    assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
  }
  assert_int_equal(st, SYNCQ_OK);
  assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
  assert_ptr_equal(x, item_of(4));
  assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
  print_message("empty with no threshold left: the enqueue went through after %d FULL answers\n", tries);
  assert_int_equal(syncq_queue_scq2_destroy(q), SYNCQ_OK);
  free(q);
}

/* ------------------------------------------------------------ dead tickets leave no room unused */

/* Capacity 2. A dequeuer takes the first item's ticket and stops before
 * its cell: the item stays in its cell. Enqueue/dequeue rounds meanwhile
 * carry Tail round the ring, and every enqueue whose ticket lands on that
 * cell gives it up (a dead ticket: no item will fill it). The rounds end
 * with Tail on that cell again (a multiple of 2n tickets past the item's,
 * whether the ring has n cells or 2n), so the enqueues that then fill the
 * queue leave a dead ticket between Head and Tail. The stopped dequeuer
 * takes its item, and the queue is quiescent with at most n items (n
 * when the fill counted the stopped dequeuer's room as given back with
 * its ticket, fewer when it counted the item): enqueues alone must fill it
 * to n, and Tail - Head with the dead tickets taken off must count the
 * items present.
 * Before the fix FULL came when Tail was n tickets past Head, dead ones
 * included, so here every enqueue answered FULL for good with one item of
 * two present (three threads putting then getting, capacity 64, stalled
 * the same way: queue_progress_test's near-full case). */
#define DEAD_ROUNDS 8      /* at least */
#define DEAD_ROUNDS_MAX 64 /* at most, looking for Tail on the item's cell */
static void test_dead_tickets_leave_no_room_unused(void **state) {
  (void)state;
  enum { N = 2 };
  syncq_queue_scq2 *q = make(N);
  if (q == NULL) return;
  uint64_t fifo[DEAD_ROUNDS_MAX + 4 * N]; /* items present, oldest first (one thread: the model) */
  size_t lo = 0, hi = 0;
  void *x = NULL;
  const uint64_t first_ticket = atomic_load(&q->tail);
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(1000)), SYNCQ_OK);
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(1001)), SYNCQ_OK);
  fifo[hi++] = 1001; /* 1000 is the stopped dequeuer's */
  atomic_store(&held, 0);
  atomic_store(&release, 0);
  syncq_race_hook = hold_hook;
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, held_dequeuer, q), 0);
  wait_for(&held, 1, "the dequeuer holding the first item's ticket");
  for (uint64_t i = 0;
       i < DEAD_ROUNDS || (i < DEAD_ROUNDS_MAX && (atomic_load(&q->tail) - first_ticket) % (2 * N) != 0); i++) {
    int st = syncq_queue_scq2_enqueue(q, item_of(i));
    if (st == SYNCQ_OK) fifo[hi++] = i;
    else assert_int_equal(st, SYNCQ_FULL);
    st = syncq_queue_scq2_dequeue(q, &x);
    if (lo < hi) { /* one thread: a present item must come out, the oldest */
      assert_int_equal(st, SYNCQ_OK);
      assert_ptr_equal(x, item_of(fifo[lo]));
      lo++;
    } else {
      assert_int_equal(st, SYNCQ_EMPTY);
    }
  }
  for (uint64_t i = 100; syncq_queue_scq2_enqueue(q, item_of(i)) == SYNCQ_OK; i++) fifo[hi++] = i;
  atomic_store(&release, 1);
  void *got;
  pthread_join(t, &got);
  syncq_race_hook = NULL;
  assert_ptr_equal(got, item_of(1000));
  /* Quiescent now, hi - lo items present: enqueues alone must fill it. */
  const uint64_t present = hi - lo;
  const uint64_t spread = atomic_load(&q->tail) - atomic_load(&q->head);
  assert_int_equal((int64_t)spread + atomic_load(&q->adjust), (int64_t)present);
  if (spread <= present)
    fail_msg("the state was not built: Tail %llu tickets past Head with %llu items present, no dead ticket between",
             (unsigned long long)spread, (unsigned long long)present);
  for (uint64_t i = 200; hi - lo < N; i++) {
    int tries = 0, st;
    while ((st = syncq_queue_scq2_enqueue(q, item_of(i))) == SYNCQ_FULL)
      if (++tries == 1000)
        fail_msg(
          "a quiescent queue holding %llu of %d items answered FULL to 1000 enqueues (Tail %llu tickets past "
          "Head with %llu items present when the stopped dequeuer went on: the rest are dead tickets)",
          (unsigned long long)(hi - lo), N, (unsigned long long)(atomic_load(&q->tail) - atomic_load(&q->head)),
          (unsigned long long)present);
    assert_int_equal(st, SYNCQ_OK);
    fifo[hi++] = i;
  }
  /* n items present: FULL, exactly as sequentially. */
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(300)), SYNCQ_FULL);
  while (lo < hi) {
    assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
    assert_ptr_equal(x, item_of(fifo[lo]));
    lo++;
  }
  assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
  print_message(
    "%llu of %d items present after the stopped dequeuer went on, Tail %llu tickets past Head: "
    "enqueues alone filled it to %d\n",
    (unsigned long long)present, N, (unsigned long long)spread, N);
  assert_int_equal(syncq_queue_scq2_destroy(q), SYNCQ_OK);
  free(q);
}

/* ------------------------------------------------------------ a lap of held cells */

/* Capacity 2, 4 cells. Three dequeuers take the tickets of items 1, 2
 * and 3 and stop before their cells; item 4 goes in: all four cells hold
 * items, yet only item 4 counts as room used (the three dequeues may take
 * effect first). An enqueue finds a whole lap of held cells at or past
 * Head: it must answer FULL, not take tickets for ever (lock-free with
 * every other thread stopped). Once the three take their items, the
 * quiescent queue holds one item and enqueues fill it to exactly two. */
static _Atomic(int) lap_enqueue_done;
static void *lap_enqueuer(void *p) {
  int st = syncq_queue_scq2_enqueue(p, item_of(5));
  atomic_store(&lap_enqueue_done, 1);
  return (void *)(intptr_t)st;
}

static void test_lap_of_held_cells_answers_full(void **state) {
  (void)state;
  syncq_queue_scq2 *q = make(2);
  if (q == NULL) return;
  void *x = NULL;
  atomic_store(&held, 0);
  atomic_store(&release, 0);
  atomic_store(&lap_enqueue_done, 0);
  syncq_race_hook = hold_hook;
  pthread_t t[3];
  for (int i = 0; i < 3; i++) {
    assert_int_equal(syncq_queue_scq2_enqueue(q, item_of((uint64_t)i + 1)), SYNCQ_OK);
    assert_int_equal(pthread_create(&t[i], NULL, held_dequeuer, q), 0);
    wait_for(&held, i + 1, "dequeuers holding the items' tickets");
  }
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(4)), SYNCQ_OK);
  pthread_t e;
  assert_int_equal(pthread_create(&e, NULL, lap_enqueuer, q), 0);
  const uint64_t t0 = now_s();
  while (!atomic_load(&lap_enqueue_done)) {
    if (now_s() - t0 > PATIENCE_S)
      fail_msg("an enqueue facing four held cells has not returned in %d s (Tail %llu tickets past Head)", PATIENCE_S,
               (unsigned long long)(atomic_load(&q->tail) - atomic_load(&q->head)));
    sched_yield();
  }
  void *st;
  pthread_join(e, &st);
  assert_int_equal((int)(intptr_t)st, SYNCQ_FULL);
  atomic_store(&release, 1);
  for (int i = 0; i < 3; i++) {
    void *got;
    pthread_join(t[i], &got);
    assert_ptr_equal(got, item_of((uint64_t)i + 1));
  }
  syncq_race_hook = NULL;
  /* Quiescent with item 4 alone: the room count says one, one more goes
   * in, then FULL. */
  assert_int_equal((int64_t)(atomic_load(&q->tail) - atomic_load(&q->head)) + atomic_load(&q->adjust), 1);
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(6)), SYNCQ_OK);
  assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(7)), SYNCQ_FULL);
  assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
  assert_ptr_equal(x, item_of(4));
  assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
  assert_ptr_equal(x, item_of(6));
  assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
  print_message("four held cells, one item counted: FULL; afterwards exactly two went in\n");
  assert_int_equal(syncq_queue_scq2_destroy(q), SYNCQ_OK);
  free(q);
}

/* ------------------------------------------------------------ ping-pong with yields */

typedef struct pingpong {
  syncq_queue_scq2 *q[2];    /* q[0]: thread 0 -> thread 1; q[1]: back */
  _Atomic(uint64_t) sent[2]; /* enqueues into q[i] that have returned */
  _Atomic(int) stop;
  _Atomic(int) lost;       /* 1 + the queue that lost an item */
  _Atomic(int) changed;    /* an item came back altered */
  _Atomic(int) bad_status; /* a call answered what it may not (no cmocka asserts off the main thread) */
} pingpong;

static _Atomic(uint64_t) hook_calls;

/* Every 3rd ticket and every 5th double-width CAS give the core away:
 * the other thread runs into the window. */
static void yield_hook(const char *name) {
  uint64_t k = atomic_fetch_add(&hook_calls, 1);
  if (strcmp(name, "queue.scq2.ticket") == 0 && k % 3 == 0) sched_yield();
  if (strcmp(name, "pr.dwcas.locked") == 0 && k % 5 == 0) sched_yield();
}

/* Take the one item of q[i]; false when it is lost or the run stopped. */
static bool take(pingpong *pp, int i, uint64_t received, void **x) {
  for (;;) {
    if (atomic_load(&pp->stop)) return false;
    const uint64_t sent = atomic_load(&pp->sent[i]);
    int st = syncq_queue_scq2_dequeue(pp->q[i], x);
    if (st == SYNCQ_OK) return true;
    if (st != SYNCQ_EMPTY) {
      atomic_store(&pp->bad_status, 1);
      atomic_store(&pp->stop, 1);
      return false;
    }
    if (sent > received) { /* its enqueue returned before this dequeue began */
      atomic_store(&pp->lost, 1 + i);
      atomic_store(&pp->stop, 1);
      return false;
    }
    sched_yield();
  }
}

static void give(pingpong *pp, int i, void *x) {
  int st;
  while ((st = syncq_queue_scq2_enqueue(pp->q[i], x)) == SYNCQ_FULL) sched_yield();
  if (st != SYNCQ_OK) {
    atomic_store(&pp->bad_status, 1);
    atomic_store(&pp->stop, 1);
  }
  atomic_fetch_add(&pp->sent[i], 1);
}

static pingpong *the_pp;

static void *ping(void *arg) {
  (void)arg;
  pingpong *pp = the_pp;
  for (uint64_t r = 0; r < PINGPONG_ROUNDS; r++) {
    void *x;
    give(pp, 0, item_of(r));
    if (!take(pp, 1, r, &x)) return NULL;
    if (x != item_of(r)) atomic_store(&pp->changed, 1);
  }
  return NULL;
}

static void *pong(void *arg) {
  (void)arg;
  pingpong *pp = the_pp;
  for (uint64_t r = 0; r < PINGPONG_ROUNDS; r++) {
    void *x;
    if (!take(pp, 0, r, &x)) return NULL;
    give(pp, 1, x);
  }
  return NULL;
}

static void test_pingpong_with_yields(void **state) {
  (void)state;
  const size_t caps[] = {2, 1024}; /* 1024: queue-1p1c's capacity */
  for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
    const size_t c = caps[k];
    pingpong pp;
    memset(&pp, 0, sizeof pp);
    pp.q[0] = make(c);
    if (pp.q[0] == NULL) return;
    pp.q[1] = make(c);
    the_pp = &pp;
    syncq_race_hook = yield_hook;
    pthread_t t[2];
    assert_int_equal(pthread_create(&t[0], NULL, ping, NULL), 0);
    assert_int_equal(pthread_create(&t[1], NULL, pong, NULL), 0);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    syncq_race_hook = NULL;
    if (atomic_load(&pp.lost))
      fail_msg("capacity %zu: queue %d answered EMPTY after its item's enqueue returned (round %llu): a lost item", c,
               atomic_load(&pp.lost) - 1, (unsigned long long)atomic_load(&pp.sent[0]));
    assert_int_equal(atomic_load(&pp.changed), 0);
    assert_int_equal(atomic_load(&pp.bad_status), 0);
    void *x;
    assert_int_equal(syncq_queue_scq2_dequeue(pp.q[0], &x), SYNCQ_EMPTY);
    assert_int_equal(syncq_queue_scq2_dequeue(pp.q[1], &x), SYNCQ_EMPTY);
    print_message("capacity %zu: %d round trips with injected yields, nothing lost\n", c, PINGPONG_ROUNDS);
    for (int i = 0; i < 2; i++) {
      assert_int_equal(syncq_queue_scq2_destroy(pp.q[i]), SYNCQ_OK);
      free(pp.q[i]);
    }
  }
}

/* ------------------------------------------------------------ room sum after churn */

/* Four threads each enqueue or dequeue at random (one try each, FULL and
 * EMPTY allowed) on capacity 2 and 8, with yields injected at the
 * tickets and inside the double-width CAS so that tickets are given up,
 * overtaken and caught up with. Quiescent afterwards: Tail - Head +
 * adjust must be the number of items a drain then takes out, and the
 * drained queue must take exactly n items. A ticket that holds no item
 * and is left out of adjust (or counted twice) shows as a wrong sum. */
#if SANITIZED
#define CHURN_OPS 3000
#else
#define CHURN_OPS 20000
#endif
#define CHURN_THREADS 4
static void churn_hook(const char *name) {
  uint64_t k = atomic_fetch_add(&hook_calls, 1);
  if (k % 7 == 0 && (strcmp(name, "queue.scq2.ticket") == 0 || strcmp(name, "queue.scq2.dequeue.ticket") == 0 ||
                     strcmp(name, "pr.dwcas.locked") == 0))
    sched_yield();
}

static _Atomic(int) churn_bad; /* a call answered what it may not */
static void *churner(void *p) {
  syncq_queue_scq2 *q = p;
  uint64_t x = (uint64_t)(uintptr_t)&x | 1; /* per-thread seed */
  for (int i = 0; i < CHURN_OPS; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    void *it;
    int st = (x & 1) ? syncq_queue_scq2_enqueue(q, item_of(x >> 8)) : syncq_queue_scq2_dequeue(q, &it);
    if (st != SYNCQ_OK && st != SYNCQ_FULL && st != SYNCQ_EMPTY) atomic_store(&churn_bad, 1);
  }
  return NULL;
}

static void test_room_sum_after_churn(void **state) {
  (void)state;
  const size_t caps[] = {2, 8};
  for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
    const size_t c = caps[k];
    syncq_queue_scq2 *q = make(c);
    if (q == NULL) return;
    atomic_store(&churn_bad, 0);
    syncq_race_hook = churn_hook;
    pthread_t t[CHURN_THREADS];
    for (int i = 0; i < CHURN_THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, churner, q), 0);
    for (int i = 0; i < CHURN_THREADS; i++) pthread_join(t[i], NULL);
    syncq_race_hook = NULL;
    assert_int_equal(atomic_load(&churn_bad), 0);
    const int64_t sum = (int64_t)(atomic_load(&q->tail) - atomic_load(&q->head)) + atomic_load(&q->adjust);
    int64_t drained = 0;
    void *x;
    while (syncq_queue_scq2_dequeue(q, &x) == SYNCQ_OK) drained++;
    if (sum != drained)
      fail_msg("capacity %zu: Tail - Head + adjust = %lld with %lld items present (adjust %lld)", c, (long long)sum,
               (long long)drained, (long long)atomic_load(&q->adjust));
    for (size_t i = 0; i < c; i++) assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(i)), SYNCQ_OK);
    assert_int_equal(syncq_queue_scq2_enqueue(q, item_of(c)), SYNCQ_FULL);
    for (size_t i = 0; i < c; i++) {
      assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_OK);
      assert_ptr_equal(x, item_of(i));
    }
    assert_int_equal(syncq_queue_scq2_dequeue(q, &x), SYNCQ_EMPTY);
    print_message(
      "capacity %zu: %d threads x %d random operations, then %lld items present and counted; filled to %zu\n", c,
      CHURN_THREADS, CHURN_OPS, (long long)drained, c);
    assert_int_equal(syncq_queue_scq2_destroy(q), SYNCQ_OK);
    free(q);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_overtaken_enqueuer),
    cmocka_unit_test(test_empty_poll_takes_no_ticket),
    cmocka_unit_test(test_full_and_empty_at_once),
    cmocka_unit_test(test_dead_tickets_leave_no_room_unused),
    cmocka_unit_test(test_lap_of_held_cells_answers_full),
    cmocka_unit_test(test_pingpong_with_yields),
    cmocka_unit_test(test_room_sum_after_churn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
