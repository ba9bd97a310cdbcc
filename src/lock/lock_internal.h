/* SPDX-License-Identifier: BSD-2-Clause */
/* lock_internal.h — what the lock files share: config parsing. */
#ifndef SYNCQ_LOCK_INTERNAL_H
#define SYNCQ_LOCK_INTERNAL_H

#include <stddef.h>

#include "syncq/lock.h"
#include "syncq/wait.h"

#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

/* Bit of a discipline in an "allowed" mask. */
#define LOCK_WAIT_BIT(d) (1u << (unsigned)(d))
#define LOCK_WAIT_ALL                                                                                   \
  (LOCK_WAIT_BIT(SYNCQ_WAIT_SPIN) | LOCK_WAIT_BIT(SYNCQ_WAIT_YIELD) | LOCK_WAIT_BIT(SYNCQ_WAIT_BLOCK) | \
   LOCK_WAIT_BIT(SYNCQ_WAIT_COMPETITIVE))

/* Read a config (NULL: defaults): *wait gets the discipline (DEFAULT turned
 * into dflt), *pshared the process_shared flag. SYNCQ_EINVAL for an unknown
 * discipline; SYNCQ_ENOTSUP for one outside `allowed` or for process_shared
 * when !pshared_ok. */
static inline int lock_parse_config(const syncq_lock_config *cfg, int dflt, unsigned allowed, int pshared_ok, int *wait,
                                    int *pshared) {
  int w = cfg == NULL ? SYNCQ_WAIT_DEFAULT : cfg->wait;
  if (syncq_wait_check(w) != SYNCQ_OK) return SYNCQ_EINVAL;
  if (w == SYNCQ_WAIT_DEFAULT) w = dflt;
  if ((allowed & LOCK_WAIT_BIT(w)) == 0) return SYNCQ_ENOTSUP;
  int ps = cfg != NULL && cfg->process_shared;
  if (ps && !pshared_ok) return SYNCQ_ENOTSUP;
  *wait = w;
  *pshared = ps;
  return SYNCQ_OK;
}

/* The competitive spin limit when the discipline needs it (0 otherwise):
 * computed by syncq_wait_spin_limit_for, for every lock. */
static inline uint64_t lock_spin_limit(int wait) { return syncq_wait_spin_limit_for(wait); }

#endif
