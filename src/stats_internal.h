/* SPDX-License-Identifier: BSD-2-Clause */
/* stats_internal.h — how algorithms bump the thread's syncq_stats. */
#ifndef SYNCQ_STATS_INTERNAL_H
#define SYNCQ_STATS_INTERNAL_H

#include "syncq/stats.h"

/* initial-exec: one TLS-relative add on the hot path, no __tls_get_addr. */
extern _Thread_local syncq_stats syncq_stats_tls__ __attribute__((tls_model("initial-exec")));

#if defined(SYNCQ_WITH_STATS)
#define SYNCQ_STAT_ADD(field, n) (syncq_stats_tls__.field += (uint64_t)(n))
#else
#define SYNCQ_STAT_ADD(field, n) ((void)0)
#endif
#define SYNCQ_STAT_INC(field) SYNCQ_STAT_ADD(field, 1)

#endif
