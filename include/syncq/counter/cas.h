/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/counter/cas.h — compare-and-swap loop counter: read the value, CAS in
 * value + delta, retry on failure. The CAS-based fetch-and-increment of 003
 * §4.1 (LL-SC there) and the counter of 001 §5; "cas-backoff" waits with
 * bounded exponential backoff after each failed CAS, as 001's non-blocking
 * structures do. Lock-free.
 */
#ifndef SYNCQ_COUNTER_CAS_H
#define SYNCQ_COUNTER_CAS_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct syncq_counter_cas {
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) value;
} syncq_counter_cas;

/* Initialise the CAS-loop counter to initial: fetch_add adds delta and
 * stores the previous value in *old (a CAS loop, lock-free;
 * backoff_fetch_add backs off exponentially after a failed CAS). Any
 * thread.
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_cas_init(syncq_counter_cas *c, int64_t initial);
/* Destroy the counter (it holds nothing to free).
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_cas_destroy(syncq_counter_cas *c);
/* Add delta; *old (if old is not NULL) receives the value before.
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_cas_fetch_add(syncq_counter_cas *c, int64_t delta, int64_t *old);
/* Add delta as fetch_add does, backing off exponentially after a failed
 * CAS; *old (if old is not NULL) receives the value before.
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_cas_backoff_fetch_add(syncq_counter_cas *c, int64_t delta, int64_t *old);
/* Read the current value into *value.
 * SYNCQ_EINVAL: c or value is NULL.
 */
SYNCQ_API int syncq_counter_cas_load(syncq_counter_cas *c, int64_t *value);

#ifdef __cplusplus
}
#endif
#endif
