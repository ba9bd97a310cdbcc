/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * aggfunnel_internal.h — the aggregating funnel (src/counter/aggfunnel.c)
 * over a main counter that lives elsewhere: LCRQ's and LPRQ's rings keep
 * their head and tail words where the ring code reads and CASes them, and
 * take their tickets through a funnel in front of each (src/queue/
 * linked_rings.h). Not exported from the shared library.
 */
#ifndef SYNCQ_COUNTER_AGGFUNNEL_INTERNAL_H
#define SYNCQ_COUNTER_AGGFUNNEL_INTERNAL_H

#include <stdint.h>

#include "syncq/counter/aggfunnel.h"

/* Make naggs aggregators empty (no thread may use them yet). */
void syncq_aggfunnel_aggs_init_(syncq_aggfunnel_agg *aggs, unsigned naggs);

/* Add delta to *main through one of the naggs aggregators and return
 * *main's value before the add, as one fetch-and-add on *main would
 * (deltas outside [1, 2^32] go to *main directly). Other threads may
 * fetch-and-add, CAS, or OR into *main directly at any time: a batch is
 * one fetch-and-add there. naggs in [1, SYNCQ_COUNTER_AGGFUNNEL_AGGS_MAX]. */
uint64_t syncq_aggfunnel_fetch_add_(syncq_aggfunnel_agg *aggs, unsigned naggs, _Atomic(uint64_t) *main, uint64_t delta);

#endif
