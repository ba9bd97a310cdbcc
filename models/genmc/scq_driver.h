/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq_driver.h — what the SCQ drivers (scq.c: src/queue/scq.c, scq2.c:
 * src/queue/scq2.c) share: the library's source included with one
 * parameter changed, the queue on static storage of capacity CAP
 * (default 2), check.h's put and take on it, and main. A driver defines
 * SCQ_DRIVER_SOURCE (the source, "queue/scq.c"), SCQ_DRIVER_NAME (the
 * queue's name in its identifiers: scq gives syncq_queue_scq_enqueue)
 * and SCQ_DRIVER_BYTES (its SYNCQ_QUEUE_..._BYTES macro), then includes
 * this header.
 *
 * Workload and properties: check.h (threads A and C, or with the -D
 * switches of models/genmc/run); a FULL answer is allowed (SCQ's pointer
 * queues may say FULL early, see their contracts) and its item is then
 * not expected out.
 *
 * The parameter: a dequeuer's bounded wait for an enqueuer holding the
 * same ticket (SYNCQ_SCQ_DEQ_WAIT, 64 re-reads of the entry in the
 * library) is 1 re-read here. The bound is a tuning constant that the
 * algorithm's correctness does not depend on (any bound, 0 included, is
 * the paper's algorithm plus a wait); 1 keeps the branch explored
 * without 64 copies of the same reads. models/genmc/run builds the
 * drivers with -DSCQ_DEQ_WAIT=0 (Figure 8 exactly) under IMM, whose
 * dependency tracking makes the wait's re-reads the costliest part.
 */
#ifndef SYNCQ_GENMC_SCQ_DRIVER_H
#define SYNCQ_GENMC_SCQ_DRIVER_H

#if !defined(SCQ_DRIVER_SOURCE) || !defined(SCQ_DRIVER_NAME) || !defined(SCQ_DRIVER_BYTES)
#error "scq_driver.h: define SCQ_DRIVER_SOURCE, SCQ_DRIVER_NAME and SCQ_DRIVER_BYTES first"
#endif

#include "genmc_shim.h"

#include "queue/scq_common.h"
#undef SYNCQ_SCQ_DEQ_WAIT
#ifdef SCQ_DEQ_WAIT
#define SYNCQ_SCQ_DEQ_WAIT SCQ_DEQ_WAIT
#else
#define SYNCQ_SCQ_DEQ_WAIT 1
#endif

#include SCQ_DRIVER_SOURCE

#define CHECK_MAY_BE_FULL 1 /* see above */
#include "check.h"

#ifndef CAP
#define CAP 2
#endif

/* syncq_queue_<SCQ_DRIVER_NAME><suffix> */
#define SCQ_DRIVER_CAT_(a, b, c) a##b##c
#define SCQ_DRIVER_CAT(a, b, c) SCQ_DRIVER_CAT_(a, b, c)
#define SCQ_DRIVER_FN(suffix) SCQ_DRIVER_CAT(syncq_queue_, SCQ_DRIVER_NAME, suffix)

static _Alignas(SYNCQ_CACHELINE) unsigned char storage[SCQ_DRIVER_BYTES(CAP)];
#define Q ((SCQ_DRIVER_FN() *)(void *)storage)

static int put(uint64_t v) { return SCQ_DRIVER_FN(_enqueue)(Q, (void *)(uintptr_t)v); }
static int take(uint64_t *v) {
  void *p = NULL;
  int r = SCQ_DRIVER_FN(_dequeue)(Q, &p);
  *v = (uint64_t)(uintptr_t)p;
  return r;
}

int main(void) {
  assert(SCQ_DRIVER_FN(_init)(Q, CAP) == SYNCQ_OK);
  check_workload();
  return 0;
}

#endif
