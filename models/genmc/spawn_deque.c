/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * spawn_deque.c — GenMC driver for the fiber schedulers' spawn deque
 * (src/po/spawn_deque.h: Chase & Lev's work-stealing deque with Lê et
 * al.'s C11 orders), the library's header included as it is.
 *
 * Threads: O, the owner, pushes items 0 and 1, takes once, pushes item 2
 * and takes once more; T, a thief, steals twice. Each item's payload is a
 * plain int the owner writes before its push. After both end, main (the
 * owner again) takes what is left. Property: every item comes out exactly
 * once, and whoever takes it reads its payload without a data race (the
 * push's release store of bottom, read by steal's acquire load, orders the
 * payload's write before the thief's read); and a take of the owner that
 * answers NULL leaves no item pushed before it for main: every one was
 * taken already (the property an empty test before take's claim must
 * keep: docs/reliability.md, "Weak memory: GenMC").
 *
 * Both forms of the header: the paper's seq_cst fences (PO_DEQUE_FENCES
 * 1, the default here as in a normal build) and the TSan form
 * (-DPO_DEQUE_FENCES=0: seq_cst orders on the accesses instead).
 *
 * GENMC_SEED_BUG (a control): the seq_cst fences of take and steal
 * removed; in the TSan form, take's seq_cst exchange of bottom and the
 * seq_cst loads of take and steal weakened to acq_rel and acquire. The owner's claim of the last item (its store of
 * bottom, then its load of top) and a thief's (its load of top, then of
 * bottom) are then a store-buffering pattern: both may take the last item
 * (main's assertion fails).
 * GENMC_SEED_BUG_PUBLISH (the other): the stores of bottom relaxed. A
 * thief then reads an item's payload without order after the push (a
 * race under RC11). With only push's store release, take's relaxed store
 * of bottom, read by a thief, orders nothing either (the paper's
 * fence(release) in push covers it, a release store does not): GenMC
 * found that race in the first version of spawn_deque.h.
 * GENMC_SEED_BUG_EMPTY (the third): the owner's takes answer NULL when
 * one item is left (an empty test off by one): main then finds an item
 * pushed before that NULL (its assertion fails).
 */
#include "genmc_shim.h"

#include <stdatomic.h>

#ifdef GENMC_SEED_BUG
#define atomic_thread_fence(order) ((void)(order))
#undef atomic_exchange_explicit
#define atomic_exchange_explicit(obj, desired, order) \
  __c11_atomic_exchange(obj, desired, (order) == memory_order_seq_cst ? memory_order_acq_rel : (order))
#undef atomic_load_explicit
#define atomic_load_explicit(obj, order) \
  __c11_atomic_load(obj, (order) == memory_order_seq_cst ? memory_order_acquire : (order))
#endif
#ifdef GENMC_SEED_BUG_PUBLISH
#undef atomic_store_explicit
#define atomic_store_explicit(obj, desired, order) \
  __c11_atomic_store(obj, desired, (order) == memory_order_release ? memory_order_relaxed : (order))
#endif
#include "po/spawn_deque.h"

enum { ITEMS = 3 };

typedef struct item {
  int payload;
} item;

static po_deque q; /* zero: an empty deque (po_deque_init's state) */
static item items[ITEMS];
static _Atomic(int) got[ITEMS];
static int pushed;     /* the owner's: items it pushed */
static int empty_upto; /* the owner's: items pushed before its last take that answered NULL */

static void took(void *x) {
  item *it = x;
  int i = (int)(it - items);
  assert(it->payload == 10 + i); /* a plain read: a race if the push did not publish it */
  atomic_fetch_add_explicit(&got[i], 1, memory_order_relaxed);
}

static void put(int i) {
  items[i].payload = 10 + i;
  bool ok = po_deque_push(&q, &items[i]);
  assert(ok);
  pushed = i + 1;
}

/* The owner's take: what it took, or NULL, after which no item pushed so
 * far may be left. */
static void take(void) {
#ifdef GENMC_SEED_BUG_EMPTY
  if (atomic_load_explicit(&q.bottom, memory_order_relaxed) - 1 <= atomic_load_explicit(&q.top, memory_order_relaxed)) {
    empty_upto = pushed;
    return;
  }
#endif
  void *x = po_deque_take(&q);
  if (x != NULL) took(x);
  else empty_upto = pushed;
}

static void *owner(void *arg) {
  (void)arg;
  put(0);
  put(1);
  take();
  put(2);
  take();
  return NULL;
}

static void *thief(void *arg) {
  (void)arg;
  for (int k = 0; k < 2; k++) {
    void *x = po_deque_steal(&q);
    if (x != NULL) took(x);
  }
  return NULL;
}

int main(void) {
  void *(*fn[])(void *) = {owner, thief};
  genmc_run(fn, 2);
  void *x;
  while ((x = po_deque_take(&q)) != NULL) {
    assert((item *)x - items >= empty_upto); /* not left behind by a NULL take */
    took(x);
  }
  for (int i = 0; i < ITEMS; i++) assert(atomic_load(&got[i]) == 1);
  return 0;
}
