/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/counter/faa.h — fetch-and-add counter (003 §4.1 "fetchop" counter).
 * One atomic fetch-and-add per update: never retries, wait-free.
 */
#ifndef SYNCQ_COUNTER_FAA_H
#define SYNCQ_COUNTER_FAA_H

#include "syncq/export.h"

#include <stdint.h>

#include "syncq/pr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alone on its cache line so neighbours do not share its traffic. */
typedef struct syncq_counter_faa {
  SYNCQ_CACHELINE_ALIGNED _Atomic(int64_t) value;
} syncq_counter_faa;

/* Initialise the fetch-and-add counter to initial: fetch_add adds delta and
 * stores the previous value in *old (one atomic fetch-and-add, wait-free).
 * Any thread.
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_faa_init(syncq_counter_faa *c, int64_t initial);
/* Destroy the counter (it holds nothing to free).
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_faa_destroy(syncq_counter_faa *c);
/* Add delta; *old (if old is not NULL) receives the value before.
 * SYNCQ_EINVAL: c is NULL.
 */
SYNCQ_API int syncq_counter_faa_fetch_add(syncq_counter_faa *c, int64_t delta, int64_t *old);
/* Read the current value into *value.
 * SYNCQ_EINVAL: c or value is NULL.
 */
SYNCQ_API int syncq_counter_faa_load(syncq_counter_faa *c, int64_t *value);

#ifdef __cplusplus
}
#endif
#endif
