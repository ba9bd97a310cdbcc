/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_corrupt_test.c — the process-shared queues (SCQ, SCQ remapped,
 * SCQ2, NBLFQ, NBLFQ2, the naive ring, Vyukov's, the FAI array) against a
 * header another process wrote over. Each queue lives in a shared mapping
 * and holds one item; a forked child then writes a value init never
 * writes into one header word (a shift count of 64 or more, a capacity
 * that does not match its shift, a mask that is not S - 1 or lies past
 * any size init accepts, a well-formed mask one bit larger than init's,
 * a rotation init never uses). Enqueue and dequeue
 * must answer SYNCQ_EINVAL without touching the storage (under ASan and
 * UBSan: no shift past the word, no index past the cells). Once the child
 * puts the word back, the queue works and still holds its item.
 * A peer may also write several words that agree with each other (a mask
 * with the magic or the shift bound to it, n with its order): the size's
 * own check must refuse every size init never writes; each such call runs
 * in a child under alarm() (tests/support/bounded_call.h, whose three
 * outcomes are tested here too), so a hang or a fault fails by name.
 * SCQ also takes its slot indices from its rings: an entry whose index is
 * neither a slot nor the empty index is SYNCQ_EINVAL too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>

#include "syncq/queue/fai_array.h"
#include "syncq/queue/naive_ring.h"
#include "syncq/queue/nblfq.h"
#include "syncq/queue/nblfq2.h"
#include "syncq/queue/scq.h"
#include "syncq/queue/scq2.h"
#include "syncq/queue/vyukov.h"
#include "syncq/pr.h"
#include "syncq/status.h"

#include "bounded_call.h"
#include "shared_corrupt.h"

#define CAPACITY 8u

/* One header word to overwrite: where, how wide, and with what. */
typedef struct corruption {
  const char *what;
  size_t offset;
  size_t width; /* 4 or 8 */
  uint64_t value;
} corruption;

typedef struct queue_api {
  const char *name;
  int (*bytes)(size_t, size_t *);
  int (*init)(void *, size_t);
  int (*destroy)(void *);
  int (*enqueue)(void *, void *);
  int (*dequeue)(void *, void **);
  bool needs_dwcas;
  const corruption *cases;
  size_t ncases;
} queue_api;

#define WRAP(algo, initfn)                                                                                           \
  static int algo##_init_w(void *q, size_t c) { return initfn((syncq_queue_##algo *)q, c); }                         \
  static int algo##_destroy_w(void *q) { return syncq_queue_##algo##_destroy((syncq_queue_##algo *)q); }             \
  static int algo##_enqueue_w(void *q, void *i) { return syncq_queue_##algo##_enqueue((syncq_queue_##algo *)q, i); } \
  static int algo##_dequeue_w(void *q, void **i) { return syncq_queue_##algo##_dequeue((syncq_queue_##algo *)q, i); }

WRAP(scq, syncq_queue_scq_init)
WRAP(scq2, syncq_queue_scq2_init)
WRAP(nblfq, syncq_queue_nblfq_init)
WRAP(nblfq2, syncq_queue_nblfq2_init)
WRAP(naive_ring, syncq_queue_naive_ring_init)
WRAP(vyukov, syncq_queue_vyukov_init)
WRAP(fai_array, syncq_queue_fai_array_init)
static int scq_remap_init_w(void *q, size_t c) { return syncq_queue_scq_init_remapped((syncq_queue_scq *)q, c); }

#define F(type, field) offsetof(type, field), sizeof(((type *)0)->field)

/* CAPACITY 8: SCQ's order is log2(16) = 4, n = 8. */
static const corruption scq_cases[] = {
  {"order 64 (a shift by the word's width)", F(syncq_queue_scq, order), 64},
  {"order 200", F(syncq_queue_scq, order), 200},
  {"order 1 (below any capacity)", F(syncq_queue_scq, order), 1},
  {"order 42 (above 2^40)", F(syncq_queue_scq, order), 42},
  {"n 2^30 (rings far past the storage)", F(syncq_queue_scq, n), UINT64_C(1) << 30},
  {"n 0", F(syncq_queue_scq, n), 0},
  {"n 7 (not 2^(order-1))", F(syncq_queue_scq, n), 7},
  {"remap_shift 63", F(syncq_queue_scq, remap_shift), 63},
};
static const corruption scq2_cases[] = {
  {"order 64", F(syncq_queue_scq2, order), 64},
  {"order 0", F(syncq_queue_scq2, order), 0},
  {"order 42", F(syncq_queue_scq2, order), 42},
  {"n 2^30 (cells far past the storage)", F(syncq_queue_scq2, n), UINT64_C(1) << 30},
  {"n 9", F(syncq_queue_scq2, n), 9},
  {"remap_shift 63", F(syncq_queue_scq2, remap_shift), 63},
};
/* clang-format off */
#define MASK_CASES(type)                                                        \
  {"mask 0", F(type, mask), 0},                                                 \
  {"mask 6 (not S - 1)", F(type, mask), 6},                                     \
  {"mask 15 (one bit more: well formed, past the storage)", F(type, mask), 15}, \
  {"mask 2^62 - 1 (past any size)", F(type, mask), (UINT64_C(1) << 62) - 1},    \
  {"mask all ones", F(type, mask), UINT64_MAX},                                 \
  {"magic cleared", F(type, magic), 0}
/* clang-format on */
static const corruption nblfq_cases[] = {MASK_CASES(syncq_queue_nblfq)};
static const corruption nblfq2_cases[] = {MASK_CASES(syncq_queue_nblfq2)};
static const corruption naive_cases[] = {MASK_CASES(syncq_queue_naive_ring)};
static const corruption vyukov_cases[] = {MASK_CASES(syncq_queue_vyukov)};
static const corruption fai_cases[] = {
  MASK_CASES(syncq_queue_fai_array),
  {"shift 64 (a shift by the word's width)", F(syncq_queue_fai_array, shift), 64},
  {"shift 0", F(syncq_queue_fai_array, shift), 0},
  {"shift 5 (not log2(mask + 1))", F(syncq_queue_fai_array, shift), 5},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const queue_api apis[] = {
  {"scq", syncq_queue_scq_bytes, scq_init_w, scq_destroy_w, scq_enqueue_w, scq_dequeue_w, false, scq_cases,
   N_OF(scq_cases)},
  {"scq-remap", syncq_queue_scq_bytes, scq_remap_init_w, scq_destroy_w, scq_enqueue_w, scq_dequeue_w, false, scq_cases,
   N_OF(scq_cases)},
  {"scq2", syncq_queue_scq2_bytes, scq2_init_w, scq2_destroy_w, scq2_enqueue_w, scq2_dequeue_w, true, scq2_cases,
   N_OF(scq2_cases)},
  {"nblfq", syncq_queue_nblfq_bytes, nblfq_init_w, nblfq_destroy_w, nblfq_enqueue_w, nblfq_dequeue_w, false,
   nblfq_cases, N_OF(nblfq_cases)},
  {"nblfq2", syncq_queue_nblfq2_bytes, nblfq2_init_w, nblfq2_destroy_w, nblfq2_enqueue_w, nblfq2_dequeue_w, true,
   nblfq2_cases, N_OF(nblfq2_cases)},
  {"naive-ring", syncq_queue_naive_ring_bytes, naive_ring_init_w, naive_ring_destroy_w, naive_ring_enqueue_w,
   naive_ring_dequeue_w, false, naive_cases, N_OF(naive_cases)},
  {"vyukov", syncq_queue_vyukov_bytes, vyukov_init_w, vyukov_destroy_w, vyukov_enqueue_w, vyukov_dequeue_w, false,
   vyukov_cases, N_OF(vyukov_cases)},
  {"fai-array", syncq_queue_fai_array_bytes, fai_array_init_w, fai_array_destroy_w, fai_array_enqueue_w,
   fai_array_dequeue_w, false, fai_cases, N_OF(fai_cases)},
};

static void *item_of(uintptr_t v) { return (void *)(v * 16u + 16u); }

/* Write `width` bytes of value at base + offset from a child process. */
static void corrupt_word(unsigned char *base, size_t offset, size_t width, uint64_t value) {
  if (width == sizeof(uint32_t)) {
    uint32_t v = (uint32_t)value;
    corrupt_from_child(base + offset, &v, sizeof v);
  } else {
    assert_int_equal(width, sizeof(uint64_t));
    corrupt_from_child(base + offset, &value, sizeof value);
  }
}

static void test_corrupt_header(void **state) {
  (void)state;
  for (size_t a = 0; a < N_OF(apis); a++) {
    const queue_api *api = &apis[a];
    if (api->needs_dwcas && !syncq_pr_dwcas_available()) continue;
    size_t bytes = 0;
    assert_int_equal(api->bytes(CAPACITY, &bytes), SYNCQ_OK);
    for (size_t c = 0; c < api->ncases; c++) {
      const corruption *k = &api->cases[c];
      unsigned char *q = shared_map(bytes);
      assert_int_equal(api->init(q, CAPACITY), SYNCQ_OK);
      assert_int_equal(api->enqueue(q, item_of(1)), SYNCQ_OK);
      unsigned char saved[8];
      memcpy(saved, q + k->offset, k->width);
      corrupt_word(q, k->offset, k->width, k->value);
      void *out = NULL;
      int re = api->enqueue(q, item_of(2)), rd = api->dequeue(q, &out);
      if (re != SYNCQ_EINVAL || rd != SYNCQ_EINVAL)
        fail_msg("%s, %s: enqueue %d, dequeue %d, want SYNCQ_EINVAL", api->name, k->what, re, rd);
      corrupt_from_child(q + k->offset, saved, k->width); /* the peer puts it back */
      assert_int_equal(api->dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, item_of(1));
      assert_int_equal(api->dequeue(q, &out), SYNCQ_EMPTY);
      assert_int_equal(api->enqueue(q, item_of(3)), SYNCQ_OK);
      assert_int_equal(api->dequeue(q, &out), SYNCQ_OK);
      assert_ptr_equal(out, item_of(3));
      assert_int_equal(api->destroy(q), SYNCQ_OK);
      shared_unmap(q, bytes);
    }
  }
}

/* A peer that writes one header word is caught by the check of the word
 * that no longer matches it (above). A peer can also write several words
 * together so that they agree, and then only the check of the size
 * itself stands between it and the cells:
 *   - the naive ring, Vyukov's queue, NBLFQ and NBLFQ2 bind the magic to
 *     the mask (init stores the magic XOR the mask): the peer writes a
 *     mask and the magic that matches it;
 *   - the FAI array's magic is a constant, but its shift must be log2 of
 *     mask + 1: the peer writes a mask and the shift that covers it;
 *   - SCQ's and SCQ2's magic is a constant, but their order must be
 *     log2(2n): the peer writes n and the order that covers it.
 * Each forged size is one init never writes: not a power of two (or not
 * S - 1), zero, or well formed but past the largest size the queue's
 * bytes() accepts (so past any storage). A well-formed size within that
 * bound is the caller's guarantee (the mapping holds the bytes of the
 * size in the header) and no check can tell it from init's. A check that
 * let a forged size through could shift by 64, read past the cells or
 * chase a ring of the wrong shape for ever, so each call runs in a child
 * under alarm() (bounded_call.h) and a call that hangs or faults fails
 * the test with the queue, the call and the forged words named. */
#define FORGED_LIMIT_S 10u     /* a call answers in microseconds, under sanitizers too */
#define FORGED_WROTE_ITEM 1000 /* a refused dequeue wrote *item: no status has this value */

typedef enum forge_kind {
  FORGE_MASK_MAGIC, /* the magic is init's constant XOR the mask */
  FORGE_MASK_SHIFT, /* the shift is the bit length of the mask */
  FORGE_N_ORDER,    /* the order is the bit length of n */
} forge_kind;

typedef struct forged_api {
  const char *name; /* of its entry in apis[] */
  forge_kind kind;
  size_t size_at, size_width;   /* the mask or n */
  size_t bound_at, bound_width; /* the word bound to it: the magic, the shift or the order */
  uint64_t max_size;            /* the largest mask (S - 1) or n that bytes() accepts */
} forged_api;

typedef struct forged_call {
  const queue_api *api;
  void *q;
} forged_call;

static int forged_enqueue(void *arg) {
  const forged_call *c = arg;
  return c->api->enqueue(c->q, item_of(2));
}

static int forged_dequeue(void *arg) {
  const forged_call *c = arg;
  void *out = NULL;
  const int r = c->api->dequeue(c->q, &out);
  return out != NULL ? FORGED_WROTE_ITEM : r;
}

static unsigned bit_length(uint64_t v) { return v == 0 ? 0u : 64u - (unsigned)__builtin_clzll(v); }

static const queue_api *api_named(const char *name) {
  for (size_t a = 0; a < N_OF(apis); a++)
    if (strcmp(apis[a].name, name) == 0) return &apis[a];
  fail_msg("no queue %s in apis[]", name);
  return NULL;
}

static uint64_t read_word(const unsigned char *q, size_t at, size_t width) {
  if (width == sizeof(uint32_t)) {
    uint32_t v;
    memcpy(&v, q + at, sizeof v);
    return v;
  }
  uint64_t v;
  memcpy(&v, q + at, sizeof v);
  return v;
}

/* Each forged size with its bound word written to match, enqueue and
 * dequeue each in a child: both must answer SYNCQ_EINVAL. */
static void forge_sizes(const forged_api *f, const queue_api *api, unsigned char *q, const uint64_t *sizes,
                        size_t nsizes, const uint64_t *bounds) {
  const uint64_t kept_size = read_word(q, f->size_at, f->size_width);
  const uint64_t kept_bound = read_word(q, f->bound_at, f->bound_width);
  for (size_t i = 0; i < nsizes; i++) {
    const uint64_t bound = bounds != NULL                ? bounds[i]
                           : f->kind == FORGE_MASK_MAGIC ? kept_bound ^ kept_size ^ sizes[i]
                                                         : bit_length(sizes[i]);
    corrupt_word(q, f->bound_at, f->bound_width, bound);
    corrupt_word(q, f->size_at, f->size_width, sizes[i]);
    forged_call c = {api, q};
    const struct {
      const char *name;
      int (*call)(void *);
    } calls[] = {{"enqueue", forged_enqueue}, {"dequeue", forged_dequeue}};
    for (size_t k = 0; k < N_OF(calls); k++) {
      char what[160];
      snprintf(what, sizeof what, "%s %s, forged %s %#llx and %s %#llx", api->name, calls[k].name,
               f->kind == FORGE_N_ORDER ? "n" : "mask", (unsigned long long)sizes[i],
               f->kind == FORGE_MASK_MAGIC   ? "magic"
               : f->kind == FORGE_MASK_SHIFT ? "shift"
                                             : "order",
               (unsigned long long)bound);
      bounded_call_expect(what, calls[k].call, &c, FORGED_LIMIT_S, SYNCQ_EINVAL);
    }
  }
  corrupt_word(q, f->bound_at, f->bound_width, kept_bound); /* the peer puts both back */
  corrupt_word(q, f->size_at, f->size_width, kept_size);
}

static void test_forged_header(void **state) {
  (void)state;
  /* the bounds of each queue's bytes(): the cells after the header fit size_t; SCQ and SCQ2 also n <= 2^40 */
  const forged_api fapis[] = {
    {"nblfq", FORGE_MASK_MAGIC, F(syncq_queue_nblfq, mask), F(syncq_queue_nblfq, magic),
     (SIZE_MAX - sizeof(syncq_queue_nblfq)) / sizeof(uint64_t) - 1},
    {"nblfq2", FORGE_MASK_MAGIC, F(syncq_queue_nblfq2, mask), F(syncq_queue_nblfq2, magic),
     (SIZE_MAX - sizeof(syncq_queue_nblfq2)) / sizeof(syncq_pr_dw_atomic) - 1},
    {"naive-ring", FORGE_MASK_MAGIC, F(syncq_queue_naive_ring, mask), F(syncq_queue_naive_ring, magic),
     (SIZE_MAX - sizeof(syncq_queue_naive_ring)) / sizeof(syncq_queue_naive_ring_cell) - 1},
    {"vyukov", FORGE_MASK_MAGIC, F(syncq_queue_vyukov, mask), F(syncq_queue_vyukov, magic),
     (SIZE_MAX - sizeof(syncq_queue_vyukov)) / sizeof(syncq_queue_vyukov_cell) - 1},
    {"fai-array", FORGE_MASK_SHIFT, F(syncq_queue_fai_array, mask), F(syncq_queue_fai_array, shift),
     (SIZE_MAX - sizeof(syncq_queue_fai_array)) / sizeof(uint64_t) - 1},
    {"scq", FORGE_N_ORDER, F(syncq_queue_scq, n), F(syncq_queue_scq, order), UINT64_C(1) << 40},
    {"scq-remap", FORGE_N_ORDER, F(syncq_queue_scq, n), F(syncq_queue_scq, order), UINT64_C(1) << 40},
    {"scq2", FORGE_N_ORDER, F(syncq_queue_scq2, n), F(syncq_queue_scq2, order), UINT64_C(1) << 40},
  };
  for (size_t a = 0; a < N_OF(fapis); a++) {
    const forged_api *f = &fapis[a];
    const queue_api *api = api_named(f->name);
    if (api->needs_dwcas && !syncq_pr_dwcas_available()) continue;
    size_t bytes = 0;
    assert_int_equal(api->bytes(CAPACITY, &bytes), SYNCQ_OK);
    unsigned char *q = shared_map(bytes);
    assert_int_equal(api->init(q, CAPACITY), SYNCQ_OK);
    assert_int_equal(api->enqueue(q, item_of(1)), SYNCQ_OK);
    /* past the bound: the next well-formed size (all ones below the next power of two; twice n) */
    const uint64_t past = f->kind == FORGE_N_ORDER ? 2 * f->max_size : (UINT64_C(1) << bit_length(f->max_size)) - 1;
    assert_true(past > f->max_size);
    if (f->kind == FORGE_N_ORDER) {
      /* 1 is below any capacity, 3 and 6 are not powers of two, the others are past 2^40 (2^63: order 64) */
      const uint64_t ns[] = {0, 1, 3, 6, past, UINT64_C(1) << 62, UINT64_C(1) << 63, UINT64_MAX};
      forge_sizes(f, api, q, ns, N_OF(ns), NULL);
    } else {
      /* 2, 6 and 12 are not S - 1, nor is max_size + 1 (asserted); 2^62 - 1 and past are, past the bound */
      assert_true(((f->max_size + 1) & (f->max_size + 2)) != 0);
      const uint64_t masks[] = {0, 2, 6, 12, (UINT64_C(1) << 62) - 1, UINT64_MAX, f->max_size + 1, past};
      forge_sizes(f, api, q, masks, N_OF(masks), NULL);
      if (f->kind == FORGE_MASK_SHIFT) { /* shifts of the word's width or more, the mask all ones */
        const uint64_t masks2[] = {UINT64_MAX, UINT64_MAX, UINT64_MAX}, shifts[] = {64, 200, UINT32_MAX};
        forge_sizes(f, api, q, masks2, N_OF(masks2), shifts);
      }
    }
    void *out = NULL; /* the header put back: the item is there, the queue works */
    assert_int_equal(api->dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(1));
    assert_int_equal(api->dequeue(q, &out), SYNCQ_EMPTY);
    assert_int_equal(api->enqueue(q, item_of(3)), SYNCQ_OK);
    assert_int_equal(api->dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(3));
    assert_int_equal(api->destroy(q), SYNCQ_OK);
    shared_unmap(q, bytes);
  }
}

/* bounded_call.h tells the three ends apart, and a fault in the child
 * ends the child (cmocka's handlers, inherited, would otherwise report it
 * as a failed test of the child and run the remaining tests there). */
static int returns_einval(void *arg) {
  (void)arg;
  return SYNCQ_EINVAL;
}
static int exits_3(void *arg) {
  (void)arg;
  _exit(3);
}
static int faults(void *arg) {
  (void)arg;
  raise(SIGSEGV);
  return 0;
}
static int hangs(void *arg) {
  (void)arg;
  while (pause() == -1) continue; /* pause() returns only -1, after a handled signal */
  return 0;
}

static void test_bounded_call_outcomes(void **state) {
  (void)state;
  bounded_outcome o = bounded_call(returns_einval, NULL, FORGED_LIMIT_S);
  assert_int_equal(o.end, BOUNDED_RETURNED);
  assert_int_equal(o.value, SYNCQ_EINVAL);
  o = bounded_call(exits_3, NULL, FORGED_LIMIT_S);
  assert_int_equal(o.end, BOUNDED_EXITED);
  assert_int_equal(o.value, 3);
  o = bounded_call(faults, NULL, FORGED_LIMIT_S);
  assert_int_equal(o.end, BOUNDED_SIGNALED);
  assert_int_equal(o.value, SIGSEGV);
  o = bounded_call(hangs, NULL, 1); /* the one wait of the test: a second */
  assert_int_equal(o.end, BOUNDED_SIGNALED);
  assert_int_equal(o.value, SIGALRM);
  char how[128];
  assert_non_null(strstr(bounded_describe(o, how, sizeof how), "no answer within 1 s"));
}

/* SCQ carries slot indices through its rings: an entry of aq whose index
 * lies between n and bottom (2n - 1) names a slot past the n slots. The
 * dequeue that takes it answers SYNCQ_EINVAL instead of reading there. */
static void test_scq_bad_index(void **state) {
  (void)state;
  for (int remapped = 0; remapped < 2; remapped++) {
    size_t bytes = 0;
    assert_int_equal(syncq_queue_scq_bytes(CAPACITY, &bytes), SYNCQ_OK);
    syncq_queue_scq *q = shared_map(bytes);
    assert_int_equal(remapped ? syncq_queue_scq_init_remapped(q, CAPACITY) : syncq_queue_scq_init(q, CAPACITY),
                     SYNCQ_OK);
    assert_int_equal(syncq_queue_scq_enqueue(q, item_of(1)), SYNCQ_OK);
    /* aq's 2n entries follow the header; the item's is the one whose
     * index bits (order = 4 of them) are not bottom (all ones). */
    _Atomic(uint64_t) *aq = (_Atomic(uint64_t) *)(void *)(q + 1);
    const uint64_t order = q->order, bottom = (UINT64_C(1) << order) - 1;
    size_t at = SIZE_MAX;
    for (size_t i = 0; i < 2 * CAPACITY; i++)
      if ((atomic_load(&aq[i]) & bottom) != bottom) at = i;
    assert_true(at != SIZE_MAX);
    uint64_t e = (atomic_load(&aq[at]) & ~bottom) | (bottom - 1); /* index 2n - 2: past the slots */
    corrupt_from_child(&aq[at], &e, sizeof e);
    void *out = NULL;
    assert_int_equal(syncq_queue_scq_dequeue(q, &out), SYNCQ_EINVAL);
    shared_unmap(q, bytes);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_corrupt_header),
    cmocka_unit_test(test_bounded_call_outcomes),
    cmocka_unit_test(test_forged_header),
    cmocka_unit_test(test_scq_bad_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
