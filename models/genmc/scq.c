/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq.c — GenMC driver for SCQ (Nikolaev, DISC 2019, Figure 8, as the
 * queue of pointers by indirection): src/queue/scq.c itself, included,
 * with capacity 2 (two rings of 4 entries). Workload and properties:
 * check.h (threads A and C); a FULL answer is allowed (SCQ's pointer queue may say FULL
 * early, see its contract) and its item is then not expected out.
 *
 * One parameter differs from the library's build: a dequeuer's bounded
 * wait for an enqueuer holding the same ticket (SYNCQ_SCQ_DEQ_WAIT, 64
 * re-reads of the entry) is 1 re-read here. The bound is a tuning
 * constant that the algorithm's correctness does not depend on (any
 * bound, 0 included, is the paper's algorithm plus a wait); 1 keeps the
 * branch explored without 64 copies of the same reads. models/genmc/run
 * builds it with -DSCQ_DEQ_WAIT=0 (Figure 8 exactly) under IMM, whose
 * dependency tracking makes the wait's re-reads the costliest part.
 */
#include "genmc_shim.h"

#include "queue/scq_common.h"
#undef SYNCQ_SCQ_DEQ_WAIT
#ifdef SCQ_DEQ_WAIT
#define SYNCQ_SCQ_DEQ_WAIT SCQ_DEQ_WAIT
#else
#define SYNCQ_SCQ_DEQ_WAIT 1
#endif

#include "queue/scq.c"

#define CHECK_MAY_BE_FULL 1 /* see above */
#include "check.h"

#ifndef CAP
#define CAP 2
#endif

static _Alignas(SYNCQ_CACHELINE) unsigned char storage[SYNCQ_QUEUE_SCQ_BYTES(CAP)];
#define Q ((syncq_queue_scq *)(void *)storage)

static int put(uint64_t v) { return syncq_queue_scq_enqueue(Q, (void *)(uintptr_t)v); }
static int take(uint64_t *v) {
  void *p = NULL;
  int r = syncq_queue_scq_dequeue(Q, &p);
  *v = (uint64_t)(uintptr_t)p;
  return r;
}

int main(void) {
  assert(syncq_queue_scq_init(Q, CAP) == SYNCQ_OK);
  check_workload();
  return 0;
}
