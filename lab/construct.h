/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * construct.h — syncq-lab's one constructor "registry entry -> initialised
 * object": storage of the size and alignment the family's ops table asks
 * for, then the family's init with its configuration; and the matching
 * destroy + free. Every experiment that makes a lock, barrier, counter,
 * queue, stack or priority queue from the registry goes through it.
 *
 * Contract:
 *   progress    whatever the family's init and destroy are (blocking
 *               allocation).
 *   memory      one aligned allocation of ops->size (queues: ops->bytes of
 *               the capacity), plus what init allocates.
 *   signal safety  no (allocates).
 *   errors      a syncq status (include/syncq/status.h): SYNCQ_EINVAL for
 *               a NULL algorithm, out pointer or unknown family;
 *               SYNCQ_ENOMEM; otherwise the status of ops->bytes or
 *               ops->init. Nothing is left allocated on an error.
 */
#ifndef SYNCQ_LAB_CONSTRUCT_H
#define SYNCQ_LAB_CONSTRUCT_H

#include <stddef.h>
#include <stdint.h>

#include "lab.h"
#include "syncq/barrier.h"
#include "syncq/counter.h"
#include "syncq/lock.h"
#include "syncq/pqueue.h"
#include "syncq/queue.h"
#include "syncq/registry.h"
#include "syncq/stack.h"

/* What the family's init takes; only the algorithm's family's field is
 * read (NULL configs: the family's zero configuration). */
typedef struct lab_object_cfg {
  const syncq_lock_config *lock;
  const syncq_barrier_config *barrier;
  int64_t counter_initial;
  size_t queue_capacity;
  const syncq_stack_config *stack;
  const syncq_pqueue_config *pqueue;
} lab_object_cfg;

/* Make an initialised object of algo in *out. SYNCQ_OK or a status (see
 * the contract); *out is NULL on error. */
int lab_object_new(const syncq_algo *algo, const lab_object_cfg *cfg, void **out);
/* Destroy and free an object lab_object_new made (NULL: nothing). */
void lab_object_free(const syncq_algo *algo, void *obj);
/* lab_object_new, reporting a failure through lab_fail ("cannot create a
 * <name> <family>: <status>"). The object, or NULL. */
void *lab_object_new_or_fail(lab_ctx *ctx, const syncq_algo *algo, const lab_object_cfg *cfg);
/* True when the algorithm can be made here with cfg (made and dropped);
 * *status (may be NULL) gets the reason when not. */
bool lab_object_can_make(const syncq_algo *algo, const lab_object_cfg *cfg, int *status);

#endif /* SYNCQ_LAB_CONSTRUCT_H */
