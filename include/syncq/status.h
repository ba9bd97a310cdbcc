/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/status.h — status codes returned by every syncq function.
 *
 * Non-negative values are outcomes (SYNCQ_OK, and SYNCQ_EMPTY / SYNCQ_FULL,
 * which are normal results of a dequeue or enqueue, not errors); negative
 * values are errors. Library code never aborts or prints on bad input: it
 * returns one of these, and syncq_strerror() names it.
 */
#ifndef SYNCQ_STATUS_H
#define SYNCQ_STATUS_H

#include "syncq/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum syncq_status {
  SYNCQ_OK = 0,         /* done */
  SYNCQ_EMPTY = 1,      /* nothing to take (queue, stack, priority queue) */
  SYNCQ_FULL = 2,       /* no room (bounded structures) */
  SYNCQ_EINVAL = -1,    /* bad argument: NULL, out of range, malformed */
  SYNCQ_ENOMEM = -2,    /* allocation failed, or a node pool is exhausted */
  SYNCQ_ENOTSUP = -3,   /* not supported by the algorithm (a wait, process sharing), the machine or the build */
  SYNCQ_ENOENT = -4,    /* no such name (registry, endpoint, process) */
  SYNCQ_EEXIST = -5,    /* the name is taken */
  SYNCQ_ELIMIT = -6,    /* a fixed capacity or system limit was reached */
  SYNCQ_ETIMEDOUT = -7, /* a bounded wait ran out */
  SYNCQ_EBUSY = -8,     /* in use: a lock held (trylock), an object still in use (destroy), a live endpoint */
  SYNCQ_ESYS = -9,      /* a system call failed; errno holds the reason */
  SYNCQ_EDEAD = -10,    /* the peer (process, endpoint) has exited or died */
  SYNCQ_EBROKEN = -11,  /* a barrier is broken (a timed wait ran out); reset it */
  SYNCQ_EKILLED = -12   /* the calling postoffice process has been killed by an exit
                         * signal (syncq_po_exit, a link): return from its body */
} syncq_status;

/* A static, human-readable name for a status; "unknown status" for values
 * that are not syncq_status. Never NULL.
 * Thread safety: any thread, any time, from a signal handler too (a
 * constant table; nothing is written).
 * Progress: wait-free.
 * Example: `int r = syncq_queue_enqueue(NULL, NULL); printf("enqueue: %s\n", syncq_strerror(r));`
 *   ("enqueue: invalid argument") */
SYNCQ_API const char *syncq_strerror(int status);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_STATUS_H */
