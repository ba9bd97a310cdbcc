/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_spare_internal.h — the step that clh.c and clh_tp.c share: an
 * arrival takes the spare node that the tail node's owner prepared once
 * it held the lock, by one CAS of the tail word.
 *
 * Both locks keep their nodes in the lock and name them in the tail word
 * by index and generation (one more at each enqueue), so tail words never
 * repeat; a holder stores in its own node's spare field the tail word of
 * a node it prepared for its successor (0: none yet). What differs
 * between the two (whether the arrival must then wait, and clh_tp.c's
 * clearing of the field when it must) comes after this step and stays in
 * each file.
 */
#ifndef SYNCQ_LOCK_CLH_SPARE_INTERNAL_H
#define SYNCQ_LOCK_CLH_SPARE_INTERNAL_H

#include <stdint.h>

#include "../stats_internal.h"
#include "syncq/atomic.h"

/* t: the tail word read (acquire) from *tail; spare: the spare field of
 * t's node. Returns the spare's tail word, now enqueued behind t's node
 * and the caller's, or 0: t's node holds no spare (its owner does not
 * hold the lock yet, or an arrival since t took it and the node was
 * prepared again), or another arrival enqueued after t's node first. */
static inline uint64_t clh_spare_take(_Atomic(uint64_t) *tail, uint64_t t, _Atomic(uint64_t) *spare) {
  /* acquire: pairs with the holder's release store of the field (adopt()
   * in both files, or the fast path's store), which published the spare's
   * preparation. The caller's acquire load of t (paired with the release
   * of the swap or CAS that wrote it) makes this read no older than the
   * prepare() that zeroed the field for this enqueue of the node. */
  const uint64_t s = atomic_load_explicit(spare, memory_order_acquire);
  if (s == 0u) return 0u;
  /* acq_rel: release publishes the spare (prepared, then acquired above)
   * to the arrival that reads tail after us; acquire makes the
   * predecessor's node visible, as the pool path's swap. Tail words never
   * repeat, so tail still reading t means nobody enqueued after t's node,
   * whose spare is then ours alone. */
  uint64_t expected = t;
  const bool took =
    atomic_compare_exchange_strong_explicit(tail, &expected, s, memory_order_acq_rel, memory_order_relaxed);
  SYNCQ_STAT_INC(cas_attempts); /* counted after the CAS: no store waits ahead of it */
  if (!took) {
    SYNCQ_STAT_INC(cas_failures);
    return 0u;
  }
  return s;
}

#endif
