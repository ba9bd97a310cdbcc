/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ticket_wait_race_test.c — the ticket queues count where an operation's
 * time goes past its ticket (syncq/stats.h: deq_waits, deq_wait_pauses,
 * enq_cells_lost, rings_closed, enq_slow), deterministic.
 *
 * A late producer, forced: a producer thread takes its ticket and is
 * stopped at the race point "queue.<algo>.enqueue.ticket" (its cell not
 * yet written); the main thread, the consumer, then dequeues: its ticket's
 * cell is empty while an enqueuer holds the ticket, so it waits the
 * queue's whole spin for the write that does not come (one wait, that
 * many pauses), gives the cell up and answers EMPTY. Let go, the producer
 * finds its cell passed (one ticket lost on a cell with no item) and takes
 * another. wfqueue waits on every empty cell a dequeue examines, whether
 * an enqueuer holds its index yet or not, and its consumer tries the next
 * one too: two waits there, and its producer loses both cells. A warm-up
 * pair before, with nobody stopped, counts no wait and no lost ticket.
 *
 * An enqueuer fallen behind: with a producer stopped on ticket h and
 * more than LR_WAIT_LAG items enqueued after it, the LCRQ or LPRQ
 * dequeuer at h does not wait, at LR_WAIT_LAG it still does; the
 * producer, let go, loses h, takes another ticket and its item comes out
 * after the later ones.
 *
 * A write at the last look: SCQ's consumer, ahead of a stopped producer,
 * lets it write during its wait's last relax (race point
 * "queue.scq.dequeue.wait"): the last look finds the item, and the wait
 * did not run out.
 *
 * Rings closed: an LCRQ or LPRQ of 2-cell rings takes a third item by
 * closing the first ring (once); the dequeuer that reaches the ticket the
 * closer gave up in it does not wait: no enqueuer will write that cell.
 * A closed ring with a producer stopped on a ticket below the closer's:
 * the dequeuer waits at the stopped producer's ticket (it may still
 * write) and not at the closer's; once that producer has given its ticket
 * up, at neither. Two producers stopped on tickets 2 and 3 of a full
 * ring, let go in that order, give 2 up before 3: the dequeuer waits at
 * neither. wfqueue's slow path: under the test
 * hook PATIENCE 0 every enqueue publishes a request (enq_slow), none
 * otherwise.
 *
 * Fixed counts: one or two producers, one consumer, at most 3 * LR_WAIT_LAG + 1
 * items.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "syncq_race.h" /* first: its SYNCQ_RACE_POINT, and its double-width CAS */

#include "queue/linked_rings.h" /* LR_SPIN */
#include "queue/scq_common.h"   /* SYNCQ_SCQ_DEQ_WAIT */
#include "syncq/platform.h"
#include "syncq/queue.h"
#include "syncq/queue/lcrq.h"
#include "syncq/queue/lprq.h"
#include "syncq/queue/wfqueue.h"
#include "syncq/registry.h"
#include "syncq/stats.h"

SYNCQ_RACE_HOOK_DEFINE;

/* src/queue/wfqueue.c's test hook and spin (not public). */
extern _Atomic(int) syncq_queue_wfqueue_test_patience__;
#define WFQ_SPIN 100

#define CAPACITY 16
#define PATIENCE_S 30

static void *item_of(uint64_t v) { return (void *)(uintptr_t)((v + 1) << 4); }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ the stop */

static const char *_Atomic stop_at; /* the producer's point */
static _Atomic(int) stopped, release, produced;
static _Thread_local bool is_producer;
/* The consumer's side: at the release_at-th arrival at its wait's point
 * (0: never), it lets the stopped producer go and waits for its item. */
static const char *wait_point;
static _Atomic(int) release_at;
static int wait_arrivals;

static void consumer_hook(const char *name) {
  int k = atomic_load(&release_at);
  if (k == 0 || strcmp(name, wait_point) != 0 || ++wait_arrivals < k) return;
  atomic_store(&release_at, 0);
  atomic_store(&release, 1);
  time_t start = time(NULL);
  while (!atomic_load(&produced) && time(NULL) - start < PATIENCE_S) sleep_ms(1);
}

/* A gate of its own for each of several producers stopped at once: the
 * thread's first arrival at point stops it until release. */
typedef struct gate {
  const char *point;
  bool passed;
  _Atomic(int) stopped, release;
} gate;
static _Thread_local gate *my_gate;

static void stop_hook(const char *name) {
  if (my_gate != NULL) {
    if (my_gate->passed || strcmp(name, my_gate->point) != 0) return;
    my_gate->passed = true;
    atomic_store(&my_gate->stopped, 1);
    while (!atomic_load(&my_gate->release)) sleep_ms(1);
    return;
  }
  if (!is_producer) {
    consumer_hook(name);
    return;
  }
  const char *w = atomic_load(&stop_at);
  if (w == NULL || strcmp(name, w) != 0) return;
  atomic_store(&stop_at, NULL); /* its first arrival only */
  atomic_store(&stopped, 1);
  while (!atomic_load(&release)) sleep_ms(1);
}

typedef struct producer {
  const syncq_queue_ops *ops;
  void *q;
  int status;
  syncq_stats stats;
  void *item; /* NULL: item_of(1) */
  gate *own;  /* NULL: the shared stop (stop_at) */
} producer;

static void *produce(void *arg) {
  producer *p = arg;
  is_producer = true;
  my_gate = p->own;
  syncq_stats_reset();
  p->status = p->ops->enqueue(p->q, p->item != NULL ? p->item : item_of(1));
  p->stats = *syncq_stats_self();
  atomic_store(&produced, 1);
  return NULL;
}

/* A queue of algo sized `cap` (ring size for the linked rings), its ops
 * in *ops; NULL when the algorithm is not supported here (no double-width
 * CAS on this CPU), said and skipped. */
static void *new_queue(const char *algo, size_t cap, const syncq_queue_ops **ops) {
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, algo, &a), SYNCQ_OK);
  *ops = a->ops;
  size_t bytes = 0;
  assert_int_equal((*ops)->bytes(cap, &bytes), SYNCQ_OK);
  void *q = syncq_alloc_aligned(bytes, (*ops)->align > SYNCQ_CACHELINE ? (*ops)->align : SYNCQ_CACHELINE);
  assert_non_null(q);
  int st = (*ops)->init(q, cap);
  if (st == SYNCQ_ENOTSUP) {
    print_message("%s: not supported here, skipped\n", algo);
    free(q);
    return NULL;
  }
  assert_int_equal(st, SYNCQ_OK);
  return q;
}

/* What one late producer costs each side. */
typedef struct expect {
  const char *algo;
  const char *point;
  uint64_t waits;  /* the consumer's deq_waits, each of which runs out (deq_waits_out) */
  uint64_t pauses; /* ... and deq_wait_pauses */
  uint64_t lost;   /* the producer's enq_cells_lost */
} expect;

static const expect cases[] = {
  {"lcrq", "queue.lcrq.enqueue.ticket", 1, LR_SPIN, 1},
  {"lcrq-af", "queue.lcrq.enqueue.ticket", 1, LR_SPIN, 1},
  {"lprq", "queue.lprq.enqueue.ticket", 1, LR_SPIN, 1},
  {"lprq-af", "queue.lprq.enqueue.ticket", 1, LR_SPIN, 1},
  {"scq", "queue.scq.enqueue.ticket", 1, SYNCQ_SCQ_DEQ_WAIT, 1},
  /* its own index, then the next one, which no enqueuer holds yet (the
   * wait there is for the enqueue that takes it next); the producer loses
   * both */
  {"wfqueue", "queue.wfqueue.enqueue.ticket", 2, 2 * WFQ_SPIN, 2},
};

static void late_producer(const expect *e) {
  const syncq_queue_ops *ops;
  void *q = new_queue(e->algo, CAPACITY, &ops);
  if (q == NULL) return;

  /* A warm-up pair (SCQ's threshold is set by a completed enqueue): no
   * wait, no ticket lost. */
  void *out = NULL;
  syncq_stats_reset();
  assert_int_equal(ops->enqueue(q, item_of(0)), SYNCQ_OK);
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(0));
  const syncq_stats warm = *syncq_stats_self();
  if (warm.deq_waits != 0 || warm.deq_wait_pauses != 0 || warm.enq_cells_lost != 0)
    fail_msg("%s: a pair with nobody stopped counted %llu waits, %llu pauses, %llu lost tickets", e->algo,
             (unsigned long long)warm.deq_waits, (unsigned long long)warm.deq_wait_pauses,
             (unsigned long long)warm.enq_cells_lost);

  atomic_store(&stopped, 0);
  atomic_store(&release, 0);
  atomic_store(&produced, 0);
  atomic_store(&stop_at, e->point);
  producer p = {ops, q, SYNCQ_EINVAL, {0}, NULL};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, produce, &p), 0);
  time_t start = time(NULL);
  while (!atomic_load(&stopped) && time(NULL) - start < PATIENCE_S) sleep_ms(1);
  if (!atomic_load(&stopped)) fail_msg("%s: the producer never reached %s", e->algo, e->point);

  /* The consumer, at the cell whose ticket the stopped producer holds. */
  syncq_stats_reset();
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  const syncq_stats c = *syncq_stats_self();
  atomic_store(&release, 1);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(p.status, SYNCQ_OK);
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  free(q);

  if (c.deq_waits != e->waits || c.deq_wait_pauses != e->pauses || c.deq_waits_out != e->waits)
    fail_msg(
      "%s: the consumer ahead of a stopped producer counted %llu waits (%llu ran out) and %llu pauses, "
      "expected %llu (all out) and %llu",
      e->algo, (unsigned long long)c.deq_waits, (unsigned long long)c.deq_waits_out,
      (unsigned long long)c.deq_wait_pauses, (unsigned long long)e->waits, (unsigned long long)e->pauses);
  if (c.enq_cells_lost != 0 || c.rings_closed != 0)
    fail_msg("%s: the consumer counted enqueue events (%llu lost, %llu closed)", e->algo,
             (unsigned long long)c.enq_cells_lost, (unsigned long long)c.rings_closed);
  if (p.stats.enq_cells_lost != e->lost || p.stats.deq_waits != 0 || p.stats.rings_closed != 0 || p.stats.enq_slow != 0)
    fail_msg(
      "%s: the late producer counted %llu lost tickets (expected %llu), %llu waits, %llu rings closed, %llu "
      "slow paths",
      e->algo, (unsigned long long)p.stats.enq_cells_lost, (unsigned long long)e->lost,
      (unsigned long long)p.stats.deq_waits, (unsigned long long)p.stats.rings_closed,
      (unsigned long long)p.stats.enq_slow);
}

static void test_late_producer(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) late_producer(&cases[k]);
}

/* ------------------------------------------------------------ an enqueuer fallen behind */

/* LCRQ and LPRQ (and their -af forms) wait for ticket h's enqueuer only
 * while at most LR_WAIT_LAG tickets were handed out since h (tail - h; the
 * ping-pong's wait, tail = h + 1, is test_late_producer's). A producer
 * takes ticket 1 (after a warm-up pair) and is stopped before its cell;
 * the main thread then enqueues `later` items (tickets 2..later + 1, tail
 * later + 2) and dequeues. At ticket 1 it waits the whole spin when the
 * lag later + 1 is at most LR_WAIT_LAG, and not at all past it; either way
 * it takes the first later item next. Let go, the producer finds its cell
 * passed (one ticket lost), takes another and queues its item behind the
 * later ones: every item comes out once, in that order. */
#define LAG_RING 256 /* ring size: 3 * LR_WAIT_LAG + 2 tickets fit, no ring closes */
_Static_assert(3 * LR_WAIT_LAG + 2 <= LAG_RING, "the lag cases fit one ring");

static void fallen_behind(const char *algo, const char *point, uint64_t later) {
  const syncq_queue_ops *ops;
  void *q = new_queue(algo, LAG_RING, &ops);
  if (q == NULL) return;
  void *out = NULL;
  assert_int_equal(ops->enqueue(q, item_of(0)), SYNCQ_OK);
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);

  atomic_store(&stopped, 0);
  atomic_store(&release, 0);
  atomic_store(&produced, 0);
  atomic_store(&stop_at, point);
  producer p = {ops, q, SYNCQ_EINVAL, {0}, item_of(1)};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, produce, &p), 0);
  time_t start = time(NULL);
  while (!atomic_load(&stopped) && time(NULL) - start < PATIENCE_S) sleep_ms(1);
  if (!atomic_load(&stopped)) fail_msg("%s: the producer never reached %s", algo, point);

  for (uint64_t i = 0; i < later; i++) assert_int_equal(ops->enqueue(q, item_of(10 + i)), SYNCQ_OK);
  syncq_stats_reset();
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
  const syncq_stats c = *syncq_stats_self();
  assert_ptr_equal(out, item_of(10));

  atomic_store(&release, 1);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(p.status, SYNCQ_OK);
  for (uint64_t i = 1; i < later; i++) {
    assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(10 + i));
  }
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK); /* the late producer's, behind the later ones */
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  free(q);

  const uint64_t waits = later + 1 <= LR_WAIT_LAG ? 1 : 0;
  if (c.deq_waits != waits || c.deq_waits_out != waits || c.deq_wait_pauses != waits * LR_SPIN)
    fail_msg(
      "%s: with %llu tickets handed out past a stopped enqueuer's, the dequeuer at its ticket counted "
      "%llu waits (%llu ran out), %llu pauses; expected %llu (out), %llu",
      algo, (unsigned long long)(later + 1), (unsigned long long)c.deq_waits, (unsigned long long)c.deq_waits_out,
      (unsigned long long)c.deq_wait_pauses, (unsigned long long)waits, (unsigned long long)(waits * LR_SPIN));
  if (p.stats.enq_cells_lost != 1 || p.stats.rings_closed != 0)
    fail_msg("%s: the late producer lost %llu tickets (expected 1) and closed %llu rings", algo,
             (unsigned long long)p.stats.enq_cells_lost, (unsigned long long)p.stats.rings_closed);
}

static void test_fallen_behind(void **state) {
  (void)state;
  static const struct {
    const char *algo, *point;
  } algos[] = {
    {"lcrq", "queue.lcrq.enqueue.ticket"},
    {"lcrq-af", "queue.lcrq.enqueue.ticket"},
    {"lprq", "queue.lprq.enqueue.ticket"},
    {"lprq-af", "queue.lprq.enqueue.ticket"},
  };
  /* lag LR_WAIT_LAG: still waits; one more, and far past: no wait */
  const uint64_t later[] = {LR_WAIT_LAG - 1, LR_WAIT_LAG, 3 * LR_WAIT_LAG};
  for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++)
    for (size_t j = 0; j < sizeof later / sizeof later[0]; j++) fallen_behind(algos[k].algo, algos[k].point, later[j]);
}

/* ------------------------------------------------------------ a write at the last look */

/* SCQ: the consumer ahead of a stopped producer waits, and the producer
 * writes its entry during the wait's last relax: the last look finds the
 * item, so the wait did not run out (deq_waits_out 0) and the dequeue
 * takes it. The wait's SYNCQ_SCQ_DEQ_WAIT relaxes and its one wait count
 * as before; the producer lost nothing. */
/* One queue's wait at its last look: its consumer waits for a stopped
 * producer and lets it go during the wait's last relax (race point
 * wait_at); the last look finds the item: one wait of `spin` pauses, not
 * run out. */
static void write_at_last_look(const char *algo, const char *ticket_at, const char *wait_at, int spin) {
  const syncq_algo *a;
  assert_int_equal(syncq_registry_find(SYNCQ_FAMILY_QUEUE, algo, &a), SYNCQ_OK);
  const syncq_queue_ops *ops = a->ops;
  size_t bytes = 0;
  assert_int_equal(ops->bytes(CAPACITY, &bytes), SYNCQ_OK);
  void *q = syncq_alloc_aligned(bytes, ops->align > SYNCQ_CACHELINE ? ops->align : SYNCQ_CACHELINE);
  assert_non_null(q);
  assert_int_equal(ops->init(q, CAPACITY), SYNCQ_OK);
  void *out = NULL;
  assert_int_equal(ops->enqueue(q, item_of(0)), SYNCQ_OK); /* SCQ's threshold: a completed enqueue */
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);

  atomic_store(&stopped, 0);
  atomic_store(&release, 0);
  atomic_store(&produced, 0);
  atomic_store(&stop_at, ticket_at);
  producer p = {ops, q, SYNCQ_EINVAL, {0}};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, produce, &p), 0);
  time_t start = time(NULL);
  while (!atomic_load(&stopped) && time(NULL) - start < PATIENCE_S) sleep_ms(1);
  if (!atomic_load(&stopped)) fail_msg("%s: the producer never reached its ticket's point", algo);

  wait_point = wait_at;
  wait_arrivals = 0;
  atomic_store(&release_at, spin); /* the last relax */
  syncq_stats_reset();
  int r = ops->dequeue(q, &out);
  const syncq_stats c = *syncq_stats_self();
  int armed = atomic_exchange(&release_at, 0);
  atomic_store(&release, 1);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(armed, 0); /* the wait reached its last relax */
  assert_int_equal(p.status, SYNCQ_OK);
  assert_int_equal(r, SYNCQ_OK);
  assert_ptr_equal(out, item_of(1));
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  free(q);
  if (c.deq_waits != 1 || c.deq_wait_pauses != (uint64_t)spin || c.deq_waits_out != 0)
    fail_msg(
      "%s: a wait whose last look found the write counted %llu waits (%llu ran out), %llu pauses; "
      "expected 1 (none out), %d",
      algo, (unsigned long long)c.deq_waits, (unsigned long long)c.deq_waits_out, (unsigned long long)c.deq_wait_pauses,
      spin);
  assert_int_equal(p.stats.enq_cells_lost, 0);
}

/* SCQ and LPRQ relax, then look: their last look comes after the last
 * relax (LCRQ looks before each relax, so its last relax has no look). */
static void test_write_at_last_look(void **state) {
  (void)state;
  write_at_last_look("scq", "queue.scq.enqueue.ticket", "queue.scq.dequeue.wait", SYNCQ_SCQ_DEQ_WAIT);
  write_at_last_look("lprq", "queue.lprq.enqueue.ticket", "queue.lprq.dequeue.wait", LR_SPIN);
}

/* ------------------------------------------------------------ rings closed */

#define RING_CASE(NAME, T, PREFIX)                                                                \
  static void NAME(void) {                                                                        \
    T *q = syncq_alloc_aligned(sizeof *q, _Alignof(T));                                           \
    assert_non_null(q);                                                                           \
    int st = PREFIX##_init_ring(q, 2);                                                            \
    if (st == SYNCQ_ENOTSUP) {                                                                    \
      free(q);                                                                                    \
      return;                                                                                     \
    }                                                                                             \
    assert_int_equal(st, SYNCQ_OK);                                                               \
    syncq_stats_reset();                                                                          \
    for (uint64_t i = 0; i < 2; i++) assert_int_equal(PREFIX##_enqueue(q, item_of(i)), SYNCQ_OK); \
    assert_int_equal(syncq_stats_self()->rings_closed, 0);                                        \
    assert_int_equal(PREFIX##_enqueue(q, item_of(2)), SYNCQ_OK); /* the ring is full */           \
    assert_int_equal(syncq_stats_self()->rings_closed, 1);                                        \
    assert_int_equal(syncq_stats_self()->enq_cells_lost, 0);     /* its cell held an item */      \
    assert_int_equal(PREFIX##_enqueue(q, item_of(3)), SYNCQ_OK); /* the new ring's */             \
    assert_int_equal(syncq_stats_self()->rings_closed, 1);                                        \
    for (uint64_t i = 0; i < 4; i++) {                                                            \
      void *out = NULL;                                                                           \
      assert_int_equal(PREFIX##_dequeue(q, &out), SYNCQ_OK);                                      \
      assert_ptr_equal(out, item_of(i));                                                          \
    }                                                                                             \
    /* the closer's ticket 2 in the first ring: no enqueuer will write    \
     * its cell, and the dequeuer at it does not wait (tail > 2) */                       \
    assert_int_equal(syncq_stats_self()->deq_waits, 0);                                           \
    assert_int_equal(syncq_stats_self()->deq_wait_pauses, 0);                                     \
    assert_int_equal(PREFIX##_destroy(q), SYNCQ_OK);                                              \
    free(q);                                                                                      \
  }
RING_CASE(lcrq_rings, syncq_queue_lcrq, syncq_queue_lcrq)
RING_CASE(lprq_rings, syncq_queue_lprq, syncq_queue_lprq)

static void test_rings_closed(void **state) {
  (void)state;
  lcrq_rings();
  lprq_rings();
}

/* A ring of 2 cells holding items 0 and 1: the producer takes ticket 2 and
 * is stopped before its cell; the main thread's enqueue of item 3 takes
 * ticket 3, finds the ring full and closes it (nobody took a ticket after
 * 3), and links a ring holding item 3.
 * Still stopped: the main thread dequeues 0, 1 and 3; at ticket 2 it waits
 * the whole spin (the stopped producer holds it and may still write), at
 * ticket 3 not at all (the closer gave it up). Let go, the producer loses
 * ticket 2, finds the ring closed and queues item 2 in the new ring.
 * Let go first (given_up): the producer fails ticket 2 (the ring is full),
 * finds it closed and gives ticket 2 up, after which no dequeuer waits at
 * it: the main thread dequeues 0, 1, 3, 2 without a wait. */
static void closed_with_late_producer(const char *algo, const char *point, bool given_up) {
  const syncq_queue_ops *ops;
  void *q = new_queue(algo, 2, &ops); /* rings of 2 cells */
  if (q == NULL) return;
  for (uint64_t i = 0; i < 2; i++) assert_int_equal(ops->enqueue(q, item_of(i)), SYNCQ_OK);

  atomic_store(&stopped, 0);
  atomic_store(&release, 0);
  atomic_store(&stop_at, point);
  producer p = {ops, q, SYNCQ_EINVAL, {0}, item_of(2)};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, produce, &p), 0);
  time_t start = time(NULL);
  while (!atomic_load(&stopped) && time(NULL) - start < PATIENCE_S) sleep_ms(1);
  if (!atomic_load(&stopped)) fail_msg("%s: the producer never reached %s", algo, point);

  syncq_stats_reset();
  assert_int_equal(ops->enqueue(q, item_of(3)), SYNCQ_OK);
  assert_int_equal(syncq_stats_self()->rings_closed, 1);
  if (given_up) {
    atomic_store(&release, 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(p.status, SYNCQ_OK);
    syncq_stats_reset();
  }
  void *out = NULL;
  const uint64_t order[] = {0, 1, 3, 2};
  for (size_t k = 0; k < (given_up ? 4u : 3u); k++) {
    assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(order[k]));
  }
  const syncq_stats c = *syncq_stats_self();
  if (!given_up) {
    atomic_store(&release, 1);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(p.status, SYNCQ_OK);
    assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(2));
  }
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  free(q);

  const uint64_t waits = given_up ? 0 : 1;
  if (c.deq_waits != waits || c.deq_waits_out != waits || c.deq_wait_pauses != waits * LR_SPIN)
    fail_msg("%s%s: waits at a closed ring: %llu (%llu ran out), %llu pauses; expected %llu (out), %llu", algo,
             given_up ? " (ticket given up)" : "", (unsigned long long)c.deq_waits, (unsigned long long)c.deq_waits_out,
             (unsigned long long)c.deq_wait_pauses, (unsigned long long)waits, (unsigned long long)(waits * LR_SPIN));
  /* ticket 2: passed while it was stopped (no item in its cell), or
   * failed on the full ring (item 0 in its cell) */
  if (p.stats.enq_cells_lost != waits)
    fail_msg("%s: the late producer lost %llu tickets, expected %llu", algo, (unsigned long long)p.stats.enq_cells_lost,
             (unsigned long long)waits);
}

static void test_closed_ring_late_producer(void **state) {
  (void)state;
  for (int given_up = 0; given_up < 2; given_up++) {
    closed_with_late_producer("lcrq", "queue.lcrq.enqueue.ticket", given_up);
    closed_with_late_producer("lcrq-af", "queue.lcrq.enqueue.ticket", given_up);
    closed_with_late_producer("lprq", "queue.lprq.enqueue.ticket", given_up);
    closed_with_late_producer("lprq-af", "queue.lprq.enqueue.ticket", given_up);
  }
}

/* Tickets given up lowest first. A ring of 2 cells holding items 0 and 1:
 * producer A takes ticket 2, producer B ticket 3, both stopped before
 * their cells. A, let go, finds the ring full, closes it (at tail 4) and
 * gives ticket 2 up while B still holds 3; B, let go, fails 3 and gives
 * it up. The main thread dequeues 0 and 1, then passes tickets 2 and 3,
 * whose enqueuers both gave up: no wait at either; then 2 and 3 from the
 * ring that A linked. */
static void gave_up_out_of_order(const char *algo, const char *point) {
  const syncq_queue_ops *ops;
  void *q = new_queue(algo, 2, &ops); /* rings of 2 cells */
  if (q == NULL) return;
  for (uint64_t i = 0; i < 2; i++) assert_int_equal(ops->enqueue(q, item_of(i)), SYNCQ_OK);

  gate g[2];
  producer p[2];
  pthread_t th[2];
  for (int k = 0; k < 2; k++) { /* A, then B: tickets 2 and 3 */
    g[k].point = point;
    g[k].passed = false;
    atomic_init(&g[k].stopped, 0);
    atomic_init(&g[k].release, 0);
    p[k] = (producer){ops, q, SYNCQ_EINVAL, {0}, item_of(2 + (uint64_t)k), &g[k]};
    assert_int_equal(pthread_create(&th[k], NULL, produce, &p[k]), 0);
    time_t start = time(NULL);
    while (!atomic_load(&g[k].stopped) && time(NULL) - start < PATIENCE_S) sleep_ms(1);
    if (!atomic_load(&g[k].stopped)) fail_msg("%s: producer %d never reached %s", algo, k, point);
  }
  for (int k = 0; k < 2; k++) {
    atomic_store(&g[k].release, 1);
    assert_int_equal(pthread_join(th[k], NULL), 0);
    assert_int_equal(p[k].status, SYNCQ_OK);
  }
  assert_int_equal(p[0].stats.rings_closed, 1);

  syncq_stats_reset();
  void *out = NULL;
  for (uint64_t i = 0; i < 4; i++) {
    assert_int_equal(ops->dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i));
  }
  assert_int_equal(ops->dequeue(q, &out), SYNCQ_EMPTY);
  const syncq_stats c = *syncq_stats_self();
  assert_int_equal(ops->destroy(q), SYNCQ_OK);
  free(q);
  if (c.deq_waits != 0 || c.deq_wait_pauses != 0)
    fail_msg("%s: at tickets given up lowest first the dequeuer counted %llu waits, %llu pauses; expected none", algo,
             (unsigned long long)c.deq_waits, (unsigned long long)c.deq_wait_pauses);
}

static void test_gave_up_out_of_order(void **state) {
  (void)state;
  gave_up_out_of_order("lcrq", "queue.lcrq.enqueue.ticket");
  gave_up_out_of_order("lcrq-af", "queue.lcrq.enqueue.ticket");
  gave_up_out_of_order("lprq", "queue.lprq.enqueue.ticket");
  gave_up_out_of_order("lprq-af", "queue.lprq.enqueue.ticket");
}

/* ------------------------------------------------------------ wfqueue's slow path */

static uint64_t wfqueue_slow_enqueues(int patience) {
  atomic_store(&syncq_queue_wfqueue_test_patience__, patience);
  syncq_queue_wfqueue *q = syncq_alloc_aligned(sizeof *q, _Alignof(syncq_queue_wfqueue));
  assert_non_null(q);
  assert_int_equal(syncq_queue_wfqueue_init(q, CAPACITY), SYNCQ_OK);
  atomic_store(&syncq_queue_wfqueue_test_patience__, -1);
  syncq_stats_reset();
  for (uint64_t i = 0; i < 3; i++) assert_int_equal(syncq_queue_wfqueue_enqueue(q, item_of(i)), SYNCQ_OK);
  uint64_t slow = syncq_stats_self()->enq_slow;
  for (uint64_t i = 0; i < 3; i++) {
    void *out = NULL;
    assert_int_equal(syncq_queue_wfqueue_dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(i));
  }
  assert_int_equal(syncq_queue_wfqueue_destroy(q), SYNCQ_OK);
  free(q);
  return slow;
}

static void test_wfqueue_slow_path(void **state) {
  (void)state;
  assert_int_equal(wfqueue_slow_enqueues(0), 3);  /* PATIENCE 0: every enqueue publishes a request */
  assert_int_equal(wfqueue_slow_enqueues(-1), 0); /* the fast path takes them all */
}

/* syncq_stats_add sums the new counters too (the lab sums its threads'). */
static void test_stats_add(void **state) {
  (void)state;
  syncq_stats a = {0}, b = {0};
  b.deq_waits = 1;
  b.deq_wait_pauses = 2;
  b.enq_cells_lost = 3;
  b.rings_closed = 4;
  b.enq_slow = 5;
  b.deq_waits_out = 6;
  syncq_stats_add(&a, &b);
  syncq_stats_add(&a, &b);
  assert_int_equal(a.deq_waits, 2);
  assert_int_equal(a.deq_wait_pauses, 4);
  assert_int_equal(a.enq_cells_lost, 6);
  assert_int_equal(a.rings_closed, 8);
  assert_int_equal(a.enq_slow, 10);
  assert_int_equal(a.deq_waits_out, 12);
}

int main(void) {
  if (!syncq_stats_enabled()) {
    print_message("counters compiled out (SYNCQ_STATS=OFF): nothing to check\n");
    return 0;
  }
  syncq_race_hook = stop_hook;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_late_producer),
    cmocka_unit_test(test_fallen_behind),
    cmocka_unit_test(test_write_at_last_look),
    cmocka_unit_test(test_rings_closed),
    cmocka_unit_test(test_closed_ring_late_producer),
    cmocka_unit_test(test_gave_up_out_of_order),
    cmocka_unit_test(test_wfqueue_slow_path),
    cmocka_unit_test(test_stats_add),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
