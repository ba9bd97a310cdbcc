/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq2.c — GenMC driver for SCQ2 (Nikolaev, DISC 2019, Figure 8 on
 * double-width cells, the item beside the entry word):
 * src/queue/scq2.c itself, included, with capacity 2 (4 cells), the
 * 16-byte CAS through genmc_shim.h. Workload and properties: check.h
 * (threads A and C); a FULL answer is allowed, as in scq.c. The
 * dequeuer's bounded wait (SYNCQ_SCQ_DEQ_WAIT) is 1 re-read here, 0
 * with -DSCQ_DEQ_WAIT=0 (see scq.c).
 */
#include "genmc_shim.h"

#include "queue/scq_common.h"
#undef SYNCQ_SCQ_DEQ_WAIT
#ifdef SCQ_DEQ_WAIT
#define SYNCQ_SCQ_DEQ_WAIT SCQ_DEQ_WAIT
#else
#define SYNCQ_SCQ_DEQ_WAIT 1
#endif

#include "queue/scq2.c"

#define CHECK_MAY_BE_FULL 1 /* see above */
#include "check.h"

#ifndef CAP
#define CAP 2
#endif

static _Alignas(SYNCQ_CACHELINE) unsigned char storage[SYNCQ_QUEUE_SCQ2_BYTES(CAP)];
#define Q ((syncq_queue_scq2 *)(void *)storage)

static int put(uint64_t v) { return syncq_queue_scq2_enqueue(Q, (void *)(uintptr_t)v); }
static int take(uint64_t *v) {
  void *p = NULL;
  int r = syncq_queue_scq2_dequeue(Q, &p);
  *v = (uint64_t)(uintptr_t)p;
  return r;
}

int main(void) {
  assert(syncq_queue_scq2_init(Q, CAP) == SYNCQ_OK);
  check_workload();
  return 0;
}
