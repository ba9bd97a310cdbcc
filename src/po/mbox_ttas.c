/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mbox_ttas.c — "ttas": the single-lock inbox of Algorithms 3-4 under a
 * test-and-test-and-set lock with bounded exponential backoff (002 §4
 * "Test-and-Test-and-Set"). The queue code is po_lock1_* (mbox_mutex.c).
 *
 * Contract
 *   Source:      002 §4, Algorithms 3-4 with the TTAS lock. The lock is
 *                "ttas" from the lock registry (001's lock: TTAS, backoff
 *                doubling from 100 ns to 30 us), where 002 used x86
 *                bit-test-and-set in assembly.
 *   Progress:    blocking; no FIFO among waiters; a preempted holder makes
 *                every waiter spin through its backoff (002 §6.2: it
 *                collapses past ~600 sorters).
 *   Atomics:     enqueue and dequeue uncontended: 1 load + 1 exchange to
 *                lock, 1 release store to unlock.
 *   Memory:      the lock's storage is allocated at init; never after.
 *                Messages are type-stable headers of the system.
 *   Signal-safe: no (the postoffice around it is not).
 *   Process-shared: no (links hold addresses).
 *   Limits:      none.
 */
#include "po_internal.h"

const po_mailbox_ops po_mailbox_ttas = {
  .name = "ttas",
  .title = "singly-linked list under a test-and-test-and-set lock with exponential backoff",
  .paper = "002 §4 Test-and-Test-and-Set, Algorithms 3-4",
  .lock_name = "ttas",
  .free_list = true,
  PO_LOCK1_MAILBOX_OPS,
};
