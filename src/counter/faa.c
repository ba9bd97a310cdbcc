/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * faa.c — fetch-and-add counter.
 *
 * Contract
 *   Source:      003 §4.1 and Figure 3 (the "fetchop" counter, at-memory
 *                fetch-and-increment); 001 §5 (fetch-and-add counter).
 *   Progress:    wait-free (one instruction; never retries).
 *   Atomics:     1 fetch-and-add per update (x86-64 `lock xadd`).
 *   Memory:      caller's storage, one cache line; never allocates.
 *   Signal-safe: yes. Process-shared: yes (no pointers).
 *   Limits:      the value wraps modulo 2^64.
 */
#include "syncq/counter/faa.h"

#include "syncq/counter.h"

int syncq_counter_faa_init(syncq_counter_faa *c, int64_t initial) {
  if (c == NULL) return SYNCQ_EINVAL;
  atomic_init(&c->value, initial);
  return SYNCQ_OK;
}

int syncq_counter_faa_destroy(syncq_counter_faa *c) { return c == NULL ? SYNCQ_EINVAL : SYNCQ_OK; }

int syncq_counter_faa_fetch_add(syncq_counter_faa *c, int64_t delta, int64_t *old) {
  if (c == NULL) return SYNCQ_EINVAL;
  int64_t prev = atomic_fetch_add(&c->value, delta); /* C11: signed atomics wrap */
  if (old != NULL) *old = prev;
  return SYNCQ_OK;
}

int syncq_counter_faa_load(syncq_counter_faa *c, int64_t *value) {
  if (c == NULL || value == NULL) return SYNCQ_EINVAL;
  *value = atomic_load(&c->value);
  return SYNCQ_OK;
}

SYNCQ_COUNTER_REGISTER(faa, "faa", "fetch-and-add counter", "003 §4.1, Figure 3; 001 §5", WAIT_FREE,
                       SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_PROCESS_SHARED);
