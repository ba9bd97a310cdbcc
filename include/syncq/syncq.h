/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/syncq.h — everything public in one include.
 */
#ifndef SYNCQ_SYNCQ_H
#define SYNCQ_SYNCQ_H

#include "syncq/status.h"
#include "syncq/pr.h"
#include "syncq/backoff.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/stats.h"
#include "syncq/registry.h"
#include "syncq/counter.h"
#include "syncq/counter/faa.h"
#include "syncq/counter/cas.h"
#include "syncq/counter/mutex.h"
#include "syncq/counter/lock.h"
#include "syncq/stack.h"
#include "syncq/stack/pool.h"
#include "syncq/stack/lock.h"
#include "syncq/stack/treiber.h"
#include "syncq/stack/herlihy.h"
#include "syncq/stack/treiber_hp.h"
#include "syncq/stack/elimination.h"
#include "syncq/pqueue.h"
#include "syncq/pqueue/skew_lock.h"
#include "syncq/pqueue/skew_herlihy.h"
#include "syncq/pqueue/linden_jonsson.h"
#include "syncq/queue.h"
#include "syncq/queue/nblfq.h"
#include "syncq/queue/nblfq2.h"
#include "syncq/queue/naive_ring.h"
#include "syncq/queue/vyukov.h"
#include "syncq/queue/lock_queue.h"
#include "syncq/queue/ms.h"
#include "syncq/queue/fai_array.h"
#include "syncq/queue/scq.h"
#include "syncq/queue/lcrq.h"
#include "syncq/queue/lprq.h"
#include "syncq/queue/wfqueue.h"
#include "syncq/queue/scq2.h"
#include "syncq/queue/scqd.h"
#include "syncq/queue/plj.h"
#include "syncq/queue/valois.h"
#include "syncq/queue/wcq.h"
#include "syncq/wait.h"
#include "syncq/lock.h"
#include "syncq/lock/tas.h"
#include "syncq/lock/ticket.h"
#include "syncq/lock/anderson.h"
#include "syncq/lock/array.h"
#include "syncq/lock/mcs.h"
#include "syncq/lock/clh.h"
#include "syncq/lock/futex_mutex.h"
#include "syncq/lock/pthread_mutex.h"
#include "syncq/lock/ttas_ps.h"
#include "syncq/lock/sc_queue.h"
#include "syncq/mp.h"
#include "syncq/barrier.h"
#include "syncq/barrier/central.h"
#include "syncq/barrier/mcs_tree.h"
#include "syncq/barrier/dissemination.h"
#include "syncq/barrier/pthread_barrier.h"
#include "syncq/po.h"
#include "syncq/am.h"
#include "syncq/version.h"

#define SYNCQ_VERSION_MAJOR 0
#define SYNCQ_VERSION_MINOR 1
#define SYNCQ_VERSION_PATCH 0
/* The headers' version as syncq_version_number() returns the library's. */
#define SYNCQ_VERSION_NUMBER (SYNCQ_VERSION_MAJOR * 10000 + SYNCQ_VERSION_MINOR * 100 + SYNCQ_VERSION_PATCH)

#endif
