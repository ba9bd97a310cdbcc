/* SPDX-License-Identifier: BSD-2-Clause */
/* lincheck_pqueue.c — the priority-queue specification (lincheck_pqueue.h). */
#include "lincheck_pqueue.h"

#include <string.h>

#include "syncq/status.h"

typedef struct pq_state {
  uint32_t cap;     /* capacity */
  uint32_t divisor; /* key = value / divisor */
  uint32_t len;
  uint32_t pad;                 /* zero: the state is compared byte-wise */
  uint64_t vals[LC_SPEC_SLOTS]; /* present values, ascending; the rest zero */
} pq_state;

static void pq_init(void *state, uint64_t param) {
  pq_state *q = state;
  memset(q, 0, sizeof *q);
  uint32_t cap = (uint32_t)(param & 0xffffffffu), div = (uint32_t)(param >> 32);
  q->cap = (cap == 0 || cap > LC_SPEC_SLOTS) ? LC_SPEC_SLOTS : cap;
  q->divisor = div ? div : 1u;
}

static bool pq_apply(void *state, const lc_op *op) {
  pq_state *q = state;
  if (op->kind == LC_PQ_INSERT) {
    if (q->len == q->cap) return op->status == SYNCQ_ENOMEM;
    if (op->status != SYNCQ_OK) return false;
    uint32_t at = 0;
    while (at < q->len && q->vals[at] < op->arg) at++;
    memmove(&q->vals[at + 1], &q->vals[at], (q->len - at) * sizeof q->vals[0]);
    q->vals[at] = op->arg;
    q->len++;
    return true;
  }
  if (op->kind == LC_PQ_DELETE_MIN) {
    if (q->len == 0) return op->status == SYNCQ_EMPTY;
    if (op->status != SYNCQ_OK) return false;
    uint64_t min = UINT64_MAX;
    for (uint32_t i = 0; i < q->len; i++) {
      uint64_t k = q->vals[i] / q->divisor;
      if (k < min) min = k;
    }
    if (op->ret / q->divisor != min) return false;
    for (uint32_t i = 0; i < q->len; i++) {
      if (q->vals[i] != op->ret) continue;
      memmove(&q->vals[i], &q->vals[i + 1], (q->len - i - 1) * sizeof q->vals[0]);
      q->vals[--q->len] = 0; /* canonical */
      return true;
    }
    return false; /* a value that is not present */
  }
  return false;
}

lc_spec lc_spec_pqueue(unsigned capacity, unsigned key_divisor) {
  return (lc_spec){"priority-queue", sizeof(pq_state), ((uint64_t)key_divisor << 32) | capacity, pq_init, pq_apply};
}

const char *lc_pqueue_kind_name(int kind) {
  switch (kind) {
  case LC_PQ_INSERT:
    return "insert";
  case LC_PQ_DELETE_MIN:
    return "delete_min";
  }
  return lc_kind_name(kind);
}
