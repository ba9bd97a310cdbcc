/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/static/stats.h — event counting in the static inline bodies.
 *
 * Statistics are compiled in only when asked. Inside libsyncq the
 * library's own counter (src/stats_internal.h, a thread-local add) is
 * already defined and used. In a program that includes the static headers,
 * nothing is counted unless it defines SYNCQ_WITH_STATS before including
 * them; then the counts go to the thread's syncq_stats_self().
 */
#ifndef SYNCQ_STATIC_STATS_H
#define SYNCQ_STATIC_STATS_H

#include "syncq/stats.h"

#ifndef SYNCQ_STAT_INC
#if defined(SYNCQ_WITH_STATS)
#define SYNCQ_STAT_ADD(field, n) (syncq_stats_self()->field += (uint64_t)(n))
#else
#define SYNCQ_STAT_ADD(field, n) ((void)0)
#endif
#define SYNCQ_STAT_INC(field) SYNCQ_STAT_ADD(field, 1)
#endif

/* The competitive spin limit when the discipline needs it (0 otherwise). */
#define SYNCQ_STATIC_SPIN_LIMIT(wait) ((wait) == SYNCQ_WAIT_COMPETITIVE ? syncq_wait_spin_limit_ns() : 0u)

#endif /* SYNCQ_STATIC_STATS_H */
