/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lincheck.c — Wing & Gong linearizability search with memoization
 * (see lincheck.h).
 *
 * The search is depth-first over "which operation is linearized next". A
 * configuration is the set of operations linearized so far (a bit mask)
 * plus the specification's state after them; a configuration already
 * found to be a dead end is remembered in a hash set and never explored
 * again (Lowe 2017), which turns the exponential search into one bounded by
 * the number of distinct configurations: small for short histories.
 */
#include "lincheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/status.h"

#define MEMO_INITIAL 1024 /* slots; doubles when half full */

typedef struct memo {
  size_t cap, used, state_size;
  uint64_t *masks; /* 0 = empty slot (mask 0 is never stored: the search starts there) */
  unsigned char *states;
} memo;

static uint64_t hash_config(uint64_t mask, const unsigned char *state, size_t n) {
  uint64_t h = mask * 0x9e3779b97f4a7c15ull ^ 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ state[i]) * 0x100000001b3ull; /* FNV-1a */
  return h ^ (h >> 29);
}

static bool memo_init(memo *m, size_t state_size) {
  m->cap = MEMO_INITIAL;
  m->used = 0;
  m->state_size = state_size;
  m->masks = calloc(m->cap, sizeof *m->masks);
  m->states = calloc(m->cap, state_size ? state_size : 1);
  return m->masks && m->states;
}

static void memo_free(memo *m) {
  free(m->masks);
  free(m->states);
}

/* Find (mask, state): its slot index, or the empty slot where it goes. */
static size_t memo_slot(const memo *m, uint64_t mask, const unsigned char *state) {
  size_t i = (size_t)hash_config(mask, state, m->state_size) & (m->cap - 1);
  while (m->masks[i] != 0 && !(m->masks[i] == mask && memcmp(m->states + i * m->state_size, state, m->state_size) == 0))
    i = (i + 1) & (m->cap - 1);
  return i;
}

static bool memo_has(const memo *m, uint64_t mask, const unsigned char *state) {
  return m->masks[memo_slot(m, mask, state)] != 0;
}

static bool memo_add(memo *m, uint64_t mask, const unsigned char *state) {
  if (2 * (m->used + 1) > m->cap) {
    memo bigger = {m->cap * 2, 0, m->state_size, NULL, NULL};
    bigger.masks = calloc(bigger.cap, sizeof *bigger.masks);
    bigger.states = calloc(bigger.cap, m->state_size ? m->state_size : 1);
    if (!bigger.masks || !bigger.states) {
      memo_free(&bigger);
      return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (m->masks[i] == 0) continue;
      size_t j = memo_slot(&bigger, m->masks[i], m->states + i * m->state_size);
      bigger.masks[j] = m->masks[i];
      memcpy(bigger.states + j * m->state_size, m->states + i * m->state_size, m->state_size);
      bigger.used++;
    }
    memo_free(m);
    *m = bigger;
  }
  size_t i = memo_slot(m, mask, state);
  if (m->masks[i] == 0) {
    m->masks[i] = mask;
    memcpy(m->states + i * m->state_size, state, m->state_size);
    m->used++;
  }
  return true;
}

typedef struct search {
  const lc_spec *spec;
  const lc_op *ops;
  size_t n;
  uint64_t all;
  memo seen;
  bool out_of_memory;
} search;

static bool dfs(search *s, uint64_t mask, const unsigned char *state) {
  if (mask == s->all) return true;
  if (mask != 0 && memo_has(&s->seen, mask, state)) return false;
  /* The earliest return among pending operations bounds which may go next. */
  uint64_t first_done = UINT64_MAX;
  for (size_t i = 0; i < s->n; i++)
    if (!(mask & (1ull << i)) && s->ops[i].done < first_done) first_done = s->ops[i].done;
  unsigned char next[LC_MAX_STATE];
  for (size_t i = 0; i < s->n; i++) {
    if ((mask & (1ull << i)) || s->ops[i].call > first_done) continue;
    memcpy(next, state, s->spec->state_size);
    if (s->spec->apply(next, &s->ops[i]) && dfs(s, mask | (1ull << i), next)) return true;
  }
  if (mask != 0 && !memo_add(&s->seen, mask, state)) s->out_of_memory = true;
  return false;
}

bool lc_check(const lc_spec *spec, const lc_op *ops, size_t n, const char **error) {
  const char *dummy;
  if (error == NULL) error = &dummy;
  *error = NULL;
  if (spec == NULL || (ops == NULL && n > 0)) return *error = "NULL spec or ops", false;
  if (n > LC_MAX_OPS) return *error = "history longer than LC_MAX_OPS", false;
  if (spec->state_size > LC_MAX_STATE) return *error = "spec state larger than LC_MAX_STATE", false;
  for (size_t i = 0; i < n; i++)
    if (ops[i].call >= ops[i].done) return *error = "an operation returned before it was called", false;
  search s = {spec, ops, n, n == LC_MAX_OPS ? UINT64_MAX : (1ull << n) - 1, {0}, false};
  if (!memo_init(&s.seen, spec->state_size)) return *error = "out of memory", false;
  unsigned char state[LC_MAX_STATE];
  memset(state, 0, sizeof state);
  spec->init(state, spec->param);
  bool ok = dfs(&s, 0, state);
  memo_free(&s.seen);
  if (!ok && s.out_of_memory) *error = "out of memory (search incomplete)";
  return ok;
}

const char *lc_kind_name(int kind) {
  switch (kind) {
  case LC_QUEUE_ENQ:
    return "enq";
  case LC_QUEUE_DEQ:
    return "deq";
  case LC_STACK_PUSH:
    return "push";
  case LC_STACK_POP:
    return "pop";
  }
  return "op";
}

void lc_print(const lc_op *ops, size_t n, const char *(*kind_name)(int kind)) {
  if (kind_name == NULL) kind_name = lc_kind_name;
  for (size_t i = 0; i < n; i++)
    fprintf(stderr, "  [%llu..%llu] thread %d %s(%llu) -> %s %llu\n", (unsigned long long)ops[i].call,
            (unsigned long long)ops[i].done, ops[i].thread, kind_name(ops[i].kind), (unsigned long long)ops[i].arg,
            syncq_strerror(ops[i].status), (unsigned long long)ops[i].ret);
}

/* ---- shared specifications: a bounded sequence, used from either end ---- */

typedef struct seq_state {
  uint32_t cap; /* capacity */
  uint32_t len; /* values held, in vals[0..len) oldest first; the rest zero */
  uint64_t vals[LC_SPEC_SLOTS];
} seq_state;

static void seq_init(void *state, uint64_t cap) {
  seq_state *q = state;
  memset(q, 0, sizeof *q);
  q->cap = (cap == 0 || cap > LC_SPEC_SLOTS) ? LC_SPEC_SLOTS : (uint32_t)cap;
}

static bool seq_insert(seq_state *q, const lc_op *op) {
  if (q->len == q->cap) return op->status == SYNCQ_FULL;
  if (op->status != SYNCQ_OK) return false;
  q->vals[q->len++] = op->arg;
  return true;
}

static bool seq_take(seq_state *q, const lc_op *op, bool fifo) {
  if (q->len == 0) return op->status == SYNCQ_EMPTY;
  size_t at = fifo ? 0 : q->len - 1;
  if (op->status != SYNCQ_OK || op->ret != q->vals[at]) return false;
  memmove(&q->vals[at], &q->vals[at + 1], (q->len - at - 1) * sizeof q->vals[0]);
  q->vals[--q->len] = 0; /* keep the state canonical */
  return true;
}

static bool queue_apply(void *state, const lc_op *op) {
  switch (op->kind) {
  case LC_QUEUE_ENQ:
    return seq_insert(state, op);
  case LC_QUEUE_DEQ:
    return seq_take(state, op, true);
  }
  return false;
}

static bool stack_apply(void *state, const lc_op *op) {
  switch (op->kind) {
  case LC_STACK_PUSH:
    return seq_insert(state, op);
  case LC_STACK_POP:
    return seq_take(state, op, false);
  }
  return false;
}

lc_spec lc_spec_queue(unsigned capacity) {
  return (lc_spec){"fifo-queue", sizeof(seq_state), capacity, seq_init, queue_apply};
}

lc_spec lc_spec_stack(unsigned capacity) {
  return (lc_spec){"lifo-stack", sizeof(seq_state), capacity, seq_init, stack_apply};
}
