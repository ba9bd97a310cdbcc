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

/* NBLFQ and NBLFQ2 bind the magic to the mask (init stores the magic XOR
 * the mask), so each case above is caught by the magic alone. Here a peer
 * writes both, the magic forged to match a mask init cannot write: only
 * the mask's own check stands between it and the cells. A check that let
 * it through could chase a ring of the wrong shape for ever, so each call
 * runs in a child under alarm() and a call that does not answer fails the
 * test by name. */
#define FORGED_LIMIT_S 10u /* a call answers in microseconds, under sanitizers too */

typedef struct forged_api {
  const queue_api *api;
  size_t mask_at, magic_at; /* offsets of the two header words */
  uint64_t max_cells;       /* the largest size the queue's bytes() accepts */
} forged_api;

/* enqueue (dequeue when `deq`) in a child: its answer, or a failure when
 * the child does not answer within FORGED_LIMIT_S or dies. */
static int bounded_call(const queue_api *api, void *q, bool deq, uint64_t mask) {
  fflush(NULL);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    alarm(FORGED_LIMIT_S);
    void *out = NULL;
    const int r = deq ? api->dequeue(q, &out) : api->enqueue(q, item_of(2));
    _exit(out != NULL ? 255 : 128 + r);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status))
    fail_msg("%s %s, forged mask %#llx: %s (SIGALRM: no answer within %u s)", api->name, deq ? "dequeue" : "enqueue",
             (unsigned long long)mask, strsignal(WTERMSIG(status)), FORGED_LIMIT_S);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 255)
    fail_msg("%s dequeue, forged mask %#llx: wrote *item", api->name, (unsigned long long)mask);
  return WEXITSTATUS(status) - 128;
}

static void test_forged_mask(void **state) {
  (void)state;
  const forged_api fapis[] = {
    {&apis[3], offsetof(syncq_queue_nblfq, mask), offsetof(syncq_queue_nblfq, magic),
     (SIZE_MAX - sizeof(syncq_queue_nblfq)) / sizeof(uint64_t)},
    {&apis[4], offsetof(syncq_queue_nblfq2, mask), offsetof(syncq_queue_nblfq2, magic),
     (SIZE_MAX - sizeof(syncq_queue_nblfq2)) / sizeof(syncq_pr_dw_atomic)},
  };
  assert_string_equal(fapis[0].api->name, "nblfq");
  assert_string_equal(fapis[1].api->name, "nblfq2");
  for (size_t a = 0; a < N_OF(fapis); a++) {
    const forged_api *f = &fapis[a];
    if (f->api->needs_dwcas && !syncq_pr_dwcas_available()) continue;
    size_t bytes = 0;
    assert_int_equal(f->api->bytes(CAPACITY, &bytes), SYNCQ_OK);
    unsigned char *q = shared_map(bytes);
    assert_int_equal(f->api->init(q, CAPACITY), SYNCQ_OK);
    assert_int_equal(f->api->enqueue(q, item_of(1)), SYNCQ_OK);
    uint64_t mask, magic;
    memcpy(&mask, q + f->mask_at, sizeof mask);
    memcpy(&magic, q + f->magic_at, sizeof magic);
    const uint64_t forged[] = {0,
                               2,
                               6,
                               12,
                               (UINT64_C(1) << 62) - 1,
                               UINT64_MAX,
                               f->max_cells,
                               (UINT64_C(1) << (64 - __builtin_clzll(f->max_cells))) - 1};
    for (size_t i = 0; i < N_OF(forged); i++) {
      const uint64_t forged_magic = magic ^ mask ^ forged[i];
      corrupt_word(q, f->magic_at, sizeof forged_magic, forged_magic);
      corrupt_word(q, f->mask_at, sizeof forged[i], forged[i]);
      const int re = bounded_call(f->api, q, false, forged[i]), rd = bounded_call(f->api, q, true, forged[i]);
      if (re != SYNCQ_EINVAL || rd != SYNCQ_EINVAL)
        fail_msg("%s, forged mask %#llx: enqueue %d, dequeue %d, want SYNCQ_EINVAL", f->api->name,
                 (unsigned long long)forged[i], re, rd);
    }
    corrupt_word(q, f->magic_at, sizeof magic, magic); /* the peer puts both back */
    corrupt_word(q, f->mask_at, sizeof mask, mask);
    void *out = NULL;
    assert_int_equal(f->api->dequeue(q, &out), SYNCQ_OK);
    assert_ptr_equal(out, item_of(1));
    assert_int_equal(f->api->dequeue(q, &out), SYNCQ_EMPTY);
    assert_int_equal(f->api->destroy(q), SYNCQ_OK);
    shared_unmap(q, bytes);
  }
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
    cmocka_unit_test(test_forged_mask),
    cmocka_unit_test(test_scq_bad_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
