/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * queue_registry.c — the built-in queues, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/queue.h"
#include "syncq/queue/lcrq.h"
#include "syncq/queue/lcrq_af.h"
#include "syncq/queue/loo.h"
#include "syncq/queue/lprq.h"
#include "syncq/queue/lprq_af.h"
#include "syncq/queue/plj.h"
#include "syncq/queue/valois.h"
#include "syncq/queue/wcq.h"
#include "syncq/queue/wfqueue.h"
#include "../registry_internal.h"

const syncq_algo *const syncq_builtin_queue[] = {
  &syncq_queue_nblfq_algo,       &syncq_queue_nblfq2_algo,
  &syncq_queue_naive_ring_algo,  &syncq_queue_vyukov_algo,
  &syncq_queue_scq_algo,         &syncq_queue_lcrq_algo,
  &syncq_queue_lprq_algo,        &syncq_queue_wcq_algo,
  &syncq_queue_wfqueue_algo,     &syncq_queue_loo_algo,
  &syncq_queue_scq_remap_algo,   &syncq_queue_scq2_algo,
  &syncq_queue_single_lock_algo, &syncq_queue_two_lock_algo,
  &syncq_queue_ms_algo,          &syncq_queue_ms_hp_algo,
  &syncq_queue_fai_array_algo,   &syncq_queue_plj_algo,
  &syncq_queue_valois_algo,      &syncq_queue_single_lock_ps_algo,
  &syncq_queue_two_lock_ps_algo, &syncq_queue_lcrq_af_algo,
  &syncq_queue_lprq_af_algo,     NULL,
};

/* The family's own lookups go through its own list and the added entries,
 * never through the lookups across families above it. */
int syncq_queue_find(const char *name, const syncq_algo **out) {
  return syncq_registry_find_in(syncq_builtin_queue, SYNCQ_FAMILY_QUEUE, name, out);
}
