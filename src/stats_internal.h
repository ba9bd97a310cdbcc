/* SPDX-License-Identifier: BSD-2-Clause */
/* stats_internal.h — how algorithms bump the thread's syncq_stats: the
 * SYNCQ_STAT_* macros of syncq/static/stats.h, which reads the one switch
 * (SYNCQ_STATS, defined to 1 by the library's build when it counts). */
#ifndef SYNCQ_STATS_INTERNAL_H
#define SYNCQ_STATS_INTERNAL_H

#include "syncq/static/stats.h"

#endif
