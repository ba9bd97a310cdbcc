/* SPDX-License-Identifier: BSD-2-Clause */
/* stats.c — per-thread algorithm event counters (syncq/stats.h). */
#include "stats_internal.h"

#include <stddef.h>
#include <string.h>

SYNCQ_STATS_TLS_MODEL _Thread_local syncq_stats syncq_stats_tls;

syncq_stats *syncq_stats_self(void) { return &syncq_stats_tls; }

void syncq_stats_reset(void) { memset(&syncq_stats_tls, 0, sizeof syncq_stats_tls); }

void syncq_stats_add(syncq_stats *into, const syncq_stats *from) {
  if (into == NULL || from == NULL) return;
  into->cas_attempts += from->cas_attempts;
  into->cas_failures += from->cas_failures;
  into->retries += from->retries;
  into->backoffs += from->backoffs;
  into->backoff_ns += from->backoff_ns;
  into->yields += from->yields;
  into->blocks += from->blocks;
  into->deq_waits += from->deq_waits;
  into->deq_wait_pauses += from->deq_wait_pauses;
  into->deq_waits_out += from->deq_waits_out;
  into->enq_cells_lost += from->enq_cells_lost;
  into->rings_closed += from->rings_closed;
  into->enq_slow += from->enq_slow;
}

int syncq_stats_enabled(void) { return SYNCQ_STATS_COUNTING; }
