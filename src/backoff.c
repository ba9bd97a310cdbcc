/* SPDX-License-Identifier: BSD-2-Clause */
/* backoff.c — the waiting half of syncq/backoff.h. */
#include "syncq/backoff.h"

#include <stddef.h>

#include "stats_internal.h"
#include "syncq/clock.h"
#include "syncq/status.h"

int syncq_backoff_exp_init(syncq_backoff_exp *b, uint32_t initial_ns, uint32_t cap_ns) {
  if (b == NULL || initial_ns == 0 || initial_ns > cap_ns) return SYNCQ_EINVAL;
  b->next_ns = b->initial_ns = initial_ns;
  b->cap_ns = cap_ns;
  return SYNCQ_OK;
}

uint32_t syncq_backoff_exp_wait(syncq_backoff_exp *b) {
  if (b == NULL) return 0;
  uint32_t w = syncq_backoff_exp_step(b);
  SYNCQ_STAT_INC(backoffs);
  SYNCQ_STAT_ADD(backoff_ns, w);
  syncq_delay_ns(w);
  return w;
}

uint64_t syncq_backoff_prop_wait(uint64_t unit_ns, uint64_t distance, uint64_t cap_ns) {
  uint64_t w = syncq_backoff_prop_ns(unit_ns, distance, cap_ns);
  SYNCQ_STAT_INC(backoffs);
  SYNCQ_STAT_ADD(backoff_ns, w);
  syncq_delay_ns(w);
  return w;
}
