/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/static/stats.h — the one statistics switch, SYNCQ_STATS.
 *
 * Every algorithm counts its events (syncq/stats.h) with SYNCQ_STAT_INC
 * and SYNCQ_STAT_ADD, and this is the only place that decides what those
 * do: with SYNCQ_STATS defined to 1 they add to the calling thread's
 * counters (syncq_stats_tls, the variable syncq_stats_self() returns: one
 * thread-pointer-relative add, no call); undefined or 0, they are nothing.
 *
 * libsyncq's build defines SYNCQ_STATS=1 for its own sources when
 * configured with -DSYNCQ_STATS=ON (the lab's and the tests' counting copy
 * always). A program that includes the static inline bodies
 * (syncq/static/<family>/<algo>.h) counts nothing unless it defines
 * SYNCQ_STATS to 1 itself, on its command line or before its first syncq
 * include, as it would NDEBUG. Which header comes first does not matter.
 */
#ifndef SYNCQ_STATIC_STATS_H
#define SYNCQ_STATIC_STATS_H

#include <stdint.h>

#include "syncq/stats.h"

#if defined(SYNCQ_WITH_STATS)
#error "SYNCQ_WITH_STATS is gone: define SYNCQ_STATS to 1 (syncq/static/stats.h)"
#endif

#if defined(SYNCQ_STATS) && SYNCQ_STATS
/* 1 when this file's algorithms count, 0 when they do not. */
#define SYNCQ_STATS_COUNTING 1
#define SYNCQ_STAT_ADD(field, n) (syncq_stats_tls.field += (uint64_t)(n))
#else
#define SYNCQ_STATS_COUNTING 0
#define SYNCQ_STAT_ADD(field, n) ((void)0)
#endif
#define SYNCQ_STAT_INC(field) SYNCQ_STAT_ADD(field, 1)

/* The competitive spin limit when the discipline needs it, from the one
 * place it is computed (syncq_wait_spin_limit_for); 0 otherwise without a
 * call (syncq/wait.h, which the lock bodies include). */
#define SYNCQ_STATIC_SPIN_LIMIT(wait) ((wait) == SYNCQ_WAIT_COMPETITIVE ? syncq_wait_spin_limit_for(wait) : 0u)

#endif /* SYNCQ_STATIC_STATS_H */
