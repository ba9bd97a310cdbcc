/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mbox_mutex_nofree.c — "mutex-nofree": the single-mutex inbox without a
 * free list (002 §4 "Pthread Mutex (No Free List)"): get() mallocs a
 * header and its payload, free() returns both to malloc, and a COPY send
 * allocates the copy. The queue code is po_lock1_* (mbox_mutex.c).
 *
 * Contract
 *   Source:      002 §4, Algorithms 3-4, no free-list queue (Figure 10).
 *   Progress:    blocking (pthread mutex).
 *   Atomics:     as "mutex": one lock + one unlock per operation.
 *   Memory:      every get/free is a malloc/free of header and payload.
 *                Safe without type-stable headers because this queue
 *                dequeues the message itself and no sender reads a header
 *                outside the lock. Messages left in inboxes are freed by
 *                syncq_po_destroy (po_lock1_destroy, without the lock:
 *                no sender is left then); messages a process holds are
 *                not.
 *   Signal-safe: no.
 *   Process-shared: no.
 *   Limits:      none.
 */
#include "po_internal.h"

const po_mailbox_ops po_mailbox_mutex_nofree = {
  .name = "mutex-nofree",
  .title = "singly-linked list under one pthread mutex, malloc/free per message",
  .paper = "002 §4 Pthread Mutex (No Free List), Algorithms 3-4",
  .lock_name = "pthread-mutex",
  .free_list = false,
  PO_LOCK1_MAILBOX_OPS,
};
